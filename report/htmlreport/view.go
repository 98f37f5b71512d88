package htmlreport

import (
	_ "embed"
	"fmt"
	"html/template"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"

	"bench/internal/format"
	"bench/internal/record/rundir"
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

// pageTemplate is parsed when a report is first written, not at every
// start of the binary (bench run's first request waits for package init).
var pageTemplate = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("report.html").Parse(pageSource))
})

// view is what the template renders: the tables, already formatted, and
// the plots' data for the script.
type view struct {
	RunID     string
	Generated string
	Counts    string

	Ranking     []rankRow
	RankingMore int
	// TiedNote says what "=N" means when the ranking has ties.
	TiedNote string
	// HasCost says some group has a cost: the ranking's cost columns and
	// the cost-vs-pass-rate plot are shown only then.
	HasCost bool

	// Recommended is the routing list (tiers.json's); Held the Tier-1
	// groups not in it, with why; Tasks the agentic tasks' matrix.
	Recommended []string
	// PlottedGroups and PlottedPrompts are what the charts and the matrix
	// show; MoreGroups and MorePrompts what they leave out (a run with more
	// than report.MaxPlotted groups or MaxPlotPrompts prompts).
	PlottedGroups, PlottedPrompts int
	MoreGroups, MorePrompts       int
	Held                          []heldRow
	Tasks                         *taskMatrix
	// Injection is the prompt-injection section (injection.go), nil when
	// no injection case ran.
	Injection *injectionView

	Tiers      []tierRow
	TiersMore  int
	HasAgentic bool
	Agentic    []agenticRow
	HasPassK   bool

	// Categories are the per-category figures (the BFCL suite), when
	// prompts have categories.
	Categories     []string
	CategoryRows   []categoryRow
	CategoriesMore int

	Metrics []metricView

	// Capacity is the load sweeps' stages, one row each (capacity.go).
	Capacity []capacityRow

	Resources     []resRow
	ResourcesMore int
	HasTimeline   bool

	// Causes are the failed cells grouped by root cause (report.Causes);
	// NFailedCells counts the cells they cover.
	Causes       []causeRow
	CausesMore   int
	NFailedCells int

	Skipped     []string
	SkippedMore int
	Warnings    []string

	Data page

	// AnswersRef is answers.html, beside report.html.
	AnswersRef string
	// Gate is the night's gate result (compare.html), when the run was
	// gated.
	Gate *Gate

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
	Rank int
	// RankLabel is the rank with ties ("=1"), report.Places'.
	RankLabel              string
	Label, Provider, Model string
	Thinking               string
	// Answered is the cells that succeeded of the group's total;
	// PassCounts passed/judged and PassCI the pass rate's interval;
	// E2ECI the e2e median's.
	Answered, PassCounts, PassCI, E2ECI string
	Success, Pass                       cell
	TTFT50, TTFT95                      cell
	E2E50, E2E95, TPS50                 cell
	Errors, NotRun                      int
	Tier, TierClass                     string
	TierRate                            cell
	Cost, CostPerPass                   cell
	TierCounted, TierExcluded           string
}

type tierRow struct {
	rankRow
	TierRank     int
	ErrorCells   int
	Confidence   string
	CI           string
	Unsafe       string
	SchemaErrors string
	// Routing is recommended, not judged or no; RoutingNote why.
	Routing, RoutingClass, RoutingNote string
}

type agenticRow struct {
	Label     string
	Completed string
	Figures   []cell
	CI        string
	PassK     []cell
}

type heldRow struct {
	Label, Note string
}

// taskMatrix is each agentic task's completed cells per group, groups in
// ranking order.
type taskMatrix struct {
	Groups []string
	Rows   []taskRow
	More   int
}

type taskRow struct {
	ID    string
	Cells []taskCell
}

type taskCell struct {
	Text, Class string
}

type categoryRow struct {
	Label string
	Cells []categoryCell
}

type categoryCell struct {
	Text, CI, Exact string
}

type metricView struct {
	Key, Title, Note string
	HasData          bool
}

type resRow struct {
	Label                                   string
	CPU, PeakCPU, Mem, PeakMem, RSS, PeakRS string
}

// causeRow is one root cause of failure: a prompt's cells that failed
// the same way. Link opens them on answers.html.
type causeRow struct {
	Prompt, Kind, Cells, Where, What, Link string
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
	// Cost are the groups with a cost, in ranking order, for the
	// cost-vs-pass-rate plot.
	Cost []pageCost `json:"cost"`
	// Sweeps are the groups' load sweeps, for the capacity curves.
	Sweeps []pageSweep `json:"sweeps"`
}

type pageCost struct {
	Label string `json:"label"`
	// PerCell is the mean cost of a cell with a cost; Total the group's;
	// Pass the objective pass rate (null: nothing was checked).
	PerCell float64  `json:"per_cell"`
	Total   float64  `json:"total"`
	Pass    *float64 `json:"pass"`
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

// cellWidth is how many numbers a pass-matrix cell is in the page's data:
// total, success, judged, passed, not run, why, detail, check errors.
const cellWidth = 8

// MaxPlotPrompts caps the pass matrix's rows: the prompts the plotted
// groups ran, the first in natural order. With report.MaxPlotted groups it
// bounds the matrix at 200 × 1000 cells, however many the run has.
const MaxPlotPrompts = 1000

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
		AnswersRef:   rundir.AnswersHTML,
		Gate:         d.Gate,
		UPlotJS:      js,
		UPlotCSS:     css,
		AppJS:        template.JS(appJS),
		AppCSS:       template.CSS(appCSS),
	}
	v.Counts = fmt.Sprintf("%s, %s, %s", format.Plural(s.NRecords, "record"), format.Plural(len(s.Groups), "group"), format.Plural(len(s.Prompts), "prompt"))
	if s.NSkippedLines > 0 {
		v.Counts += ", " + format.Plural(s.NSkippedLines, "unusable line") + " skipped"
	}

	v.HasCost = report.AnyCost(s)
	// Rows only for what the tables show (MaxRows), the rest counted: a
	// row is a dozen formatted strings, 100,000 groups would be a million.
	rows := make([]rankRow, min(len(ranked), MaxRows))
	places := report.Places(ranked[:len(rows)])
	for i := range rows {
		rows[i] = newRankRow(i+1, ranked[i])
		rows[i].RankLabel = places[i].Label()
	}
	v.Ranking, v.RankingMore = rows, len(ranked)-len(rows)
	v.TiedNote = report.TiedNote(places)

	tiers := d.Tiers
	if tiers == nil { // a Data built by hand
		tiers = report.TierRanking(s)
	}
	for _, m := range tiers.Recommended {
		g := report.Group{Provider: m.Provider, Model: m.Model, ThinkingLevel: m.ThinkingLevel}
		v.Recommended = append(v.Recommended, g.Label())
	}
	// A tier's group: the one it is the tier of (TierRanking's), found by
	// pointer, 100,000 groups in a map of 16-byte entries; by key only
	// when some tier is no group's own (Tiers built apart), and then the
	// key map is made once.
	byTier := make(map[*report.Tier]*report.Group, len(s.Groups))
	for _, g := range s.Groups {
		if g.Tier != nil {
			byTier[g.Tier] = g
		}
	}
	var byKey map[groupKey]*report.Group
	groupOf := func(t *report.Tier) *report.Group {
		if g := byTier[t]; g != nil {
			return g
		}
		if byKey == nil {
			byKey = make(map[groupKey]*report.Group, len(s.Groups))
			for _, g := range s.Groups {
				byKey[keyOf(g.Provider, g.Model, g.ThinkingLevel)] = g
			}
		}
		return byKey[keyOf(t.Provider, t.Model, t.ThinkingLevel)]
	}
	for _, g := range s.Groups {
		v.HasAgentic = v.HasAgentic || g.Agentic.NAgentic > 0
		v.HasPassK = v.HasPassK || g.PassHatK != nil
	}
	var trs []tierRow
	nTiers := 0
	for _, t := range tiers.Ranking {
		g := groupOf(t)
		if g == nil {
			continue
		}
		if t.Tier == report.Tier1 && !t.Recommended && len(v.Held) < MaxRows {
			v.Held = append(v.Held, heldRow{Label: g.Label(), Note: t.RoutingNote})
		}
		if nTiers++; nTiers > MaxRows {
			continue
		}
		tr := tierRow{rankRow: newRankRow(0, g), TierRank: t.Rank, ErrorCells: t.NErrorCells, Confidence: "–", CI: report.CIText(t.ToolUseSuccessCI),
			Unsafe: countOf(t.NUnsafeActions, t.NToolCalls), SchemaErrors: countOf(t.NSchemaInvalidCalls, t.NSchemaCheckedCalls),
			Routing: report.RoutingMark(t), RoutingNote: t.RoutingNote}
		tr.RoutingClass = strings.ReplaceAll(tr.Routing, " ", "-")
		if t.TierConfidence != nil {
			tr.Confidence = *t.TierConfidence
		}
		trs = append(trs, tr)
	}
	for _, g := range ranked {
		a := g.Agentic
		if a.NAgentic == 0 || len(v.Agentic) == MaxRows {
			continue
		}
		r := agenticRow{Label: g.Label(), Completed: fmt.Sprintf("%d/%d", a.NAgenticCompleted, a.NAgentic), CI: report.CIText(a.TaskSuccessCI),
			Figures: []cell{pctCell(a.TaskSuccessRate), numCell(a.MeanTurns), pctCell(a.WrongArgumentRate), pctCell(a.UnknownToolRate), pctCell(a.RecoveryRate)}}
		if v.HasPassK {
			r.PassK = []cell{pctCell(g.PassHatK), pctCell(g.PassAtK)}
		}
		v.Agentic = append(v.Agentic, r)
	}
	v.Tasks = newTaskMatrix(ranked)
	v.Injection = newInjection(ranked, rundir.AnswersHTML)
	v.Categories, v.CategoryRows, v.CategoriesMore = newCategories(ranked)
	v.Tiers, v.TiersMore = trs, nTiers-len(trs)

	var res []resRow
	nRes := 0
	for _, g := range ranked {
		if g.ResourcesBefore == nil {
			continue
		}
		if nRes++; nRes > MaxRows {
			continue
		}
		bf, af := g.ResourcesBefore, g.ResourcesAfter
		pk := report.WindowPeak(g)
		r := resRow{Label: g.Label(), PeakCPU: format.Pct(pk.CPUPercent), PeakMem: format.Bytes(pk.MemUsed), PeakRS: format.Bytes(pk.ServerRSS)}
		var bRSS, aRSS *uint64
		if bf.Server != nil {
			bRSS = bf.Server.RSSBytes
		}
		r.CPU, r.Mem, r.RSS = format.Pct(bf.CPUPercent)+" → n/a", format.Bytes(bf.MemUsed)+" → n/a", format.Bytes(bRSS)+" → n/a"
		if af != nil {
			if af.Server != nil {
				aRSS = af.Server.RSSBytes
			}
			r.CPU = format.Pct(bf.CPUPercent) + " → " + format.Pct(af.CPUPercent)
			r.Mem = format.Bytes(bf.MemUsed) + " → " + format.Bytes(af.MemUsed)
			r.RSS = format.Bytes(bRSS) + " → " + format.Bytes(aRSS)
		}
		res = append(res, r)
	}
	v.Resources, v.ResourcesMore = res, nRes-len(res)

	for i, c := range s.Causes {
		v.NFailedCells += c.NCells
		if i >= MaxRows {
			v.CausesMore++
			continue
		}
		what := c.What
		if c.Variants > 1 {
			what += fmt.Sprintf(" (and %s of this kind)", format.Plural(c.Variants-1, "other failure"))
		}
		link := rundir.AnswersHTML + "#" + url.Values{"p": {c.PromptID}, "failed": {"1"}}.Encode()
		v.Causes = append(v.Causes, causeRow{Prompt: c.PromptID, Kind: c.Kind, Cells: fmt.Sprintf("%d/%d", c.NCells, c.NPrompt), Where: c.Where, What: what, Link: link})
	}

	for i, p := range s.SkippedLines {
		if i == MaxRows {
			break
		}
		v.Skipped = append(v.Skipped, p.String())
	}
	v.SkippedMore = s.NSkippedLines - len(v.Skipped)
	v.Warnings = append(append([]string(nil), s.Warnings...), d.Warnings...)

	mv := s.View(ranked, report.MaxPlotted, MaxPlotPrompts)
	v.PlottedGroups, v.PlottedPrompts, v.MoreGroups, v.MorePrompts = len(mv.Groups), len(mv.Prompts), mv.MoreGroups, mv.MorePrompts
	v.Data = newPage(d, mv)
	for _, m := range v.Data.Metrics {
		mv := metricView{Key: m.Key, Title: m.Title}
		for _, dist := range m.Dists {
			mv.HasData = mv.HasData || dist.N > 0
		}
		v.Metrics = append(v.Metrics, mv)
	}
	v.HasTimeline = v.Data.Timeline != nil
	v.Data.Sweeps, v.Capacity = newSweeps(ranked, d.Servers)
	return v, nil
}

// newTaskMatrix lays out each agentic task's completed cells per group
// (✓ every repetition, ~ some, ✗ none), nil when no task ran.
func newTaskMatrix(ranked []*report.Group) *taskMatrix {
	var cols []*report.Group
	var ids []string
	seen := map[string]bool{}
	for _, g := range ranked {
		if len(g.Tasks) == 0 {
			continue
		}
		cols = append(cols, g)
		for _, t := range g.Tasks {
			if !seen[t.PromptID] {
				seen[t.PromptID] = true
				ids = append(ids, t.PromptID)
			}
		}
	}
	if len(cols) == 0 {
		return nil
	}
	m := &taskMatrix{}
	if len(cols) > maxMatrixGroups {
		m.More, cols = len(cols)-maxMatrixGroups, cols[:maxMatrixGroups]
	}
	for _, g := range cols {
		m.Groups = append(m.Groups, g.Label())
	}
	sort.SliceStable(ids, func(i, j int) bool { return report.NaturalLess(ids[i], ids[j]) })
	for _, id := range ids {
		r := taskRow{ID: id}
		for _, g := range cols {
			text := report.TaskCell(g, id)
			class := "none"
			switch {
			case strings.HasPrefix(text, "✓"):
				class = "all"
			case strings.HasPrefix(text, "~"):
				class = "some"
			case strings.HasPrefix(text, "✗"):
				class = "nopass"
			}
			r.Cells = append(r.Cells, taskCell{Text: text, Class: class})
		}
		m.Rows = append(m.Rows, r)
	}
	return m
}

// maxMatrixGroups bounds the task matrix's columns; the rest are counted.
const maxMatrixGroups = 40

// newCategories is the category table: a row per group that has
// categories, a column per category.
func newCategories(ranked []*report.Group) ([]string, []categoryRow, int) {
	var names []string
	seen := map[string]bool{}
	for _, g := range ranked {
		for n := range g.Categories {
			if !seen[n] {
				seen[n] = true
				names = append(names, n)
			}
		}
	}
	if len(names) == 0 {
		return nil, nil, 0
	}
	sort.Strings(names)
	var rows []categoryRow
	more := 0
	for _, g := range ranked {
		if len(g.Categories) == 0 {
			continue
		}
		if len(rows) == MaxRows {
			more++ // counted, not built
			continue
		}
		r := categoryRow{Label: g.Label()}
		for _, n := range names {
			c := g.Categories[n]
			if c == nil {
				r.Cells = append(r.Cells, categoryCell{Text: "–"})
				continue
			}
			r.Cells = append(r.Cells, categoryCell{Text: fmt.Sprintf("%d/%d %s", c.Succeeded, c.N, pctCell(c.Rate).Text), CI: report.CIText(c.CI), Exact: exact(c.Rate)})
		}
		rows = append(rows, r)
	}
	return names, rows, more
}

// countOf is "k/n", or "0" when nothing was counted.
func countOf(k, n int) string {
	if n == 0 {
		return "0"
	}
	return fmt.Sprintf("%d/%d", k, n)
}

func newRankRow(rank int, g *report.Group) rankRow {
	r := rankRow{
		Rank: rank, Label: g.Label(), Provider: g.Provider, Model: g.Model, Thinking: "–",
		Answered: fmt.Sprintf("%d/%d", g.NSuccess, g.NTotal), PassCounts: "–", PassCI: report.CIText(g.ObjectivePassCI), E2ECI: "–",
		Success: pctCell(g.SuccessRateOK), Pass: pctCell(g.ObjectivePassRate),
		TTFT50: msCell(g.TTFTMS.P50), TTFT95: msCell(g.TTFTMS.P95),
		E2E50: msCell(g.LatencyMS.P50), E2E95: msCell(g.LatencyMS.P95),
		TPS50:  numCell(g.TokensPerS.P50),
		Errors: g.NError, NotRun: g.NSkippedUnavailable + g.NRateLimited + g.NAuthError,
		Tier: "–", TierClass: "none", TierRate: pctCell(nil), TierCounted: "–", TierExcluded: "0",
		Cost: usdCell(g.CostUSDTotal), CostPerPass: usdCell(g.CostPerPassedCell),
	}
	if g.ThinkingLevel != nil {
		r.Thinking = *g.ThinkingLevel
	}
	if g.NJudged > 0 {
		r.PassCounts = fmt.Sprintf("%d/%d", g.NPassed, g.NJudged)
	}
	if c := g.LatencyMS.P50CI; c != nil {
		r.E2ECI = FormatMS(c[0]) + "–" + FormatMS(c[1])
	}
	if t := g.Tier; t != nil {
		r.Tier, r.TierClass = tierName(t.Tier), t.Tier
		r.TierRate = pctCell(t.ToolUseSuccessRate)
		r.TierCounted = fmt.Sprintf("%d/%d", t.NSucceeded, t.NCounted)
		r.TierExcluded = t.ExcludedText()
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

func usdCell(v *float64) cell {
	return cell{Text: report.FormatUSD(v), Exact: exact(v)}
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
