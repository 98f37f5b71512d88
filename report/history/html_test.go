package history

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"bench/internal/testpeer/browsertest"
)

// historyPage builds the history of the runs under root, writes its files
// and loads history.html in headless Chromium.
func historyPage(t *testing.T, root string) (*History, *browsertest.Page) {
	t.Helper()
	b := browsertest.New(t)
	dirs, _, _ := FindRuns([]string{root})
	h, err := Build(dirs, DefaultOptions(), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(root, DirName)
	if err := WriteFiles(out, h); err != nil {
		t.Fatal(err)
	}
	p := b.NewPage(t)
	if err := p.Load(filepath.Join(out, HTMLFile)); err != nil {
		t.Fatal(err)
	}
	return h, p
}

// history.html of the 60 nightly runs with a step, loaded from a file://
// URL in headless Chromium: no console error, nothing requested, the
// change point listed, and every series' chart painted. A screenshot is
// kept as an artefact (BENCH_ARTIFACTS=DIR keeps it there).
func TestHistoryHTMLInChromium(t *testing.T) {
	root := t.TempDir()
	nights(t, root, 7, 60, 40, 0.05, 0.03)
	h, p := historyPage(t, root)
	var st struct {
		Verdict string   `json:"verdict"`
		Changes []string `json:"changes"`
		Drawn   []string `json:"drawn"`
	}
	if err := p.Eval(`(() => ({verdict: document.getElementById("verdict").dataset.verdict,
		changes: [...document.querySelectorAll("#changes-table tbody tr")].map(tr => tr.dataset.run),
		drawn: window.benchHistory.plots}))()`, &st); err != nil {
		t.Fatal(err)
	}
	if errs, err := p.Errors(); err != nil || len(errs) > 0 {
		t.Errorf("console errors (%v):\n%s", err, strings.Join(errs, "\n"))
	}
	if rr := p.RemoteRequests(); len(rr) > 0 {
		t.Errorf("history.html requested %v; it must load nothing", rr)
	}
	if st.Verdict != h.Verdict || len(st.Changes) != len(h.ChangePoints) || len(st.Drawn) != len(h.Series) || len(h.ChangePoints) == 0 {
		t.Errorf("page %+v; history: %d change points, %d series", st, len(h.ChangePoints), len(h.Series))
	}
	plots, err := p.Plots()
	if err != nil || len(plots) != len(h.Series) {
		t.Fatalf("%d plots, %v", len(plots), err)
	}
	for _, pl := range plots {
		if why := pl.Blank(); why != "" {
			t.Error(why)
		}
	}
	shot := filepath.Join(t.ArtifactDir(), "history.png")
	if a := os.Getenv("BENCH_ARTIFACTS"); a != "" {
		shot = filepath.Join(a, "history-report.png")
		if err := os.MkdirAll(a, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := p.Screenshot(shot); err != nil {
		t.Error(err)
	}
}

// The y axes show their labels whole: on a series in the tens of
// thousands of milliseconds each chart's y axis is at least as wide as
// its widest tick label (measured in the page with the axis's font) plus
// the ticks and their gap, where uPlot's fixed 50 px cut "10,000" to
// "0,000".
func TestHistoryHTMLAxisLabelsWhole(t *testing.T) {
	root := t.TempDir()
	t0 := time.Date(2026, 1, 1, 2, 0, 0, 0, time.UTC)
	for i := range 8 {
		writeNight(t, root, nightRun{id: fmt.Sprintf("n%d", i), started: t0.Add(time.Duration(i) * 24 * time.Hour), ttft: 12000 + 900*float64(i%3),
			pass: 0.9, digest: "d", bench: "v1", prompts: []string{"P0"}})
	}
	h, p := historyPage(t, root)
	var axes []struct {
		Metric string   `json:"metric"`
		Size   float64  `json:"size"`
		Need   float64  `json:"need"`
		Widest float64  `json:"widest"`
		Labels []string `json:"labels"`
	}
	if err := p.Eval(`window.benchHistory.uplots.map(u => {
		const a = u.axes[1], ctx = u.ctx;
		ctx.save(); ctx.font = a.font[0];
		const labels = (a._values || []).map(String);
		const widest = Math.max(0, ...labels.map(l => ctx.measureText(l).width)) / devicePixelRatio;
		ctx.restore();
		return {metric: u.series[1].label, size: a._size, need: widest + a.ticks.size + a.gap, widest, labels};
	})`, &axes); err != nil {
		t.Fatal(err)
	}
	if len(axes) != len(h.Series) {
		t.Fatalf("%d axes for %d series", len(axes), len(h.Series))
	}
	wide := 0
	for _, a := range axes {
		if a.Size < a.Need {
			t.Errorf("%s: y axis %.0f px for labels %q (widest %.1f px, with the ticks and gap %.1f): cut", a.Metric, a.Size, a.Labels, a.Widest, a.Need)
		}
		for _, l := range a.Labels {
			if strings.Contains(l, ",") || len(l) >= 5 {
				wide++
			}
		}
	}
	if wide == 0 {
		t.Errorf("no label of 5 characters or more: the case is not tested (%+v)", axes)
	}
}
