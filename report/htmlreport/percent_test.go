package htmlreport

import (
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/net/html"

	"bench/internal/record/results"
	"bench/internal/record/rundir"
	"bench/report"
)

// percentRe finds a percentage as report.html writes one.
var percentRe = regexp.MustCompile(`(-?\d+(?:\.\d+)?)%`)

// ruleThresholds are the percentages report.html's prose states as rules
// (Tier 1 ≥ 80%, the 95% interval, 0% … 100% of the legend): not
// figures of the run, so not in summary.json.
var ruleThresholds = map[string]bool{"0": true, "50": true, "79": true, "80": true, "95": true, "100": true}

// figure is one percentage report.html shows in a table cell: where it
// is (table, column header, row key) and what it says.
type figure struct {
	table, column, row string
	shown              []float64
	text               string
}

// TestEveryPercentIsSummarys renders report.html for runs that have every
// table with a percentage (the ranking, tool-use tiers and intervals,
// categories, agentic tasks and pass^k, resources, a load sweep's goodput)
// and checks each percentage shown in a table cell against the value
// summary.json holds for that row and column: a 0–1 fraction shown as a
// percent, CPU already a percent. A percentage in a column this test does
// not know fails it (add the column's source here), and so does one in the
// prose that is not one of the rules' thresholds. On the report of issue 35
// the capacity table's goodput read "1.0 %" for summary.json's share 1.
func TestEveryPercentIsSummarys(t *testing.T) {
	dirs := map[string]string{}
	dirs["realistic"], _ = loadFixture(t, realisticFixture())
	dirs["sweep"] = t.TempDir()
	writeSweep(t, dirs["sweep"])
	dirs["routing"] = t.TempDir()
	recs := routingRecords()
	w, err := results.Create(filepath.Join(dirs["routing"], rundir.ResultsFile))
	if err != nil {
		t.Fatal(err)
	}
	for i := range recs {
		if err := w.Write(&recs[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	checked := map[string]int{}
	for name, dir := range dirs {
		if err := buildSummary(dir); err != nil {
			t.Fatal(err)
		}
		d, err := load(dir)
		if err != nil {
			t.Fatal(err)
		}
		if err := WriteFile(dir, d); err != nil {
			t.Fatal(err)
		}
		var sum report.Summary
		var tiers report.Tiers
		readJSON(t, filepath.Join(dir, rundir.SummaryJSON), &sum)
		readJSON(t, filepath.Join(dir, rundir.TiersFile), &tiers)
		// The tiers are tiers.json's, joined to their groups as
		// report.TierRanking joins them.
		notes := ""
		for _, tr := range tiers.Ranking {
			notes += tr.RoutingNote + "\n"
			for _, g := range sum.Groups {
				if g.Label() == (&report.Group{Provider: tr.Provider, Model: tr.Model, ThinkingLevel: tr.ThinkingLevel}).Label() {
					g.Tier = tr
				}
			}
		}
		figs, prose := percentages(t, filepath.Join(dir, rundir.ReportHTML))
		for _, p := range prose {
			// A routing note quotes tiers.json's figures.
			if !ruleThresholds[p] && !strings.Contains(notes, p+"%") {
				t.Errorf("%s: the prose says %s%%, which is no rule's threshold (a figure belongs in a table checked here)", name, p)
			}
		}
		for _, f := range figs {
			want, ok := summaryValue(&sum, f)
			if !ok {
				t.Errorf("%s: %s %q, row %q shows %q: no summary.json value known for this column", name, f.table, f.column, f.row, f.text)
				continue
			}
			if len(want) != len(f.shown) {
				t.Errorf("%s: %s %q, row %q shows %q, summary.json has %d values", name, f.table, f.column, f.row, f.text, len(want))
				continue
			}
			for i, v := range want {
				// One decimal of a percent: within 0.05 rounded, within
				// 0.1 for an interval's bound (rounded outward).
				if v == nil || math.Abs(f.shown[i]-*v) > 0.1+1e-9 {
					t.Errorf("%s: %s %q, row %q shows %q; summary.json's value is %v %%", name, f.table, f.column, f.row, f.text, deref(v))
				}
			}
			checked[f.table+" / "+f.column]++
		}
	}
	for _, col := range []string{"ranking-table / success", "ranking-table / pass rate", "ranking-table / passed/judged (95% CI)", "tier-table / tool-use success", "tier-table / 95% CI",
		"category-table / simple", "agentic-table / task success", "agentic-table / pass^k", "resource-table / CPU before → after",
		"resource-table / peak CPU", "capacity-table / goodput", "tier-table / routing"} {
		if checked[col] == 0 {
			t.Errorf("no percentage checked in %s: the fixtures no longer reach it", col)
		}
	}
}

func deref(v *float64) any {
	if v == nil {
		return nil
	}
	return *v
}

// summaryValue is what summary.json says the cell f shows, in percent.
func summaryValue(s *report.Summary, f figure) ([]*float64, bool) {
	pct := func(v *float64) *float64 {
		if v == nil {
			return nil
		}
		p := *v * 100
		return &p
	}
	ci := func(c *report.CI) []*float64 {
		if c == nil {
			return nil
		}
		lo, hi := c[0], c[1]
		return []*float64{pct(&lo), pct(&hi)}
	}
	if f.table == "capacity-table" {
		sweep, stage, _ := strings.Cut(f.row, "\x00")
		for _, g := range s.Groups {
			for _, st := range g.Stages {
				if g.Label() == sweep && st.Stage == stage && f.column == "goodput" && st.Goodput != nil {
					return []*float64{pct(st.Goodput.Share)}, true
				}
			}
		}
		return nil, false
	}
	var g *report.Group
	for _, c := range s.Groups {
		if c.Label() == f.row {
			g = c
		}
	}
	if g == nil {
		return nil, false
	}
	a := g.Agentic
	tier := g.Tier
	if tier == nil {
		tier = &report.Tier{}
	}
	before, after := g.ResourcesBefore, g.ResourcesAfter
	if before == nil {
		before = &rundir.Snapshot{}
	}
	switch f.table + " / " + f.column {
	case "ranking-table / success":
		return []*float64{pct(g.SuccessRateOK)}, true
	case "ranking-table / pass rate":
		return []*float64{pct(g.ObjectivePassRate)}, true
	case "ranking-table / passed/judged (95% CI)":
		return ci(g.ObjectivePassCI), true
	case "tier-table / tool-use success":
		return []*float64{pct(tier.ToolUseSuccessRate)}, true
	case "tier-table / 95% CI":
		return ci(tier.ToolUseSuccessCI), true
	case "agentic-table / task success":
		return []*float64{pct(a.TaskSuccessRate)}, true
	case "agentic-table / 95% CI":
		return ci(a.TaskSuccessCI), true
	case "agentic-table / wrong arguments":
		return []*float64{pct(a.WrongArgumentRate)}, true
	case "agentic-table / unknown tools":
		return []*float64{pct(a.UnknownToolRate)}, true
	case "agentic-table / recovery":
		return []*float64{pct(a.RecoveryRate)}, true
	case "agentic-table / pass^k":
		return []*float64{pct(g.PassHatK)}, true
	case "agentic-table / pass@k":
		return []*float64{pct(g.PassAtK)}, true
	case "tier-table / routing":
		// The verdict's reason is tiers.json's routing_note, its
		// figures quoted: the same percentages in the same order.
		var out []*float64
		for _, m := range percentRe.FindAllStringSubmatch(tier.RoutingNote, -1) {
			v, _ := strconv.ParseFloat(m[1], 64)
			out = append(out, &v)
		}
		return out, true
	case "resource-table / CPU before → after":
		out := []*float64{before.CPUPercent}
		if after != nil {
			out = append(out, after.CPUPercent)
		}
		return out, true
	case "resource-table / peak CPU":
		return []*float64{report.WindowPeak(g).CPUPercent}, true
	}
	if c := g.Categories[f.column]; f.table == "category-table" && c != nil {
		return append([]*float64{pct(c.Rate)}, ci(c.CI)...), true
	}
	return nil, false
}

// percentages reads report.html: every percentage in a table's body cell,
// with the cell's table, column header and row key, and the percentages
// of the rest of the page's text (scripts and styles left out).
func percentages(t *testing.T, path string) ([]figure, []string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	doc, err := html.Parse(f)
	if err != nil {
		t.Fatal(err)
	}
	var figs []figure
	var prose []string
	var walk func(n *html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode && (n.Data == "script" || n.Data == "style") {
			return
		}
		if n.Type == html.ElementNode && n.Data == "table" {
			figs = append(figs, tableFigures(t, n)...)
			return
		}
		if n.Type == html.TextNode {
			for _, m := range percentRe.FindAllStringSubmatch(n.Data, -1) {
				prose = append(prose, m[1])
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(doc)
	return figs, prose
}

// tableFigures are the percentages of one table's body cells.
func tableFigures(t *testing.T, tbl *html.Node) []figure {
	name := attr(tbl, "id")
	if name == "" {
		name = attr(tbl, "class")
	}
	var headers []string
	var out []figure
	for _, tr := range all(tbl, "tr") {
		cells := children(tr)
		if len(cells) > 0 && cells[0].Data == "th" {
			headers = headers[:0]
			for _, th := range cells {
				headers = append(headers, strings.TrimSpace(text(th)))
			}
			continue
		}
		row := attr(tr, "data-group")
		if row == "" {
			row = attr(tr, "data-suite")
		}
		if name == "capacity-table" && len(cells) > 1 {
			row = text(cells[0]) + "\x00" + strings.TrimSuffix(text(cells[1]), " ◆")
		}
		for i, td := range cells {
			s := text(td)
			ms := percentRe.FindAllStringSubmatch(s, -1)
			if len(ms) == 0 {
				continue
			}
			fg := figure{table: name, row: row, text: s}
			if i < len(headers) {
				fg.column = headers[i]
			}
			for _, m := range ms {
				v, err := strconv.ParseFloat(m[1], 64)
				if err != nil {
					t.Fatal(err)
				}
				fg.shown = append(fg.shown, v)
			}
			out = append(out, fg)
		}
	}
	return out
}

func attr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}

// children are n's element children.
func children(n *html.Node) []*html.Node {
	var out []*html.Node
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if c.Type == html.ElementNode {
			out = append(out, c)
		}
	}
	return out
}

// all are n's descendants named tag, in document order.
func all(n *html.Node, tag string) []*html.Node {
	var out []*html.Node
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if c.Type == html.ElementNode && c.Data == tag {
			out = append(out, c)
		}
		out = append(out, all(c, tag)...)
	}
	return out
}

// text is n's text content.
func text(n *html.Node) string {
	if n.Type == html.TextNode {
		return n.Data
	}
	var b strings.Builder
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		b.WriteString(text(c))
	}
	return b.String()
}
