package history

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"bench/internal/testpeer/browsertest"
)

// history.html of the 60 nightly runs with a step, loaded from a file://
// URL in headless Chromium: no console error, nothing requested, the
// change point listed, and every series' chart painted. A screenshot is
// kept as an artefact (BENCH_ARTIFACTS=DIR keeps it there).
func TestHistoryHTMLInChromium(t *testing.T) {
	b := browsertest.New(t)
	root := t.TempDir()
	nights(t, root, 7, 60, 40, 0.05, 0.03)
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
