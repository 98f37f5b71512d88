// Package plan expands a config into the cells of a run, grouped into
// suites, and identifies cells across runs (resume, compare, merge).
//
// Layer: the run (planning: config in, cells out; below the runner).
package plan

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"bench/config"
	"bench/internal/record/results"
	"bench/prompts"
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
	// Stage is the cell's stage of its suite's load profile (nil without
	// one); Ordinal its place in the stage (its slot in the schedule).
	Stage   *Stage
	Ordinal int
}

// Plan is the ordered work of a run. Cells of one suite are contiguous so a
// suite runs as a block and its resource snapshots bracket it.
type Plan struct {
	Cells  []Cell
	Suites []Suite
}

// New expands the config into cells: for each provider, model and
// thinking level (one suite), every repetition of every prompt.
func New(cfg *config.Config) *Plan {
	pl := &Plan{}
	for pi := range cfg.Providers {
		p := &cfg.Providers[pi]
		for _, m := range p.Models {
			for _, lvl := range p.ThinkingLevels {
				s := Suite{Provider: p.Name, ProviderType: p.Type, Server: p.Server, Endpoint: EndpointKey(p.Server.Endpoint), Model: m, ThinkingLevel: lvl}
				si := len(pl.Suites)
				if p.Load.Staged() {
					s.Stages = stages(p.Load, cfg.Run.Repetitions*len(cfg.PromptSet))
					for sti := range s.Stages {
						st := &s.Stages[sti]
						for i := 0; i < st.Cells; i++ {
							pl.Cells = append(pl.Cells, Cell{Provider: p, Model: m, ThinkingLevel: lvl,
								Prompt: &cfg.PromptSet[i%len(cfg.PromptSet)], Repetition: i / len(cfg.PromptSet), Suite: si, Stage: st, Ordinal: i})
							s.Cells++
						}
					}
					pl.Suites = append(pl.Suites, s)
					continue
				}
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

// Key returns the cell's key.
func (c Cell) Key() results.Key {
	k := results.Key{Provider: c.Provider.Name, ProviderType: c.Provider.Type, Model: c.Model, PromptID: c.Prompt.ID, Repetition: c.Repetition}
	if c.Stage != nil {
		k.Stage = c.Stage.Name
	}
	if c.ThinkingLevel != nil {
		k.ThinkingLevel = *c.ThinkingLevel
	}
	return k
}

// Without returns the plan less the cells whose keys are in done, keeping
// the order and the suites (with their remaining cell counts).
func (p *Plan) Without(done map[results.Key]bool) *Plan {
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

// Suite is one model's suite: every cell of a (provider, model, thinking
// level). Resource snapshots and the summary are per suite.
type Suite struct {
	Provider     string
	ProviderType string
	// Server is where the provider's model server is, as its kind says.
	Server config.Server
	// Endpoint is EndpointKey of Server.Endpoint: suites with the same one
	// hit the same server ("" for a local CLI).
	Endpoint      string
	Model         string
	ThinkingLevel *string
	// Cells is how many cells the suite has in this run.
	Cells int
	// Stages are the suite's load stages in order (none without a load
	// profile that sweeps or sets a rate). Shared by every copy of the
	// suite: a plan's Without and Shard keep them whole.
	Stages []Stage
}

// Shard returns shard i of n (1-based, as `bench run --shard i/n`): whole
// suites dealt round-robin in plan order (suite k goes to shard k mod n + 1),
// so a model's suite runs on one machine, the split is the same on every
// machine that expands the same config, and shards differ by at most one
// suite (and, since every suite has the same cells, by at most one suite's
// cells). Suites are renumbered within the shard. With more shards than
// suites the shards past the last suite are empty. Shard(1, 1) is the plan.
func (p *Plan) Shard(i, n int) (*Plan, error) {
	if n < 1 || i < 1 || i > n {
		return nil, fmt.Errorf("shard %d/%d: want 1 <= i <= n", i, n)
	}
	out := &Plan{}
	renum := make([]int, len(p.Suites))
	for k, s := range p.Suites {
		renum[k] = -1
		if k%n == i-1 {
			renum[k] = len(out.Suites)
			out.Suites = append(out.Suites, s)
		}
	}
	for _, c := range p.Cells {
		if renum[c.Suite] >= 0 {
			c.Suite = renum[c.Suite]
			out.Cells = append(out.Cells, c)
		}
	}
	return out, nil
}

// ParseShard reads "i/n" (1-based, as --shard takes it).
func ParseShard(s string) (i, n int, err error) {
	a, b, ok := strings.Cut(s, "/")
	if ok {
		i, err = strconv.Atoi(strings.TrimSpace(a))
		if err == nil {
			n, err = strconv.Atoi(strings.TrimSpace(b))
		}
	}
	if !ok || err != nil || n < 1 || i < 1 || i > n {
		return 0, 0, fmt.Errorf("%q is not a shard: want i/n with 1 <= i <= n, e.g. 2/4", s)
	}
	return i, n, nil
}

// Lane is the suites that hit one server, in the order they run: one at a
// time, so the server holds one model at a time and each suite's resource
// window holds only its own cells. Suites of the same model are adjacent,
// so the server loads each model once. A CLI provider (no endpoint) is its
// own lane.
type Lane struct {
	// Key is the endpoint key, or "provider:<name>" for a CLI provider.
	Key string
	// Suites index Plan.Suites.
	Suites []int
}

// Lanes groups the suites that have cells by the server they hit, lanes in
// the order of their first suite, each lane's suites grouped by model in
// the order of the model's first suite (plan order otherwise).
func (p *Plan) Lanes() []Lane {
	var lanes []Lane
	at := map[string]int{}
	for i, s := range p.Suites {
		if s.Cells == 0 {
			continue
		}
		key := s.Endpoint
		if key == "" {
			key = "provider:" + s.Provider
		}
		li, ok := at[key]
		if !ok {
			li = len(lanes)
			at[key] = li
			lanes = append(lanes, Lane{Key: key})
		}
		lanes[li].Suites = append(lanes[li].Suites, i)
	}
	for li := range lanes {
		l := &lanes[li]
		first := map[string]int{}
		for pos, si := range l.Suites {
			if _, ok := first[modelKey(p.Suites[si].Model)]; !ok {
				first[modelKey(p.Suites[si].Model)] = pos
			}
		}
		slices.SortStableFunc(l.Suites, func(a, b int) int {
			return cmp.Compare(first[modelKey(p.Suites[a].Model)], first[modelKey(p.Suites[b].Model)])
		})
	}
	return lanes
}

// modelKey names a model as servers that tag models do: "m" and "m:latest"
// are one model.
func modelKey(m string) string { return strings.TrimSuffix(m, ":latest") }
