// Package runner plans the cells of a sweep, runs them under global and
// per-provider limits, times every stream the same way, scores the answers
// and appends one results.jsonl line per finished cell.
package runner

import (
	"bench/config"
	"bench/prompts"
	"bench/results"
)

// Cell is one unit of work: provider × model × thinking level × prompt ×
// repetition.
type Cell struct {
	Provider      *config.Provider
	Model         string
	ThinkingLevel *string
	Prompt        *prompts.Prompt
	Repetition    int
	// Suite indexes the cell's suite in the plan.
	Suite int
}

// Plan is the ordered work of a run. Cells of one suite are contiguous so a
// suite runs as a block and its resource snapshots bracket it.
type Plan struct {
	Cells  []Cell
	Suites []Suite
}

// NewPlan expands the config into cells: for each provider, model and
// thinking level (one suite), every repetition of every prompt.
func NewPlan(cfg *config.Config) *Plan {
	pl := &Plan{}
	for pi := range cfg.Providers {
		p := &cfg.Providers[pi]
		for _, m := range p.Models {
			for _, lvl := range p.ThinkingLevels {
				s := Suite{Provider: p.Name, ProviderType: p.Type, BaseURL: p.BaseURL, Model: m, ThinkingLevel: lvl}
				si := len(pl.Suites)
				for rep := 0; rep < cfg.Run.Repetitions; rep++ {
					for qi := range cfg.PromptSet {
						pl.Cells = append(pl.Cells, Cell{Provider: p, Model: m, ThinkingLevel: lvl,
							Prompt: &cfg.PromptSet[qi], Repetition: rep, Suite: si})
						s.Cells++
					}
				}
				pl.Suites = append(pl.Suites, s)
			}
		}
	}
	return pl
}

// CellKey identifies a cell across runs of the same config: what a resumed
// run matches against the records already written.
type CellKey struct {
	Provider, Model, ThinkingLevel, PromptID string
	Repetition                               int
}

// Key returns the cell's key.
func (c Cell) Key() CellKey {
	k := CellKey{Provider: c.Provider.Name, Model: c.Model, PromptID: c.Prompt.ID, Repetition: c.Repetition}
	if c.ThinkingLevel != nil {
		k.ThinkingLevel = *c.ThinkingLevel
	}
	return k
}

// RecordKey returns the key of the cell a record came from.
func RecordKey(r *results.Record) CellKey {
	k := CellKey{Provider: r.Provider, Model: r.Model, PromptID: r.PromptID, Repetition: r.Repetition}
	if r.ThinkingLevel != nil {
		k.ThinkingLevel = *r.ThinkingLevel
	}
	return k
}

// Without returns the plan less the cells whose keys are in done, keeping
// the order and the suites (with their remaining cell counts).
func (p *Plan) Without(done map[CellKey]bool) *Plan {
	out := &Plan{Suites: make([]Suite, len(p.Suites))}
	copy(out.Suites, p.Suites)
	for i := range out.Suites {
		out.Suites[i].Cells = 0
	}
	for _, c := range p.Cells {
		if done[c.Key()] {
			continue
		}
		out.Cells = append(out.Cells, c)
		out.Suites[c.Suite].Cells++
	}
	return out
}
