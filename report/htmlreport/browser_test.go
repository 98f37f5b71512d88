package htmlreport

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"bench/internal/record/rundir"
	"bench/internal/testpeer/browsertest"
	"bench/report"
)

// summaryJSON is the part of summary.json the browser test compares with.
type summaryJSON struct {
	RunID  string `json:"run_id"`
	Groups []struct {
		Provider          string       `json:"provider"`
		Model             string       `json:"model"`
		ThinkingLevel     *string      `json:"thinking_level"`
		SuccessRateOK     *float64     `json:"success_rate_ok"`
		ObjectivePassRate *float64     `json:"objective_pass_rate"`
		LatencyMS         report.Stats `json:"latency_ms"`
		TTFTMS            report.Stats `json:"ttft_ms"`
		TokensPerS        report.Stats `json:"tokens_per_s"`
		CostUSDTotal      *float64     `json:"cost_usd_total"`
		CostPerPassedCell *float64     `json:"cost_per_passed_cell"`
	} `json:"groups"`
}

// pageState is what the test reads back from the loaded page.
type pageState struct {
	Rendered bool               `json:"rendered"`
	RenderMS float64            `json:"renderMS"`
	Drawn    []string           `json:"drawn"`
	Plots    []browsertest.Plot `json:"-"`
	Rows     []struct {
		Group string            `json:"group"`
		Rank  string            `json:"rank"`
		CI    string            `json:"ci"`
		Cells map[string]string `json:"cells"`
	} `json:"rows"`
	Tiers    map[string]string `json:"tiers"`
	Routing  []string          `json:"routing"`
	Pwned    bool              `json:"pwned"`
	BodyText string            `json:"bodyText"`
}

// inspectJS collects the page's state: the ranking table's figures with
// their exact values, the tiers and the routing list (the plots are read
// by browsertest's Plots).
const inspectJS = `(() => {
	const out = {rendered: document.documentElement.dataset.rendered === "true",
		renderMS: window.benchReport ? window.benchReport.renderMS : -1,
		drawn: window.benchReport ? window.benchReport.plots : [], rows: [], tiers: {}, routing: [],
		pwned: !!window.pwned, bodyText: document.body.innerText.slice(0, 200000)};
	for (const tr of document.querySelectorAll("#ranking-table tbody tr")) {
		const cells = {};
		for (const td of tr.querySelectorAll("td[class*='c-']")) {
			const k = [...td.classList].find(c => c.startsWith("c-"));
			cells[k] = td.textContent.trim();
			cells[k + ":exact"] = td.title;
		}
		out.rows.push({group: tr.dataset.group, rank: tr.dataset.rank, ci: tr.querySelector(".ci-pass").textContent.trim(), cells});
	}
	for (const tr of document.querySelectorAll("#tier-table tbody tr")) out.tiers[tr.dataset.group] = tr.querySelector(".c-tier").textContent.trim();
	for (const li of document.querySelectorAll("ul.routing li")) out.routing.push(li.textContent.trim());
	return out;
})()`

func exactOf(v *float64) string {
	if v == nil {
		return ""
	}
	return fmt.Sprint(*v)
}

func label(provider, model string, thinking *string) string {
	s := provider + "/" + model
	if thinking != nil {
		s += " (" + *thinking + ")"
	}
	return s
}

// TestReportInChromium renders report.html for a realistic generated run
// (summary.json written as bench report writes it), loads it from a
// file:// URL in headless Chromium and checks what a person would see: no
// console error, no request leaving the file, every plot painted, the
// ranking's figures and tiers equal to summary.json and tiers.json, a
// matrix tooltip with the violation shown as text (the HTML in it never
// runs), and a screenshot kept as an artefact.
func TestReportInChromium(t *testing.T) {
	b := browsertest.New(t)
	dir := t.TempDir()
	realisticFixture().write(t, dir)
	d, err := load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(dir, d); err != nil {
		t.Fatal(err)
	}
	// Kept with: go test -artifacts -outputdir DIR (else removed after the test).
	art := t.ArtifactDir()

	p := b.NewPage(t)
	if err := p.Load(filepath.Join(dir, rundir.ReportHTML)); err != nil {
		t.Fatal(err)
	}
	st := inspect(t, p)

	if errs, err := p.Errors(); err != nil || len(errs) > 0 {
		t.Errorf("console errors (%v):\n%s", err, strings.Join(errs, "\n"))
	}
	if rr := p.RemoteRequests(); len(rr) > 0 {
		t.Errorf("report.html requested %v; it must load nothing", rr)
	}
	if st.Pwned {
		t.Error("a violation's <script> ran: model text reached the page as HTML")
	}

	// Every plot: the expected set, each painted with more than one colour.
	want := []string{"cost", "box-ttft", "pct-ttft", "box-e2e", "pct-e2e", "box-tps", "pct-tps", "heatmap", "timeline"}
	got := map[string]bool{}
	for _, pl := range st.Plots {
		got[pl.Name] = true
		if why := pl.Blank(); why != "" {
			t.Error(why)
		}
	}
	for _, w := range want {
		if !got[w] {
			t.Errorf("plot %s missing (have %v)", w, st.Plots)
		}
	}
	if len(st.Drawn) != len(want) {
		t.Errorf("drawn %v, want %v", st.Drawn, want)
	}

	// The ranking's figures are summary.json's, in report.Ranked's order.
	var sum summaryJSON
	readJSON(t, filepath.Join(dir, "summary.json"), &sum)
	s, err := report.LoadEach(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	ranked := report.Ranked(s)
	if len(st.Rows) != len(sum.Groups) || len(st.Rows) != len(ranked) {
		t.Fatalf("%d ranking rows, summary.json has %d groups", len(st.Rows), len(sum.Groups))
	}
	places := report.Places(ranked)
	tied := false
	for i, r := range st.Rows {
		if r.Group != ranked[i].Label() {
			t.Errorf("row %d is %s, want %s (report.Ranked order)", i+1, r.Group, ranked[i].Label())
		}
		// The rank with its ties, and passed/judged with the interval.
		g := ranked[i]
		wantCI := "– " + report.CIText(g.ObjectivePassCI)
		if g.NJudged > 0 {
			wantCI = fmt.Sprintf("%d/%d %s", g.NPassed, g.NJudged, report.CIText(g.ObjectivePassCI))
		}
		if r.Rank != places[i].Label() || r.CI != wantCI {
			t.Errorf("row %d: rank %q, pass %q; want %q, %q", i+1, r.Rank, r.CI, places[i].Label(), wantCI)
		}
		tied = tied || places[i].Tied
	}
	if tied != strings.Contains(st.BodyText, "=N: tied.") {
		t.Errorf("ties %v, but the tie note shown: %v", tied, !tied)
	}
	byLabel := map[string]map[string]string{}
	for _, r := range st.Rows {
		byLabel[r.Group] = r.Cells
	}
	for _, g := range sum.Groups {
		cells := byLabel[label(g.Provider, g.Model, g.ThinkingLevel)]
		if cells == nil {
			t.Errorf("no ranking row for %s/%s", g.Provider, g.Model)
			continue
		}
		for _, c := range []struct {
			class string
			v     *float64
			text  func(float64) string
		}{
			{"c-pass", g.ObjectivePassRate, func(v float64) string { return fmt.Sprintf("%.1f%%", v*100) }},
			{"c-success", g.SuccessRateOK, func(v float64) string { return fmt.Sprintf("%.1f%%", v*100) }},
			{"c-ttft50", g.TTFTMS.P50, FormatMS},
			{"c-ttft95", g.TTFTMS.P95, FormatMS},
			{"c-e2e50", g.LatencyMS.P50, FormatMS},
			{"c-e2e95", g.LatencyMS.P95, FormatMS},
			{"c-tps50", g.TokensPerS.P50, func(v float64) string { return fmt.Sprintf("%.1f", v) }},
			{"c-cost", g.CostUSDTotal, func(v float64) string { return report.FormatUSD(&v) }},
			{"c-costpass", g.CostPerPassedCell, func(v float64) string { return report.FormatUSD(&v) }},
		} {
			wantText, wantExact := "–", ""
			if c.v != nil {
				wantText, wantExact = c.text(*c.v), exactOf(c.v)
			}
			if cells[c.class] != wantText || cells[c.class+":exact"] != wantExact {
				t.Errorf("%s/%s %s shows %q (exact %q), summary.json says %q (%q)", g.Provider, g.Model, c.class,
					cells[c.class], cells[c.class+":exact"], wantText, wantExact)
			}
		}
	}

	// Tiers and the routing list are tiers.json's.
	var tiers report.Tiers
	readJSON(t, filepath.Join(dir, "tiers.json"), &tiers)
	for _, tr := range tiers.Ranking {
		if got, want := st.Tiers[label(tr.Provider, tr.Model, tr.ThinkingLevel)], tierName(tr.Tier); got != want {
			t.Errorf("%s/%s tier shown %q, tiers.json %q", tr.Provider, tr.Model, got, want)
		}
	}
	var wantRouting []string
	for _, m := range tiers.Recommended {
		wantRouting = append(wantRouting, label(m.Provider, m.Model, m.ThinkingLevel))
	}
	if len(wantRouting) == 0 || strings.Join(st.Routing, "|") != strings.Join(wantRouting, "|") {
		t.Errorf("routing list %v, tiers.json %v (the fixture must have a Tier-1 model)", st.Routing, wantRouting)
	}

	checkFits(t, b, filepath.Join(dir, rundir.ReportHTML), 1280)

	// The screenshot first, before the hover checks leave a tooltip open.
	shot := filepath.Join(art, "report.png")
	if err := p.Screenshot(shot); err != nil {
		t.Fatal(err)
	}

	checkPlottedMarks(t, p, sum)
	checkHeatmapHover(t, p, s)
	checkBoxHover(t, p, ranked)
	copyFile(t, filepath.Join(dir, rundir.ReportHTML), filepath.Join(art, rundir.ReportHTML))
	t.Logf("screenshot %s (report %s); rendered in %.0f ms after navigation start", shot, filepath.Join(art, rundir.ReportHTML), st.RenderMS)
}

// checkPlottedMarks compares the p50/p95/p99 the plots mark with
// summary.json, and the quantile curves' p50 with the mark.
func checkPlottedMarks(t *testing.T, p *browsertest.Page, sum summaryJSON) {
	t.Helper()
	var data struct {
		Groups  []pageGroup `json:"groups"`
		Metrics []struct {
			Key   string        `json:"key"`
			Dists []Dist        `json:"dists"`
			Marks [][3]*float64 `json:"marks"`
		} `json:"metrics"`
	}
	if err := p.Eval(`window.benchReport.data`, &data); err != nil {
		t.Fatal(err)
	}
	stats := map[string]map[string]report.Stats{}
	for _, g := range sum.Groups {
		stats[label(g.Provider, g.Model, g.ThinkingLevel)] = map[string]report.Stats{"ttft": g.TTFTMS, "e2e": g.LatencyMS, "tps": g.TokensPerS}
	}
	for _, m := range data.Metrics {
		for i, g := range data.Groups {
			want := stats[g.Label][m.Key]
			for k, w := range []*float64{want.P50, want.P95, want.P99} {
				if exactOf(m.Marks[i][k]) != exactOf(w) {
					t.Errorf("%s %s mark %d = %s, summary.json %s", g.Label, m.Key, k, exactOf(m.Marks[i][k]), exactOf(w))
				}
			}
			if d := m.Dists[i]; d.Q != nil {
				for k, q := range []int{50, 95, 99} {
					if w := []*float64{want.P50, want.P95, want.P99}[k]; w == nil || d.Q[q] != *w {
						t.Errorf("%s %s curve at p%d = %v, summary.json %v", g.Label, m.Key, q, d.Q[q], exactOf(w))
					}
				}
			}
		}
	}
}

// checkHeatmapHover moves the mouse over a matrix cell whose check failed
// and reads the tooltip: counts, and the violation as plain text; then
// over a cell whose judge gave no verdict: a check error, not "no check".
func checkHeatmapHover(t *testing.T, p *browsertest.Page, s *report.Summary) {
	t.Helper()
	ranked := report.Ranked(s)
	index := map[*report.Group]int{}
	for i, g := range s.Groups {
		index[g] = i
	}
	hover := func(gi, pi int) string {
		var tipText string
		js := fmt.Sprintf(`(() => {
			const el = document.querySelector('[data-plot="heatmap"]'), cv = el.querySelector("canvas");
			const r = cv.getBoundingClientRect();
			const x = r.left + (+el.dataset.left) + (%d + 0.5) * (+el.dataset.cellW);
			const y = r.top + (+el.dataset.top) + (%d + 0.5) * (+el.dataset.cellH);
			cv.dispatchEvent(new MouseEvent("mousemove", {clientX: x, clientY: y, bubbles: true}));
			const tip = document.getElementById("tip");
			return tip.hidden ? "" : tip.textContent;
		})()`, gi, pi)
		if err := p.Eval(js, &tipText); err != nil {
			t.Fatal(err)
		}
		return tipText
	}
	for _, look := range []struct {
		what string
		is   func(c *report.MatrixCell) bool
		want func(c *report.MatrixCell) []string
	}{
		{"a failed check", func(c *report.MatrixCell) bool { return c.Judged > 0 && c.Passed < c.Judged },
			func(c *report.MatrixCell) []string {
				return []string{fmt.Sprintf("checks: %d/%d passed", c.Passed, c.Judged), "violation: expected exactly 4 bullets", "<script>window.pwned=1</script>"}
			}},
		{"a check error", func(c *report.MatrixCell) bool { return c.Judged == 0 && c.CheckErrors > 0 },
			func(c *report.MatrixCell) []string {
				return []string{fmt.Sprintf("%d check errors: a judge or command validator gave no verdict", c.CheckErrors), "judge_error: connection_refused: the judge is down"}
			}},
	} {
		found := false
		for gi, g := range ranked {
			for pi, pr := range s.Prompts {
				c := s.Matrix[index[g]].Get(pr.ID)
				if found || c == nil || !look.is(c) {
					continue
				}
				found = true
				tipText := hover(gi, pi)
				for _, want := range append([]string{pr.ID, g.Label()}, look.want(c)...) {
					if !strings.Contains(tipText, want) {
						t.Errorf("heatmap tooltip for %s × %s lacks %q:\n%s", pr.ID, g.Label(), want, tipText)
					}
				}
				if strings.Contains(tipText, "no check") {
					t.Errorf("heatmap tooltip for %s × %s says no check:\n%s", pr.ID, g.Label(), tipText)
				}
			}
		}
		if !found {
			t.Fatalf("fixture has no cell with %s", look.what)
		}
	}
}

// checkBoxHover reads the TTFT box plot's tooltip of the first ranked
// group with a TTFT and compares its p50 with summary.json's.
func checkBoxHover(t *testing.T, p *browsertest.Page, ranked []*report.Group) {
	t.Helper()
	for i, g := range ranked {
		if g.TTFTMS.P50 == nil {
			continue
		}
		var tipText string
		js := fmt.Sprintf(`(() => {
			const cv = document.querySelector('[data-plot="box-ttft"] canvas'), r = cv.getBoundingClientRect();
			const rowH = (r.height - 44) / (+cv.parentElement.dataset.rows);
			cv.dispatchEvent(new MouseEvent("mousemove", {clientX: r.left + 200, clientY: r.top + 22 + (%d + 0.5) * rowH, bubbles: true}));
			return document.getElementById("tip").textContent;
		})()`, i)
		if err := p.Eval(js, &tipText); err != nil {
			t.Fatal(err)
		}
		if want := "p50 " + strings.TrimSuffix(fmtJS(*g.TTFTMS.P50), ""); !strings.Contains(tipText, g.Label()) || !strings.Contains(tipText, want) {
			t.Errorf("box tooltip for %s lacks %q:\n%s", g.Label(), want, tipText)
		}
		return
	}
}

// fmtJS is report.js's fmtMS (toFixed rounds half away from zero).
func fmtJS(v float64) string {
	if v < 10 {
		return fmt.Sprintf("%.1f ms", v+1e-9)
	}
	return fmt.Sprintf("%.0f ms", v+1e-9)
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	data, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestEdgeReportsInChromium loads the reports a person also meets: a run
// with no results yet, and a run whose resource files have no sample series
// (today's sampler). Both must load without a console error and say what
// is missing instead of drawing empty plots.
func TestEdgeReportsInChromium(t *testing.T) {
	b := browsertest.New(t)

	empty := t.TempDir()
	if err := os.WriteFile(filepath.Join(empty, "results.jsonl"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := buildSummary(empty); err != nil {
		t.Fatal(err)
	}

	noSeries := t.TempDir()
	realisticFixture().write(t, noSeries)
	series, _ := filepath.Glob(filepath.Join(noSeries, "*"+rundir.SamplesSuffix))
	if len(series) == 0 {
		t.Fatal("fixture wrote no series")
	}
	for _, s := range series {
		os.Remove(s)
	}

	for _, c := range []struct {
		name, dir string
		plots     int
		text      []string
	}{
		{"empty", empty, 0, []string{"0 records, 0 groups, 0 prompts", "No results.", "None: no group is a firm Tier 1"}},
		{"no-series", noSeries, 8, []string{"kept snapshots and peaks only", "peak server RSS", "Cost and pass rate"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			d, err := load(c.dir)
			if err != nil {
				t.Fatal(err)
			}
			if err := WriteFile(c.dir, d); err != nil {
				t.Fatal(err)
			}
			p := b.NewPage(t)
			if err := p.Load(filepath.Join(c.dir, rundir.ReportHTML)); err != nil {
				t.Fatal(err)
			}
			if errs, err := p.Errors(); err != nil || len(errs) > 0 {
				t.Errorf("console errors (%v):\n%s", err, strings.Join(errs, "\n"))
			}
			st := inspect(t, p)
			if len(st.Plots) != c.plots || len(st.Drawn) != c.plots {
				t.Errorf("%d plots, %d drawn, want %d", len(st.Plots), len(st.Drawn), c.plots)
			}
			for _, w := range c.text {
				if !strings.Contains(st.BodyText, w) {
					t.Errorf("page lacks %q", w)
				}
			}
		})
	}
}

// inspect reads the page's state and its plots.
func inspect(t *testing.T, p *browsertest.Page) pageState {
	t.Helper()
	var st pageState
	if err := p.Eval(inspectJS, &st); err != nil {
		t.Fatal(err)
	}
	plots, err := p.Plots()
	if err != nil {
		t.Fatal(err)
	}
	st.Plots = plots
	return st
}

// checkFits loads the report in a window width px wide and checks nothing
// overflows it: not the page, and not the routing and tool-use tables
// inside their scrolling boxes (a column there would be clipped), and
// every routing verdict is on screen horizontally.
func checkFits(t *testing.T, b *browsertest.Browser, path string, width int) {
	t.Helper()
	p := b.NewPage(t)
	if err := p.Resize(width, 900); err != nil {
		t.Fatal(err)
	}
	if err := p.Load(path); err != nil {
		t.Fatal(err)
	}
	var fit struct {
		Page     [2]int            `json:"page"`
		Boxes    map[string][2]int `json:"boxes"`
		Verdicts []float64         `json:"verdicts"`
		Wide     []string          `json:"wide"`
	}
	if err := p.Eval(`(() => {
		const de = document.documentElement, out = {page: [de.scrollWidth, de.clientWidth], boxes: {}, verdicts: [], wide: []};
		for (const el of document.querySelectorAll("body *")) { const r = el.getBoundingClientRect(); if (r.right > de.clientWidth + 1) out.wide.push(el.tagName + "#" + el.id + "." + el.className + " " + Math.round(r.right)); }
		for (const id of ["tier-table", "task-matrix", "category-table", "agentic-table"]) {
			const tb = document.getElementById(id);
			if (tb) out.boxes[id] = [tb.parentElement.scrollWidth, tb.parentElement.clientWidth];
		}
		for (const v of document.querySelectorAll("#tier-table .verdict")) out.verdicts.push(v.getBoundingClientRect().right);
		return out;
	})()`, &fit); err != nil {
		t.Fatal(err)
	}
	if fit.Page[0] > fit.Page[1] {
		t.Errorf("at %d px the page overflows: %d px wide in %d (%.300v)", width, fit.Page[0], fit.Page[1], fit.Wide)
	}
	if _, ok := fit.Boxes["tier-table"]; !ok {
		t.Fatal("no tool-use table")
	}
	for id, b := range fit.Boxes {
		if b[0] > b[1] {
			t.Errorf("at %d px #%s is %d px wide in a %d px box: a column is clipped", width, id, b[0], b[1])
		}
	}
	for _, r := range fit.Verdicts {
		if r > float64(width) {
			t.Errorf("at %d px a routing verdict ends at %.0f px, off screen", width, r)
		}
	}
}
