package report

// The caps below keep what a report holds and writes bounded by the groups
// and prompts a run actually has, never their product (issue 21, item 7: a
// run of 100,000 distinct model × prompt lines made a dense 10^10-cell
// matrix). Tables list the first rows in ranking order and count the rest;
// summary.json and tiers.json keep every group.
const (
	// MaxTableRows caps summary.md's per-group tables.
	MaxTableRows = 500
	// MaxMatrixGroups and MaxMatrixPrompts cap summary.md's pass matrix:
	// its columns are the first groups in ranking order, its rows the
	// prompts those groups have cells of.
	MaxMatrixGroups  = 20
	MaxMatrixPrompts = 500
	// MaxPlotted is how many groups, the first in ranking order, keep their
	// plotted distributions (Group.Dists) for report.html: 303 numbers a
	// group, so a run of many small groups does not hold 303 for each.
	MaxPlotted = 200
)

// MatrixView is the part of the pass matrix a report shows: the first
// groups in ranking order and the prompts they have cells of, in natural
// order, with counts of the groups and prompts left out. Building it costs
// the cells of the shown groups, not groups × prompts.
type MatrixView struct {
	// Groups are the shown groups; Index[i] is Groups[i]'s index in
	// Summary.Groups (and Summary.Matrix).
	Groups []*Group
	Index  []int
	// Prompts are the shown prompts.
	Prompts []Prompt
	// MoreGroups and MorePrompts count what is left out.
	MoreGroups, MorePrompts int
}

// View returns the pass matrix's view for at most maxGroups groups (the
// first of ranked, which is Ranked(s)) and maxPrompts prompts.
func (s *Summary) View(ranked []*Group, maxGroups, maxPrompts int) MatrixView {
	index := make(map[*Group]int, len(s.Groups))
	for i, g := range s.Groups {
		index[g] = i
	}
	var v MatrixView
	n := min(len(ranked), maxGroups)
	v.Groups, v.MoreGroups = ranked[:n:n], len(ranked)-n
	used := map[string]bool{}
	for _, g := range v.Groups {
		i := index[g]
		v.Index = append(v.Index, i)
		if i < len(s.Matrix) {
			for _, id := range s.Matrix[i].PromptIDs() {
				used[id] = true
			}
		}
	}
	for _, p := range s.Prompts {
		if used[p.ID] && len(v.Prompts) < maxPrompts {
			v.Prompts = append(v.Prompts, p)
		}
	}
	v.MorePrompts = len(s.Prompts) - len(v.Prompts)
	return v
}
