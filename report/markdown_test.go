package report

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"bench/internal/format"
	"bench/internal/record/results"
)

// TestMarkdownOneOrderPluralsAndBoundedPeaks checks the summary.md fixes of
// issue 17: pass-matrix columns and resource rows follow the ranking (not
// the alphabetical group order), counts of one are singular, and a suite's
// peak is never below its own before or after snapshot.
func TestMarkdownOneOrderPluralsAndBoundedPeaks(t *testing.T) {
	yes, no := true, false
	rec := func(model, prompt string, pass *bool) results.Record {
		return results.Record{Provider: "p", Model: model, PromptID: prompt, AvailabilityStatus: "ok", Success: true, E2EMS: 100, ObjectivePass: pass}
	}
	// "a-model" sorts first by name but ranks last: it fails its check.
	s := Summarize([]results.Record{rec("a-model", "P1", &no), rec("z-model", "P1", &yes)})
	if s.Groups[0].Model != "a-model" || Ranked(s)[0].Model != "z-model" {
		t.Fatalf("fixture: groups %s,%s ranked %s", s.Groups[0].Model, s.Groups[1].Model, Ranked(s)[0].Model)
	}
	for _, g := range s.Groups {
		// The after snapshot is above everything the sampler saw. (Set
		// through JSON, the form summary.json has, not the Go types.)
		res := `{"resources_before": {"cpu_percent": 5, "mem_used_bytes": 4294967296, "server": {"rss_bytes": 1073741824}},
			"resources_after": {"cpu_percent": 99, "mem_used_bytes": 8589934592, "server": {"rss_bytes": 3221225472}},
			"resources_peak": {"cpu_percent": 50, "mem_used_bytes": 7516192768, "server_rss_bytes": 2147483648}}`
		if err := json.Unmarshal([]byte(res), g); err != nil {
			t.Fatal(err)
		}
	}
	var b bytes.Buffer
	if err := WriteMarkdown(&b, s); err != nil {
		t.Fatal(err)
	}
	md := b.String()
	if !strings.Contains(md, "| prompt | p/z-model | p/a-model |") {
		t.Errorf("matrix columns not in ranking order:\n%s", md)
	}
	if strings.Index(md, "| p/z-model | 5.0% → 99.0%") > strings.Index(md, "| p/a-model | 5.0% → 99.0%") {
		t.Errorf("resource rows not in ranking order:\n%s", md)
	}
	if !strings.Contains(md, "5.0% → 99.0% | 99.0% | – | 4.0 GiB → 8.0 GiB | 8.0 GiB | 1.0 GiB → 3.0 GiB | 3.0 GiB |") {
		t.Errorf("peaks must bound the after snapshot:\n%s", md)
	}
	if !strings.Contains(md, ": 2 records.") {
		t.Errorf("record count:\n%s", md[:200])
	}
	one := Summarize([]results.Record{rec("m", "P1", nil)})
	b.Reset()
	WriteMarkdown(&b, one)
	if !strings.Contains(b.String(), ": 1 record.") {
		t.Errorf("want singular:\n%s", b.String()[:200])
	}
}

func TestPlural(t *testing.T) {
	for n, want := range map[int]string{0: "0 cells", 1: "1 cell", 2: "2 cells"} {
		if got := format.Plural(n, "cell"); got != want {
			t.Errorf("format.Plural(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestWindowPeakKeepsNullsAndSamplerMaxima(t *testing.T) {
	g := &Group{}
	if err := json.Unmarshal([]byte(`{"resources_peak": {"cpu_percent": 80}, "resources_before": {"cpu_percent": 10}}`), g); err != nil {
		t.Fatal(err)
	}
	p := WindowPeak(g)
	if *p.CPUPercent != 80 || p.MemUsed != nil || p.ServerRSS != nil {
		t.Errorf("peak %+v", p)
	}
	if p := WindowPeak(&Group{}); p.CPUPercent != nil {
		t.Errorf("no readings: %+v", p)
	}
}

// More than half of a group's cells cold: summary.md says so at the top,
// and not for a group with a few.
func TestColdWarning(t *testing.T) {
	s := &Summary{RunID: "r", Groups: []*Group{
		{Provider: "p", Model: "cold", NTotal: 10, NOK: 8, NError: 2, NColdStart: 6},
		{Provider: "p", Model: "warm", NTotal: 10, NOK: 10, NColdStart: 5},
	}}
	var b strings.Builder
	if err := WriteMarkdown(&b, s); err != nil {
		t.Fatal(err)
	}
	want := "**Warning:** p/cold: 6 of 10 cells that reached the model were cold starts (the model was loading); its latency percentiles are over the 4 others only"
	if !strings.Contains(b.String(), want) || strings.Contains(b.String(), "p/warm: 5") {
		t.Errorf("summary.md:\n%s", b.String())
	}
}

// A cell whose answers a judge or command validator gave no verdict on is
// a check error in the pass matrix, not "no check" (issue 31, item 14).
func TestMatrixShowsCheckErrors(t *testing.T) {
	yes := true
	judgeErr := []results.CheckError{{Type: results.JudgeError, Check: "llm_judge", Message: "connection_refused"}}
	rec := func(prompt string, rep int, pass *bool, errs []results.CheckError) results.Record {
		return results.Record{Provider: "p", Model: "m", PromptID: prompt, Repetition: rep, AvailabilityStatus: "ok", Success: true, E2EMS: 100, ObjectivePass: pass, CheckErrors: errs}
	}
	s := Summarize([]results.Record{
		rec("J1", 0, nil, judgeErr), rec("J1", 1, nil, judgeErr),
		rec("J2", 0, &yes, nil), rec("J2", 1, nil, judgeErr),
		rec("N1", 0, nil, nil),
	})
	var b bytes.Buffer
	if err := WriteMarkdown(&b, s); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"| J1 | ⚠ 2 check errors |", "| J2 | ✓ 1/1, 1 check error |", "| N1 | no check |"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("summary.md lacks %q:\n%s", want, b.String())
		}
	}
}
