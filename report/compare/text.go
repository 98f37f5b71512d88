package compare

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"bench/internal/printable"
	"bench/report/stats"
)

// maxListed bounds the cells of each non-regression verdict the table
// lists; compare.md and compare.json list them all. Findings are all
// listed.
const maxListed = 20

// maxFindingsListed bounds the findings the table lists, regressions
// first.
const maxFindingsListed = 100

// WriteText writes the comparison as aligned tables for a terminal:
// header and setup differences, the verdict, the findings (regressions
// first), the groups, then the cells that are not matches.
func WriteText(w io.Writer, r *Result) error {
	var b strings.Builder
	fmt.Fprintf(&b, "bench compare: base %s (%s) -> new %s (%s)\n", r.BaseRunID, r.BaseDir, r.NewRunID, r.NewDir)
	writeSetupText(&b, r)
	for _, m := range r.Warnings {
		fmt.Fprintf(&b, "warning: %s\n", m)
	}
	if line := rescoredLine(r); line != "" {
		fmt.Fprintln(&b, line)
	}
	fmt.Fprintf(&b, "verdict: %s\n", verdictLine(r))

	if rows := findingRows(r); len(rows) > 0 {
		b.WriteString("\nFINDINGS (regressions first; the cells of one prompt that changed the same way are one finding)\n")
		tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "  gate\tcategory\tscope\twhere\twhat")
		for i, f := range rows {
			if i == maxFindingsListed {
				fmt.Fprintf(tw, "  ... and %d more (compare.md and compare.json list them)\n", len(rows)-maxFindingsListed)
				break
			}
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\n", f.Gate, f.Category, f.Scope, f.Where, oneLine(f.What, 200))
		}
		tw.Flush()
	}

	b.WriteString("\nGROUPS\n")
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	cost := anyCost(r)
	head := "  group\tcells\tpass base -> new\tp\ttool use base -> new\tp\ttier\tttft ms\te2e ms\ttok/s"
	if cost {
		head += "\tcost"
	}
	fmt.Fprintln(tw, head)
	for _, g := range r.Groups {
		fmt.Fprintf(tw, "  %s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s", g.Label(), cellsTotal(g), rateChange(g.PassRate), pText(g.PassRate),
			rateChange(g.ToolUse), pText(g.ToolUse), tierText(g.Tier), latText(g.Latency[MetricTTFT]),
			latText(g.Latency[MetricE2E]), latText(g.Latency[MetricTPS]))
		if cost {
			fmt.Fprintf(tw, "\t%s", costText(g.Cost))
		}
		fmt.Fprintln(tw)
	}
	tw.Flush()
	writeLatencyText(&b, r)
	writeCapacityText(&b, r)

	fmt.Fprintf(&b, "\nCELLS: %s\n", countsLine(r.Counts))
	for _, v := range []string{Improvement, Drift, Unavailable, Changed, Missing, New} {
		var list []*Cell
		for _, c := range r.Cells {
			if c.Verdict == v {
				list = append(list, c)
			}
		}
		if len(list) == 0 {
			continue
		}
		fmt.Fprintf(&b, "  %s (%d):\n", v, len(list))
		for i, c := range list {
			if i == maxListed {
				fmt.Fprintf(&b, "    ... and %d more (compare.md lists all)\n", len(list)-maxListed)
				break
			}
			fmt.Fprintf(&b, "    %s: %s\n", c.Label(), oneLine(cellSummary(c), 140))
		}
	}
	for _, pc := range r.ChangedPrompts {
		var paths []string
		for _, ch := range pc.Changes {
			paths = append(paths, ch.Path)
		}
		fmt.Fprintf(&b, "prompt %s changed (%s): its cells are not judged\n", pc.PromptID, strings.Join(paths, ", "))
	}
	// Answers and reasons came from models and files: no control
	// character reaches the terminal.
	_, err := io.WriteString(w, printable.String(b.String()))
	return err
}

// rescoredLine says the runs are a rescored pair, and whose checks moved.
func rescoredLine(r *Result) string {
	if r.Rescored == nil {
		return ""
	}
	var ids []string
	for _, pc := range r.Rescored.Prompts {
		ids = append(ids, pc.PromptID)
	}
	if len(ids) == 0 {
		return fmt.Sprintf("rescored: both runs hold run %s's cells, judged with the same checks", r.Rescored.OriginRunID)
	}
	if len(ids) > 10 {
		ids = append(ids[:10], fmt.Sprintf("and %d more", len(ids)-10))
	}
	return fmt.Sprintf("rescored: both runs hold run %s's cells; the checks of %d prompts changed (%s) and their cells are judged",
		r.Rescored.OriginRunID, len(r.Rescored.Prompts), strings.Join(ids, ", "))
}

func writeSetupText(b *strings.Builder, r *Result) {
	var same, diff []SetupItem
	for _, s := range r.Setup {
		if s.Same {
			same = append(same, s)
		} else {
			diff = append(diff, s)
		}
	}
	if len(same) > 0 {
		var parts []string
		for _, s := range same {
			parts = append(parts, s.Name+" "+shortValue(s.Base))
		}
		fmt.Fprintf(b, "same setup: %s\n", strings.Join(parts, "; "))
	}
	if len(diff) == 0 {
		return
	}
	b.WriteString("setup differences:\n")
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', 0)
	for _, s := range diff {
		fmt.Fprintf(tw, "  %s\t%s\t->  %s\n", s.Name, orDash(s.Base), orDash(s.New))
	}
	tw.Flush()
}

// shortValue cuts a long setup value (a digest) for the one-line summary.
func shortValue(s string) string {
	if len(s) > 24 && strings.HasPrefix(s, "sha256:") {
		return s[:19] + "…"
	}
	return s
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// verdictLine is the gate's verdict, then what it could not judge.
func verdictLine(r *Result) string {
	return gateLine(r) + "; " + notJudgedText(r)
}

func gateLine(r *Result) string {
	failOn := strings.Join(r.Options.FailOn, ",")
	if r.Verdict == VerdictNotJudged {
		return fmt.Sprintf("NOT JUDGED: %s judged nowhere (--require-judged %s); no finding of --fail-on %s",
			strings.Join(r.Unjudged, ", "), strings.Join(r.Options.RequireJudged, ","), failOn)
	}
	// Findings are counted as they are listed: the cells of one root
	// cause are one finding, their number in parentheses.
	rows := findingRows(r)
	if !r.Regressed() {
		n, cells, suspect := 0, 0, 0
		for _, f := range rows {
			switch {
			case f.FailsGate:
			case f.Suspect != "":
				suspect++
			default:
				n++
				cells += f.cells()
			}
		}
		var also []string
		if n > 0 {
			also = append(also, findingCount(n, cells)+" of other categories")
		}
		if suspect > 0 {
			also = append(also, plural(suspect, "finding", "findings")+" not judged (machine busy)")
		}
		if len(also) > 0 {
			return fmt.Sprintf("ok: no finding of --fail-on %s (%s, listed below)", failOn, strings.Join(also, "; "))
		}
		return fmt.Sprintf("ok: no regression (--fail-on %s)", failOn)
	}
	var parts []string
	total, cells := 0, 0
	for _, c := range Categories {
		n, nc := 0, 0
		for _, f := range rows {
			if f.FailsGate && f.Category == c {
				n++
				nc += f.cells()
			}
		}
		if n > 0 {
			part := fmt.Sprintf("%s %d", c, n)
			if nc > 0 {
				part += fmt.Sprintf(" (%s)", plural(nc, "cell", "cells"))
			}
			parts = append(parts, part)
			total += n
			cells += nc
		}
	}
	return fmt.Sprintf("REGRESSION: %s the gate (%s; --fail-on %s)", plural(total, "finding fails", "findings fail"), strings.Join(parts, ", "), failOn)
}

// findingCount is "3 findings (12 cells)", or "3 findings" with no cell
// among them.
func findingCount(n, cells int) string {
	s := plural(n, "finding", "findings")
	if cells > 0 {
		s += fmt.Sprintf(" (%s)", plural(cells, "cell", "cells"))
	}
	return s
}

func gateWord(f Finding) string {
	if f.FailsGate {
		return "FAIL"
	}
	return "note"
}

func findingWhere(f Finding) string {
	s := f.Provider + "/" + f.Model
	if f.ThinkingLevel != nil {
		s += " (" + *f.ThinkingLevel + ")"
	}
	if f.PromptID != "" {
		s += " " + f.PromptID
	}
	if f.Repetition != nil {
		s += fmt.Sprintf(" rep %d", *f.Repetition)
	}
	if f.Stage != "" {
		s += " stage " + f.Stage
	}
	if f.Metric != "" {
		s += " " + f.Metric
	}
	return s
}

// oneLine puts a message on one line, cut at max runes.
func oneLine(s string, max int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > max {
		return string(r[:max-1]) + "…"
	}
	return s
}

func cellsTotal(g *Group) int {
	n := 0
	for _, v := range g.Cells {
		n += v
	}
	return n
}

func rateChange(t RateTest) string {
	if t.BaseN == 0 {
		return "-"
	}
	return rateText(t.BaseCount, t.BaseN) + " -> " + rateText(t.NewCount, t.NewN)
}

func pText(t RateTest) string {
	if t.BaseN == 0 {
		return "not judged"
	}
	s := fmt.Sprintf("%.2g", t.AdjustedP)
	if t.Change != string(stats.Same) {
		s += " " + t.Change
	}
	return s
}

func tierText(t TierChange) string {
	b, n := "-", "-"
	if t.Base != nil {
		b = *t.Base
	}
	if t.New != nil {
		n = *t.New
	}
	if b == n {
		return b
	}
	return b + " -> " + n
}

// latText is "base -> new effect marker", the figure's one effect
// (effect): "~" judged and no change (with what it could have seen),
// "REGRESSION" or "improvement"; or "not judged (why)".
func latText(v *stats.Verdict) string {
	if v == nil {
		return "-"
	}
	if !v.Judged() {
		if v.NBase > 0 && v.NCur > 0 {
			return fmt.Sprintf("%s -> %s not judged (%s)", num(v.MedianBase), num(v.MedianCur), v.NotJudged)
		}
		return fmt.Sprintf("not judged (%s)", v.NotJudged)
	}
	base, cur := effect(v)
	return fmt.Sprintf("%s -> %s %s%% %s", num(base), num(cur), signedPct(v.ShiftPct), changeMark(v))
}

func countsLine(counts map[string]int) string {
	var parts []string
	for _, v := range verdictOrder {
		if n := counts[v]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, v))
		}
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

// cellSummary is a cell's reasons and changes on one line.
func cellSummary(c *Cell) string {
	var parts []string
	if len(c.Reasons) > 0 {
		parts = append(parts, strings.Join(c.Reasons, "; "))
	}
	for _, ch := range c.shownChanges() {
		if ch.Path == "pass" {
			continue
		}
		parts = append(parts, fmt.Sprintf("%s %s -> %s", ch.Path, short(ch.From), short(ch.To)))
	}
	return strings.Join(parts, "; ")
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// writeLatencyText prints each group's latency as benchstat does, one
// metric a line, with the prompts that entered or left the pool; then
// each prompt's judged changes, and what was not judged per prompt
// grouped by reason.
func writeLatencyText(b *strings.Builder, r *Result) {
	if len(r.Groups) == 0 {
		return
	}
	b.WriteString("\nLATENCY (group: stratified by prompt, like with like; prompt: Mann-Whitney U)\n")
	for _, g := range r.Groups {
		fmt.Fprintf(b, "  %s\n", g.Label())
		for _, m := range Metrics {
			fmt.Fprintf(b, "    %s\n", oneLine(figure(m, g.Latency[m]), 220))
			if pc := g.Pool[m]; pc != nil {
				fmt.Fprintf(b, "      %s\n", poolText(pc))
			}
		}
		why := map[string][]string{}
		var order []string
		for _, p := range g.Prompts {
			for _, m := range Metrics {
				v := p.Latency[m]
				if v == nil {
					continue
				}
				if v.Judged() {
					if v.Change != stats.Same {
						fmt.Fprintf(b, "    %s %s\n", p.PromptID, oneLine(figure(m, v), 200))
					}
					continue
				}
				k := v.NotJudged + ": " + v.Reason
				if why[k] == nil {
					order = append(order, k)
				}
				why[k] = append(why[k], p.PromptID+" "+m)
			}
		}
		judged := 0
		for _, p := range g.Prompts {
			for _, m := range Metrics {
				if v := p.Latency[m]; v != nil && v.Judged() {
					judged++
				}
			}
		}
		if len(g.Prompts) > 0 {
			fmt.Fprintf(b, "    per prompt: %d of %d judged\n", judged, 3*len(g.Prompts))
		}
		for i, k := range order {
			if i == maxListed {
				fmt.Fprintf(b, "    ... and %d more reasons (compare.md lists all)\n", len(order)-maxListed)
				break
			}
			fmt.Fprintf(b, "    not judged (%s): %s\n", oneLine(k, 140), listCut(why[k], 8))
		}
	}
}

// poolText says which prompts entered or left a group's pool.
func poolText(pc *PoolChange) string {
	var parts []string
	if len(pc.Entered) > 0 {
		parts = append(parts, "entered the pool (samples in the new run only): "+strings.Join(pc.Entered, ", "))
	}
	if len(pc.Left) > 0 {
		parts = append(parts, "left the pool (samples in the base run only): "+strings.Join(pc.Left, ", "))
	}
	return strings.Join(parts, "; ") + " (not compared: no like to compare with)"
}

// listCut joins the first n items and counts the rest.
func listCut(items []string, n int) string {
	if len(items) <= n {
		return strings.Join(items, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(items[:n], ", "), len(items)-n)
}

// writeCapacityText lists each group's load stages judged (capacity.go).
func writeCapacityText(b *strings.Builder, r *Result) {
	head := false
	for _, g := range r.Groups {
		lines := capacityLines(g)
		if len(lines) == 0 {
			continue
		}
		if !head {
			fmt.Fprintf(b, "\nCAPACITY (per load stage: answered requests/s in %d windows, Mann-Whitney U; goodput, Fisher; docs/load.md)\n", CapacityWindows)
			head = true
		}
		fmt.Fprintf(b, "  %s\n", g.Label())
		for _, l := range lines {
			fmt.Fprintf(b, "    %s\n", oneLine(l.text, 240))
		}
	}
}
