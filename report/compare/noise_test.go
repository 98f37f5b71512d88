package compare

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"bench/internal/record/results"
	"bench/internal/record/rundir"
	"bench/report/stats"
)

// nightRecs draws one night of 3 prompts x 16 repetitions: each prompt's
// TTFT around level x its own base, with 3 % jitter within the night.
func nightRecs(r *rand.Rand, level float64) []*results.Record {
	var recs []*results.Record
	for p, base := range []float64{200, 500, 1200} {
		for rep := range 16 {
			ttft := int64(math.Round(base * level * math.Exp(0.03*r.NormFloat64())))
			recs = append(recs, rec(fmt.Sprintf("P%d", p), rep, latency(ttft, ttft+300, 50)))
		}
	}
	return recs
}

// night writes a run directory under dir started day days after a fixed
// date.
func night(t *testing.T, dir, id string, day int, recs []*results.Record, spec runSpec) string {
	t.Helper()
	start := time.Date(2026, 3, 1, 2, 0, 0, 0, time.UTC).Add(time.Duration(day) * 24 * time.Hour)
	spec.id, spec.recs = id, recs
	spec.prompts = []prompt{{ID: "P0", Prompt: "a"}, {ID: "P1", Prompt: "b"}, {ID: "P2", Prompt: "c"}}
	spec.info = &rundir.RunInfo{BenchVersion: "v1.0.0", StartedAt: start, EndedAt: start.Add(time.Hour), EndReason: "finished",
		CellsPlanned: len(recs), CellsRecorded: len(recs)}
	return writeRun(t, dir, spec)
}

// The Done-when: a history of 12 unchanged nights whose level
// moves 5-10 % from night to night (the machine's weather). A new night
// 13 % slower than the base, significant within the runs (16 pairs a
// prompt, 3 % jitter), is "~ (within night-to-night noise: ±x % over 12
// nights)"; a 40 % TTFT rise is a regression. Nights of another setup, a
// failed night and too short a history are said in one line.
func TestNightToNightNoise(t *testing.T) {
	r := rand.New(rand.NewPCG(51, 1))
	dir := t.TempDir()
	nights := filepath.Join(dir, "runs")
	levels := make([]float64, 12)
	for i := range levels {
		levels[i] = math.Exp(0.06 * r.NormFloat64()) // a 6 % spread of the nightly level
		night(t, nights, fmt.Sprintf("n%02d", i), i, nightRecs(r, levels[i]), runSpec{})
	}
	night(t, nights, "other-digest", 12, nightRecs(r, 2), runSpec{digest: "sha256:" + strings.Repeat("f", 64)})
	night(t, nights, "failed", 12, nightRecs(r, 3), runSpec{})
	if err := os.MkdirAll(filepath.Join(nights, "failed", rundir.CompareDir), 0o755); err != nil {
		t.Fatal(err)
	}
	mustWriteJSON(t, filepath.Join(nights, "failed", rundir.CompareDir, JSONFile), map[string]any{"verdict": VerdictRegression})
	base := filepath.Join(nights, "n11")
	same := night(t, nights, "same", 13, nightRecs(r, levels[11]*1.13), runSpec{})
	slow := night(t, filepath.Join(dir, "elsewhere"), "slow", 13, nightRecs(r, levels[11]*1.4), runSpec{})

	opt := DefaultOptions()
	res, err := Compare(base, same, opt)
	if err != nil {
		t.Fatal(err)
	}
	if v := res.Groups[0].Latency[MetricTTFT]; v.Change != stats.Regression {
		t.Fatalf("without the history a 13 %% rise at 3 %% jitter is not a regression (%s): the case tests nothing", v.Reason)
	}
	opt.History = nights
	res, err = Compare(base, same, opt)
	if err != nil {
		t.Fatal(err)
	}
	v := res.Groups[0].Latency[MetricTTFT]
	if v.Change != stats.Same || v.Noise == nil || !v.Noise.Within || v.Noise.Nights != 12 || !strings.Contains(v.Reason, "within night-to-night noise") {
		t.Errorf("unchanged night: %s %+v: %s", v.Change, v.Noise, v.Reason)
	}
	if res.Regressed() {
		t.Errorf("an unchanged night inside the noise fails the gate: %s", verdictLine(res))
	}
	var text strings.Builder
	WriteText(&text, res)
	for _, want := range []string{"~ (within night-to-night noise: ±", "over 12 nights)",
		"night-to-night noise: from 12 earlier green runs of this setup in " + nights + "; left out: 1 not green, ",
		"1: ollama/m model digest"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("no %q in:\n%s", want, text.String())
		}
	}
	res, err = Compare(base, slow, opt)
	if err != nil {
		t.Fatal(err)
	}
	if v := res.Groups[0].Latency[MetricTTFT]; v.Change != stats.Regression || v.Noise == nil || v.Noise.Within || !res.Regressed() {
		t.Errorf("40 %% rise: %s %+v: %s", v.Change, v.Noise, v.Reason)
	}

	// Too few earlier nights of the setup: said, and judged within the runs.
	short := filepath.Join(dir, "short")
	for i := range 3 {
		night(t, short, fmt.Sprintf("s%d", i), i, nightRecs(r, levels[i]), runSpec{})
	}
	opt.History = short
	res, _ = Compare(base, same, opt)
	if v := res.Groups[0].Latency[MetricTTFT]; v.Change != stats.Regression || v.Noise != nil {
		t.Errorf("short history: %s %+v", v.Change, v.Noise)
	}
	if !strings.Contains(strings.Join(res.Warnings, "\n"), "night-to-night noise: "+short+" holds 3 earlier green runs of this setup, 5 needed: latency judged within the runs only") {
		t.Errorf("warnings %q", res.Warnings)
	}
}

// A baseline from another config is said in one line; the same config
// under another run id is not.
func TestBaselineOfAnotherConfig(t *testing.T) {
	dir := t.TempDir()
	r := rand.New(rand.NewPCG(52, 1))
	base := night(t, dir, "base", 0, nightRecs(r, 1), runSpec{})
	same := night(t, dir, "same", 1, nightRecs(r, 1), runSpec{})
	other := night(t, dir, "other", 1, nightRecs(r, 1), runSpec{slo: map[string]any{"ttft_ms": 50}})
	const line = "the base run's config.json differs from the new run's"
	res, _ := Compare(base, same, DefaultOptions())
	if strings.Contains(strings.Join(res.Warnings, "\n"), line) {
		t.Errorf("same config: %q", res.Warnings)
	}
	res, _ = Compare(base, other, DefaultOptions())
	if n := strings.Count(strings.Join(res.Warnings, "\n"), line); n != 1 {
		t.Errorf("another config said %d times: %q", n, res.Warnings)
	}
}
