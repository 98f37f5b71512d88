package slo

import (
	"math"

	"bench/internal/record/results"
)

// Meets says the request answered and met every per-request limit of s
// (goodput's rule): its TTFT and e2e from the timeline's microseconds
// (PreciseTimes), its TPOT, and its own p99 gap for itl_ms; a TPOT or ITL
// too short to measure does not fail. summary.json's goodput, bench
// compare's and the SLO search's attainment all count by this rule.
func Meets(s *SLO, r *results.Record) bool {
	if r.AvailabilityStatus != results.StatusOK || !r.Success {
		return false
	}
	return len(Misses(s, r, nil)) == 0
}

// Misses appends to out the per-request targets an answered request
// missed, by metric in SLOMetrics' order.
func Misses(s *SLO, r *results.Record, out []string) []string {
	ttft, e2e, _ := PreciseTimes(r)
	s.Each(func(metric string, t *Target) {
		if t.PerRequest == nil {
			return
		}
		lim := *t.PerRequest
		ok := true
		switch metric {
		case "ttft_ms":
			ok = !math.IsNaN(ttft) && ttft <= lim
		case "e2e_ms":
			ok = e2e <= lim
		case "tpot_ms":
			ok = r.TPOTMS == nil || *r.TPOTMS <= lim
		case "itl_ms":
			ok = r.ITLMS == nil || r.ITLMS.P99 <= lim
		}
		if !ok {
			out = append(out, metric)
		}
	})
	return out
}

// PerRequest says the block has a per-request target (what attainment
// counts).
func (s *SLO) PerRequest() bool {
	any := false
	s.Each(func(_ string, t *Target) { any = any || t.PerRequest != nil })
	return any
}

// PreciseTimes are the cell's TTFT and e2e in ms from its timeline's µs
// (ttft_ms and e2e_ms are whole ms): from the last request written to the
// first answer text or tool call after it, and to the end. TTFT is NaN
// when there was none; ok is false without a timeline.
func PreciseTimes(r *results.Record) (ttft, e2e float64, ok bool) {
	written, first, end := math.NaN(), math.NaN(), math.NaN()
	for _, e := range r.Timeline {
		switch e.Event {
		case results.EventRequestWritten:
			written, first = e.AtMS, math.NaN()
		case results.EventFirstText, results.EventToolCall:
			if math.IsNaN(first) {
				first = e.AtMS
			}
		case results.EventEnd:
			end = e.AtMS
		}
	}
	if math.IsNaN(written) || math.IsNaN(end) {
		if r.TTFTMS != nil {
			return float64(*r.TTFTMS), float64(r.E2EMS), true
		}
		return math.NaN(), float64(r.E2EMS), true
	}
	return first - written, end - written, true
}
