package htmlreport

import (
	"fmt"
	"net/url"
	"sort"
	"strings"

	"bench/internal/record/results"
	"bench/report"
)

// injectionView is report.html's prompt-injection section: each group's
// figures, then a row per style and per goal with a cell per group, each
// cell's cases (the cells behind its numbers) folded beneath it, each a
// link to its cells in answers.html.
type injectionView struct {
	Rows   []injectionRow
	Groups []string
	Styles []injectionSlice
	Goals  []injectionSlice
	// More counts the groups left out of the style and goal tables.
	More int
}

type injectionRow struct {
	Label                               string
	Attack, AttackCI, Errors, Exposed   string
	Under, UnderCI, Without, WithoutCI  string
	Confidence, Routing, RoutingClass   string
	RoutingNote                         string
	AttackExact, UnderExact, CleanExact string
}

type injectionSlice struct {
	Key   string
	Cells []injectionCell
}

type injectionCell struct {
	// Text is "followed/judged rate", CI its interval, Done the user task
	// done under attack; Class is followed, resisted or none.
	Text, CI, Done, Class string
	Cases                 []injectionCase
}

type injectionCase struct {
	ID, Href, Text, Class string
}

// newInjection builds the section, nil when no group ran injection cases.
func newInjection(ranked []*report.Group, answers string) *injectionView {
	var groups []*report.Group
	for _, g := range ranked {
		if g.Injection != nil && g.Injection.NAttack+g.Injection.NClean > 0 {
			groups = append(groups, g)
		}
	}
	if len(groups) == 0 {
		return nil
	}
	v := &injectionView{}
	for i, g := range groups {
		if i == MaxRows {
			break
		}
		in := g.Injection
		r := injectionRow{Label: g.Label(), Attack: fraction(in.NFollowed, in.NJudged, in.AttackSuccessRate), AttackCI: report.CIText(in.AttackSuccessCI),
			Errors: fmt.Sprint(in.NErrors), Exposed: fmt.Sprintf("%d/%d", in.NExposed, in.NAttack),
			Under: fraction(in.NUtility, in.NAttack, in.UtilityUnderAttack), UnderCI: report.CIText(in.UtilityUnderAttackCI),
			Without: fraction(in.NCleanUtility, in.NClean, in.UtilityWithoutAttack), WithoutCI: report.CIText(in.UtilityWithoutAttackCI),
			Confidence: report.InjectionConfidence(in), Routing: report.RoutingMark(g.Tier),
			AttackExact: exact(in.AttackSuccessRate), UnderExact: exact(in.UtilityUnderAttack), CleanExact: exact(in.UtilityWithoutAttack)}
		r.RoutingClass = strings.ReplaceAll(r.Routing, " ", "-")
		if g.Tier != nil {
			r.RoutingNote = g.Tier.RoutingNote
		}
		v.Rows = append(v.Rows, r)
	}
	cols := groups
	if len(cols) > maxMatrixGroups {
		v.More, cols = len(cols)-maxMatrixGroups, cols[:maxMatrixGroups]
	}
	for _, g := range cols {
		v.Groups = append(v.Groups, g.Label())
	}
	v.Styles = breakdown(cols, answers, func(in *report.Injection) map[string]*report.InjectionFigures { return in.Styles },
		func(c *report.InjectionCase) string { return c.Style })
	v.Goals = breakdown(cols, answers, func(in *report.Injection) map[string]*report.InjectionFigures { return in.Goals },
		func(c *report.InjectionCase) string { return c.Goal })
	return v
}

// breakdown is the rows of one breakdown (per style or per goal).
func breakdown(cols []*report.Group, answers string, of func(*report.Injection) map[string]*report.InjectionFigures, keyOf func(*report.InjectionCase) string) []injectionSlice {
	var keys []string
	seen := map[string]bool{}
	for _, g := range cols {
		for _, k := range report.SortedKeys(of(g.Injection)) {
			if !seen[k] {
				seen[k] = true
				keys = append(keys, k)
			}
		}
	}
	sort.Strings(keys)
	var out []injectionSlice
	for _, k := range keys {
		row := injectionSlice{Key: k}
		for _, g := range cols {
			f := of(g.Injection)[k]
			if f == nil {
				row.Cells = append(row.Cells, injectionCell{Text: "–", Class: "none"})
				continue
			}
			c := injectionCell{Text: fraction(f.NFollowed, f.NJudged, f.AttackSuccessRate), CI: report.CIText(f.AttackSuccessCI),
				Done: fmt.Sprintf("done %d/%d", f.NUtility, f.NAttack), Class: "resisted"}
			if f.NErrors > 0 {
				c.Done += fmt.Sprintf(", %d errors", f.NErrors)
			}
			if f.NFollowed > 0 {
				c.Class = "followed"
			}
			for _, ic := range g.Injection.Cases {
				if ic.Role != results.InjectionAttack || keyOf(ic) != k {
					continue
				}
				c.Cases = append(c.Cases, caseOf(ic, answers))
			}
			row.Cells = append(row.Cells, c)
		}
		out = append(out, row)
	}
	return out
}

// caseOf is one case of a cell: its counts, and what it called when it
// obeyed.
func caseOf(c *report.InjectionCase, answers string) injectionCase {
	text := fmt.Sprintf("followed %d/%d, done %d/%d", c.NFollowed, c.N, c.NUtility, c.N)
	if c.NErrors > 0 {
		text += fmt.Sprintf(", %d errors", c.NErrors)
	}
	if c.NExposed < c.N {
		text += fmt.Sprintf(", exposed %d/%d", c.NExposed, c.N)
	}
	if len(c.Calls) > 0 {
		text += ": called " + strings.Join(c.Calls, ", ")
	}
	class := "resisted"
	if c.NFollowed > 0 {
		class = "followed"
	}
	return injectionCase{ID: c.PromptID, Href: answers + "#p=" + url.QueryEscape(c.PromptID), Text: text, Class: class}
}

// fraction is "k/n rate", "–" when nothing counted.
func fraction(k, n int, r *float64) string {
	if n == 0 {
		return "–"
	}
	return fmt.Sprintf("%d/%d %s", k, n, pctCell(r).Text)
}
