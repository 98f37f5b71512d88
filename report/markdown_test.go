package report

import (
	"bytes"
	"strings"
	"testing"

	"bench/resources"
	"bench/results"
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
	u := func(v uint64) *uint64 { return &v }
	f := func(v float64) *float64 { return &v }
	for _, g := range s.Groups {
		g.ResourcesBefore = &resources.Snapshot{CPUPercent: f(5), MemUsed: u(4 << 30), Server: &resources.Server{RSSBytes: u(1 << 30)}}
		// The after snapshot is above everything the sampler saw.
		g.ResourcesAfter = &resources.Snapshot{CPUPercent: f(99), MemUsed: u(8 << 30), Server: &resources.Server{RSSBytes: u(3 << 30)}}
		g.ResourcesPeak = &resources.Peak{CPUPercent: f(50), MemUsed: u(7 << 30), ServerRSS: u(2 << 30)}
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
	if !strings.Contains(md, "5.0% → 99.0% | 99.0% | 4.0 GiB → 8.0 GiB | 8.0 GiB | 1.0 GiB → 3.0 GiB | 3.0 GiB |") {
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
		if got := Plural(n, "cell"); got != want {
			t.Errorf("Plural(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestWindowPeakKeepsNullsAndSamplerMaxima(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	g := &Group{ResourcesPeak: &resources.Peak{CPUPercent: f(80)}, ResourcesBefore: &resources.Snapshot{CPUPercent: f(10)}}
	p := WindowPeak(g)
	if *p.CPUPercent != 80 || p.MemUsed != nil || p.ServerRSS != nil {
		t.Errorf("peak %+v", p)
	}
	if p := WindowPeak(&Group{}); p.CPUPercent != nil {
		t.Errorf("no readings: %+v", p)
	}
}
