package report

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"bench/internal/format"
	"bench/internal/printable"
	"bench/internal/record/rundir"
)

// WriteMarkdown renders summary.md: the ranking, the prompt x model pass
// matrix, the tool-use tiers with the Tier-1 recommendation, resources, and
// the failures with their violation or error text.
func WriteMarkdown(w io.Writer, s *Summary) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# Benchmark summary: run %s\n\n", s.RunID)
	fmt.Fprintf(&b, "Generated %s from results.jsonl: %s", s.GeneratedAt.Format("2006-01-02 15:04:05 UTC"), format.Plural(s.NRecords, "record"))
	if s.NSkippedLines > 0 {
		fmt.Fprintf(&b, ", %s skipped (listed at the end)", format.Plural(s.NSkippedLines, "unusable line"))
	}
	b.WriteString(".\n\n")
	for _, w := range ColdWarnings(s) {
		fmt.Fprintf(&b, "**Warning:** %s\n\n", md(w))
	}

	writeRanking(&b, s)
	writeSpeed(&b, s)
	writeThrottle(&b, s)
	writeCost(&b, s)
	writeCapacity(&b, s)
	writeMatrix(&b, s)
	writeTiers(&b, s)
	writeAgentic(&b, s)
	writeInjection(&b, s)
	writeCategories(&b, s)
	writeTurns(&b, s)
	writeResources(&b, s)
	writeFailures(&b, s)
	writeSkipped(&b, s)
	// Every value came from a server, a CLI or a file: no control
	// character, and no line a CI runner reads as a command, however the
	// file is shown (cat in a CI log, a job summary).
	_, err := io.WriteString(w, printable.String(b.String()))
	return err
}

// Ranked returns the groups best first: objective pass rate, then success
// rate (null rates last), then median latency, then name. Every table and
// plot that lists groups (summary.md, report.html, the end-of-run table)
// uses this one order, so a model keeps its place from one to the next.
func Ranked(s *Summary) []*Group { return ranked(s) }

func ranked(s *Summary) []*Group {
	gs := append([]*Group(nil), s.Groups...)
	sort.SliceStable(gs, func(i, j int) bool { return rankLess(gs[i], gs[j]) })
	return gs
}

// rankLess says a ranks before b (Ranked's order, ties aside).
func rankLess(a, b *Group) bool {
	if c := cmpRate(a.ObjectivePassRate, b.ObjectivePassRate); c != 0 {
		return c > 0
	}
	if c := cmpRate(a.SuccessRateOK, b.SuccessRateOK); c != 0 {
		return c > 0
	}
	if la, lb := a.LatencyMS.P50, b.LatencyMS.P50; (la == nil) != (lb == nil) {
		return la != nil // a latency beats none
	} else if la != nil && *la != *lb {
		return *la < *lb
	}
	return a.Label() < b.Label()
}

// cmpRate compares two nullable numbers; null is below any number.
func cmpRate(a, b *float64) int {
	switch {
	case a == nil && b == nil:
		return 0
	case a == nil:
		return -1
	case b == nil:
		return 1
	case *a < *b:
		return -1
	case *a > *b:
		return 1
	}
	return 0
}

func writeRanking(b *strings.Builder, s *Summary) {
	b.WriteString("## Ranking\n\n")
	b.WriteString("Best first: objective pass rate, then success rate, then median end-to-end latency. " +
		"The pass rate is passed/judged (the successful cells a check judged) with its 95 % Wilson interval, the e2e median its 95 % distribution-free interval; " +
		"rows whose intervals overlap on the figure that orders them share a rank (=N: tied), and their order is the point estimates' and no more. " +
		"\"answered\" counts the cells that reached the model and succeeded, of all the group's cells. " +
		"Latency, TTFT and tokens/s are over the successful cells that were not cold starts; percentiles interpolate linearly between closest ranks. " +
		"\"not run\" counts cells skipped as unavailable, rate-limited or refused for auth.\n\n")
	b.WriteString("| # | provider | model | thinking | answered | success | pass rate (passed/judged, 95% CI) | TTFT p50 | TTFT p95 | e2e p50 (95% CI) | e2e p95 | tok/s p50 | errors | not run | [tool-use tier](#tool-use-tiers-and-routing) |\n")
	b.WriteString("|--:|---|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|---|\n")
	gs := ranked(s)
	places := Places(gs[:min(len(gs), MaxTableRows)])
	for i, g := range gs {
		if i == MaxTableRows {
			break
		}
		fmt.Fprintf(b, "| %s | %s | %s | %s | %d/%d | %s | %s | %s | %s | %s | %s | %s | %d | %d | %s |\n",
			places[i].Label(), md(g.Provider), md(g.Model), level(g.ThinkingLevel), g.NSuccess, g.NTotal,
			pct(g.SuccessRateOK), passText(g),
			msStr(g.TTFTMS.P50), msStr(g.TTFTMS.P95), medianText(g.LatencyMS), msStr(g.LatencyMS.P95),
			num(g.TokensPerS.P50), g.NError, g.NSkippedUnavailable+g.NRateLimited+g.NAuthError, tierRouting(g.Tier))
	}
	moreRows(b, len(s.Groups), "summary.json")
	if n := TiedNote(places); n != "" {
		fmt.Fprintf(b, "\n%s\n", n)
	}
	b.WriteString("\n")
}

// writeSpeed shows what the ranking's speed figures leave out or split:
// the suites' load times (their warm-ups), the cold starts kept out of the
// latency figures, and the reasoning decode rate beside the answer's. It
// is left out when no group has any of them.
func writeSpeed(b *strings.Builder, s *Summary) {
	any := false
	for _, g := range s.Groups {
		any = any || g.LoadMS != nil || g.WarmupError != "" || g.NColdStart > 0 || g.ReasoningTokensPerS.P50 != nil
	}
	if !any {
		return
	}
	b.WriteString("## Load, cold starts and decode rates\n\n")
	b.WriteString("Load is the suite's unrecorded warm-up request (loading the model before its first cell). " +
		"Cold starts are cells the server loaded or swapped the model in for: they count for quality, not for speed. " +
		"Decode rates count answer and reasoning tokens each over their own window, first delta to last; " +
		"a cell with fewer than 4 deltas of a kind, or a window under 10 ms, has no rate.\n\n")
	b.WriteString("| provider | model | thinking | load | cold starts | answer tok/s p50 | answer tok/s p95 | reasoning tok/s p50 | reasoning tok/s p95 |\n")
	b.WriteString("|---|---|---|--:|--:|--:|--:|--:|--:|\n")
	for i, g := range ranked(s) {
		if i == MaxTableRows {
			break
		}
		load := msStr(g.LoadMS)
		if g.WarmupError != "" {
			load = "failed: " + md(shorten(g.WarmupError, 80))
		}
		fmt.Fprintf(b, "| %s | %s | %s | %s | %d | %s | %s | %s | %s |\n", md(g.Provider), md(g.Model), level(g.ThinkingLevel),
			load, g.NColdStart, num(g.TokensPerS.P50), num(g.TokensPerS.P95), num(g.ReasoningTokensPerS.P50), num(g.ReasoningTokensPerS.P95))
	}
	moreRows(b, len(s.Groups), "summary.json")
	b.WriteString("\n")
}

func writeMatrix(b *strings.Builder, s *Summary) {
	b.WriteString("## Pass matrix\n\n")
	b.WriteString("Each cell is passed/judged over the successful cells of that prompt; \"check error\" counts the answers a judge or command validator " +
		"gave no verdict on (not judged, never a pass); \"no check\" means the prompt has no validator; " +
		"otherwise the cell shows why nothing succeeded (the most frequent failure type).\n\n")
	if len(s.Groups) == 0 {
		b.WriteString("No results.\n\n")
		return
	}
	// Columns in ranking order, like the ranking's rows, capped (with the
	// rows the prompts those columns have cells of): a run of many distinct
	// models and prompts gets a readable matrix, not groups × prompts cells.
	v := s.View(ranked(s), MaxMatrixGroups, MaxMatrixPrompts)
	b.WriteString("| prompt |")
	for _, g := range v.Groups {
		fmt.Fprintf(b, " %s |", md(g.Label()))
	}
	b.WriteString("\n|---|")
	for range v.Groups {
		b.WriteString(":-:|")
	}
	b.WriteString("\n")
	for _, p := range v.Prompts {
		label := p.ID
		if p.Name != "" {
			label += " " + p.Name
		}
		fmt.Fprintf(b, "| %s |", md(label))
		for _, i := range v.Index {
			fmt.Fprintf(b, " %s |", matrixCell(s.Matrix[i].Get(p.ID)))
		}
		b.WriteString("\n")
	}
	b.WriteString("\n")
	if v.MoreGroups > 0 || v.MorePrompts > 0 {
		fmt.Fprintf(b, "The matrix shows the first %s of the ranking and the %s they ran; %s and %s more are left out (summary.json lists every group).\n\n",
			format.Plural(len(v.Groups), "group"), format.Plural(len(v.Prompts), "prompt"), format.Plural(v.MoreGroups, "group"), format.Plural(v.MorePrompts, "prompt"))
	}
}

// moreRows ends a table capped at MaxTableRows with the count of the rows
// left out.
func moreRows(b *strings.Builder, n int, where string) {
	if n > MaxTableRows {
		fmt.Fprintf(b, "\n… and %d more groups; %s lists every one.\n", n-MaxTableRows, where)
	}
}

func matrixCell(c *MatrixCell) string {
	switch {
	case c == nil:
		return "–"
	case c.Judged > 0:
		mark := "✗"
		if c.Passed == c.Judged {
			mark = "✓"
		} else if c.Passed > 0 {
			mark = "~"
		}
		s := fmt.Sprintf("%s %d/%d", mark, c.Passed, c.Judged)
		if c.CheckErrors > 0 {
			s += ", " + format.Plural(c.CheckErrors, "check error")
		}
		return s
	case c.CheckErrors > 0:
		return "⚠ " + format.Plural(c.CheckErrors, "check error")
	case c.Success > 0:
		return "no check"
	}
	top, n := "", 0
	for why, k := range c.Why {
		if k > n || (k == n && why < top) {
			top, n = why, k
		}
	}
	return md(top)
}

func writeTiers(b *strings.Builder, s *Summary) {
	t := TierRanking(s)
	b.WriteString("## Tool-use tiers and routing\n\n")
	b.WriteString("Tool-use success rate over the cells whose prompt expects a tool, with its 95% Wilson interval. Error cells (timeouts, cut streams) count as failures; " +
		"cells that never reached the model (skipped, rate-limited, auth) or were cancelled are excluded. " +
		"Tier 1 ≥ 80%, Tier 2 50–79%, Tier 3 < 50%; unclassified when no tool cell ran. " +
		"A tier is firm when its interval lies inside the tier's band, borderline when it reaches another tier.\n\n")
	b.WriteString("Agentic cells count here too: their tool use succeeds when the expected calls were made with matching arguments. " +
		"A call whose arguments fail the tool's JSON Schema never counts as a tool use. " +
		"An unsafe action is a call of a tool the prompt forbids, or of a side-effect tool its checks do not ask for. " +
		"Recommended for subagent routing: a firm Tier 1, no unsafe action, and, where agentic tasks ran, at least 80% of them completed and no call of a tool the task does not offer.\n\n")
	b.WriteString("| rank | provider | model | thinking | tier | confidence | tool-use success | 95% CI | succeeded/counted | errors among failures | excluded | unsafe actions | schema errors | routing |\n")
	b.WriteString("|--:|---|---|---|---|---|--:|--:|--:|--:|---|--:|--:|---|\n")
	for i, tr := range t.Ranking {
		if i == MaxTableRows {
			break
		}
		fmt.Fprintf(b, "| %d | %s | %s | %s | %s | %s | %s | %s | %d/%d | %d | %s | %s | %s | %s |\n",
			tr.Rank, md(tr.Provider), md(tr.Model), level(tr.ThinkingLevel), tierName(tr), confidence(tr),
			pct(tr.ToolUseSuccessRate), ciText(tr.ToolUseSuccessCI), tr.NSucceeded, tr.NCounted, tr.NErrorCells, tr.ExcludedText(),
			countOf(tr.NUnsafeActions, tr.NToolCalls), countOf(tr.NSchemaInvalidCalls, tr.NSchemaCheckedCalls), md(routingText(tr)))
	}
	moreRows(b, len(t.Ranking), "tiers.json")
	b.WriteString("\n### Recommended for subagent routing\n\n")
	if len(t.Recommended) == 0 {
		b.WriteString("None: no group is a firm Tier 1 without an unsafe action and with its agentic tasks done.\n\n")
	} else {
		b.WriteString("Recommended for subagent routing with tool access (firm Tier 1, no unsafe action, agentic tasks done):\n\n")
		for i, m := range t.Recommended {
			if i == MaxTableRows {
				fmt.Fprintf(b, "- … and %d more; tiers.json lists every one\n", len(t.Recommended)-MaxTableRows)
				break
			}
			g := Group{Provider: m.Provider, Model: m.Model, ThinkingLevel: m.ThinkingLevel}
			fmt.Fprintf(b, "- %s\n", md(g.Label()))
		}
		b.WriteString("\n")
	}
	var held []*Tier
	for _, tr := range t.Ranking {
		if tr.Tier == Tier1 && !tr.Recommended {
			held = append(held, tr)
		}
	}
	if len(held) > 0 {
		b.WriteString("Tier 1 on tool use, yet not recommended:\n\n")
		for i, tr := range held {
			if i == MaxTableRows {
				fmt.Fprintf(b, "- … and %d more; tiers.json lists every one\n", len(held)-MaxTableRows)
				break
			}
			g := Group{Provider: tr.Provider, Model: tr.Model, ThinkingLevel: tr.ThinkingLevel}
			fmt.Fprintf(b, "- %s: %s\n", md(g.Label()), md(tr.RoutingNote))
		}
		b.WriteString("\n")
	}
}

// confidence is a tier's confidence, with the repetitions that would
// settle a borderline Tier 1 that nothing else disqualifies. A Tier 2 or
// 3 is not told to run more: more repetitions settle its own tier, they
// do not bring it to Tier 1; nor is a Tier 1 disqualified by what
// repetitions cannot change (an unsafe action).
func confidence(t *Tier) string {
	switch {
	case t.TierConfidence == nil:
		return "–"
	case *t.TierConfidence == Borderline && t.Tier == Tier1 && !t.disqualified && t.MoreRepetitions != nil && *t.MoreRepetitions > 0:
		return fmt.Sprintf("borderline (~%d more reps)", *t.MoreRepetitions)
	}
	return *t.TierConfidence
}

// countOf is "k/n", or "0" when nothing was counted.
func countOf(k, n int) string {
	if n == 0 {
		return "0"
	}
	return fmt.Sprintf("%d/%d", k, n)
}

// routingText is the routing verdict with the reason when not recommended.
func routingText(t *Tier) string {
	switch m := RoutingMark(t); {
	case t.Recommended:
		return m
	case strings.HasPrefix(t.RoutingNote, m):
		return t.RoutingNote
	default:
		return m + ": " + t.RoutingNote
	}
}

// ExcludedText is how many cells the tier left out and why: "0", or
// "3 (2 unavailable, 1 error)".
func (t *Tier) ExcludedText() string {
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

func writeResources(b *strings.Builder, s *Summary) {
	any := false
	for _, g := range s.Groups {
		any = any || g.ResourcesBefore != nil
	}
	if !any {
		return
	}
	b.WriteString("## Resources\n\n")
	b.WriteString("Machine before → after each suite, and the peak over the suite's window: the highest of the sampler's readings and the two snapshots that bracket it (resources_*.txt have the details). Other work is the mean CPU that neither bench nor the model server used during the suite: load that moves latency without the model changing.\n\n")
	b.WriteString("| model | CPU before → after | peak CPU | other work | mem used before → after | peak mem used | server RSS before → after | peak server RSS |\n")
	b.WriteString("|---|--:|--:|--:|--:|--:|--:|--:|\n")
	rows := 0
	for _, g := range ranked(s) {
		if g.ResourcesBefore == nil {
			continue
		}
		if rows++; rows > MaxTableRows {
			continue
		}
		bf, af := g.ResourcesBefore, g.ResourcesAfter
		if af == nil {
			af = &rundir.Snapshot{}
		}
		pk := WindowPeak(g)
		fmt.Fprintf(b, "| %s | %s → %s | %s | %s | %s → %s | %s | %s → %s | %s |\n", md(g.Label()),
			format.Pct(bf.CPUPercent), format.Pct(af.CPUPercent), format.Pct(pk.CPUPercent), cores(pk.OtherCPUPercentMean),
			format.Bytes(bf.MemUsed), format.Bytes(af.MemUsed), format.Bytes(pk.MemUsed),
			serverRSS(bf), serverRSS(af), format.Bytes(pk.ServerRSS))
	}
	moreRows(b, rows, "summary.json")
	b.WriteString("\n")
}

// WindowPeak is the suite's peak CPU, memory and server RSS over its whole
// window: the sampler's maxima, raised to the before and after snapshots
// when one of those is higher. The sampler stops just before the after
// snapshot is taken (and starts just after the before one), so on its own
// its peak can sit below a value the table shows next to it; a peak never
// should. Fields stay null only when no reading had them.
func WindowPeak(g *Group) rundir.Peak {
	var p rundir.Peak
	if g.ResourcesPeak != nil {
		p = *g.ResourcesPeak
	}
	for _, s := range []*rundir.Snapshot{g.ResourcesBefore, g.ResourcesAfter} {
		if s == nil {
			continue
		}
		p.CPUPercent = maxPtr(p.CPUPercent, s.CPUPercent)
		p.MemUsed = maxPtr(p.MemUsed, s.MemUsed)
		if s.Server != nil {
			p.ServerRSS = maxPtr(p.ServerRSS, s.Server.RSSBytes)
		}
	}
	return p
}

func maxPtr[T float64 | uint64](a, b *T) *T {
	if a == nil || (b != nil && *b > *a) {
		return b
	}
	return a
}

func serverRSS(s *rundir.Snapshot) string {
	if s.Server == nil {
		return "n/a"
	}
	return format.Bytes(s.Server.RSSBytes)
}

func writeFailures(b *strings.Builder, s *Summary) {
	b.WriteString("## Failures\n\n")
	if len(s.Failures) == 0 {
		b.WriteString("None.\n\n")
		return
	}
	b.WriteString("Cells that did not succeed or failed their validator. Cells that never reached the model are one line per reason with their count.\n\n")
	b.WriteString("| model | prompt | rep | status | failure | detail |\n")
	b.WriteString("|---|---|--:|---|---|---|\n")
	for i, f := range s.Failures {
		if i == MaxTableRows {
			fmt.Fprintf(b, "\n… and %d more lines of failures (a line per group and reason of cells that never ran); see results.jsonl.\n", len(s.Failures)-MaxTableRows)
			break
		}
		prompt, rep := md(f.PromptID), fmt.Sprint(f.Repetition)
		if f.Count > 0 {
			prompt, rep = format.Plural(f.Count, "cell"), "–"
		}
		fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %s |\n", md(f.Group), prompt, rep, md(f.Status), md(f.Type), md(f.Detail))
	}
	if more := s.NFailures - len(s.Failures); more > 0 {
		fmt.Fprintf(b, "\n… and %d more; see results.jsonl.\n", more)
	}
	b.WriteString("\n")
}

func writeSkipped(b *strings.Builder, s *Summary) {
	if s.NSkippedLines == 0 && len(s.Warnings) == 0 {
		return
	}
	b.WriteString("## Skipped lines and warnings\n\n")
	for _, p := range s.SkippedLines {
		fmt.Fprintf(b, "- %s\n", md(p.String()))
	}
	if more := s.NSkippedLines - len(s.SkippedLines); more > 0 {
		fmt.Fprintf(b, "- … and %d more\n", more)
	}
	for _, w := range s.Warnings {
		fmt.Fprintf(b, "- %s\n", md(w))
	}
	b.WriteString("\n")
}

// md makes text safe inside a table cell: one line, no bare pipes.
func md(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	return strings.ReplaceAll(s, "|", "\\|")
}

func level(l *string) string {
	if l == nil {
		return "–"
	}
	return *l
}

func pct(v *float64) string {
	if v == nil {
		return "–"
	}
	return fmt.Sprintf("%.1f%%", *v*100)
}

func msStr(v *float64) string {
	if v == nil {
		return "–"
	}
	return fmt.Sprintf("%.0f ms", *v)
}

func num(v *float64) string {
	if v == nil {
		return "–"
	}
	return fmt.Sprintf("%.1f", *v)
}

// tierRouting is the tier with "recommended" beside it when the group is
// in the routing list.
func tierRouting(t *Tier) string {
	if t != nil && t.Recommended {
		return tierName(t) + " · recommended"
	}
	return tierName(t)
}

func tierName(t *Tier) string {
	if t == nil {
		return "–"
	}
	switch t.Tier {
	case Tier1:
		return "Tier 1"
	case Tier2:
		return "Tier 2"
	case Tier3:
		return "Tier 3"
	}
	return t.Tier
}

// cores shows a CPU share in percent of one core as cores ("0.9 cores").
func cores(pct *float64) string {
	if pct == nil {
		return "–"
	}
	return fmt.Sprintf("%.1f cores", *pct/100)
}

// ColdWarnings says, for each group where more than half the cells that
// reached the model were cold starts, that its latency figures rest on
// few cells (cold starts are left out of them), and for each group whose
// suite ran on a busy machine (MachineBusy) that its figures are the
// machine's as much as the model's. bench run prints them and summary.md
// heads with them: a group measured mostly while its model loaded, or
// beside other work filling the cores, is not a speed measurement.
func ColdWarnings(s *Summary) []string {
	var out []string
	for _, g := range ranked(s) {
		if w := coldWarning(g); w != "" {
			out = append(out, w)
		}
		if w := busyWarning(g); w != "" {
			out = append(out, w)
		}
	}
	// The groups DropGroups let go rank after those kept.
	return append(out, s.droppedCold...)
}

// coldWarning is ColdWarnings' line of g, "" when it needs none.
func coldWarning(g *Group) string {
	reached := g.NOK + g.NError
	if reached == 0 || 2*g.NColdStart <= reached {
		return ""
	}
	return fmt.Sprintf("%s: %d of %d cells that reached the model were cold starts (the model was loading); "+
		"its latency percentiles are over the %d others only", g.Label(), g.NColdStart, reached, max(0, reached-g.NColdStart))
}
