package config

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"bench/internal/record/slo"
	"bench/internal/yamlerr"
	"bench/prompts"

	"gopkg.in/yaml.v3"
)

// LoadProfile is the load: block, run-wide or in a provider entry (which then
// replaces the run-wide block whole for its suites): how a suite's cells
// are sent. Without one, cells run in a closed loop at the entry's
// concurrency, as they always have. With one, each suite runs as stages:
// a warm-up, then one stage per level of the sweep (or the one rate), each
// of requests cells (or, open loop, the arrivals of duration), in order;
// every cell records its stage, when it was due and when it was sent.
type LoadProfile struct {
	// Concurrency is the closed loop's number of streams (no sweep, no
	// rate: the entry's concurrency); in an auto sweep, the throughput
	// probe's streams.
	Concurrency int `yaml:"concurrency" json:"concurrency,omitempty"`
	// Rate makes the loop open: requests are sent at this many per second
	// whatever the server does, on the schedule Arrival draws.
	Rate float64 `yaml:"rate" json:"rate,omitempty"`
	// Arrival is the schedule's shape: constant, poisson or gamma.
	Arrival string `yaml:"arrival" json:"arrival,omitempty"`
	// Burstiness is gamma's shape: below 1 burstier than Poisson, above 1
	// more regular (1 is Poisson), as vLLM's --burstiness.
	Burstiness float64 `yaml:"burstiness" json:"burstiness,omitempty"`
	// Seed makes the schedule reproducible: the same seed, rate and count
	// give the same send times.
	Seed int64 `yaml:"seed" json:"seed"`
	// MaxConcurrency caps an open loop's requests in flight: a request due
	// while the cap is reached waits for a slot, and the wait is recorded
	// (slot_wait_ms, AIPerf's queue time), never hidden in the slip.
	MaxConcurrency int `yaml:"max_concurrency" json:"max_concurrency,omitempty"`
	// Ramp raises an open loop's rate linearly from 0 to its level over
	// this long (a closed loop's streams start spread over it).
	Ramp Duration `yaml:"ramp" json:"ramp,omitempty"`
	// Sweep runs one stage per level, in order.
	Sweep Sweep `yaml:"sweep" json:"sweep,omitzero"`
	// Search finds the highest rate (or concurrency) at which the slo:
	// block holds at a stated attainment, a stage at a time (slo.Search).
	Search *slo.Search `yaml:"search" json:"search,omitempty"`
	// Requests is each stage's cells, the prompts taken in turn (default:
	// prompts × repetitions).
	Requests int `yaml:"requests" json:"requests,omitempty"`
	// Duration is an open-loop stage's length instead: the schedule's
	// arrivals before it.
	Duration Duration `yaml:"duration" json:"duration,omitempty"`
	// Warmup is the cells of a warm-up stage at the first level, recorded
	// (stage "warmup") and left out of every speed and capacity figure.
	Warmup int `yaml:"warmup" json:"warmup,omitempty"`
	// AutoRates is how many rates an auto sweep interpolates between the
	// synchronous rate and the maximum throughput.
	AutoRates int `yaml:"auto_rates" json:"auto_rates,omitempty"`
	// StageTimeout bounds a stage: its schedule must fit in it, and cells
	// still unsent when it has passed are not sent (recorded as errors).
	StageTimeout Duration `yaml:"stage_timeout" json:"stage_timeout"`
	// StopErrorRate stops a sweep after a stage in which this share of the
	// cells or more did not answer: the later stages' cells are recorded
	// as not run (sweep_stopped), naming the stage that broke.
	StopErrorRate float64 `yaml:"stop_error_rate" json:"stop_error_rate"`
	// Snapshots keeps an agent snapshot (snapshots/) for each cell of the
	// profile's stages. Off by default: a stage's cells are one prompt set
	// sent hundreds or thousands of times, whose per-request snapshots say
	// nothing a diff could use, and a file created per request costs more
	// of the generator's CPU than the request itself (BenchmarkRequestCost;
	// results.jsonl keeps every answer, and compare builds its snapshots
	// from it).
	Snapshots bool `yaml:"snapshots" json:"snapshots,omitempty"`

	// Recorded is arrival: recorded's schedule, the replayed turns' send
	// times in the recorded run, in the prompt set's order (set once the
	// prompts are loaded).
	Recorded []time.Duration `yaml:"-" json:"-"`

	// Line is where the block starts, for errors found after decoding.
	Line int `yaml:"-" json:"-"`
}

// Arrival shapes.
const (
	ArrivalConstant = "constant"
	ArrivalPoisson  = "poisson"
	ArrivalGamma    = "gamma"
	// ArrivalRecorded sends each of prompts.replay's turns when the
	// recorded run sent it (its offset from the run's first replayed
	// turn), at no rate of its own.
	ArrivalRecorded = "recorded"
)

// Arrivals lists the shapes load.arrival takes.
var Arrivals = []string{ArrivalConstant, ArrivalPoisson, ArrivalGamma, ArrivalRecorded}

// Load defaults.
const (
	DefaultStageTimeout   = 10 * time.Minute
	DefaultStopErrorRate  = 0.5
	DefaultAutoRates      = 4
	DefaultAutoStreams    = 32
	MaxLoadRate           = 100_000 // requests/s: past this a schedule is a typo
	MaxLoadConcurrency    = 10_000
	MaxStageCells         = 1_000_000
	defaultLoadSeed       = 1
	defaultLoadBurstiness = 1
)

// Sweep is load.sweep: a list of concurrency levels, a list of rates, or
// auto (GuideLLM's sweep: a synchronous stage, a throughput stage, then
// AutoRates rates spread between the two rates they measured).
type Sweep struct {
	Auto        bool      `json:"-"`
	Concurrency []int     `json:"concurrency,omitempty"`
	Rate        []float64 `json:"rate,omitempty"`
	line        int
}

// IsZero says there is no sweep.
func (s Sweep) IsZero() bool { return !s.Auto && s.Concurrency == nil && s.Rate == nil }

// UnmarshalYAML reads "auto" or a mapping with concurrency or rate.
func (s *Sweep) UnmarshalYAML(n *yaml.Node) error {
	s.line = n.Line
	if n.Kind == yaml.ScalarNode {
		if n.Value == "auto" {
			s.Auto = true
			return nil
		}
		return &Error{Line: n.Line, Msg: fmt.Sprintf("%s is not a sweep: write auto, {concurrency: [1, 2, 4, 8]} or {rate: [1, 2, 4]}", yamlerr.Quoted(n.Value))}
	}
	if n.Kind == yaml.SequenceNode {
		return &Error{Line: n.Line, Msg: "a bare list does not say what it sweeps: write {concurrency: [...]} or {rate: [...]}"}
	}
	if n.Kind != yaml.MappingNode {
		return &Error{Line: n.Line, Msg: "expected auto or a mapping with concurrency or rate"}
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if v.Kind != yaml.SequenceNode {
			return &Error{Line: v.Line, Msg: fmt.Sprintf("%s must be a list of levels", k.Value)}
		}
		switch k.Value {
		case "concurrency":
			s.Concurrency = []int{}
			for _, e := range v.Content {
				x, err := strconv.Atoi(e.Value)
				if e.Kind != yaml.ScalarNode || err != nil {
					return &Error{Line: e.Line, Msg: fmt.Sprintf("concurrency level %s is not a whole number", yamlerr.Quoted(e.Value))}
				}
				s.Concurrency = append(s.Concurrency, x)
			}
		case "rate":
			s.Rate = []float64{}
			for _, e := range v.Content {
				x, err := strconv.ParseFloat(e.Value, 64)
				if e.Kind != yaml.ScalarNode || err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
					return &Error{Line: e.Line, Msg: fmt.Sprintf("rate %s is not a number", yamlerr.Quoted(e.Value))}
				}
				s.Rate = append(s.Rate, x)
			}
		default:
			return &Error{Line: k.Line, Msg: fmt.Sprintf("unknown field %s; a sweep has concurrency or rate", yamlerr.Quoted(k.Value))}
		}
	}
	if s.Concurrency != nil && s.Rate != nil {
		return &Error{Line: n.Line, Msg: "sweeps concurrency and rate at once; give one"}
	}
	return nil
}

// MarshalJSON writes "auto" or the levels, as bench.yaml has them.
func (s Sweep) MarshalJSON() ([]byte, error) {
	if s.Auto {
		return []byte(`"auto"`), nil
	}
	type plain struct {
		Concurrency []int     `json:"concurrency,omitempty"`
		Rate        []float64 `json:"rate,omitempty"`
	}
	return json.Marshal(plain{s.Concurrency, s.Rate})
}

// Open says the loop is open (requests sent on a schedule).
func (l *LoadProfile) Open() bool {
	return l.Rate > 0 || l.Arrival == ArrivalRecorded || l.Sweep.Rate != nil || (l.Search != nil && l.Search.Mode() == slo.ModeRate)
}

// defaults fills what the block leaves out.
func (l *LoadProfile) defaults() {
	if l.Seed == 0 {
		l.Seed = defaultLoadSeed
	}
	if l.Open() && l.Arrival == "" {
		l.Arrival = ArrivalPoisson
	}
	if l.Arrival == ArrivalGamma && l.Burstiness == 0 {
		l.Burstiness = defaultLoadBurstiness
	}
	if l.Search != nil {
		l.Search.Defaults()
		if l.Concurrency == 0 && l.Search.Probe() {
			l.Concurrency = DefaultAutoStreams
		}
		if l.Arrival == "" && l.Open() {
			l.Arrival = ArrivalPoisson
		}
	}
	if l.Sweep.Auto {
		if l.AutoRates == 0 {
			l.AutoRates = DefaultAutoRates
		}
		if l.Concurrency == 0 {
			l.Concurrency = DefaultAutoStreams
		}
		if l.Arrival == "" {
			l.Arrival = ArrivalPoisson
		}
	}
	if l.StageTimeout == 0 {
		l.StageTimeout = Duration(DefaultStageTimeout)
	}
	if l.StopErrorRate == 0 {
		l.StopErrorRate = DefaultStopErrorRate
	}
}

// loadKeys maps the block's settings to their YAML keys under at, for
// errors: at is "load" or "providers[i].load".
func (l *LoadProfile) validate(v *validator, path []any) {
	at := func(key string) ([]any, string) { return append(slices.Clone(path), key), dotted(path) + "." + key }
	add := func(key, msg string) {
		p, f := at(key)
		v.addPath(p, f, msg)
	}
	given := func(key string) bool { return v.root.lookup(append(slices.Clone(path), key)...) != nil }
	if !l.Staged() {
		// A block with neither a sweep nor a rate is a closed loop at its
		// concurrency, with no stages: what applies to stages would be
		// ignored (requests: 20 would run the suite's cells once).
		streams := "N"
		if l.Concurrency > 0 {
			streams = strconv.Itoa(l.Concurrency)
		}
		for _, key := range []string{"requests", "warmup", "stage_timeout", "stop_error_rate", "snapshots"} {
			if given(key) {
				add(key, "applies to the stages of a sweep or a rate, and this block has neither (it is a closed loop at its concurrency); for one stage of "+streams+" streams, write sweep: {concurrency: ["+streams+"]}")
			}
		}
	}
	if l.Concurrency < 0 || l.Concurrency > MaxLoadConcurrency || (l.Concurrency == 0 && given("concurrency")) {
		add("concurrency", fmt.Sprintf("must be from 1 to %d", MaxLoadConcurrency))
	}
	if l.Rate < 0 || (l.Rate == 0 && rateGiven(v, path)) {
		add("rate", "must be more than 0 requests per second (leave it out for a closed loop)")
	} else if l.Rate > MaxLoadRate {
		add("rate", fmt.Sprintf("must be at most %d requests per second", MaxLoadRate))
	}
	if l.Arrival != "" && !slices.Contains(Arrivals, l.Arrival) {
		add("arrival", fmt.Sprintf("%s is not an arrival shape; one of %s", yamlerr.Quoted(l.Arrival), strings.Join(Arrivals, ", ")))
	}
	if l.Arrival != "" && !l.Open() && !l.Sweep.Auto {
		add("arrival", "applies to an open loop: give a rate or a rate sweep")
	}
	if l.Arrival == ArrivalRecorded {
		for _, key := range []string{"rate", "sweep", "search", "duration", "ramp", "burstiness"} {
			if given(key) {
				add(key, "arrival: recorded sends each replayed turn when the recorded run sent it; leave "+key+" out (for a chosen rate, give rate with arrival constant, poisson or gamma)")
			}
		}
	}
	if l.Burstiness < 0 || (l.Burstiness == 0 && given("burstiness")) || (l.Burstiness > 0 && l.Arrival != ArrivalGamma) {
		add("burstiness", "is gamma's shape: more than 0, with arrival: gamma")
	}
	if l.MaxConcurrency < 0 || l.MaxConcurrency > MaxLoadConcurrency || (l.MaxConcurrency == 0 && given("max_concurrency")) {
		add("max_concurrency", fmt.Sprintf("must be from 1 to %d", MaxLoadConcurrency))
	} else if l.MaxConcurrency > 0 && !l.Open() && !l.Sweep.Auto {
		add("max_concurrency", "caps an open loop: give a rate or a rate sweep (a closed loop's cap is its concurrency)")
	}
	if l.Ramp < 0 {
		add("ramp", "must not be negative")
	}
	if l.Requests < 0 || l.Requests > MaxStageCells {
		add("requests", fmt.Sprintf("must be from 1 to %d", MaxStageCells))
	}
	if l.Warmup < 0 || l.Warmup > MaxStageCells {
		add("warmup", fmt.Sprintf("must be from 0 to %d", MaxStageCells))
	}
	if l.Duration < 0 {
		add("duration", "must be more than 0")
	}
	if l.Duration > 0 && !l.Open() {
		add("duration", "a closed loop's stages are counted in requests (how many a duration holds depends on the server, and a run's cells are planned before it starts); give requests, or a rate")
	}
	if l.Duration > 0 && l.Requests > 0 {
		add("duration", "give requests or duration, not both")
	}
	if l.StageTimeout < 0 {
		add("stage_timeout", "must be more than 0")
	}
	if l.StopErrorRate < 0 || l.StopErrorRate > 1 {
		add("stop_error_rate", "must be from 0 to 1 (a share of a stage's cells)")
	}
	if l.AutoRates < 0 || l.AutoRates > 100 {
		add("auto_rates", "must be from 1 to 100")
	} else if l.AutoRates > 0 && !l.Sweep.Auto {
		add("auto_rates", "applies to sweep: auto")
	}
	s := l.Sweep
	switch {
	case s.Concurrency != nil && len(s.Concurrency) == 0, s.Rate != nil && len(s.Rate) == 0:
		add("sweep", "has no levels: list at least one")
	case s.Concurrency != nil && l.Rate > 0:
		add("sweep", "sweeps concurrency, but rate makes the loop open; give one")
	case s.Rate != nil && l.Rate > 0:
		add("rate", "the sweep gives the rates; leave rate out")
	case s.Auto && l.Rate > 0:
		add("rate", "an auto sweep finds its rates; leave rate out")
	case s.Auto && l.Duration > 0:
		add("duration", "an auto sweep's rates are found while it runs; give requests per stage")
	}
	if l.Search != nil {
		l.validateSearch(v, path, add)
	}
	for i, c := range s.Concurrency {
		if c < 1 || c > MaxLoadConcurrency {
			p, f := at("sweep")
			v.addPath(append(p, "concurrency", i), fmt.Sprintf("%s.concurrency[%d]", f, i), fmt.Sprintf("must be from 1 to %d", MaxLoadConcurrency))
		}
	}
	for i, r := range s.Rate {
		if r <= 0 || r > MaxLoadRate {
			p, f := at("sweep")
			v.addPath(append(p, "rate", i), fmt.Sprintf("%s.rate[%d]", f, i), fmt.Sprintf("must be more than 0 and at most %d requests per second", MaxLoadRate))
		}
	}
}

// validateSearch checks load.search against the rest of the block (the
// slo: block and the stage size are checked once the prompts are known:
// checkSearch).
func (l *LoadProfile) validateSearch(v *validator, path []any, add func(key, msg string)) {
	sr := l.Search
	sub := func(key, msg string) {
		p := append(slices.Clone(path), "search", key)
		v.addPath(p, dotted(path)+".search."+key, msg)
	}
	switch {
	case !l.Sweep.IsZero():
		add("search", "a search finds its own levels; leave sweep out")
	case l.Rate > 0:
		add("search", "a search finds its own rates; leave rate out")
	case l.Duration > 0:
		add("duration", "a search's levels are found while it runs; give requests per stage")
	}
	if sr.Rate != nil && sr.Concurrency != nil {
		add("search", "searches rate and concurrency at once; give one")
	}
	if b := sr.Rate; b != nil && !b.Auto && b.Hi > MaxLoadRate {
		sub("rate", fmt.Sprintf("must be at most %d requests per second", MaxLoadRate))
	}
	if b := sr.Concurrency; b != nil && !b.Auto {
		if b.Lo != math.Trunc(b.Lo) || b.Hi != math.Trunc(b.Hi) {
			sub("concurrency", "streams are whole numbers")
		} else if b.Hi > MaxLoadConcurrency {
			sub("concurrency", fmt.Sprintf("must be at most %d streams", MaxLoadConcurrency))
		}
	}
	if sr.Attainment < 0 || sr.Attainment >= 1 {
		sub("attainment", "is the share of requests that must meet every target: more than 0 and below 1 (e.g. 0.95)")
	}
	if sr.Confidence < 0 || sr.Confidence >= 1 {
		sub("confidence", "is the interval's level: more than 0 and below 1 (e.g. 0.95)")
	}
	if sr.Tolerance < 0 || sr.Tolerance > 1 {
		sub("tolerance", "is how near the bracket's top must come to its bottom: more than 0 and at most 1 (e.g. 0.05)")
	}
	if sr.MaxStages < 0 || sr.MaxStages > slo.MaxSearchStages || (sr.MaxStages == 1 && sr.Concurrency == nil && (sr.Rate == nil || sr.Rate.Auto)) {
		sub("max_stages", fmt.Sprintf("must be from 2 (the probe and one stage) to %d", slo.MaxSearchStages))
	}
	if l.MaxConcurrency > 0 && sr.Concurrency != nil {
		add("max_concurrency", "caps an open loop; a concurrency search's stages are closed loops")
	}
}

// checkSearch refuses a search that cannot judge anything: without an
// slo: block holding a per-request target (attainment counts requests
// meeting them), or with stages too small for even a perfect stage's
// interval to reach the attainment.
func (l *LoadProfile) checkSearch(v *validator, path []any, cells int, s *slo.SLO) {
	sr := l.Search
	if sr == nil {
		return
	}
	at := append(slices.Clone(path), "search")
	if s == nil || !s.PerRequest() {
		v.addPath(at, dotted(path)+".search", "needs an slo: block with a per-request target (a number, e.g. slo: {ttft_ms: 200}): a stage's attainment is the share of its requests meeting them; a percentile is a per-request target with attainment (p99 → attainment: 0.99)")
		return
	}
	if sr.Attainment <= 0 || sr.Attainment >= 1 || sr.Confidence <= 0 || sr.Confidence >= 1 {
		return // said by validateSearch
	}
	n := l.StageCells(0, cells)
	if lo, _ := slo.WilsonZ(float64(n), float64(n), slo.ZFor(sr.Confidence)); lo < sr.Attainment {
		least := n
		for least < MaxStageCells {
			if lo, _ := slo.WilsonZ(float64(least), float64(least), slo.ZFor(sr.Confidence)); lo >= sr.Attainment {
				break
			}
			least++
		}
		key, f := at, dotted(path)+".search"
		if l.Requests > 0 {
			key, f = append(slices.Clone(path), "requests"), dotted(path)+".requests"
		}
		v.addPath(key, f, fmt.Sprintf("with %d requests a stage, even all %d meeting the SLO give attainment a lower bound of %.3f (%g %% confidence), below the %g asked: no stage could pass; send at least %d requests a stage",
			n, n, lo, sr.Confidence*100, sr.Attainment, least))
	}
	if b := sr.Rate; b != nil && !b.Auto && l.StageTimeout > 0 {
		if span := time.Duration(float64(n) / b.Lo * float64(time.Second)); span > time.Duration(l.StageTimeout) {
			v.addPath(append(slices.Clone(path), "stage_timeout"), dotted(path)+".stage_timeout",
				fmt.Sprintf("a search stage at its bracket's bottom (%g requests/s) is scheduled over %s, longer than the stage timeout (%s); raise stage_timeout, or send fewer requests per stage",
					b.Lo, span.Round(time.Second), time.Duration(l.StageTimeout)))
		}
	}
}

// rateGiven says rate: is written in the block (0 written is a mistake;
// left out means a closed loop).
func rateGiven(v *validator, path []any) bool {
	return v.root.lookup(append(slices.Clone(path), "rate")...) != nil
}

// Levels are the sweep's stages as (closed, level) pairs, in order: the
// concurrency levels, the rates, or the one rate. An auto sweep has none
// here (its stages are planned by package plan).
func (l *LoadProfile) Levels() (open bool, levels []float64) {
	switch {
	case l.Sweep.Concurrency != nil:
		for _, c := range l.Sweep.Concurrency {
			levels = append(levels, float64(c))
		}
		return false, levels
	case l.Sweep.Rate != nil:
		return true, slices.Clone(l.Sweep.Rate)
	case l.Rate > 0:
		return true, []float64{l.Rate}
	case l.Arrival == ArrivalRecorded:
		return true, []float64{l.RecordedRate()}
	}
	return false, nil
}

// RecordedRate is arrival: recorded's mean rate, requests per second
// over the recorded span (0 before the prompts are loaded, or for turns
// all sent at once).
func (l *LoadProfile) RecordedRate() float64 {
	n := len(l.Recorded)
	if n < 2 || l.Recorded[n-1] <= 0 {
		return 0
	}
	return float64(n-1) / l.Recorded[n-1].Seconds()
}

// checkRecorded gives arrival: recorded its schedule from the prompt set:
// every prompt must be a replayed turn (prompts.replay), and the
// recorded span must fit the stage timeout.
func (l *LoadProfile) checkRecorded(v *validator, path []any, set []prompts.Prompt, reps int) {
	if l.Arrival != ArrivalRecorded {
		return
	}
	add := func(key, msg string) { v.addPath(append(slices.Clone(path), key), dotted(path)+"."+key, msg) }
	l.Recorded = make([]time.Duration, 0, len(set))
	for _, p := range set {
		if !strings.HasPrefix(p.Source, prompts.ReplaySource) {
			l.Recorded = nil
			add("arrival", fmt.Sprintf("recorded needs every prompt to be a replayed turn (prompts.replay), and %s is not", yamlerr.Quoted(p.ID)))
			return
		}
		l.Recorded = append(l.Recorded, time.Duration(p.ReplayAtMS*float64(time.Millisecond)))
	}
	n := l.Requests
	if n == 0 {
		n = len(set) * max(reps, 1)
	}
	if offs := RecordedArrivals(l.Recorded, n); len(offs) > 0 && l.StageTimeout > 0 && offs[len(offs)-1] > time.Duration(l.StageTimeout) {
		add("stage_timeout", fmt.Sprintf("the recorded schedule of %d requests spans %s, longer than the stage timeout (%s); raise stage_timeout, or send fewer requests",
			n, offs[len(offs)-1].Round(time.Millisecond), time.Duration(l.StageTimeout)))
	}
}

// RecordedArrivals is arrival: recorded's schedule for n requests: the
// recorded offsets in turn, and past the last, again from the start one
// recorded span (and one mean gap) later, so repetitions keep the
// recorded pacing.
func RecordedArrivals(rec []time.Duration, n int) []time.Duration {
	out := make([]time.Duration, n)
	m := len(rec)
	if m == 0 {
		return out
	}
	period := rec[m-1]
	if m > 1 {
		period += rec[m-1] / time.Duration(m-1)
	}
	for i := range out {
		out[i] = rec[i%m] + time.Duration(i/m)*period
	}
	return out
}

// Staged says the block runs suites as stages (a sweep, a rate or a
// search); a block with only a concurrency is a closed loop at that
// concurrency.
func (l *LoadProfile) Staged() bool {
	return l != nil && (l.Open() || !l.Sweep.IsZero() || l.Search != nil)
}

// checkSpan refuses an open-loop stage whose schedule is longer than
// stage_timeout; cells is a stage's default count (prompts × repetitions).
func (l *LoadProfile) checkSpan(v *validator, path []any, cells int) {
	add := func(key, msg string) { v.addPath(append(slices.Clone(path), key), dotted(path)+"."+key, msg) }
	// A stage must fit its bound: the schedule of an open-loop stage is
	// known before it runs.
	if l.StageTimeout > 0 && l.Open() {
		s := l.Sweep
		n := l.Requests
		if n == 0 {
			n = cells
		}
		rates := s.Rate
		if l.Rate > 0 {
			rates = []float64{l.Rate}
		}
		for _, r := range rates {
			if r <= 0 {
				continue
			}
			// In seconds, as floats: a rate of 1e-300 schedules past
			// what a time.Duration holds (292 years), which wrapped
			// negative and passed.
			span := time.Duration(l.Duration).Seconds()
			if span == 0 {
				span = float64(n) / r
			}
			span += time.Duration(l.Ramp).Seconds() / 2 // the ramp's arrivals come later than at full rate
			if span > time.Duration(l.StageTimeout).Seconds() {
				add("stage_timeout", fmt.Sprintf("a stage at %g requests/s is scheduled over %s, longer than the stage timeout (%s); raise stage_timeout, or send fewer requests per stage",
					r, spanText(span), time.Duration(l.StageTimeout)))
				break
			}
		}
	}
}

// spanText writes a schedule's length: as a duration up to a year, in
// seconds past it.
func spanText(s float64) string {
	if s <= 365*24*3600 {
		return time.Duration(s * float64(time.Second)).Round(time.Second).String()
	}
	return fmt.Sprintf("%.3g s", s)
}

// StageCells is how many cells a stage of the block has, the warm-up
// left out: requests, the prompts × repetitions of the suite, or for a
// duration the arrivals expected in it (package plan counts them exactly
// from the schedule).
func (l *LoadProfile) StageCells(level float64, suiteCells int) int {
	switch {
	case l.Requests > 0:
		return l.Requests
	case l.Duration > 0:
		return max(1, int(math.Ceil(level*time.Duration(l.Duration).Seconds())))
	}
	return suiteCells
}

// Stages is how many stages the block runs per suite, the warm-up left
// out.
func (l *LoadProfile) Stages() int {
	if l.Search != nil {
		return l.Search.MaxStages
	}
	if l.Sweep.Auto {
		return 2 + l.AutoRates
	}
	_, levels := l.Levels()
	return len(levels)
}

// suiteCells is how many cells a suite of the block has, warm-up included.
func (l *LoadProfile) suiteCells(suiteCells int) int64 {
	if !l.Staged() {
		return int64(suiteCells)
	}
	n := int64(l.Warmup)
	if l.Sweep.Auto || l.Search != nil {
		return n + int64(l.Stages())*int64(l.StageCells(0, suiteCells))
	}
	_, levels := l.Levels()
	for _, lv := range levels {
		n += int64(l.StageCells(lv, suiteCells))
	}
	return n
}

// validateLoad gives each entry its load block (its own, or the run-wide
// one) with defaults, and checks each block once, where it is written.
func (c *Config) validateLoad(v *validator) {
	if c.Load != nil {
		c.Load.Line = 0
		if n := v.root.lookup("load"); n != nil {
			c.Load.Line = n.Line
		}
		c.Load.validate(v, []any{"load"})
		c.Load.defaults()
	}
	for i := range c.Providers {
		p := &c.Providers[i]
		if p.Load == nil {
			p.Load = c.Load
			continue
		}
		p.Load.validate(v, []any{"providers", i, "load"})
		p.Load.defaults()
	}
	if c.Run.Interleave {
		for i := range c.Providers {
			if c.Providers[i].Load.Staged() {
				v.add("run.interleave", "a load sweep runs each suite's stages alone; interleaving would mix their loads (turn one off)")
				break
			}
		}
	}
	if c.SLO != nil && c.SLO.Empty() {
		v.add("slo", "sets no target: name ttft_ms, itl_ms, tpot_ms or e2e_ms")
	}
	c.checkConversations(v)
	if sy := c.Prompts.Synthetic; sy != nil {
		if len(sy.InputTokens) == 0 {
			v.add("prompts.synthetic.input_tokens", "list at least one input length in tokens")
		}
		for i, n := range sy.InputTokens {
			if n < 1 || n > MaxSyntheticTokens {
				v.addPath([]any{"prompts", "synthetic", "input_tokens", i}, fmt.Sprintf("prompts.synthetic.input_tokens[%d]", i), fmt.Sprintf("must be from 1 to %d", MaxSyntheticTokens))
			}
		}
		if sy.OutputTokens < 1 || sy.OutputTokens > MaxSyntheticTokens {
			v.add("prompts.synthetic.output_tokens", fmt.Sprintf("must be from 1 to %d", MaxSyntheticTokens))
		}
	}
}

// checkConversations checks prompts.conversations: each length in its
// bounds, and the last turn within the model's context when it is given.
func (c *Config) checkConversations(v *validator) {
	cv := c.Prompts.Conversations
	if cv == nil {
		return
	}
	bound := func(key string, n, lo, hi int) {
		if n < lo || n > hi {
			v.add("prompts.conversations."+key, fmt.Sprintf("must be from %d to %d", lo, hi))
		}
	}
	if cv.Count != 0 {
		bound("count", cv.Count, 1, MaxConversations)
	}
	bound("system_tokens", cv.SystemTokens, 0, MaxSyntheticTokens)
	bound("turns", cv.Turns, 1, MaxConversationTurns)
	bound("user_tokens", cv.UserTokens, 1, MaxSyntheticTokens)
	bound("output_tokens", cv.OutputTokens, 1, MaxSyntheticTokens)
	if cv.ContextTokens < 0 {
		v.add("prompts.conversations.context_tokens", "must be positive (the model's context in tokens), or left out")
	}
	if cv.Turns < 1 || cv.Turns > MaxConversationTurns || cv.UserTokens < 1 || cv.OutputTokens < 1 {
		return
	}
	// The last turn's prompt and its answer must fit in the context; the
	// whole of it is bounded as a synthetic prompt is.
	last := cv.Spec().TurnTokens(cv.Turns) + cv.OutputTokens
	switch {
	case cv.ContextTokens > 0 && last > cv.ContextTokens:
		fits := 0
		for t := 1; t <= cv.Turns && cv.Spec().TurnTokens(t)+cv.OutputTokens <= cv.ContextTokens; t++ {
			fits = t
		}
		v.add("prompts.conversations.turns", fmt.Sprintf("the last of %d turns holds about %d tokens with its answer, more than context_tokens (%d): at most %d turns fit", cv.Turns, last, cv.ContextTokens, fits))
	case last > MaxSyntheticTokens:
		v.add("prompts.conversations.turns", fmt.Sprintf("the last turn would hold about %d tokens, more than %d", last, MaxSyntheticTokens))
	}
}

// checkLoadSpans runs each block's checkSpan once its prompts are known.
func (c *Config) checkLoadSpans(v *validator) {
	cells := c.Run.Repetitions * len(c.PromptSet)
	if c.Load != nil {
		c.Load.checkRecorded(v, []any{"load"}, c.PromptSet, c.Run.Repetitions)
		c.Load.checkSpan(v, []any{"load"}, cells)
		c.Load.checkSearch(v, []any{"load"}, cells, c.SLO)
	}
	for i := range c.Providers {
		if p := &c.Providers[i]; p.Load != nil && p.Load != c.Load {
			p.Load.checkRecorded(v, []any{"providers", i, "load"}, c.PromptSet, c.Run.Repetitions)
			p.Load.checkSpan(v, []any{"providers", i, "load"}, cells)
			p.Load.checkSearch(v, []any{"providers", i, "load"}, cells, c.SLO)
		}
	}
}

// dotted writes a node path as errors name fields: providers[0].load.
func dotted(path []any) string {
	var b strings.Builder
	for _, p := range path {
		switch p := p.(type) {
		case string:
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(p)
		case int:
			fmt.Fprintf(&b, "[%d]", p)
		}
	}
	return b.String()
}
