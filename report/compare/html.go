package compare

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"slices"
	"sync"

	"bench/internal/record/rundir"
	"bench/report/htmlreport"
	"bench/report/stats"
)

// HTMLFile is the comparison as a page to look at, next to compare.json.
const HTMLFile = rundir.CompareHTML

// maxHTMLRows caps each table of compare.html, as report.html does; the
// rest are counted with a pointer to compare.json.
const maxHTMLRows = htmlreport.MaxRows

var (
	//go:embed assets/compare.html.tmpl
	htmlTemplate string
	// page is parsed when compare.html is first written, not at every
	// start of the binary.
	page = sync.OnceValue(func() *template.Template {
		return template.Must(template.New(HTMLFile).Parse(htmlTemplate))
	})
)

type htmlView struct {
	Title, Base, New, Verdict, VerdictLine string
	Regressed                              bool
	Warnings                               []string
	Setup                                  []SetupItem
	SetupDiffers                           int
	Findings                               []findingRow
	MoreFindings                           int
	// Causes are the root causes' example cells, base beside new.
	Causes    []sideBySide
	HasCost   bool
	Groups    []htmlGroup
	Counts    string
	Cells     []htmlCell
	MoreCells int
	Methods   map[string]string
	UPlotJS   template.JS
	UPlotCSS  template.CSS
	// Plot is the latency chart's data: group labels and, per metric,
	// the base and new medians (null where a side has no samples).
	Plot template.JS
	// Judgement is what was judged, per metric; Latency each group's
	// latency comparisons benchstat-style, and what was not judged.
	Judgement []htmlJudgement
	Latency   []htmlGroupLatency
}

type htmlJudgement struct {
	Metric, Judged, NotJudged string
	Missing                   bool
}

type htmlGroupLatency struct {
	Label   string
	Figures []htmlFigure
	Prompts []htmlFigure
}

type htmlFigure struct {
	Text, Class string
}

type htmlGroup struct {
	Label, Cells, Pass, PassP, ToolUse, ToolUseP, Tier, Cost string
	Latency                                                  []htmlLatency
	Significant, Regressed                                   bool
}

type htmlLatency struct {
	Text, Class string
}

type htmlCell struct {
	Where, Verdict, Category, Why string
	Gate                          bool
}

type plotData struct {
	Groups  []string              `json:"groups"`
	Metrics []string              `json:"metrics"`
	Base    map[string][]*float64 `json:"base"`
	New     map[string][]*float64 `json:"new"`
	Changes map[string][]string   `json:"changes"`
	Units   map[string]string     `json:"units"`
}

// WriteHTML writes compare.html: one self-contained page (uPlot and the
// data inlined, nothing loaded) with the verdict, the setup differences,
// the findings grouped by root cause, each root cause's example cell base
// beside new (the answers with a word-level diff, an agentic cell's turns
// with the first that differs marked), the groups with each latency
// metric's medians base and new drawn side by side and their cost, and
// the cells that are not a match. Model text is shown as text.
func WriteHTML(w io.Writer, r *Result) error {
	v := htmlView{Title: fmt.Sprintf("bench compare: %s -> %s", r.BaseRunID, r.NewRunID), Base: r.BaseDir, New: r.NewDir,
		Verdict: r.Verdict, VerdictLine: verdictLine(r), Regressed: r.Regressed(), Warnings: r.Warnings,
		Setup: r.Setup, Counts: countsLine(r.Counts), Methods: r.Methods}
	v.UPlotJS, v.UPlotCSS = htmlreport.UPlot()
	for _, s := range r.Setup {
		if !s.Same {
			v.SetupDiffers++
		}
	}
	rows := findingRows(r)
	if len(rows) > maxHTMLRows {
		rows, v.MoreFindings = rows[:maxHTMLRows], len(rows)-maxHTMLRows
	}
	v.Findings = rows
	causes, err := sideBySides(r)
	if err != nil {
		return err
	}
	v.Causes = causes
	v.HasCost = anyCost(r)
	pd := plotData{Metrics: Metrics, Base: map[string][]*float64{}, New: map[string][]*float64{}, Changes: map[string][]string{},
		Units: map[string]string{MetricTTFT: "ms", MetricE2E: "ms", MetricTPS: "tokens/s"}}
	for _, g := range r.Groups {
		hg := htmlGroup{Label: g.Label(), Cells: countsLine(g.Cells), Pass: rateChange(g.PassRate), PassP: pText(g.PassRate),
			ToolUse: rateChange(g.ToolUse), ToolUseP: pText(g.ToolUse), Tier: tierText(g.Tier), Cost: costText(g.Cost), Significant: g.Significant,
			Regressed: g.PassRate.Change == string(stats.Regression) || g.ToolUse.Change == string(stats.Regression) || g.Tier.LeavesTier1}
		pd.Groups = append(pd.Groups, g.Label())
		for _, m := range Metrics {
			lv := g.Latency[m]
			class := ""
			var b, n *float64
			change := ""
			if lv != nil {
				change = string(lv.Change)
				if lv.NBase > 0 {
					b = ptrTo(lv.MedianBase)
				}
				if lv.NCur > 0 {
					n = ptrTo(lv.MedianCur)
				}
				switch change {
				case string(stats.Regression):
					class, hg.Regressed = "bad", true
				case string(stats.Improvement):
					class = "good"
				}
			}
			hg.Latency = append(hg.Latency, htmlLatency{latText(lv), class})
			pd.Base[m] = append(pd.Base[m], b)
			pd.New[m] = append(pd.New[m], n)
			pd.Changes[m] = append(pd.Changes[m], change)
		}
		v.Groups = append(v.Groups, hg)
	}
	for _, c := range r.Cells { // regressions first
		if c.Verdict == Match {
			continue
		}
		if len(v.Cells) == maxHTMLRows {
			v.MoreCells++
			continue
		}
		where := fmt.Sprintf("%s/%s", c.Provider, c.Model)
		if c.ThinkingLevel != nil {
			where += " (" + *c.ThinkingLevel + ")"
		}
		where += fmt.Sprintf(" %s rep %d", c.PromptID, c.Repetition)
		v.Cells = append(v.Cells, htmlCell{Where: where, Verdict: c.Verdict, Category: c.Category, Why: oneLine(cellSummary(c), 2000),
			Gate: (c.Verdict == Regression || c.Verdict == Drift) && r.Options.failsOn(c.Category)})
	}
	for _, m := range judgedMetrics(r.Judgement) {
		j := r.Judgement[m]
		hj := htmlJudgement{Metric: m, Judged: fmt.Sprintf("%d of %d", j.Judged, j.Total()), NotJudged: "-", Missing: slices.Contains(r.Unjudged, m)}
		if j.Total() > j.Judged {
			hj.NotJudged = fmt.Sprintf("%d (%s)", j.Total()-j.Judged, reasonCounts(j.NotJudged))
		}
		v.Judgement = append(v.Judgement, hj)
	}
	for _, g := range r.Groups {
		hl := htmlGroupLatency{Label: g.Label()}
		for _, m := range Metrics {
			hl.Figures = append(hl.Figures, htmlFigure{figure(m, g.Latency[m]), figureClass(g.Latency[m])})
			if pc := g.Pool[m]; pc != nil {
				hl.Figures = append(hl.Figures, htmlFigure{m + ": " + poolText(pc), "note"})
			}
		}
		why := map[string][]string{}
		var order []string
		for _, p := range g.Prompts {
			for _, m := range Metrics {
				pv := p.Latency[m]
				switch {
				case pv == nil:
				case !pv.Judged():
					k := pv.NotJudged + ": " + pv.Reason
					if why[k] == nil {
						order = append(order, k)
					}
					why[k] = append(why[k], p.PromptID+" "+m)
				case pv.Change != stats.Same && len(hl.Prompts) < maxHTMLRows:
					hl.Prompts = append(hl.Prompts, htmlFigure{p.PromptID + " " + figure(m, pv), figureClass(pv)})
				}
			}
		}
		for _, l := range capacityLines(g) {
			cls := ""
			switch l.change {
			case stats.Regression:
				cls = "bad"
			case stats.Improvement:
				cls = "good"
			case stats.NotJudged:
				cls = "note"
			}
			hl.Figures = append(hl.Figures, htmlFigure{"capacity " + l.text, cls})
		}
		// What was not judged, per reason: one line each, not one a prompt.
		for i, k := range order {
			if i == maxHTMLRows {
				break
			}
			hl.Prompts = append(hl.Prompts, htmlFigure{fmt.Sprintf("not judged (%s): %s", k, listCut(why[k], 20)), "note"})
		}
		v.Latency = append(v.Latency, hl)
	}
	b, err := json.Marshal(pd)
	if err != nil {
		return fmt.Errorf("encode %s: %w", HTMLFile, err)
	}
	v.Plot = template.JS(b)
	return page().Execute(w, v)
}

func ptrTo(f float64) *float64 { return &f }

// figureClass colours a latency line: bad for a regression, good for an
// improvement, note for what was not judged.
func figureClass(v *stats.Verdict) string {
	switch {
	case v == nil || !v.Judged():
		return "note"
	case v.Change == stats.Regression:
		return "bad"
	case v.Change == stats.Improvement:
		return "good"
	}
	return ""
}
