package slo

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"

	"bench/internal/record/results"
	"bench/internal/yamlerr"

	"gopkg.in/yaml.v3"
)

// Search is load.search: find the highest rate (or concurrency) at which
// the slo: block holds at a stated attainment, one load stage at a time.
// Each stage sends the profile's requests at one level; it passes when the
// lower bound of the Wilson interval (at Confidence) of its attainment
// (the share of its sent requests that answered within every per-request
// target, Meets) is at least Attainment, so a lucky stage cannot pass.
// The runner asks Next for each stage's level from the stages before it,
// and the reports ask Evaluate for the limit: both read the same stages
// the same way (results.jsonl holds every cell; config.json this block).
//
// The search (Next):
//
//   - rate: auto (the default) runs a probe first, a closed loop at the
//     profile's concurrency (32 streams by default) that measures the most
//     the server answers per second, X. A rate stage cannot be answered
//     above that for long, so the search starts at X: halving down until a
//     stage passes, or stepping up until one fails, first by a quarter
//     (the limit is seldom far above X), then doubling (an SLO
//     whose margin absorbs a long queue, a server with more slots than the
//     probe's streams), then bisecting the bracket
//     geometrically (the next level is the geometric mean of the highest
//     pass and the lowest fail: the error that matters is relative; a
//     concurrency search takes the midpoint, in whole streams).
//     Against a server whose limit is near its ceiling this takes the
//     probe, X, one step out and three bisections: 6 stages to 5 % or
//     3 %, where doubling from 1 request/s to 40 takes 7 stages before
//     its first bisection.
//   - rate: [lo, hi] and concurrency: [lo, hi] (or auto, [1, 10000])
//     double from lo, capped at hi, until a stage fails, then bisect
//     (concurrency in whole streams).
//   - it stops when the bracket's top is within Tolerance of its bottom
//     (hi/lo − 1 ≤ Tolerance, or one stream apart), after MaxStages stages
//     (the probe counts), when hi passed (the limit is above the bracket)
//     or the bottom failed.
//
// The limit is the highest level that passed below the lowest that
// failed: a level proven to hold, never one interpolated past the data.
type Search struct {
	// Rate searches requests per second (open loop); Concurrency searches
	// streams (closed loop). One of the two.
	Rate        *Bracket `yaml:"rate" json:"rate,omitempty"`
	Concurrency *Bracket `yaml:"concurrency" json:"concurrency,omitempty"`
	// Attainment is the share of a stage's requests that must meet every
	// per-request target (default 0.95).
	Attainment float64 `yaml:"attainment" json:"attainment"`
	// Confidence is the two-sided level of the Wilson interval whose lower
	// bound a stage's attainment is judged on (default 0.95).
	Confidence float64 `yaml:"confidence" json:"confidence"`
	// Tolerance ends the search once hi/lo − 1 is at most this (default
	// 0.05).
	Tolerance float64 `yaml:"tolerance" json:"tolerance"`
	// MaxStages bounds the stages, the probe included (default 8).
	MaxStages int `yaml:"max_stages" json:"max_stages"`
}

// Bracket is where a search looks: auto, or [lo, hi].
type Bracket struct {
	Auto   bool
	Lo, Hi float64
}

// Search defaults and bounds.
const (
	DefaultAttainment     = 0.95
	DefaultConfidence     = 0.95
	DefaultTolerance      = 0.05
	DefaultMaxStages      = 8
	MaxSearchStages       = 64
	MaxSearchRate         = 100_000 // requests/s, as load.rate
	MaxSearchConcurrency  = 10_000
	minSearchRate         = 1e-3
	ModeRate              = "rate"
	ModeConcurrency       = "concurrency"
	searchStepUp          = 2.0
	searchFirstStepUp     = 1.25
	searchStepDown        = 0.5
	searchBottomRateRatio = 1 << 10 // auto halves at most this far below the probe
)

// Why a search ended (Step.End, Limit.End).
const (
	EndConverged      = "converged"        // the bracket is within the tolerance
	EndMaxStages      = "max_stages"       // max_stages ran first
	EndNeverFailed    = "never_failed"     // the bracket's top (or the highest level tried) passed
	EndFailedAtBottom = "failed_at_bottom" // the bracket's bottom (or the lowest level tried) failed
	EndProbeFailed    = "probe_failed"     // the probe answered nothing
	EndUnfinished     = "unfinished"       // the run stopped before the search did
)

// Defaults fills what the block leaves out.
func (s *Search) Defaults() {
	if s.Attainment == 0 {
		s.Attainment = DefaultAttainment
	}
	if s.Confidence == 0 {
		s.Confidence = DefaultConfidence
	}
	if s.Tolerance == 0 {
		s.Tolerance = DefaultTolerance
	}
	if s.MaxStages == 0 {
		s.MaxStages = DefaultMaxStages
	}
	if s.Rate == nil && s.Concurrency == nil {
		s.Rate = &Bracket{Auto: true}
	}
}

// Mode is what the search varies: ModeRate or ModeConcurrency.
func (s *Search) Mode() string {
	if s.Concurrency != nil {
		return ModeConcurrency
	}
	return ModeRate
}

// Probe says the search starts with a throughput probe (rate: auto).
func (s *Search) Probe() bool { return s.Concurrency == nil && (s.Rate == nil || s.Rate.Auto) }

// bracket is the search's range: [lo, hi] as written, or auto's.
func (s *Search) bracket() (lo, hi float64) {
	if s.Concurrency != nil {
		if s.Concurrency.Auto {
			return 1, MaxSearchConcurrency
		}
		return s.Concurrency.Lo, s.Concurrency.Hi
	}
	if s.Rate != nil && !s.Rate.Auto {
		return s.Rate.Lo, s.Rate.Hi
	}
	return minSearchRate, MaxSearchRate
}

// FirstLevel is the level of the search's first stage after the probe
// when it is known before the run (an explicit bracket's bottom, or a
// concurrency search's): the warm-up runs there. 0 for rate: auto.
func (s *Search) FirstLevel() float64 {
	if s.Probe() {
		return 0
	}
	lo, _ := s.bracket()
	return lo
}

// UnmarshalYAML reads auto or [lo, hi].
func (b *Bracket) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode && n.Value == "auto" {
		b.Auto = true
		return nil
	}
	if n.Kind != yaml.SequenceNode || len(n.Content) != 2 {
		return &yamlerr.Error{Line: n.Line, Msg: "a search's bracket is auto or [lo, hi], e.g. [1, 64]"}
	}
	var xs [2]float64
	for i, e := range n.Content {
		x, err := strconv.ParseFloat(e.Value, 64)
		if e.Kind != yaml.ScalarNode || (e.Tag != "!!int" && e.Tag != "!!float") || err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
			return &yamlerr.Error{Line: e.Line, Msg: fmt.Sprintf("%s is not a level: write a number", yamlerr.Quoted(e.Value))}
		}
		if x <= 0 {
			return &yamlerr.Error{Line: e.Line, Msg: "a level must be more than 0"}
		}
		xs[i] = x
	}
	if xs[1] <= xs[0] {
		return &yamlerr.Error{Line: n.Line, Msg: fmt.Sprintf("[%g, %g] is empty: the top must be above the bottom", xs[0], xs[1])}
	}
	b.Lo, b.Hi = xs[0], xs[1]
	return nil
}

// MarshalJSON writes "auto" or [lo, hi], as bench.yaml has it.
func (b Bracket) MarshalJSON() ([]byte, error) {
	if b.Auto {
		return []byte(`"auto"`), nil
	}
	return json.Marshal([2]float64{b.Lo, b.Hi})
}

// UnmarshalJSON reads what MarshalJSON wrote (config.json, for reports).
func (b *Bracket) UnmarshalJSON(data []byte) error {
	var s string
	if json.Unmarshal(data, &s) == nil {
		if s != "auto" {
			return fmt.Errorf("%q is not a search bracket", s)
		}
		b.Auto = true
		return nil
	}
	var xs [2]float64
	if err := json.Unmarshal(data, &xs); err != nil {
		return fmt.Errorf("a search bracket is \"auto\" or [lo, hi]: %w", err)
	}
	b.Lo, b.Hi = xs[0], xs[1]
	return nil
}

// Tally is one stage's attainment: its sent requests, those that met
// every per-request target, and by target those that answered and missed
// it (a request may miss several) or did not answer at all.
type Tally struct {
	Sent, Good, Unanswered int
	// Missed counts, by metric, the answered requests over its limit.
	Missed map[string]int
}

// Add counts one cell of the stage under the SLO s (a cell not sent is
// not counted).
func (t *Tally) Add(s *SLO, r *results.Record) {
	if !results.Sent(r) {
		return
	}
	t.Sent++
	if r.AvailabilityStatus != results.StatusOK || !r.Success {
		t.Unanswered++
		return
	}
	var buf [4]string
	miss := Misses(s, r, buf[:0])
	if len(miss) == 0 {
		t.Good++
		return
	}
	if t.Missed == nil {
		t.Missed = map[string]int{}
	}
	for _, m := range miss {
		t.Missed[m]++
	}
}

// Outcome is one finished stage as the search reads it.
type Outcome struct {
	Stage string
	// Level is the stage's rate or streams; Probe marks the throughput
	// probe, whose Throughput (answered requests per second over the
	// stage) starts a rate: auto search.
	Level      float64
	Probe      bool
	Throughput float64
	Tally      Tally
}

// Judge is a stage's verdict: its attainment's Wilson interval at the
// search's confidence, and whether the interval's lower bound reaches the
// attainment. A stage that sent nothing fails.
func (s *Search) Judge(t Tally) (pass bool, lo, hi float64) {
	if t.Sent == 0 {
		return false, 0, 1
	}
	lo, hi = WilsonZ(float64(t.Good), float64(t.Sent), ZFor(s.Confidence))
	return lo >= s.Attainment, lo, hi
}

// Step is what the search does next: a stage at Level (the probe when
// Probe is set), or End with Why.
type Step struct {
	Probe bool
	Level float64
	End   string
	Why   string
}

// bounds are the search's state read from its finished stages.
type bounds struct {
	x                float64 // the probe's throughput (0: no probe)
	pass, fail       float64 // highest pass below the lowest fail; lowest fail (0: none)
	anyPass, anyFail bool
	minTried         float64
	maxTried         float64
	judged           int
}

func (s *Search) bounds(done []Outcome) bounds {
	var b bounds
	b.minTried = math.Inf(1)
	for _, o := range done {
		if o.Probe {
			b.x = o.Throughput
			continue
		}
		b.judged++
		b.minTried, b.maxTried = math.Min(b.minTried, o.Level), math.Max(b.maxTried, o.Level)
		if ok, _, _ := s.Judge(o.Tally); !ok && (!b.anyFail || o.Level < b.fail) {
			b.fail, b.anyFail = o.Level, true
		}
	}
	for _, o := range done {
		if o.Probe {
			continue
		}
		if ok, _, _ := s.Judge(o.Tally); ok && (!b.anyFail || o.Level < b.fail) && o.Level > b.pass {
			b.pass, b.anyPass = o.Level, true
		}
	}
	return b
}

// Next is the search's next stage after done (its finished stages in the
// order they ran), with probeStreams the probe's closed-loop streams.
func (s *Search) Next(done []Outcome, probeStreams int) Step {
	st := s.next(done, probeStreams)
	if st.End == "" && len(done) >= s.MaxStages {
		return Step{End: EndMaxStages, Why: fmt.Sprintf("max_stages (%d) ran before the bracket was within the tolerance", s.MaxStages)}
	}
	return st
}

// next is Next without the bound on stages.
func (s *Search) next(done []Outcome, probeStreams int) Step {
	if s.Probe() && len(done) == 0 {
		return Step{Probe: true, Level: float64(probeStreams)}
	}
	b := s.bounds(done)
	conc := s.Mode() == ModeConcurrency
	lo, hi := s.bracket()
	if s.Probe() {
		if b.x <= 0 {
			return Step{End: EndProbeFailed, Why: "the throughput probe answered no request, so the search has no rate to start from"}
		}
		lo = math.Max(minSearchRate, b.x/searchBottomRateRatio)
		if b.judged == 0 {
			return Step{Level: clampRate(b.x)}
		}
	} else if b.judged == 0 {
		return Step{Level: lo}
	}
	name := func(v float64) string { return levelName(s.Mode(), v) }
	switch {
	case b.anyPass && b.anyFail:
		if (conc && b.fail-b.pass <= 1) || b.fail/b.pass-1 <= s.Tolerance+1e-12 {
			return Step{End: EndConverged, Why: fmt.Sprintf("%s passed and %s failed: within the tolerance (%g)", name(b.pass), name(b.fail), s.Tolerance)}
		}
		next := math.Sqrt(b.pass * b.fail)
		if conc {
			// Streams are whole: the plain midpoint halves what is left
			// where the geometric one, rounded, may not move.
			next = math.Floor((b.pass + b.fail) / 2)
			next = math.Min(math.Max(next, b.pass+1), b.fail-1)
		}
		return Step{Level: next}
	case !b.anyFail:
		if b.maxTried >= hi {
			return Step{End: EndNeverFailed, Why: fmt.Sprintf("the SLO held at every level tried, up to %s: the limit is above the bracket", name(b.maxTried))}
		}
		step := searchStepUp
		if s.Probe() && b.judged == 1 {
			// The probe's rate passed: the limit is seldom far above what
			// the server answers at full concurrency (above it the queue
			// grows for as long as the stage lasts), so the first step out
			// is a quarter, the next ones double.
			step = searchFirstStepUp
		}
		next := math.Min(b.maxTried*step, hi)
		if conc {
			next = math.Round(next)
		}
		return Step{Level: next}
	default: // failed, nothing passed below
		if b.minTried <= lo {
			return Step{End: EndFailedAtBottom, Why: fmt.Sprintf("the SLO failed at the lowest level tried, %s: the limit is below the bracket", name(b.minTried))}
		}
		next := math.Max(b.minTried*searchStepDown, lo)
		if conc {
			next = math.Max(1, math.Floor(next))
		}
		return Step{Level: next}
	}
}

func clampRate(r float64) float64 { return math.Min(math.Max(r, minSearchRate), MaxSearchRate) }

// levelName names a level as stage names do: c=4, rate=12.5.
func levelName(mode string, v float64) string {
	if mode == ModeConcurrency {
		return "c=" + strconv.FormatFloat(v, 'f', -1, 64)
	}
	return "rate=" + strconv.FormatFloat(v, 'g', 4, 64)
}

// Limit is what a search found, read from its stages (Evaluate).
type Limit struct {
	// Found says a stage passed below one that failed: the limit lies in
	// Bracket.
	Found bool
	// Level is the highest level that passed below the lowest that failed
	// (the limit, conservatively; 0 when none passed); Bracket is [Level,
	// the lowest failing level] (0 for a side no stage gave).
	Level   float64
	Bracket [2]float64
	// Converged says the bracket is within the tolerance.
	Converged bool
	// End says why the search stopped (EndConverged...), Why in words.
	End, Why string
	// Stages is how many stages ran, the probe included; FirstFailed the
	// index in the outcomes of the first stage (in the order they ran)
	// that failed, -1 when none did.
	Stages      int
	FirstFailed int
}

// Evaluate reads the search's result from its finished stages. complete
// says the run did not stop before the search did: when the search would
// go on, it then ran out of stages (max_stages); otherwise it is
// unfinished.
func (s *Search) Evaluate(done []Outcome, probeStreams int) Limit {
	b := s.bounds(done)
	l := Limit{Stages: len(done), FirstFailed: -1}
	for i, o := range done {
		if ok, _, _ := s.Judge(o.Tally); !o.Probe && !ok {
			l.FirstFailed = i
			break
		}
	}
	if b.anyPass {
		l.Level, l.Bracket[0] = b.pass, b.pass
	}
	if b.anyFail {
		l.Bracket[1] = b.fail
	}
	l.Found = b.anyPass && b.anyFail
	next := s.Next(done, probeStreams)
	l.End, l.Why = next.End, next.Why
	if next.End == "" {
		l.End, l.Why = EndUnfinished, "the run stopped before the search ended"
	}
	l.Converged = l.End == EndConverged
	return l
}

// IsSearchStage says a stage name is one of a search's (a probe or a
// step), as plan names them.
func IsSearchStage(name string) bool {
	return name == StageProbe || (len(name) > len(stagePrefix) && name[:len(stagePrefix)] == stagePrefix)
}

// Stage names of a search, as plan names them: the probe and search-1,
// search-2...
const (
	StageProbe  = "probe"
	stagePrefix = "search-"
)

// StageName names a search's step i (from 1).
func StageName(i int) string { return stagePrefix + strconv.Itoa(i) }
