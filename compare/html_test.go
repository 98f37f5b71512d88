package compare

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"bench/internal/browsertest"
)

// compareInspectJS collects what a person sees on compare.html: the
// verdict, the table rows, and each plot's painted pixels and colours.
const compareInspectJS = `(() => {
	const out = {rendered: document.documentElement.dataset.rendered === "true",
		verdict: document.getElementById("verdict").dataset.verdict,
		drawn: window.benchCompare ? window.benchCompare.plots : [],
		groups: [...document.querySelectorAll("#groups-table tbody tr")].map(tr => tr.dataset.group),
		regressed: [...document.querySelectorAll("#groups-table tbody tr.regressed")].map(tr => tr.dataset.group),
		findings: document.querySelectorAll("#findings-table tbody tr").length,
		cells: [...document.querySelectorAll("#cells-table tbody tr")].map(tr => tr.dataset.verdict),
		differs: document.querySelectorAll("#setup-table tr.differs").length,
		more: [...document.querySelectorAll("p.more")].map(p => p.textContent),
		pwned: !!window.pwned, plots: []};
	for (const el of document.querySelectorAll("[data-plot]")) {
		const p = {name: el.dataset.plot, canvases: 0, painted: 0, colours: 0, area: 0};
		const seen = new Set();
		for (const c of el.querySelectorAll("canvas")) {
			p.canvases++;
			if (!c.width || !c.height) continue;
			p.area += c.width * c.height;
			const px = c.getContext("2d").getImageData(0, 0, c.width, c.height).data;
			for (let i = 0; i < px.length; i += 4) {
				if (px[i + 3] === 0) continue;
				p.painted++;
				if (seen.size < 64) seen.add((px[i] >> 4) + "," + (px[i + 1] >> 4) + "," + (px[i + 2] >> 4));
			}
		}
		p.colours = seen.size;
		out.plots.push(p);
	}
	return out;
})()`

type comparePage struct {
	Rendered  bool     `json:"rendered"`
	Verdict   string   `json:"verdict"`
	Drawn     []string `json:"drawn"`
	Groups    []string `json:"groups"`
	Regressed []string `json:"regressed"`
	Findings  int      `json:"findings"`
	Cells     []string `json:"cells"`
	Differs   int      `json:"differs"`
	More      []string `json:"more"`
	Pwned     bool     `json:"pwned"`
	Plots     []struct {
		Name                             string
		Canvases, Painted, Colours, Area int
	} `json:"plots"`
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
	if err := p.Open(browsertest.FileURL(filepath.Join(out, HTMLFile)), 30*time.Second); err != nil {
		t.Fatal(err)
	}
	if err := p.WaitFor(`document.documentElement.dataset.rendered === "true"`, 20*time.Second); err != nil {
		t.Fatal(err)
	}
	var st comparePage
	if err := p.Eval(compareInspectJS, &st); err != nil {
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
	if st.Findings != min(len(res.Findings), maxHTMLRows) || st.Findings == 0 {
		t.Errorf("%d finding rows, result has %d", st.Findings, len(res.Findings))
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
	if len(st.Drawn) != 3 || len(st.Plots) != 3 {
		t.Errorf("drawn %v, plots %d", st.Drawn, len(st.Plots))
	}
	for _, pl := range st.Plots {
		if pl.Canvases == 0 || pl.Painted < pl.Area/200 || pl.Colours < 3 {
			t.Errorf("plot %s looks blank: %d canvases, %d of %d pixels painted, %d colours", pl.Name, pl.Canvases, pl.Painted, pl.Area, pl.Colours)
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
