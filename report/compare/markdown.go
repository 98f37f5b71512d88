package compare

import (
	"fmt"
	"io"
	"strings"

	"bench/internal/printable"
)

// maxMarkdownCells bounds the cells of each verdict compare.md lists.
const maxMarkdownCells = 1000

// WriteMarkdown writes compare.md: the verdict, the setup differences, the
// findings, the groups with their latency per prompt, every cell that is
// not a match with its changes, and the methods.
func WriteMarkdown(w io.Writer, r *Result) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# bench compare: %s -> %s\n\n", md(r.BaseRunID), md(r.NewRunID))
	fmt.Fprintf(&b, "Base `%s`, new `%s`.\n\n**Verdict: %s**\n\n", md(r.BaseDir), md(r.NewDir), md(verdictLine(r)))
	writeJudgementMarkdown(&b, r)
	for _, m := range r.Warnings {
		fmt.Fprintf(&b, "- warning: %s\n", md(m))
	}
	if len(r.Warnings) > 0 {
		b.WriteString("\n")
	}

	b.WriteString("## Setup\n\n| | base | new |\n|---|---|---|\n")
	for _, s := range r.Setup {
		name := md(s.Name)
		if !s.Same {
			name = "**" + name + "** (differs)"
		}
		fmt.Fprintf(&b, "| %s | %s | %s |\n", name, md(orDash(s.Base)), md(orDash(s.New)))
	}

	b.WriteString("\n## Findings\n\n")
	if rows := findingRows(r); len(rows) == 0 {
		b.WriteString("None.\n")
	} else {
		b.WriteString("The cells of one prompt that changed the same way are one finding; the cells are listed below and in compare.json.\n\n")
		b.WriteString("| gate | category | scope | where | what |\n|---|---|---|---|---|\n")
		for i, f := range rows {
			if i == maxMarkdownCells {
				fmt.Fprintf(&b, "\n... and %d more findings (compare.json lists them all).\n", len(rows)-maxMarkdownCells)
				break
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n", f.Gate, f.Category, f.Scope, md(f.Where), md(f.What))
		}
	}

	cost := anyCost(r)
	b.WriteString("\n## Groups\n\n| group | cells | pass base -> new | p (Holm) | tool use base -> new | p (Holm) | tier | ttft ms | e2e ms | tokens/s |")
	if cost {
		b.WriteString(" cost |")
	}
	b.WriteString("\n|---|---|---|---|---|---|---|---|---|---|")
	if cost {
		b.WriteString("---|")
	}
	b.WriteString("\n")
	for _, g := range r.Groups {
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |", md(g.Label()), md(countsLine(g.Cells)),
			rateChange(g.PassRate), pText(g.PassRate), rateChange(g.ToolUse), pText(g.ToolUse), tierText(g.Tier),
			latText(g.Latency[MetricTTFT]), latText(g.Latency[MetricE2E]), latText(g.Latency[MetricTPS]))
		if cost {
			fmt.Fprintf(&b, " %s |", costText(g.Cost))
		}
		b.WriteString("\n")
	}
	for _, g := range r.Groups {
		if len(g.Categories) == 0 {
			continue
		}
		fmt.Fprintf(&b, "\n### Categories: %s\n\n| category | pass base -> new | p (Holm) |\n|---|---|---|\n", md(g.Label()))
		for _, ct := range g.Categories {
			fmt.Fprintf(&b, "| %s | %s | %s |\n", md(ct.Category), rateChange(ct.RateTest), pText(ct.RateTest))
		}
	}
	writeLatencyMarkdown(&b, r)
	for _, g := range r.Groups {
		if lines := capacityLines(g); len(lines) > 0 {
			fmt.Fprintf(&b, "\n### Capacity: %s\n\n", md(g.Label()))
			for _, l := range lines {
				fmt.Fprintf(&b, "- %s\n", md(l.text))
			}
		}
	}

	fmt.Fprintf(&b, "\n## Cells\n\n%s.\n", countsLine(r.Counts))
	for _, v := range verdictOrder[:len(verdictOrder)-1] { // every verdict but match
		n := 0
		for _, c := range r.Cells {
			if c.Verdict != v {
				continue
			}
			if n++; n == 1 {
				fmt.Fprintf(&b, "\n### %s\n\n| cell | category | why | changes |\n|---|---|---|---|\n", v)
			}
			if n > maxMarkdownCells {
				continue
			}
			var ch []string
			for _, x := range c.shownChanges() {
				ch = append(ch, fmt.Sprintf("`%s`: %s -> %s", x.Path, short(x.From), short(x.To)))
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", md(c.Label()), c.Category, md(strings.Join(c.Reasons, "; ")), md(strings.Join(ch, "<br>")))
		}
		if n > maxMarkdownCells {
			fmt.Fprintf(&b, "\n... and %d more %s cells (compare.json lists every cell).\n", n-maxMarkdownCells, v)
		}
	}
	if r.Rescored != nil {
		b.WriteString("\n## Rescored\n\n" + md(rescoredLine(r)) + "\n")
		for _, pc := range r.Rescored.Prompts {
			var paths []string
			for _, ch := range pc.Changes {
				paths = append(paths, "`"+ch.Path+"`")
			}
			fmt.Fprintf(&b, "- %s: %s\n", md(pc.PromptID), strings.Join(paths, ", "))
		}
	}
	if len(r.ChangedPrompts) > 0 {
		b.WriteString("\n## Changed prompts (their cells are not judged)\n\n")
		for _, pc := range r.ChangedPrompts {
			var paths []string
			for _, ch := range pc.Changes {
				paths = append(paths, "`"+ch.Path+"`")
			}
			fmt.Fprintf(&b, "- %s: %s\n", md(pc.PromptID), strings.Join(paths, ", "))
		}
	}
	b.WriteString("\n## Methods\n\n")
	for _, k := range []string{"matching", "pass", "cell_verdicts", "pass_rate", "injection", "tier", "infrastructure", "latency"} {
		fmt.Fprintf(&b, "- **%s**: %s\n", k, md(r.Methods[k]))
	}
	// Values came from the runs' files: no control character, and no line
	// a CI runner reads as a command (compare.md is shown in job summaries).
	_, err := io.WriteString(w, printable.String(b.String()))
	return err
}

// md keeps a value inside one table cell: pipes escaped, newlines as
// spaces.
func md(s string) string {
	s = strings.ReplaceAll(s, "|", `\|`)
	s = strings.ReplaceAll(s, "\r", " ")
	return strings.ReplaceAll(s, "\n", " ")
}

// writeJudgementMarkdown is the table of what was judged, per metric.
func writeJudgementMarkdown(b *strings.Builder, r *Result) {
	b.WriteString("| metric | judged | not judged |\n|---|--:|---|\n")
	for _, m := range judgedMetrics(r.Judgement) {
		j := r.Judgement[m]
		nj := "-"
		if j.Total() > j.Judged {
			nj = fmt.Sprintf("%d (%s)", j.Total()-j.Judged, reasonCounts(j.NotJudged))
		}
		fmt.Fprintf(b, "| %s | %d of %d | %s |\n", m, j.Judged, j.Total(), md(nj))
	}
	b.WriteString("\n")
}

// writeLatencyMarkdown lists every latency comparison, group then
// prompt, benchstat-style when judged and with the reason when not.
func writeLatencyMarkdown(b *strings.Builder, r *Result) {
	for _, g := range r.Groups {
		fmt.Fprintf(b, "\n### Latency: %s\n\nGroup (stratified by prompt, like with like):\n\n", md(g.Label()))
		for _, m := range Metrics {
			fmt.Fprintf(b, "- %s\n", md(figure(m, g.Latency[m])))
			if pc := g.Pool[m]; pc != nil {
				fmt.Fprintf(b, "  - %s\n", md(poolText(pc)))
			}
		}
		if len(g.Prompts) == 0 {
			continue
		}
		b.WriteString("\n| prompt | ttft ms | e2e ms | tokens/s |\n|---|---|---|---|\n")
		for _, p := range g.Prompts {
			fmt.Fprintf(b, "| %s |", md(p.PromptID))
			for _, m := range Metrics {
				v := p.Latency[m]
				text := "-"
				if v != nil {
					text = strings.TrimPrefix(figure(m, v), m+" ")
				}
				fmt.Fprintf(b, " %s |", md(text))
			}
			b.WriteString("\n")
		}
	}
}
