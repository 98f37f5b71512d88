package report

import (
	"fmt"
	"hash/maphash"
	"slices"
	"sort"
	"strings"

	"bench/internal/format"
)

// Causes groups cells by root cause: one Cause per (category, prompt,
// kind of outcome), the cells of one prompt that went wrong the same way,
// said in one line ("P1: output "Canberra" → "Sydney" in 6/6 cells: both
// providers, all repetitions"). Where 18 cells failed for 3 reasons, a
// reader is told 3 things. bench compare groups a regression's cells with
// it (the kind of change between two runs), report.html a run's failures
// (the kind of failure). Add the cells, say each prompt's scope (the
// cells "all" means), then List.
type Causes struct {
	// noun names what a variant is, in a message: "change", "failure".
	noun   string
	byKey  map[causeKey]*Cause
	order  []causeKey
	whats  map[causeKey]*whatCount
	scopes map[string]*CauseScope
	n      int
}

// CauseCell is one cell to group: its category, prompt and the kind of
// its outcome (without its values: "output", "error timeout"), what
// happened (with them), its group and repetition.
type CauseCell struct {
	Category, PromptID, Kind, What string
	Group                          CauseGroup
	Repetition                     int
}

// CauseGroup is a (provider, model, thinking level) as a cause names it:
// Label for the reader; Provider and Model (with the thinking level)
// to say "both providers" when a cause covers every group of its prompt.
type CauseGroup struct {
	Label, Provider, Model string
}

// CauseScope is a prompt's cells in the run (or both runs): how many,
// which groups and which repetitions; a cause covering all of them says so.
type CauseScope struct {
	NCells int
	Groups []CauseGroup
	Reps   []int
}

// Cause is one root cause.
type Cause struct {
	Category string
	PromptID string
	Kind     string
	// What is the outcome as most of its cells have it; Variants counts
	// the different ones (1: every cell alike).
	What     string
	Variants int
	// NCells is how many cells it covers; NPrompt how many cells its
	// prompt has in scope.
	NCells, NPrompt int
	// Where says which groups and repetitions: "both providers, all
	// repetitions", "ollama/llama3.2:3b, repetitions 0, 2".
	Where string
	// Message is the one line: "P1: what in n/N cells: where".
	Message string
	// Cells are the indexes of its cells in the order Add was called.
	Cells  []int
	groups []CauseGroup
	reps   []int
}

type causeKey struct{ category, prompt, kind string }

// maxWhatTexts bounds the texts one cause keeps to pick its most
// frequent from; past it a new text is only counted as a variant (its
// hash remembered), so 100,000 different violations of one prompt cost a
// set of hashes, not their texts.
const maxWhatTexts = 64

type whatCount struct {
	texts  map[string]int
	others map[uint64]bool
}

var whatSeed = maphash.MakeSeed()

// NewCauses starts an empty grouping; noun is what a cell's outcome is
// ("change", "failure"), for "(and 2 other changes of this kind)".
func NewCauses(noun string) *Causes {
	return &Causes{noun: noun, byKey: map[causeKey]*Cause{}, whats: map[causeKey]*whatCount{}, scopes: map[string]*CauseScope{}}
}

// Add groups one cell and returns its index.
func (c *Causes) Add(cell CauseCell) int {
	k := causeKey{cell.Category, cell.PromptID, cell.Kind}
	rc := c.byKey[k]
	if rc == nil {
		rc = &Cause{Category: cell.Category, PromptID: cell.PromptID, Kind: cell.Kind}
		c.byKey[k] = rc
		c.whats[k] = &whatCount{texts: map[string]int{}}
		c.order = append(c.order, k)
	}
	w := c.whats[k]
	if _, ok := w.texts[cell.What]; ok || len(w.texts) < maxWhatTexts {
		w.texts[cell.What]++
	} else {
		if w.others == nil {
			w.others = map[uint64]bool{}
		}
		w.others[maphash.String(whatSeed, cell.What)] = true
	}
	rc.NCells++
	rc.Cells = append(rc.Cells, c.n)
	if !slices.Contains(rc.groups, cell.Group) {
		rc.groups = append(rc.groups, cell.Group)
	}
	if !slices.Contains(rc.reps, cell.Repetition) {
		rc.reps = append(rc.reps, cell.Repetition)
	}
	c.n++
	return c.n - 1
}

// Prompts are the prompts some cause is of, in first-seen order: those
// whose scope List needs.
func (c *Causes) Prompts() []string {
	var out []string
	seen := map[string]bool{}
	for _, k := range c.order {
		if !seen[k.prompt] {
			seen[k.prompt] = true
			out = append(out, k.prompt)
		}
	}
	return out
}

// Scope sets a prompt's scope: the cells a cause of it is counted out
// of, and the groups and repetitions "all" means.
func (c *Causes) Scope(promptID string, s *CauseScope) { c.scopes[promptID] = s }

// List returns the causes, each with its line, in first-seen order
// (callers sort them by what matters to them; Sort is the usual order).
func (c *Causes) List() []*Cause {
	out := make([]*Cause, 0, len(c.order))
	for _, k := range c.order {
		rc := c.byKey[k]
		w := c.whats[k]
		// The most frequent outcome speaks for the cause (ties: the
		// first in text order, so the line is stable).
		best, n := "", 0
		for t, m := range w.texts {
			if m > n || (m == n && t < best) {
				best, n = t, m
			}
		}
		rc.What, rc.Variants = best, len(w.texts)+len(w.others)
		sc := c.scopes[rc.PromptID]
		if sc == nil {
			sc = &CauseScope{NCells: rc.NCells, Groups: rc.groups, Reps: rc.reps}
		}
		rc.NPrompt = sc.NCells
		rc.Where = causeWhere(rc, sc)
		rc.Message = fmt.Sprintf("%s: %s", rc.PromptID, rc.What)
		if rc.Variants > 1 {
			rc.Message += fmt.Sprintf(" (and %s of this kind)", format.Plural(rc.Variants-1, "other "+c.noun))
		}
		rc.Message += fmt.Sprintf(" in %d/%d cells: %s", rc.NCells, rc.NPrompt, rc.Where)
		out = append(out, rc)
	}
	return out
}

// SortCauses orders causes by rank (smaller first: the caller's
// categories), then by cells covered, most first, then by prompt.
func SortCauses(cs []*Cause, rank func(*Cause) int) {
	sort.SliceStable(cs, func(i, j int) bool {
		a, b := cs[i], cs[j]
		if ra, rb := rank(a), rank(b); ra != rb {
			return ra < rb
		}
		if a.NCells != b.NCells {
			return a.NCells > b.NCells
		}
		if a.PromptID != b.PromptID {
			return NaturalLess(a.PromptID, b.PromptID)
		}
		// The same whatever order the cells came in (a merged run's
		// results.jsonl is in another order than the unsharded run's).
		if a.Category != b.Category {
			return a.Category < b.Category
		}
		return a.Kind < b.Kind
	})
}

// causeWhere says which of the prompt's groups and repetitions a cause
// covers: "both providers, all repetitions", "ollama/llama3.2:3b,
// repetitions 0, 2".
func causeWhere(rc *Cause, sc *CauseScope) string {
	var parts []string
	if len(rc.groups) == len(sc.Groups) && len(sc.Groups) > 1 {
		// Every group: say it by what varies between them.
		providers, models := map[string]bool{}, map[string]bool{}
		for _, g := range sc.Groups {
			providers[g.Provider] = true
			models[g.Model] = true
		}
		switch {
		case len(models) == 1 && len(providers) == 2:
			parts = append(parts, "both providers")
		case len(models) == 1:
			parts = append(parts, fmt.Sprintf("all %d providers", len(providers)))
		case len(sc.Groups) == 2:
			parts = append(parts, "both groups")
		default:
			parts = append(parts, fmt.Sprintf("all %d groups", len(sc.Groups)))
		}
	} else {
		// Named in label order, whatever order the cells came in.
		groups := slices.Clone(rc.groups)
		slices.SortFunc(groups, func(a, b CauseGroup) int { return strings.Compare(a.Label, b.Label) })
		var labels []string
		for i, g := range groups {
			if i == 4 {
				labels = append(labels, fmt.Sprintf("%d more", len(groups)-4))
				break
			}
			labels = append(labels, g.Label)
		}
		s := strings.Join(labels, ", ")
		if len(sc.Groups) > 1 {
			s += fmt.Sprintf(" (%d of %d groups)", len(rc.groups), len(sc.Groups))
		}
		parts = append(parts, s)
	}
	switch {
	case len(sc.Reps) <= 1:
	case len(rc.reps) == len(sc.Reps):
		parts = append(parts, "all repetitions")
	default:
		rs := slices.Clone(rc.reps)
		sort.Ints(rs)
		ss := make([]string, len(rs))
		for i, r := range rs {
			ss[i] = fmt.Sprint(r)
		}
		word := "repetition "
		if len(rs) > 1 {
			word = "repetitions "
		}
		parts = append(parts, word+strings.Join(ss, ", "))
	}
	return strings.Join(parts, ", ")
}
