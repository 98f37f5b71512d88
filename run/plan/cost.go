package plan

import (
	"encoding/json"
	"slices"

	"bench/config"
	"bench/internal/record/pricing"
	"bench/providers"
)

// The projected cost of a plan, before anything is sent: what bench run
// --dry-run prints, what run.max_cost_usd is checked against before the
// run starts, and what a cell in flight counts against the budget until
// its own cost is known. It is an estimate made from bench.yaml alone,
// with these assumptions (ProjectionAssumptions says them to the user):
//
//   - input tokens: the bytes of the system prompt, the prompt and the
//     offered tools' JSON over BytesPerToken (OpenAI's rule of thumb for
//     English), none of them read from a prompt cache;
//   - output tokens: the cap, the prompt's max_tokens, else the entry's,
//     else AssumedOutputTokens; reasoning is part of the output, priced at
//     the higher of the output and reasoning prices;
//   - an agentic task: max_turns replies, each sending the conversation so
//     far again (the prompt, then every earlier reply at its cap);
//   - a suite's warm-up: one request of providers.WarmupPrompt, its
//     answer at providers.WarmupMaxTokens;
//   - llm_judge requests are not projected.
const (
	BytesPerToken       = 4
	AssumedOutputTokens = 4096
)

// ProjectionAssumptions is the projection's assumptions, as bench run
// --dry-run states them.
const ProjectionAssumptions = "input = the prompt's bytes / 4 (system, prompt, tools), none cached; output = the cap " +
	"(the prompt's max_tokens, else the entry's, else 4096 assumed) at the higher of the output and reasoning prices; " +
	"an agentic task max_turns replies, each resending the conversation; one warm-up request per suite (16 tokens out); llm_judge requests not counted"

// Projector projects cells' costs from the config's pricing block.
type Projector struct {
	cfg *config.Config
	// caps are the entries' max_tokens by name (0: none).
	caps map[string]int
}

// NewProjector projects the config's cells.
func NewProjector(cfg *config.Config) *Projector {
	pj := &Projector{cfg: cfg, caps: map[string]int{}}
	for i := range cfg.Providers {
		p := &cfg.Providers[i]
		pj.caps[p.Name] = providers.OutputCap(p)
	}
	return pj
}

// Tokens are a cell's projected input and output tokens, and whether its
// output had a cap (else AssumedOutputTokens stands for it).
func (pj *Projector) Tokens(c Cell) (input, output int, capped bool) {
	bytes := len(c.Prompt.System) + len(c.Prompt.Prompt)
	if len(c.Prompt.Tools) > 0 {
		if b, err := json.Marshal(c.Prompt.Tools); err == nil {
			bytes += len(b)
		}
	}
	in := (bytes + BytesPerToken - 1) / BytesPerToken
	out, capped := c.Prompt.MaxTokens, true
	if out <= 0 {
		out = pj.caps[c.Provider.Name]
	}
	if out <= 0 {
		out, capped = AssumedOutputTokens, false
	}
	if c.Prompt.Agentic() {
		t := c.Prompt.MaxTurns
		return t*in + t*(t-1)/2*out, t * out, capped
	}
	return in, out, capped
}

// Cell is the cell's projected cost in USD; ok is false when its model
// has no price (it is then not counted, and said).
func (pj *Projector) Cell(c Cell) (usd float64, ok bool) {
	in, out, _ := pj.Tokens(c)
	return pj.price(c.Provider.Name, c.Model, in, out)
}

// Warmup is the projected cost of a suite's warm-up request, when its
// entry warms up (0 and true otherwise).
func (pj *Projector) Warmup(s Suite) (usd float64, ok bool) {
	p := pj.entry(s.Provider)
	if p == nil || !p.Warmup || s.Cells == 0 {
		return 0, true
	}
	return pj.price(s.Provider, s.Model, (len(providers.WarmupPrompt)+BytesPerToken-1)/BytesPerToken, providers.WarmupMaxTokens)
}

func (pj *Projector) entry(name string) *config.Provider {
	for i := range pj.cfg.Providers {
		if pj.cfg.Providers[i].Name == name {
			return &pj.cfg.Providers[i]
		}
	}
	return nil
}

// price is in input and out output tokens of the model at its price, the
// output at the higher of the output and reasoning prices.
func (pj *Projector) price(provider, model string, in, out int) (float64, bool) {
	p := pj.cfg.Pricing.Lookup(provider, model)
	if p == nil {
		return 0, false
	}
	t := pricing.Tokens{Input: &in, Output: &out}
	if p.Reasoning != nil && p.Output != nil && *p.Reasoning > *p.Output {
		t.Reasoning = &out
	}
	usd, ok, _ := p.Cost(t)
	return usd, ok
}

// Projection is a plan's projected cost.
type Projection struct {
	// Entries are the provider entries with cells, in plan order.
	Entries []EntryCost
	// USD is the priced cells' and warm-ups' sum; Unpriced says whether
	// some model had no price (and is left out of it).
	USD      float64
	Unpriced bool
	// Uncapped are the entries some cell of which has no output cap.
	Uncapped []string
}

// EntryCost is one provider entry's share of a projection.
type EntryCost struct {
	Provider string
	USD      float64
	// Cells and Warmups are what it counts; Unpriced the models without
	// a price, which it does not.
	Cells, Warmups int
	Unpriced       []string
}

// Plan projects the plan's cells and its suites' warm-ups.
func (pj *Projector) Plan(pl *Plan) Projection {
	var pr Projection
	at := map[string]int{}
	entry := func(name string) *EntryCost {
		i, ok := at[name]
		if !ok {
			i = len(pr.Entries)
			at[name] = i
			pr.Entries = append(pr.Entries, EntryCost{Provider: name})
		}
		return &pr.Entries[i]
	}
	unpriced := func(e *EntryCost, model string) {
		pr.Unpriced = true
		if !slices.Contains(e.Unpriced, model) {
			e.Unpriced = append(e.Unpriced, model)
		}
	}
	for _, c := range pl.Cells {
		e := entry(c.Provider.Name)
		usd, ok := pj.Cell(c)
		if !ok {
			unpriced(e, c.Model)
			continue
		}
		if _, _, capped := pj.Tokens(c); !capped && !slices.Contains(pr.Uncapped, e.Provider) {
			pr.Uncapped = append(pr.Uncapped, e.Provider)
		}
		e.USD += usd
		e.Cells++
		pr.USD += usd
	}
	for _, s := range pl.Suites {
		p := pj.entry(s.Provider)
		if p == nil || !p.Warmup || s.Cells == 0 {
			continue
		}
		e := entry(s.Provider)
		usd, ok := pj.Warmup(s)
		if !ok {
			unpriced(e, s.Model)
			continue
		}
		e.USD += usd
		e.Warmups++
		pr.USD += usd
	}
	return pr
}
