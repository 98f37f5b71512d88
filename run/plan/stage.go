package plan

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"gonum.org/v1/gonum/stat/distuv"

	"bench/config"
	"bench/internal/record/slo"
)

// Stage modes.
const (
	ModeConcurrency = "concurrency" // closed loop: Level streams, each sending its next cell when the last ends
	ModeRate        = "rate"        // open loop: Level requests per second on a drawn schedule
)

// Roles of an auto sweep's stages.
const (
	AutoSync       = "sync"       // one stream: the rate one request at a time gives
	AutoThroughput = "throughput" // many streams: the most the server answers per second
	AutoRate       = "rate"       // a rate between the two, found once both have run
)

// IsAutoStage says whether a stage name is one of an auto sweep's (sync,
// throughput, auto-N).
func IsAutoStage(name string) bool {
	if name == AutoSync || name == AutoThroughput {
		return true
	}
	n, ok := strings.CutPrefix(name, "auto-")
	_, err := strconv.Atoi(n)
	return ok && err == nil
}

// Roles of an SLO search's stages.
const (
	SearchProbe = "probe" // the throughput probe of rate: auto
	SearchStep  = "step"  // a stage at the level the search chose
)

// Stage names that are not a level.
const (
	StageWarmup = "warmup"
	// StageRecorded is the one stage of load.arrival: recorded (prompts.replay
	// at the recorded run's pacing).
	StageRecorded = "recorded"
)

// Stage is one stage of a suite's load profile: its cells run together,
// at one concurrency or one rate, after the stage before has ended.
type Stage struct {
	// Name is the stage's name in results.jsonl (stage): c=4, rate=2.5,
	// warmup, or an auto sweep's sync, throughput, auto-1...
	Name string
	// Index is the stage's place in the suite's sweep (the warm-up is 0
	// when there is one).
	Index int
	Mode  string
	// Level is the streams or the rate; 0 for an auto rate stage, whose
	// rate is set while the sweep runs.
	Level float64
	// Warmup marks the warm-up stage: recorded, left out of the figures.
	Warmup bool
	// Auto is the stage's role in an auto sweep ("" otherwise); AutoStep
	// numbers the rate stages from 1 to AutoRates.
	Auto     string
	AutoStep int
	// Search is the stage's role in an SLO search (SearchProbe or
	// SearchStep; "" otherwise): its level is chosen while the search runs.
	Search string
	// Cells is how many cells the stage has in the full plan.
	Cells int
	// Load is the profile the stage belongs to (arrival shape, seed, cap,
	// ramp).
	Load *config.LoadProfile
}

// StageName names a stage of a level.
func StageName(mode string, level float64) string {
	if mode == ModeConcurrency {
		return "c=" + strconv.FormatFloat(level, 'f', -1, 64)
	}
	return "rate=" + strconv.FormatFloat(level, 'g', 6, 64)
}

// stages lays out a suite's stages for a load profile; suiteCells is the
// suite's prompts × repetitions.
func stages(l *config.LoadProfile, suiteCells int) []Stage {
	var out []Stage
	add := func(s Stage) {
		s.Index, s.Load = len(out), l
		out = append(out, s)
	}
	var levels []Stage
	if sr := l.Search; sr != nil {
		// A step's level is the search's choice, made while it runs; the
		// first step of a bracket knows its own (the bracket's bottom), as
		// the probe does (its streams), and the warm-up runs there.
		n := l.StageCells(0, suiteCells)
		mode := ModeRate
		if sr.Mode() == slo.ModeConcurrency {
			mode = ModeConcurrency
		}
		if sr.Probe() {
			levels = append(levels, Stage{Name: slo.StageProbe, Mode: ModeConcurrency, Level: float64(l.Concurrency), Search: SearchProbe, Cells: n})
		}
		for step := 1; len(levels) < sr.MaxStages; step++ {
			levels = append(levels, Stage{Name: slo.StageName(step), Mode: mode, Search: SearchStep, Cells: n})
		}
		if !sr.Probe() {
			levels[0].Level = sr.FirstLevel()
		}
	} else if l.Sweep.Auto {
		n := l.StageCells(0, suiteCells)
		levels = append(levels,
			Stage{Name: AutoSync, Mode: ModeConcurrency, Level: 1, Auto: AutoSync, Cells: n},
			Stage{Name: AutoThroughput, Mode: ModeConcurrency, Level: float64(l.Concurrency), Auto: AutoThroughput, Cells: n})
		for i := 1; i <= l.AutoRates; i++ {
			levels = append(levels, Stage{Name: fmt.Sprintf("auto-%d", i), Mode: ModeRate, Auto: AutoRate, AutoStep: i, Cells: n})
		}
	} else {
		open, lv := l.Levels()
		mode := ModeConcurrency
		if open {
			mode = ModeRate
		}
		for _, x := range lv {
			n := l.StageCells(x, suiteCells)
			name := StageName(mode, x)
			if l.Arrival == config.ArrivalRecorded {
				name = StageRecorded
			}
			levels = append(levels, Stage{Name: name, Mode: mode, Level: x, Cells: n})
		}
	}
	if l.Warmup > 0 && len(levels) > 0 {
		w := levels[0]
		w.Name, w.Warmup, w.Cells, w.Auto, w.AutoStep, w.Search = StageWarmup, true, l.Warmup, "", 0, ""
		add(w)
	}
	for _, s := range levels {
		add(s)
	}
	for i := range out {
		if s := &out[i]; s.Mode == ModeRate && l.Duration > 0 && s.Level > 0 {
			s.Cells = len(Arrivals(l, s.Level, s.Index, 0, time.Duration(l.Duration)))
		}
	}
	return out
}

// Arrivals is the send schedule of an open-loop stage at rate requests/s:
// each request's offset from the stage's start. The gaps are constant
// (1/rate), exponential (Poisson arrivals) or gamma with shape burstiness
// and mean 1/rate (vLLM's and GuideLLM's model), drawn from a generator
// seeded with load.seed and the stage's index, so a schedule is the same on
// every run and stages differ. A ramp raises the rate linearly from 0 over
// its length: the arrival drawn at s seconds of full rate comes at
// sqrt(2·ramp·s) while s < ramp/2, at s + ramp/2 after. The first request
// is due at once. With dur > 0 the schedule is every arrival before dur
// (at most config.MaxStageCells), else n arrivals.
func Arrivals(l *config.LoadProfile, rate float64, stage, n int, until time.Duration) []time.Duration {
	if l.Arrival == config.ArrivalRecorded {
		return config.RecordedArrivals(l.Recorded, n)
	}
	src := rand.NewPCG(uint64(l.Seed), uint64(stage))
	var gap func() float64
	switch l.Arrival {
	case config.ArrivalConstant:
		gap = func() float64 { return 1 / rate }
	case config.ArrivalGamma:
		g := distuv.Gamma{Alpha: l.Burstiness, Beta: l.Burstiness * rate, Src: src}
		gap = g.Rand
	default:
		e := distuv.Exponential{Rate: rate, Src: src}
		gap = e.Rand
	}
	ramp := time.Duration(l.Ramp).Seconds()
	var out []time.Duration
	s := 0.0 // seconds at full rate
	for i := 0; ; i++ {
		if i > 0 {
			s += gap()
		}
		t := s
		if ramp > 0 {
			if s < ramp/2 {
				t = math.Sqrt(2 * ramp * s)
			} else {
				t = s + ramp/2
			}
		}
		if until > 0 && (t >= until.Seconds() || len(out) >= config.MaxStageCells) {
			break
		}
		// A time past what a Duration holds (a rate of 1e-300) is the
		// longest one, never a wrapped negative.
		at := time.Duration(math.MaxInt64)
		if t*float64(time.Second) < math.MaxInt64 {
			at = time.Duration(t * float64(time.Second))
		}
		if until == 0 && len(out) >= n {
			break
		}
		out = append(out, at)
	}
	return out
}
