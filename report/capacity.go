package report

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"sort"
	"strings"

	"bench/internal/record/pricing"
	"bench/internal/record/results"
	"bench/internal/record/rundir"
	"bench/internal/record/slo"
)

// Stage is one load stage of a group in summary.json: what the suite did
// at one concurrency or one rate (docs/load.md).
type Stage struct {
	Stage string `json:"stage"`
	// Mode is concurrency or rate; Level the streams or the offered rate
	// (an auto stage's as it was chosen); Warmup marks the warm-up stage,
	// which no figure of the group counts.
	Mode   string   `json:"mode"`
	Level  *float64 `json:"level"`
	Warmup bool     `json:"warmup,omitempty"`

	NTotal   int `json:"n_total"`
	NSuccess int `json:"n_success"`
	// NError counts the cells that got no answer (availability_status not
	// ok) among those sent; NNotRun the cells the sweep did not send (it
	// had stopped, or the stage timed out).
	NError    int      `json:"n_error"`
	NNotRun   int      `json:"n_not_run"`
	ErrorRate *float64 `json:"error_rate"`
	// NotRunReason is why cells were not sent, when some were not.
	NotRunReason string `json:"not_run_reason,omitempty"`

	// DurationS is from the stage's start to its last cell's end.
	DurationS *float64 `json:"duration_s"`
	// OfferedRate is the rate the schedule drew (cells − 1 over the
	// first due time to the last): a Poisson stage of 30 requests at
	// 30/s may draw 26/s. SentRate is the same over the sent times: what
	// the generator achieved of it.
	OfferedRate *float64 `json:"offered_rate"`
	SentRate    *float64 `json:"sent_rate"`
	// RequestThroughput is successful requests per second over the
	// stage's duration; OutputTokensPerS and TotalTokensPerS their output
	// and input + output tokens per second.
	RequestThroughput *float64 `json:"request_throughput"`
	OutputTokensPerS  *float64 `json:"output_tokens_per_s"`
	TotalTokensPerS   *float64 `json:"total_tokens_per_s"`

	TTFTMS         Stats `json:"ttft_ms"`
	ITLMS          Stats `json:"itl_ms"`
	TPOTMS         Stats `json:"tpot_ms"`
	E2EMS          Stats `json:"e2e_ms"`
	ScheduleSlipMS Stats `json:"schedule_slip_ms"`
	SlotWaitMS     Stats `json:"slot_wait_ms"`

	// Goodput is the requests that met every per-request SLO; null
	// without an slo: block.
	Goodput *Goodput `json:"goodput"`

	// StartUS and EndUS are the stage's window: its start and its last
	// cell's end, µs since the epoch (the run's clock).
	StartUS int64 `json:"start_us,omitempty"`
	EndUS   int64 `json:"end_us,omitempty"`
	// CachedInputShare is the share of the stage's input tokens the server
	// said it read from its prompt cache (cached_input_tokens over
	// input_tokens, over the answered cells that report both).
	CachedInputShare *float64 `json:"cached_input_share,omitempty"`
	// Server is what the model server said of itself during the stage
	// (its metrics, its residency; server.go).
	Server *StageServer `json:"server,omitempty"`

	acc *stageAcc
	// tally is the stage's attainment under the slo: block, for an SLO
	// search (search.go).
	tally slo.Tally
}

// Goodput is how many requests met the run's SLOs (vLLM's
// request_goodput): a request counts when it answered and its ttft_ms,
// e2e_ms, tpot_ms and itl_ms (its own p99 gap) are within every
// per-request limit (a TPOT or ITL too short to measure does not fail).
// Percentile targets are judged on the stage's distribution (SLOMet).
type Goodput struct {
	N int `json:"n"`
	// Share is N over the cells sent; Rate N per second of the stage.
	Share *float64 `json:"share"`
	Rate  *float64 `json:"rate"`
	// SLOMet says the stage met every percentile target (null when the
	// SLO has none); Missed lists those it did not.
	SLOMet *bool    `json:"slo_met"`
	Missed []string `json:"missed,omitempty"`
}

// Saturation is where a group's sweep stopped scaling: for a rate sweep,
// the highest rate it kept up with (answered at least KeptUpShare of the
// rate its schedule offered); for a concurrency sweep, the last level whose
// throughput grew by at least MinGain over the level before. Reached is
// false when every level scaled (the sweep never found the limit).
type Saturation struct {
	Reached bool    `json:"reached"`
	Stage   string  `json:"stage"`
	Level   float64 `json:"level"`
	// RequestThroughput is the stage's; MaxRequestThroughput the highest
	// of any stage.
	RequestThroughput    float64 `json:"request_throughput"`
	MaxRequestThroughput float64 `json:"max_request_throughput"`
	Rule                 string  `json:"rule"`
}

// Saturation rules.
const (
	KeptUpShare = 0.9
	MinGain     = 0.25
)

type stageAcc struct {
	ttft, itl, tpot, e2e, slip, wait estimator
	itlM                             results.ITLMerge
	start, lastEnd                   int64 // µs
	firstSent, lastSent              float64
	firstDue, lastDue                float64
	sent                             int
	outTokens, inTokens              pricing.Count
	cachedIn, cacheableIn            pricing.Count
	good                             int
}

// capacityAcc is a group's load and serving figures.
type capacityAcc struct {
	stages        map[string]*Stage
	order         []string
	itl           results.ITLMerge
	tpot, prefill estimator
	good, judged  int
}

// slo is what the aggregator judges goodput against.
func (a *aggregator) addCapacity(g *acc, r *results.Record, speed bool) {
	success := r.AvailabilityStatus == results.StatusOK && r.Success
	serving := speed && success && (r.ITLMS != nil || r.TPOTMS != nil || r.PrefillTokensPerS != nil)
	judged := r.Stage != "warmup" && a.slo != nil && sent(r)
	c := g.cap
	if c == nil {
		// Made at the group's first cell with something to count: a
		// group without serving figures, stages or an slo: block holds
		// none (a run of 100,000 one-cell groups, issue 21 item 7).
		if !serving && !judged && r.Stage == "" {
			return
		}
		c = &capacityAcc{tpot: newExact(a.sp), prefill: newExact(a.sp)}
		g.cap = c
	}
	if serving {
		c.itl.Add(r.ITLMS)
		if r.TPOTMS != nil {
			c.tpot.Add(*r.TPOTMS)
		}
		if r.PrefillTokensPerS != nil {
			c.prefill.Add(*r.PrefillTokensPerS)
		}
	}
	// The group's goodput counts every sent cell but the warm-up's, over
	// all its stages.
	if judged {
		c.judged++
		if a.meets(r) {
			c.good++
		}
	}
	if r.Stage == "" {
		return
	}
	st := c.stages[r.Stage]
	if st == nil {
		if c.stages == nil {
			c.stages = map[string]*Stage{}
		}
		st = &Stage{Stage: r.Stage, Mode: r.StageMode, Warmup: r.Stage == "warmup",
			acc: &stageAcc{ttft: newExact(a.sp), itl: newExact(a.sp), tpot: newExact(a.sp), e2e: newExact(a.sp), slip: newExact(a.sp), wait: newExact(a.sp), firstSent: math.Inf(1), firstDue: math.Inf(1)}}
		c.stages[r.Stage] = st
		c.order = append(c.order, r.Stage)
	}
	if r.StageLevel != nil && st.Level == nil {
		st.Level = ptrF(*r.StageLevel)
	}
	s := st.acc
	st.NTotal++
	if !sent(r) {
		st.NNotRun++
		if st.NotRunReason == "" && r.ErrorMessage != nil {
			st.NotRunReason = *r.ErrorMessage
		}
		return
	}
	s.sent++
	if r.AvailabilityStatus != results.StatusOK {
		st.NError++
	}
	if r.StageStartUS > 0 && (s.start == 0 || r.StageStartUS < s.start) {
		s.start = r.StageStartUS
	}
	s.lastEnd = max(s.lastEnd, r.EndedAtUS)
	if r.SentAtMS != nil {
		s.firstSent, s.lastSent = math.Min(s.firstSent, *r.SentAtMS), math.Max(s.lastSent, *r.SentAtMS)
	}
	if r.ScheduledAtMS != nil {
		s.firstDue, s.lastDue = math.Min(s.firstDue, *r.ScheduledAtMS), math.Max(s.lastDue, *r.ScheduledAtMS)
	}
	if r.ScheduleSlipMS != nil {
		s.slip.Add(*r.ScheduleSlipMS)
	}
	if r.SlotWaitMS != nil {
		s.wait.Add(*r.SlotWaitMS)
	}
	if a.slo != nil && a.meets(r) {
		s.good++
	}
	if a.slo != nil && slo.IsSearchStage(r.Stage) {
		st.tally.Add(a.slo, r)
	}
	if !success {
		return
	}
	st.NSuccess++
	s.outTokens.AddPtr(r.OutputTokens)
	s.inTokens.AddPtr(r.InputTokens)
	if r.InputTokens != nil && r.CachedInputTokens != nil {
		s.cachedIn.AddPtr(r.CachedInputTokens)
		s.cacheableIn.AddPtr(r.InputTokens)
	}
	if r.ColdStart {
		return
	}
	ttft, e2e, ok := slo.PreciseTimes(r)
	if ok {
		s.e2e.Add(e2e)
		if !math.IsNaN(ttft) {
			s.ttft.Add(ttft)
		}
	}
	s.itlM.Add(r.ITLMS)
	if r.TPOTMS != nil {
		s.tpot.Add(*r.TPOTMS)
	}
}

// Sent says the cell was sent (results.Sent): the cells a stage's error
// rate and goodput count.
func Sent(r *results.Record) bool { return results.Sent(r) }

// sent is results.Sent.
func sent(r *results.Record) bool { return results.Sent(r) }

// meets says the request answered and met every per-request limit.
func (a *aggregator) meets(r *results.Record) bool { return MeetsSLO(a.slo, r) }

// MeetsSLO says the request answered and met every per-request limit of
// slo (goodput's rule, slo.Meets): bench compare counts goodput by the
// same rule as summary.json.
func MeetsSLO(s *slo.SLO, r *results.Record) bool { return slo.Meets(s, r) }

// finishCapacity fills the group's serving figures, its stages and its
// saturation point.
func (a *aggregator) finishCapacity(g *acc) {
	c := g.cap
	gr := g.g
	if c == nil {
		return
	}
	gr.ITLMS = itlStats(&c.itl)
	gr.TPOTMS, gr.PrefillTokensPerS = c.tpot.Stats(), c.prefill.Stats()
	if a.slo != nil && c.judged > 0 {
		gr.Goodput = &Goodput{N: c.good, Share: rate(c.good, c.judged)}
		if gr.WallClockMS != nil && *gr.WallClockMS > 0 {
			gr.Goodput.Rate = round(float64(c.good) / (float64(*gr.WallClockMS) / 1000))
		}
	}
	for _, name := range c.order {
		st := c.stages[name]
		s := st.acc
		st.ErrorRate = rate(st.NError, s.sent)
		st.StartUS, st.EndUS = s.start, s.lastEnd
		if cached, ok := s.cachedIn.Sum(); ok {
			if in, ok := s.cacheableIn.Sum(); ok && in > 0 {
				st.CachedInputShare = round(float64(cached) / float64(in))
			}
		}
		if s.start > 0 && s.lastEnd > s.start {
			d := float64(s.lastEnd-s.start) / 1e6
			st.DurationS = round(d)
			st.RequestThroughput = round(float64(st.NSuccess) / d)
			// Past what a count holds a rate is left null, never a
			// wrapped one.
			out, okOut := s.outTokens.Sum()
			in, okIn := s.inTokens.Sum()
			if okOut {
				st.OutputTokensPerS = round(float64(out) / d)
			}
			if okOut && okIn {
				st.TotalTokensPerS = round((float64(out) + float64(in)) / d)
			}
			if a.slo != nil {
				st.Goodput = &Goodput{N: s.good, Share: rate(s.good, s.sent), Rate: round(float64(s.good) / d)}
			}
		}
		if st.Mode == "rate" && s.sent > 1 && s.lastDue > s.firstDue {
			st.OfferedRate = round(float64(s.sent-1) / ((s.lastDue - s.firstDue) / 1000))
		}
		if s.sent > 1 && s.lastSent > s.firstSent {
			st.SentRate = round(float64(s.sent-1) / ((s.lastSent - s.firstSent) / 1000))
		}
		st.TTFTMS, st.E2EMS, st.TPOTMS = s.ttft.Stats(), s.e2e.Stats(), s.tpot.Stats()
		st.ITLMS = itlStats(&s.itlM)
		st.ScheduleSlipMS, st.SlotWaitMS = s.slip.Stats(), s.wait.Stats()
		if a.slo != nil && st.Goodput != nil {
			a.percentileTargets(st, s)
		}
		st.acc = nil
		gr.Stages = append(gr.Stages, st)
	}
	gr.Saturation = FindSaturation(gr.Stages)
	g.cap = nil // its values too: only the groups plotted keep theirs, for their Dists
}

// percentileTargets judges the SLO's percentile targets on a stage.
func (a *aggregator) percentileTargets(st *Stage, s *stageAcc) {
	any := false
	met := true
	a.slo.Each(func(metric string, t *slo.Target) {
		for _, p := range t.SortedPercentiles() {
			any = true
			lim := t.Percentiles[p]
			var v float64
			switch metric {
			case "ttft_ms":
				v = s.ttft.Quantile(p / 100)
			case "e2e_ms":
				v = s.e2e.Quantile(p / 100)
			case "tpot_ms":
				v = s.tpot.Quantile(p / 100)
			case "itl_ms":
				v = s.itlM.Quantile(p / 100)
			}
			if math.IsNaN(v) || v > lim {
				met = false
				st.Goodput.Missed = append(st.Goodput.Missed, fmt.Sprintf("%s %s %s > %g", metric, slo.PercentileName(p), fmtNaN(v), lim))
			}
		}
	})
	if any {
		st.Goodput.SLOMet = &met
	}
}

func fmtNaN(v float64) string {
	if math.IsNaN(v) {
		return "none"
	}
	return fmt.Sprintf("%.3g", v)
}

// itlStats are a merged ITL's percentiles (nearest rank, within
// results.ITLRelErr) and mean.
func itlStats(m *results.ITLMerge) Stats {
	if m.N() == 0 {
		return Stats{}
	}
	return Stats{P50: round(m.Quantile(0.5)), P95: round(m.Quantile(0.95)), P99: round(m.Quantile(0.99)), Mean: round(m.Mean())}
}

// FindSaturation finds where a sweep stopped scaling (see Saturation),
// over its stages other than the warm-up, in level order; nil with fewer
// than two such stages. It reads Stage, Mode, Level, Warmup,
// RequestThroughput and OfferedRate only, so bench compare applies the
// same rule to the stages it rebuilds.
func FindSaturation(stages []*Stage) *Saturation {
	var sw []*Stage
	for _, s := range stages {
		if !s.Warmup && s.Level != nil && s.RequestThroughput != nil {
			sw = append(sw, s)
		}
	}
	if len(sw) < 2 {
		return nil
	}
	sort.SliceStable(sw, func(i, j int) bool {
		if sw[i].Mode != sw[j].Mode {
			return sw[i].Mode < sw[j].Mode
		}
		return *sw[i].Level < *sw[j].Level
	})
	peak := 0.0
	for _, s := range sw {
		peak = math.Max(peak, *s.RequestThroughput)
	}
	out := &Saturation{MaxRequestThroughput: peak}
	pick := func(s *Stage, reached bool) *Saturation {
		out.Stage, out.Level, out.RequestThroughput, out.Reached = s.Stage, *s.Level, *s.RequestThroughput, reached
		return out
	}
	rates := sw[0].Mode == "rate" && sw[len(sw)-1].Mode == "rate"
	if rates {
		out.Rule = fmt.Sprintf("the highest rate answered at %.0f %% or more of the rate its schedule offered", KeptUpShare*100)
		var last *Stage
		for _, s := range sw {
			offered := *s.Level
			if s.OfferedRate != nil {
				offered = *s.OfferedRate
			}
			if *s.RequestThroughput < KeptUpShare*offered {
				if last == nil {
					return pick(s, true)
				}
				return pick(last, true)
			}
			last = s
		}
		return pick(last, false)
	}
	out.Rule = fmt.Sprintf("the last level whose request throughput grew by %.0f %% or more of what its extra streams would add to a server that scaled perfectly", MinGain*100)
	for i := 1; i < len(sw); i++ {
		ideal := *sw[i].Level / *sw[i-1].Level
		if *sw[i].RequestThroughput < (1+MinGain*(ideal-1))**sw[i-1].RequestThroughput {
			return pick(sw[i-1], true)
		}
	}
	return pick(sw[len(sw)-1], false)
}

// readSLO reads the slo block of the run's config.json (none when the
// file or the block is missing: goodput is then null).
func readSLO(runDir string) (*slo.SLO, error) {
	var doc struct {
		SLO *slo.SLO `json:"slo"`
	}
	if err := readConfig(runDir, "slo", &doc); err != nil {
		return nil, err
	}
	if doc.SLO != nil && doc.SLO.Empty() {
		return nil, nil
	}
	return doc.SLO, nil
}

// readConfig decodes the run's config.json into doc (left as it is when
// the file is missing); what names the part read, for errors.
func readConfig(runDir, what string, doc any) error {
	b, err := rundir.ReadFile(rundir.Path(runDir, rundir.ConfigFile))
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, doc); err != nil {
		return fmt.Errorf("%s: %s: %w", rundir.ConfigFile, what, err)
	}
	return nil
}

// sloText describes the SLO for summary.md.
func sloText(s *slo.SLO) string {
	var parts []string
	s.Each(func(metric string, t *slo.Target) {
		if t.PerRequest != nil {
			parts = append(parts, fmt.Sprintf("%s ≤ %g per request", metric, *t.PerRequest))
		}
		for _, p := range t.SortedPercentiles() {
			parts = append(parts, fmt.Sprintf("%s %s ≤ %g", metric, slo.PercentileName(p), t.Percentiles[p]))
		}
	})
	return strings.Join(parts, ", ")
}

func ptrF(v float64) *float64 { return &v }

// writeCapacity is summary.md's load section: a table per sweep (level,
// requests/s achieved, output tokens/s, TTFT p50 and p99, ITL p99,
// goodput, errors) and where it saturated.
func writeCapacity(b *strings.Builder, s *Summary) {
	any := false
	for _, g := range s.Groups {
		any = any || len(g.Stages) > 0
	}
	if !any {
		return
	}
	b.WriteString("## Capacity\n\n")
	b.WriteString("Each load stage of a suite, in the order it ran: requests/s and tokens/s are the stage's answered requests over its duration " +
		"(its start to its last answer); TTFT and e2e from the timeline's microseconds; ITL from the cells' merged gap histograms (within 1 %). " +
		"The warm-up stage counts for nothing.")
	if s.SLO != "" {
		fmt.Fprintf(b, " Goodput is the share of a stage's requests that answered within every per-request target (%s).", md(s.SLO))
	}
	b.WriteString("\n\n")
	for _, g := range ranked(s) {
		if len(g.Stages) == 0 {
			continue
		}
		fmt.Fprintf(b, "### %s\n\n", md(g.Label()))
		b.WriteString("| stage | level | sent/s | req/s | output tok/s | TTFT p50 | TTFT p99 | ITL p99 | TPOT p50 | slip p99 | goodput | errors |\n")
		b.WriteString("|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n")
		for _, st := range g.Stages {
			if g.SLOSearch != nil && st.Level == nil && st.NNotRun == st.NTotal {
				continue // a stage the search did not need: said under the table
			}
			lvl := "–"
			if st.Level != nil {
				lvl = fmt.Sprintf("%g", *st.Level)
				if st.Mode == "rate" {
					lvl += "/s"
				}
			}
			good := "–"
			if st.Goodput != nil {
				good = pct(st.Goodput.Share)
				if st.Goodput.SLOMet != nil && !*st.Goodput.SLOMet {
					good += " (missed " + md(strings.Join(st.Goodput.Missed, "; ")) + ")"
				}
			}
			errs := fmt.Sprintf("%d/%d", st.NError, st.NTotal-st.NNotRun)
			if st.NNotRun > 0 {
				errs += fmt.Sprintf(", %d not run", st.NNotRun)
			}
			name := md(st.Stage)
			if st.Warmup {
				name += " (not counted)"
			}
			fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", name, lvl, num(st.SentRate), num(st.RequestThroughput),
				num(st.OutputTokensPerS), msFine(st.TTFTMS.P50), msFine(st.TTFTMS.P99), msFine(st.ITLMS.P99), msFine(st.TPOTMS.P50),
				msFine(st.ScheduleSlipMS.P99), good, errs)
		}
		b.WriteString("\n")
		writeSearch(b, g.SLOSearch)
		if sat := g.Saturation; sat != nil && g.SLOSearch == nil {
			if sat.Reached {
				fmt.Fprintf(b, "Saturation: %s (%.1f requests/s; the most any stage answered: %.1f), %s.\n\n", md(sat.Stage), sat.RequestThroughput, sat.MaxRequestThroughput, sat.Rule)
			} else {
				fmt.Fprintf(b, "Saturation not reached: every level scaled (%s); the most answered: %.1f requests/s.\n\n", sat.Rule, sat.MaxRequestThroughput)
			}
		}
		for _, st := range g.Stages {
			if st.NotRunReason != "" {
				fmt.Fprintf(b, "Stage %s: %s\n\n", md(st.Stage), md(shorten(st.NotRunReason, 300)))
				break
			}
		}
	}
}

// msFine is a millisecond figure with the precision it needs.
func msFine(v *float64) string {
	switch {
	case v == nil:
		return "–"
	case *v < 10:
		return fmt.Sprintf("%.2f ms", *v)
	}
	return fmt.Sprintf("%.0f ms", *v)
}
