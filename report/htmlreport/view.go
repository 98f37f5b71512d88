package htmlreport

import (
	_ "embed"
	"fmt"
	"html/template"
	"sort"
	"strconv"
	"strings"

	"bench/report"
)

var (
	//go:embed uplot/uPlot.iife.min.js
	uplotJS string
	//go:embed uplot/uPlot.min.css
	uplotCSS string
	//go:embed uplot/LICENSE
	uplotLicense string
	//go:embed assets/report.js
	appJS string
	//go:embed assets/report.css
	appCSS string
	//go:embed assets/report.html.tmpl
	pageSource string
)

var pageTemplate = template.Must(template.New("report.html").Parse(pageSource))

// view is what the template renders: the tables, already formatted, and
// the plots' data for the script.
type view struct {
	RunID     string
	Generated string
	Counts    string

	Ranking     []rankRow
	RankingMore int
	Recommended []string

	Tiers      []tierRow
	TiersMore  int
	HasAgentic bool

	Metrics []metricView

	Resources     []resRow
	ResourcesMore int
	HasTimeline   bool

	Failures     []failRow
	FailuresMore int

	Skipped     []string
	SkippedMore int
	Warnings    []string

	Data page

	UPlotVersion string
	UPlotJS      template.JS
	UPlotCSS     template.CSS
	AppJS        template.JS
	AppCSS       template.CSS
}

// cell is a figure as shown, with its exact value for the title (hover)
// and for tests.
type cell struct {
	Text, Exact string
}

type rankRow struct {
	Rank                      int
	Label, Provider, Model    string
	Thinking                  string
	OKTotal                   string
	Success, Pass             cell
	TTFT50, TTFT95            cell
	E2E50, E2E95, TPS50       cell
	Errors, NotRun            int
	Tier, TierClass           string
	TierRate                  cell
	TierCounted, TierExcluded string
}

type tierRow struct {
	rankRow
	TierRank     int
	ErrorCells   int
	Agentic      []cell
	RoutingReady string
}

type metricView struct {
	Key, Title, Note string
	HasData          bool
}

type resRow struct {
	Label                                   string
	CPU, PeakCPU, Mem, PeakMem, RSS, PeakRS string
}

type failRow struct {
	Group, Prompt, Rep, Status, Type, Detail string
}

// page is the data report.js draws from, inlined as JSON. Groups are in
// ranking order everywhere in it.
type page struct {
	RunID   string       `json:"run_id"`
	Groups  []pageGroup  `json:"groups"`
	Prompts []pagePrompt `json:"prompts"`
	// Strings holds the matrix's reasons and details once each; cells
	// refer to them by index.
	Strings []string `json:"strings"`
	// Cells is the pass matrix, group-major in ranking order, prompt-minor
	// in Prompts order, CellWidth ints per cell: total, success, judged,
	// passed, not run, why (index in Strings or -1), detail (same).
	Cells     []int         `json:"cells"`
	CellWidth int           `json:"cell_width"`
	Metrics   []pageMetric  `json:"metrics"`
	Timeline  *pageTimeline `json:"timeline"`
}

type pageGroup struct {
	Label string `json:"label"`
	Tier  string `json:"tier"`
}

type pagePrompt struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

type pageMetric struct {
	Key   string `json:"key"`
	Title string `json:"title"`
	Unit  string `json:"unit"`
	// HigherIsBetter is true for tokens/s.
	HigherIsBetter bool `json:"higher_is_better"`
	// Dists, Mean and Marks are per group in ranking order; Marks are
	// summary.json's p50, p95, p99.
	Dists []Dist        `json:"dists"`
	Mean  []*float64    `json:"mean"`
	Marks [][3]*float64 `json:"marks"`
}

type pageTimeline struct {
	// T are the bucket times in Unix seconds; every series has one value
	// (or null) per time.
	T        []float64    `json:"t"`
	BucketMS int64        `json:"bucket_ms"`
	Series   []pageSeries `json:"series"`
	Suites   []pageSuite  `json:"suites"`
}

type pageSeries struct {
	Label string `json:"label"`
	// Scale is "pct" or "bytes".
	Scale  string     `json:"scale"`
	Values []*float64 `json:"values"`
}

type pageSuite struct {
	Label string  `json:"label"`
	Start float64 `json:"start"`
	End   float64 `json:"end"`
}

const cellWidth = 7

func newView(d *Data) (*view, error) {
	s := d.Summary
	if len(d.Groups) != len(s.Groups) {
		return nil, fmt.Errorf("htmlreport: %d group details for %d groups", len(d.Groups), len(s.Groups))
	}
	ranked := report.Ranked(s)
	index := make(map[*report.Group]int, len(s.Groups))
	for i, g := range s.Groups {
		index[g] = i
	}
	js, css := UPlot()
	v := &view{
		RunID:        s.RunID,
		Generated:    s.GeneratedAt.UTC().Format("2006-01-02 15:04:05 UTC"),
		UPlotVersion: UPlotVersion,
		UPlotJS:      js,
		UPlotCSS:     css,
		AppJS:        template.JS(appJS),
		AppCSS:       template.CSS(appCSS),
	}
	v.Counts = fmt.Sprintf("%s, %s, %s", report.Plural(s.NRecords, "record"), report.Plural(len(s.Groups), "group"), report.Plural(len(s.Prompts), "prompt"))
	if s.NSkippedLines > 0 {
		v.Counts += ", " + report.Plural(s.NSkippedLines, "unusable line") + " skipped"
	}

	rows := make([]rankRow, len(ranked))
	for i, g := range ranked {
		rows[i] = newRankRow(i+1, g)
	}
	v.Ranking, v.RankingMore = capRows(rows)

	tiers := d.Tiers
	if tiers == nil { // a Data built by hand
		tiers = report.TierRanking(s)
	}
	for _, m := range tiers.Recommended {
		g := report.Group{Provider: m.Provider, Model: m.Model, ThinkingLevel: m.ThinkingLevel}
		v.Recommended = append(v.Recommended, g.Label())
	}
	byKey := make(map[groupKey]*report.Group, len(s.Groups))
	for _, g := range s.Groups {
		byKey[keyOf(g.Provider, g.Model, g.ThinkingLevel)] = g
	}
	for _, gd := range d.Groups {
		v.HasAgentic = v.HasAgentic || !gd.Agentic.empty()
	}
	var trs []tierRow
	for _, t := range tiers.Ranking {
		g := byKey[keyOf(t.Provider, t.Model, t.ThinkingLevel)]
		if g == nil {
			continue
		}
		tr := tierRow{rankRow: newRankRow(0, g), TierRank: t.Rank, ErrorCells: t.NErrorCells, RoutingReady: "–"}
		if a := d.Groups[index[g]].Agentic; a != nil {
			tr.Agentic = []cell{pctCell(a.TaskSuccessRate), numCell(a.MeanTurns), pctCell(a.WrongArgumentRate), pctCell(a.UnknownToolRate), pctCell(a.RecoveryRate)}
			if a.RoutingReady != nil {
				tr.RoutingReady = map[bool]string{true: "yes", false: "no"}[*a.RoutingReady]
			}
		} else if v.HasAgentic {
			tr.Agentic = []cell{pctCell(nil), numCell(nil), pctCell(nil), pctCell(nil), pctCell(nil)}
		}
		trs = append(trs, tr)
	}
	v.Tiers, v.TiersMore = capRows(trs)

	var res []resRow
	for _, g := range ranked {
		if g.ResourcesBefore == nil {
			continue
		}
		bf, af := g.ResourcesBefore, g.ResourcesAfter
		pk := report.WindowPeak(g)
		r := resRow{Label: g.Label(), PeakCPU: report.Pct(pk.CPUPercent), PeakMem: report.Bytes(pk.MemUsed), PeakRS: report.Bytes(pk.ServerRSS)}
		var bRSS, aRSS *uint64
		if bf.Server != nil {
			bRSS = bf.Server.RSSBytes
		}
		r.CPU, r.Mem, r.RSS = report.Pct(bf.CPUPercent)+" → n/a", report.Bytes(bf.MemUsed)+" → n/a", report.Bytes(bRSS)+" → n/a"
		if af != nil {
			if af.Server != nil {
				aRSS = af.Server.RSSBytes
			}
			r.CPU = report.Pct(bf.CPUPercent) + " → " + report.Pct(af.CPUPercent)
			r.Mem = report.Bytes(bf.MemUsed) + " → " + report.Bytes(af.MemUsed)
			r.RSS = report.Bytes(bRSS) + " → " + report.Bytes(aRSS)
		}
		res = append(res, r)
	}
	v.Resources, v.ResourcesMore = capRows(res)

	var fails []failRow
	for _, f := range s.Failures {
		r := failRow{Group: f.Group, Prompt: f.PromptID, Rep: strconv.Itoa(f.Repetition), Status: f.Status, Type: f.Type, Detail: f.Detail}
		if f.Count > 0 {
			r.Prompt, r.Rep = report.Plural(f.Count, "cell"), "–"
		}
		fails = append(fails, r)
	}
	v.Failures, _ = capRows(fails)
	// Count every failure not listed: summary.md's cap plus ours.
	v.FailuresMore = s.NFailures - len(v.Failures)

	for i, p := range s.SkippedLines {
		if i == MaxRows {
			break
		}
		v.Skipped = append(v.Skipped, p.String())
	}
	v.SkippedMore = s.NSkippedLines - len(v.Skipped)
	v.Warnings = append(append([]string(nil), s.Warnings...), d.Warnings...)

	v.Data = newPage(d, ranked, index)
	for _, m := range v.Data.Metrics {
		mv := metricView{Key: m.Key, Title: m.Title}
		for _, dist := range m.Dists {
			mv.HasData = mv.HasData || dist.N > 0
		}
		v.Metrics = append(v.Metrics, mv)
	}
	v.HasTimeline = v.Data.Timeline != nil
	return v, nil
}

func capRows[T any](rows []T) ([]T, int) {
	if len(rows) > MaxRows {
		return rows[:MaxRows], len(rows) - MaxRows
	}
	return rows, 0
}

func newRankRow(rank int, g *report.Group) rankRow {
	r := rankRow{
		Rank: rank, Label: g.Label(), Provider: g.Provider, Model: g.Model, Thinking: "–",
		OKTotal: fmt.Sprintf("%d/%d", g.NOK, g.NTotal),
		Success: pctCell(g.SuccessRateOK), Pass: pctCell(g.ObjectivePassRate),
		TTFT50: msCell(g.TTFTMS.P50), TTFT95: msCell(g.TTFTMS.P95),
		E2E50: msCell(g.LatencyMS.P50), E2E95: msCell(g.LatencyMS.P95),
		TPS50:  numCell(g.TokensPerS.P50),
		Errors: g.NError, NotRun: g.NSkippedUnavailable + g.NRateLimited + g.NAuthError,
		Tier: "–", TierClass: "none", TierRate: pctCell(nil), TierCounted: "–", TierExcluded: "0",
	}
	if g.ThinkingLevel != nil {
		r.Thinking = *g.ThinkingLevel
	}
	if t := g.Tier; t != nil {
		r.Tier, r.TierClass = tierName(t.Tier), t.Tier
		r.TierRate = pctCell(t.ToolUseSuccessRate)
		r.TierCounted = fmt.Sprintf("%d/%d", t.NSucceeded, t.NCounted)
		r.TierExcluded = excluded(t)
	}
	return r
}

func tierName(t string) string {
	switch t {
	case report.Tier1:
		return "Tier 1"
	case report.Tier2:
		return "Tier 2"
	case report.Tier3:
		return "Tier 3"
	}
	return t
}

func excluded(t *report.Tier) string {
	if t.NExcluded == 0 {
		return "0"
	}
	keys := make([]string, 0, len(t.Excluded))
	for k := range t.Excluded {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%d %s", t.Excluded[k], k)
	}
	return fmt.Sprintf("%d (%s)", t.NExcluded, strings.Join(parts, ", "))
}

func exact(v *float64) string {
	if v == nil {
		return ""
	}
	return strconv.FormatFloat(*v, 'f', -1, 64)
}

// pctCell shows a 0-1 rate as a percent with one decimal, as summary.md does.
func pctCell(v *float64) cell {
	if v == nil {
		return cell{Text: "–"}
	}
	return cell{Text: fmt.Sprintf("%.1f%%", *v*100), Exact: exact(v)}
}

// FormatMS is how report.html shows a duration in milliseconds: whole
// milliseconds, or one decimal below 10 ms where a millisecond matters.
func FormatMS(v float64) string {
	if v < 10 {
		return fmt.Sprintf("%.1f ms", v)
	}
	return fmt.Sprintf("%.0f ms", v)
}

func msCell(v *float64) cell {
	if v == nil {
		return cell{Text: "–"}
	}
	return cell{Text: FormatMS(*v), Exact: exact(v)}
}

func numCell(v *float64) cell {
	if v == nil {
		return cell{Text: "–"}
	}
	return cell{Text: fmt.Sprintf("%.1f", *v), Exact: exact(v)}
}

// UPlot is the vendored uPlot script, its licence notice first, and its
// stylesheet, for the other pages bench writes (compare.html).
func UPlot() (template.JS, template.CSS) {
	return template.JS("/*! uPlot " + UPlotVersion + "\n" + uplotLicense + "*/\n" + uplotJS), template.CSS(uplotCSS)
}
