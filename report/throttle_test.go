package report

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"bench/internal/record/results"
	"bench/internal/record/rundir"
)

// A group a server's rate limits slowed: its refusals, the lowest limit
// its cells started under (of the entry's configured concurrency, read
// from config.json) and the waits, in summary.json and in one line of
// summary.md's rate-limit section; a group never throttled has none, and
// its latency figures are the cells' own (the waits are not in them).
func TestThrottledGroup(t *testing.T) {
	dir := t.TempDir()
	f := func(v float64) *float64 { return &v }
	n := func(v int) *int { return &v }
	ttft := int64(20)
	cell := func(provider, prompt string) results.Record {
		return results.Record{RecordType: "result", RunID: "r", Provider: provider, Model: "m", PromptID: prompt, AvailabilityStatus: "ok", Success: true,
			E2EMS: 100, TTFTMS: &ttft, StartedAtMS: 1, EndedAtMS: 2}
	}
	a, b, c, d := cell("api", "P0"), cell("api", "P1"), cell("api", "P2"), cell("local", "P0")
	a.RateLimitRefusals, a.Retries, a.RetryWaitMS = 2, 2, 40
	b.ConcurrencyLimit, b.LimitWaitMS = n(5), f(1200.5)
	c.ConcurrencyLimit, c.LimitWaitMS = n(3), f(300)
	w, err := results.Create(filepath.Join(dir, rundir.ResultsFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range []results.Record{a, b, c, d} {
		if err := w.Write(&r); err != nil {
			t.Fatal(err)
		}
	}
	w.Close()
	os.WriteFile(filepath.Join(dir, rundir.ConfigFile), []byte(`{"providers":[{"name":"api","concurrency":8},{"name":"local","concurrency":2}]}`), 0o644)
	s, err := LoadEach(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	var api, local *Group
	for _, g := range s.Groups {
		switch g.Provider {
		case "api":
			api = g
		case "local":
			local = g
		}
	}
	th := api.Throttle
	if th == nil || th.RateLimitRefusals != 2 || th.NCellsRefused != 1 || *th.LowestLimit != 3 || *th.ConfiguredLimit != 8 ||
		th.NCellsWaited != 2 || *th.LimitWaitMSTotal != 1500.5 || th.RetryWaitMSTotal != 40 {
		t.Errorf("throttle %+v", th)
	}
	if local.Throttle != nil {
		t.Errorf("an unthrottled group has %+v", local.Throttle)
	}
	if *api.TTFTMS.P50 != 20 || *api.LatencyMS.P50 != 100 {
		t.Errorf("latency %v ttft %v: the cells' own", *api.LatencyMS.P50, *api.TTFTMS.P50)
	}
	var md strings.Builder
	WriteMarkdown(&md, s)
	want := "- api/m: 2 refusals (429/529) in 1 cell; concurrency down to 3 of 8; 2 cells waited 1.5 s for the limit; retries waited 40 ms\n"
	if !strings.Contains(md.String(), "## Rate limits\n") || !strings.Contains(md.String(), want) || strings.Contains(md.String(), "- local/m") {
		t.Errorf("summary.md has no line\n%s\n%s", want, md.String())
	}
}
