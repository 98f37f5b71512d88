package compare

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"bench/internal/testpeer/browsertest"
)

// compareInspectJS collects what a person sees on compare.html: the
// verdict and the table rows (the plots are read by browsertest's Plots).
const compareInspectJS = `(() => ({
	verdict: document.getElementById("verdict").dataset.verdict,
	drawn: window.benchCompare ? window.benchCompare.plots : [],
	groups: [...document.querySelectorAll("#groups-table tbody tr")].map(tr => tr.dataset.group),
	regressed: [...document.querySelectorAll("#groups-table tbody tr.regressed")].map(tr => tr.dataset.group),
	findings: document.querySelectorAll("#findings-table tbody tr").length,
	order: [...document.querySelectorAll("h2")].map(h => h.textContent.replace(/ \(.*/, "")),
	findingsTop: document.getElementById("findings-table").getBoundingClientRect().top,
	cells: [...document.querySelectorAll("#cells-table tbody tr")].map(tr => tr.dataset.verdict),
	pwned: !!window.pwned}))()`

type comparePage struct {
	Verdict   string   `json:"verdict"`
	Drawn     []string `json:"drawn"`
	Groups    []string `json:"groups"`
	Regressed []string `json:"regressed"`
	Findings  int      `json:"findings"`
	Order     []string `json:"order"`
	// FindingsTop is where the findings table starts, in CSS pixels from
	// the top of the page.
	FindingsTop float64  `json:"findingsTop"`
	Cells       []string `json:"cells"`
	Pwned       bool     `json:"pwned"`
}

// compare.html of a regressed run, loaded from a file:// URL in headless
// Chromium: no console error, nothing requested, the verdict and every
// group, finding and changed cell of the Result shown (regressions
// first), the three latency plots painted, and a model's text never run
// as HTML. A screenshot is kept as an artefact.
func TestCompareHTMLInChromium(t *testing.T) {
	b := browsertest.New(t)
	dir := t.TempDir()
	base := writeLargeRun(t, dir, "base", 960, 0, 0, 1)
	cur := writeLargeRun(t, dir, "new", 960, 100, 40, 2)
	res, err := Compare(base, cur, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	// A violation that is HTML: it must show as text.
	for _, c := range res.Cells {
		if c.Verdict == Regression {
			c.Reasons = append(c.Reasons, `<img src=x onerror="window.pwned=1">`)
			break
		}
	}
	out := filepath.Join(dir, "out")
	if err := WriteFiles(out, res); err != nil {
		t.Fatal(err)
	}
	p := b.NewPage(t)
	if err := p.Load(filepath.Join(out, HTMLFile)); err != nil {
		t.Fatal(err)
	}
	var st comparePage
	if err := p.Eval(compareInspectJS, &st); err != nil {
		t.Fatal(err)
	}
	plots, err := p.Plots()
	if err != nil {
		t.Fatal(err)
	}
	if errs, err := p.Errors(); err != nil || len(errs) > 0 {
		t.Errorf("console errors (%v):\n%s", err, strings.Join(errs, "\n"))
	}
	if rr := p.RemoteRequests(); len(rr) > 0 {
		t.Errorf("compare.html requested %v; it must load nothing", rr)
	}
	if st.Pwned {
		t.Error("a reason's HTML ran on the page")
	}

	if !res.Regressed() || st.Verdict != res.Verdict {
		t.Errorf("page verdict %q, result %q", st.Verdict, res.Verdict)
	}
	if len(st.Groups) != len(res.Groups) || len(st.Groups) != 12 {
		t.Fatalf("%d group rows, result has %d", len(st.Groups), len(res.Groups))
	}
	regressed := 0
	for i, g := range res.Groups {
		if st.Groups[i] != g.Label() {
			t.Errorf("group row %d is %s, want %s", i, st.Groups[i], g.Label())
		}
		for _, m := range Metrics {
			if v := g.Latency[m]; v != nil && v.Change == "regression" {
				regressed++
				break
			}
		}
	}
	// Twice as slow: every group's latency regressed, and is marked.
	if regressed != 12 || len(st.Regressed) != regressed {
		t.Errorf("%d groups marked regressed, the result has %d", len(st.Regressed), regressed)
	}
	// One row per root cause (the cell findings it groups) or other finding.
	if rows := findingRows(res); st.Findings != min(len(rows), maxHTMLRows) || st.Findings == 0 || len(rows) >= len(res.Findings) {
		t.Errorf("%d finding rows, result has %d rows for %d findings", st.Findings, len(rows), len(res.Findings))
	}
	// What a person opens the page for comes first: the verdict, then the
	// findings and the answers side by side, the long tables after.
	if got := strings.Join(st.Order, " | "); got != "Findings | What changed, base beside new | Setup | Groups | Latency | Cells that changed | Methods" {
		t.Errorf("compare.html's sections: %s", got)
	}
	if st.FindingsTop > 800 {
		t.Errorf("the findings table starts %.0f px down the page, below the first screen", st.FindingsTop)
	}
	var want []string
	for _, c := range res.Cells {
		if c.Verdict != Match {
			want = append(want, c.Verdict)
		}
	}
	if strings.Join(st.Cells, ",") != strings.Join(want, ",") || st.Cells[0] != Regression {
		t.Errorf("cell rows %v, want %v (regressions first)", st.Cells, want)
	}
	if len(st.Drawn) != 3 || len(plots) != 3 {
		t.Errorf("drawn %v, plots %d", st.Drawn, len(plots))
	}
	for _, pl := range plots {
		if why := pl.Blank(); why != "" {
			t.Error(why)
		}
	}
	shot := filepath.Join(t.ArtifactDir(), "compare.png")
	if a := os.Getenv("BENCH_ARTIFACTS"); a != "" {
		shot = filepath.Join(a, "compare-report.png")
		if err := os.MkdirAll(a, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := p.Screenshot(shot); err != nil {
		t.Error(err)
	}
}

// Past maxHTMLRows the tables stop and say how many more compare.json has.
func TestCompareHTMLCapsRows(t *testing.T) {
	dir := t.TempDir()
	base := writeLargeRun(t, dir, "base", 1200, 0, 0, 1)
	cur := writeLargeRun(t, dir, "new", 1200, 1, 0, 1)
	res, err := Compare(base, cur, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := WriteHTML(&b, res); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	rows := strings.Count(page, `<tr data-verdict="drift">`)
	if res.Counts[Drift] != 1200 || rows != maxHTMLRows || !strings.Contains(page, "… and 700 more cells: compare.json lists them all.") {
		t.Errorf("%d drift cells, %d rows shown", res.Counts[Drift], rows)
	}
}
