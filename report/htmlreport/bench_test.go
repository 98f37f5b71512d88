package htmlreport

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"bench/internal/record/rundir"
	"bench/internal/testpeer/browsertest"
)

// writeScaleReport generates models x prompts x reps cells, builds the
// summary as bench report does and writes report.html; it returns its path.
func writeScaleReport(tb testing.TB, models, prompts, reps int) string {
	tb.Helper()
	dir := tb.TempDir()
	scaleFixture(models, prompts, reps).write(tb, dir)
	d, err := load(dir)
	if err != nil {
		tb.Fatal(err)
	}
	if err := WriteFile(dir, d); err != nil {
		tb.Fatal(err)
	}
	return filepath.Join(dir, rundir.ReportHTML)
}

// openRendered loads url and waits until report.js has drawn everything;
// it returns the page's own figure (ms from navigation start to the end of
// drawing) and the wall time the test saw from the navigation request.
func openRendered(tb testing.TB, p *browsertest.Page, url string) (renderMS float64, wall time.Duration) {
	tb.Helper()
	start := time.Now()
	if err := p.Open(url, 2*time.Minute); err != nil {
		tb.Fatal(err)
	}
	if err := p.WaitFor(`document.documentElement.dataset.rendered === "true"`, 2*time.Minute); err != nil {
		tb.Fatal(err)
	}
	wall = time.Since(start)
	if err := p.Eval(`window.benchReport.renderMS`, &renderMS); err != nil {
		tb.Fatal(err)
	}
	return renderMS, wall
}

// TestReportAtScaleInChromium loads the report of 100 models x 100 prompts
// (two repetitions: the page's size in groups and prompts is the 100,000-cell
// run's) and checks it draws every plot without a console error, with the
// heatmap on one canvas.
func TestReportAtScaleInChromium(t *testing.T) {
	b := browsertest.New(t)
	path := writeScaleReport(t, 100, 100, 2)
	p := b.NewPage(t)
	renderMS, _ := openRendered(t, p, browsertest.FileURL(path))
	if errs, err := p.Errors(); err != nil || len(errs) > 0 {
		t.Errorf("console errors (%v):\n%s", err, strings.Join(errs, "\n"))
	}
	var st struct {
		Plots    []string `json:"plots"`
		Canvases int      `json:"canvases"`
		Elements int      `json:"elements"`
		Rows     int      `json:"rows"`
	}
	if err := p.Eval(`({plots: window.benchReport.plots,
		canvases: document.querySelectorAll('[data-plot="heatmap"] canvas').length,
		elements: document.getElementsByTagName("*").length,
		rows: +document.querySelector('[data-plot="box-e2e"]').dataset.rows})`, &st); err != nil {
		t.Fatal(err)
	}
	if len(st.Plots) != 7 || st.Canvases != 1 || st.Rows != 100 {
		t.Errorf("plots %v, heatmap canvases %d, box rows %d", st.Plots, st.Canvases, st.Rows)
	}
	// Linear in groups and prompts, not their product: 10,000 matrix cells
	// would be 10,000+ elements on their own.
	if st.Elements > 8000 {
		t.Errorf("%d DOM elements for 100 groups x 100 prompts", st.Elements)
	}
	var timings map[string]float64
	if err := p.Eval(`window.benchReport.timings`, &timings); err != nil {
		t.Fatal(err)
	}
	t.Logf("timings (ms): %v", timings)
	shot := filepath.Join(t.ArtifactDir(), "report-100x100.png")
	if err := p.Screenshot(shot); err != nil {
		t.Fatal(err)
	}
	t.Logf("100 x 100: %d elements, rendered %.0f ms after navigation start; screenshot %s", st.Elements, renderMS, shot)
}

// BenchmarkReportLoad100k writes report.html for 100 models x 100 prompts x
// 10 repetitions (100,000 cells) and loads it in headless Chromium, from
// navigation to the last plot drawn. Metrics: render-ms (the page's own
// performance.now() when drawing ends: parsing, JSON, layout and every
// plot), wall-ms (navigation request to the test seeing the page drawn),
// size-KiB (report.html). Run:
//
//	go test ./report/htmlreport -run '^$' -bench ReportLoad100k -benchtime 5x
func BenchmarkReportLoad100k(b *testing.B) {
	path := writeScaleReport(b, 100, 100, 10)
	fi, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	br := browsertest.New(b)
	p := br.NewPage(b)
	url := browsertest.FileURL(path)
	var render, wall float64
	n := 0
	for b.Loop() {
		// A new query each time: a fresh navigation, not a no-op.
		r, w := openRendered(b, p, fmt.Sprintf("%s?load=%d", url, n))
		render += r
		wall += float64(w.Microseconds()) / 1000
		n++
	}
	if errs, err := p.Errors(); err != nil || len(errs) > 0 {
		b.Fatalf("console errors (%v):\n%s", err, strings.Join(errs, "\n"))
	}
	b.ReportMetric(render/float64(n), "render-ms")
	b.ReportMetric(wall/float64(n), "wall-ms")
	b.ReportMetric(float64(fi.Size())/1024, "size-KiB")
}

// BenchmarkBuild100k is the Go side for the same run: Load (report.Load
// plus the samples pass over results.jsonl) and Write.
//
//	go test ./report/htmlreport -run '^$' -bench Build100k -benchmem -benchtime 3x
func BenchmarkBuild100k(b *testing.B) {
	dir := b.TempDir()
	scaleFixture(100, 100, 10).write(b, dir)
	var size int
	for b.Loop() {
		d, err := load(dir)
		if err != nil {
			b.Fatal(err)
		}
		var sb strings.Builder
		if err := Write(&sb, d); err != nil {
			b.Fatal(err)
		}
		size = sb.Len()
	}
	b.ReportMetric(float64(size)/1024, "size-KiB")
}
