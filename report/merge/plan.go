package merge

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"bench/internal/record/results"
)

// shardPlan is what a shard was to run, read from its config.json (the
// run's resolved config: providers with their models and thinking levels,
// the prompt set, the repetitions) and its run.json (the suites dealt to
// it). The merge checks each shard's records against it: a shard that lost
// cells, garbled lines or holds cells outside it is not merged as if whole.
type shardPlan struct {
	// suites are the shard's suites by label (provider/model[/level]),
	// each with its provider type.
	suites map[string]suite
	order  []string
	// prompts are the prompt ids, reps the repetitions.
	prompts []string
	reps    int
}

type suite struct {
	provider, providerType, model, level string
}

func (s suite) label() string {
	l := s.provider + "/" + s.model
	if s.level != "" {
		l += "/" + s.level
	}
	return l
}

// planOf derives the shard's plan; ok is false when config.json does not
// say enough (a hand-made or older one), and the plan checks are skipped.
func planOf(s *shard) (p *shardPlan, ok bool) {
	cfg, _ := s.config.(map[string]any)
	run, _ := cfg["run"].(map[string]any)
	reps, err := number(run["repetitions"])
	if err != nil || reps < 1 {
		return nil, false
	}
	p = &shardPlan{suites: map[string]suite{}, reps: reps}
	set, _ := cfg["prompt_set"].([]any)
	for _, x := range set {
		pr, _ := x.(map[string]any)
		id, _ := pr["id"].(string)
		if id == "" {
			return nil, false
		}
		p.prompts = append(p.prompts, id)
	}
	provs, _ := cfg["providers"].([]any)
	if len(provs) == 0 || len(p.prompts) == 0 {
		return nil, false
	}
	all := map[string]suite{}
	var allOrder []string
	for _, x := range provs {
		pv, _ := x.(map[string]any)
		name, _ := pv["name"].(string)
		typ, _ := pv["type"].(string)
		models, _ := pv["models"].([]any)
		levels, _ := pv["thinking_levels"].([]any)
		if name == "" {
			return nil, false
		}
		if len(models) == 0 {
			continue // an entry that only judges: no cells of its own
		}
		if len(levels) == 0 {
			levels = []any{nil}
		}
		for _, m := range models {
			model, _ := m.(string)
			for _, l := range levels {
				level, _ := l.(string)
				su := suite{provider: name, providerType: typ, model: model, level: level}
				all[su.label()] = su
				allOrder = append(allOrder, su.label())
			}
		}
	}
	sh := s.info.Shard
	if sh.Count == 1 && len(sh.Suites) == 0 {
		p.suites, p.order = all, allOrder
		return p, true
	}
	for _, l := range sh.Suites {
		su, known := all[l]
		if !known {
			return nil, false
		}
		p.suites[l] = su
		p.order = append(p.order, l)
	}
	return p, true
}

func number(v any) (int, error) {
	n, ok := v.(json.Number)
	if !ok {
		return 0, fmt.Errorf("not a number")
	}
	i, err := n.Int64()
	if err != nil || i > 1<<31 {
		return 0, fmt.Errorf("not a count")
	}
	return int(i), nil
}

// has says whether the record's cell is in the plan.
func (p *shardPlan) has(rec *results.Record) bool {
	level := ""
	if rec.ThinkingLevel != nil {
		level = *rec.ThinkingLevel
	}
	su, ok := p.suites[suite{provider: rec.Provider, model: rec.Model, level: level}.label()]
	return ok && (su.providerType == "" || su.providerType == rec.ProviderType) &&
		slices.Contains(p.prompts, rec.PromptID) && rec.Repetition >= 0 && rec.Repetition < p.reps
}

// cells are the plan's cells, in plan order.
func (p *shardPlan) cells(yield func(results.Key) bool) {
	for _, l := range p.order {
		su := p.suites[l]
		for _, pr := range p.prompts {
			for r := range p.reps {
				if !yield(results.Key{Provider: su.provider, ProviderType: su.providerType, Model: su.model, ThinkingLevel: su.level, PromptID: pr, Repetition: r}) {
					return
				}
			}
		}
	}
}

// size is how many cells the plan has.
func (p *shardPlan) size() int { return len(p.order) * len(p.prompts) * p.reps }

// audit is what a shard's results.jsonl held against its plan and its
// run.json.
type audit struct {
	bad      int   // lines that do not parse
	badLines []int // the first few of them
	cells    int   // distinct cells recorded
	outside  []string
	nOutside int
	missing  []string
	nMissing int
}

// problems words what is wrong with the shard, or nil.
func (a *audit) problems(s *shard, p *shardPlan) []string {
	var out []string
	if a.bad > 0 {
		out = append(out, fmt.Sprintf("%d lines of its results.jsonl do not parse (line %s)", a.bad, joinInts(a.badLines, a.bad)))
	}
	if a.cells != s.info.CellsRecorded {
		out = append(out, fmt.Sprintf("its results.jsonl holds %d cells where its run.json says %d were recorded", a.cells, s.info.CellsRecorded))
	}
	if p != nil && s.info.CellsPlanned != p.size() {
		out = append(out, fmt.Sprintf("its run.json says %d cells were planned where its config.json and suites plan %d", s.info.CellsPlanned, p.size()))
	}
	if a.nOutside > 0 {
		out = append(out, fmt.Sprintf("%d cells outside its plan (%s)", a.nOutside, list(a.outside, a.nOutside)))
	}
	if a.nMissing > 0 {
		why := ""
		if s.info.EndReason != "finished" {
			why = ", its run " + s.info.EndReason
		}
		out = append(out, fmt.Sprintf("%d of its %d planned cells have no record%s (%s)", a.nMissing, p.size(), why, list(a.missing, a.nMissing)))
	}
	return out
}

func joinInts(xs []int, n int) string {
	var s []string
	for _, x := range xs {
		s = append(s, fmt.Sprint(x))
	}
	if n > len(xs) {
		s = append(s, "...")
	}
	return strings.Join(s, ", ")
}

func list(xs []string, n int) string {
	s := strings.Join(xs, "; ")
	if n > len(xs) {
		s += fmt.Sprintf("; and %d more", n-len(xs))
	}
	return s
}
