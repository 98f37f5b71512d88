package htmlreport

import (
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"bench/internal/record/results"
	"bench/internal/record/rundir"
	"bench/internal/testpeer/browsertest"
	"bench/report"
)

// writeSweep writes a run of one closed-loop sweep [1, 2, 4, 8] against a
// server of two slots and 100 ms a request (so throughput 10, 20, 20, 20
// requests/s: saturated at c=2), TTFT growing with the queue, and an slo
// block whose TTFT limit the c=8 stage misses.
func writeSweep(t *testing.T, dir string) {
	t.Helper()
	w, err := results.Create(filepath.Join(dir, rundir.ResultsFile))
	if err != nil {
		t.Fatal(err)
	}
	for si, l := range []int{1, 2, 4, 8} {
		start := int64(1_771_000_000_000_000) + int64(si)*10_000_000
		m := min(l, 2)
		for i := range 16 {
			end := start + int64(i/m+1)*100_000
			ttft := int64(20 * l / m)
			lv := float64(l)
			r := &results.Record{RecordType: results.RecordType, RunID: "x", Provider: "fake", ProviderType: "ollama_openai", Model: "m",
				PromptID: "P0", PromptName: "P0", Repetition: i, AvailabilityStatus: results.StatusOK, Success: true, RawOutput: "ok",
				ToolCalls: []string{}, ToolCallDetails: []results.ToolCall{}, E2EMS: 100, TTFTMS: &ttft,
				StartedAtMS: (end - 100_000) / 1000, EndedAtMS: end / 1000,
				Stage: fmt.Sprintf("c=%d", l), StageMode: "concurrency", StageLevel: &lv, StageStartUS: start, EndedAtUS: end}
			if err := w.Write(r); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := rundir.WriteJSON(filepath.Join(dir, rundir.ConfigFile), map[string]any{"slo": map[string]any{"ttft_ms": 50}}); err != nil {
		t.Fatal(err)
	}
}

// The capacity section in Chromium: both curves of the sweep drawn with a
// point per stage, the figures plotted those of summary.json, the
// saturation marker painted at c=2 on the goodput plot, and the table
// marking that stage.
func TestCapacityInChromium(t *testing.T) {
	dir := t.TempDir()
	writeSweep(t, dir)
	d, err := load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(dir, d); err != nil {
		t.Fatal(err)
	}
	sum := d.Summary
	g := sum.Groups[0]
	if g.Saturation == nil || !g.Saturation.Reached || g.Saturation.Stage != "c=2" {
		t.Fatalf("summary saturation %+v", g.Saturation)
	}
	b := browsertest.New(t)
	p := b.NewPage(t)
	if err := p.Load(filepath.Join(dir, rundir.ReportHTML)); err != nil {
		t.Fatal(err)
	}
	if errs, err := p.Errors(); err != nil || len(errs) > 0 {
		t.Errorf("console errors (%v): %q", err, errs)
	}
	var st struct {
		Points map[string]string `json:"points"`
		Sat    string            `json:"sat"`
		Pixel  []int             `json:"pixel"`
		Sweeps []pageSweep       `json:"sweeps"`
		Table  string            `json:"table"`
		Marked string            `json:"marked"`
	}
	if err := p.Eval(`(() => {
		const pts = {};
		for (const el of document.querySelectorAll("[data-plot^=capacity]")) pts[el.dataset.plot] = el.dataset.points || "";
		const gp = document.querySelector("[data-plot=capacity-goodput-0]");
		let pixel = [];
		const at = gp && gp.dataset.saturationPx;
		if (at) {
			const [x, y] = at.split(",").map(Number);
			const cv = gp.querySelector("canvas");
			// The line is dashed (6 on, 4 off): 16 pixels down it hold a dash.
			const px = cv.getContext("2d").getImageData(x, y - 8, 1, 16).data;
			for (let i = 0; i < px.length; i += 4) if (px[i] > 150 && px[i+1] < 110 && px[i+2] < 110 && px[i+3] > 0) { pixel = Array.from(px.slice(i, i + 4)); break; }
		}
		const tb = document.querySelector(".capacity-table");
		const marked = document.querySelector(".capacity-table tr.saturation");
		return {points: pts, sat: at || "", pixel: pixel, sweeps: window.benchReport.data.sweeps,
			table: tb ? tb.innerText : "", marked: marked ? marked.innerText : ""};
	})()`, &st); err != nil {
		t.Fatal(err)
	}
	if st.Points["capacity-latency-0"] != "4" || st.Points["capacity-goodput-0"] != "4" {
		t.Errorf("points %v, want 4 a plot", st.Points)
	}
	plots, err := p.Plots()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, pl := range plots {
		if strings.HasPrefix(pl.Name, "capacity-") {
			n++
			if why := pl.Blank(); why != "" {
				t.Error(why)
			}
		}
	}
	if n != 2 {
		t.Errorf("%d capacity plots, want 2", n)
	}
	// The plotted figures are summary.json's, stage by stage.
	if len(st.Sweeps) != 1 || len(st.Sweeps[0].Points) != 4 {
		t.Fatalf("sweeps %+v", st.Sweeps)
	}
	for i, pt := range st.Sweeps[0].Points {
		s := g.Stages[i]
		if pt.Stage != s.Stage || !same(pt.Throughput, s.RequestThroughput) || !same(pt.TTFTP99, s.TTFTMS.P99) || s.Goodput == nil || !same(pt.GoodputRate, s.Goodput.Rate) {
			t.Errorf("point %d %+v, stage %+v", i, pt, s)
		}
	}
	if tp := st.Sweeps[0].Points[1].Throughput; tp == nil || math.Abs(*tp-20) > 0.5 {
		t.Errorf("c=2 throughput %v, want 20/s", tp)
	}
	if st.Sweeps[0].Saturation == nil || *st.Sweeps[0].Saturation != 2 {
		t.Errorf("sweep saturation %v", st.Sweeps[0].Saturation)
	}
	// The dashed marker is #c53030 where it was painted (pixel is the
	// first red one found there).
	if len(st.Pixel) != 4 || st.Pixel[0] < 150 || st.Pixel[1] > 110 || st.Pixel[2] > 110 || st.Pixel[3] == 0 {
		t.Errorf("saturation marker at %q has pixel %v, want red", st.Sat, st.Pixel)
	}
	if !strings.Contains(st.Marked, "c=2 ◆") || strings.Count(st.Table, "◆") != 1 {
		t.Errorf("table marks %q:\n%s", st.Marked, st.Table)
	}
	if !strings.Contains(st.Table, "0%") { // c=8's TTFT of 80 ms misses the 50 ms SLO
		t.Errorf("table lacks c=8's 0%% goodput:\n%s", st.Table)
	}
}

func same(a, b *float64) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

// A sweep stopped after a stage that broke: the not-run stage's row says
// so beside its errors, as summary.md does.
func TestCapacityRowNotRun(t *testing.T) {
	lv := 4.0
	st := &report.Stage{Stage: "c=4", Mode: "concurrency", Level: &lv, NTotal: 16, NError: 0, NNotRun: 16}
	if got := errorsText(st); got != "0/0, 16 not run" {
		t.Errorf("errors %q", got)
	}
	st = &report.Stage{Stage: "c=2", NTotal: 16, NError: 9}
	if got := errorsText(st); got != "9/16" {
		t.Errorf("errors %q", got)
	}
}
