package report

import (
	"fmt"
	"math"
	"strings"

	"bench/internal/format"
	"bench/internal/record/results"
)

// throttleMethod says how a group's rate-limit figures are read (summary.json).
const throttleMethod = "present when a server's rate limits slowed the group: rate_limit_refusals sums the answers that refused a cell for rate (429, 529), n_cells_refused counts the cells with one; lowest_limit is the lowest concurrency limit a cell started under as bench adapted it (concurrency_limit), configured_limit the entry's concurrency (config.json); n_cells_waited counts the cells that waited for the limit, limit_wait_ms_total and retry_wait_ms_total sum limit_wait_ms and retry_wait_ms. None of these waits is in e2e_ms, ttft_ms or tokens_per_s"

// Throttle is how much a server's rate limits slowed a group, in
// summary.json's group object (absent when they did not).
type Throttle struct {
	RateLimitRefusals int      `json:"rate_limit_refusals"`
	NCellsRefused     int      `json:"n_cells_refused"`
	LowestLimit       *int     `json:"lowest_limit"`
	ConfiguredLimit   *int     `json:"configured_limit"`
	NCellsWaited      int      `json:"n_cells_waited"`
	LimitWaitMSTotal  *float64 `json:"limit_wait_ms_total"`
	RetryWaitMSTotal  int64    `json:"retry_wait_ms_total"`
}

// throttled says the record shows the rate limits at work.
func throttled(r *results.Record) bool {
	return r.RateLimitRefusals > 0 || r.ConcurrencyLimit != nil || r.LimitWaitMS != nil
}

// addThrottle counts one record into t, made at the group's first
// throttled record (nil until then: most groups never are).
func addThrottle(t *Throttle, r *results.Record) *Throttle {
	if t == nil {
		if !throttled(r) {
			return nil
		}
		t = &Throttle{}
	}
	t.RateLimitRefusals += r.RateLimitRefusals
	if r.RateLimitRefusals > 0 {
		t.NCellsRefused++
	}
	if l := r.ConcurrencyLimit; l != nil && (t.LowestLimit == nil || *l < *t.LowestLimit) {
		t.LowestLimit = ptr(*l)
	}
	if w := r.LimitWaitMS; w != nil {
		t.NCellsWaited++
		t.LimitWaitMSTotal = ptr(math.Round((orZero(t.LimitWaitMSTotal)+*w)*1000) / 1000)
	}
	t.RetryWaitMSTotal += r.RetryWaitMS
	return t
}

func ptr[T any](v T) *T { return &v }

func orZero(v *float64) float64 {
	if v == nil {
		return 0
	}
	return *v
}

// readConcurrency is each provider entry's configured concurrency, from
// the run's config.json (none when it is missing or unreadable: the
// figure is then null).
func readConcurrency(runDir string) map[string]int {
	var doc struct {
		Providers []struct {
			Name        string `json:"name"`
			Concurrency int    `json:"concurrency"`
		} `json:"providers"`
	}
	if readConfig(runDir, "providers", &doc) != nil {
		return nil
	}
	out := map[string]int{}
	for _, p := range doc.Providers {
		out[p.Name] = p.Concurrency
	}
	return out
}

// ThrottleText says how a group was throttled, in one phrase: "42
// refusals (429/529) in 30 cells; limit down to 3 of 8; 120 cells waited
// 8.2 s for it; retries waited 4.1 s".
func ThrottleText(t *Throttle) string {
	var parts []string
	if t.RateLimitRefusals > 0 {
		parts = append(parts, fmt.Sprintf("%s (429/529) in %s", format.Plural(t.RateLimitRefusals, "refusal"), format.Plural(t.NCellsRefused, "cell")))
	}
	if t.LowestLimit != nil {
		of := ""
		if t.ConfiguredLimit != nil {
			of = fmt.Sprintf(" of %d", *t.ConfiguredLimit)
		}
		parts = append(parts, fmt.Sprintf("concurrency down to %d%s", *t.LowestLimit, of))
	}
	if t.NCellsWaited > 0 {
		parts = append(parts, fmt.Sprintf("%s waited %s for the limit", format.Plural(t.NCellsWaited, "cell"), waitText(orZero(t.LimitWaitMSTotal))))
	}
	if t.RetryWaitMSTotal > 0 {
		parts = append(parts, fmt.Sprintf("retries waited %s", waitText(float64(t.RetryWaitMSTotal))))
	}
	return strings.Join(parts, "; ")
}

// waitText is a total wait as people read it: 840 ms, 8.2 s.
func waitText(ms float64) string {
	if ms < 1000 {
		return fmt.Sprintf("%.0f ms", ms)
	}
	return fmt.Sprintf("%.1f s", ms/1000)
}

// writeThrottle is summary.md's rate-limit section: the groups a server's
// rate limits slowed, and by how much. Left out when none was.
func writeThrottle(b *strings.Builder, s *Summary) {
	var gs []*Group
	for _, g := range ranked(s) {
		if g.Throttle != nil {
			gs = append(gs, g)
		}
	}
	if len(gs) == 0 {
		return
	}
	b.WriteString("## Rate limits\n\n")
	b.WriteString("Groups whose server refused requests for rate (429, 529) or whose headers said its budget was nearly spent: " +
		"bench lowered the entry's concurrency and raised it back as answers came (AIMD, docs/providers.md). " +
		"The waits for the limit and for retries are recorded apart (limit_wait_ms, retry_wait_ms) and are in none of the latency or speed figures.\n\n")
	for i, g := range gs {
		if i == MaxTableRows {
			moreRows(b, len(gs), "summary.json")
			break
		}
		fmt.Fprintf(b, "- %s: %s\n", md(g.Label()), md(ThrottleText(g.Throttle)))
	}
	b.WriteString("\n")
}
