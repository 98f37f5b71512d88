// Package pricing turns a cell's token counts into US dollars with the
// prices bench.yaml's pricing block gives: no built-in table, so a cost is
// never guessed. A price is per million tokens, of four kinds: input,
// cached input (the part of the input the server read from its prompt
// cache), output and reasoning (the part of the output spent thinking).
//
// Every protocol bench speaks counts cached tokens inside the input tokens
// and reasoning tokens inside the output tokens, and every vendor bills
// reasoning as output and an uncached read as input; so a price without
// cached_input bills the cached tokens as input, one without reasoning
// bills the reasoning tokens as output, and the cost of a cell is
//
//	(input − cached) × input + cached × cached_input
//	  + (output − reasoning) × output + reasoning × reasoning
//
// over one million. A cell whose provider reported no input or no output
// count has no cost (Missing says why), never a partial one; nor one with
// a negative count, or whose cost is past what a number holds. The sums of
// costs and token counts every stage adds up are this package's too
// (sum.go: USD, Count).
//
// Layer: the record (a pure function of a record's counts and a price;
// config decodes the block, the runner prices each cell).
package pricing

import (
	"fmt"
	"math"
)

// PerMillion is the number of tokens a price is for.
const PerMillion = 1_000_000

// Price is what one model costs, in USD per million tokens. Input and
// Output are required (a nil one is a config error); CachedInput and
// Reasoning default to them.
type Price struct {
	Input       *float64 `yaml:"input" json:"input"`
	CachedInput *float64 `yaml:"cached_input" json:"cached_input,omitempty"`
	Output      *float64 `yaml:"output" json:"output"`
	Reasoning   *float64 `yaml:"reasoning" json:"reasoning,omitempty"`
}

// Entry is one entry of the pricing block: the price of a model (in every
// provider entry that serves it), of every model of one provider entry,
// or of one model in one provider entry.
type Entry struct {
	// Provider is a provider entry's name (its type when it has none);
	// "" for every entry serving Model.
	Provider string `yaml:"provider" json:"provider,omitempty"`
	// Model is a model name; "" for every model of Provider.
	Model string `yaml:"model" json:"model,omitempty"`
	Price `yaml:",inline"`
}

// Table is the pricing block, in file order.
type Table []Entry

// Lookup finds the price of model served by the provider entry named
// provider: the entry naming both wins, then one naming the model only,
// then one naming the provider only. nil when none applies.
func (t Table) Lookup(provider, model string) *Price {
	var byModel, byProvider *Price
	for i := range t {
		e := &t[i]
		switch {
		case e.Provider == provider && e.Model == model:
			return &e.Price
		case e.Provider == "" && e.Model == model && byModel == nil:
			byModel = &e.Price
		case e.Model == "" && e.Provider == provider && byProvider == nil:
			byProvider = &e.Price
		}
	}
	if byModel != nil {
		return byModel
	}
	return byProvider
}

// Tokens are a cell's counts as its record has them; nil is "not
// reported". CachedInput is part of Input and Reasoning part of Output.
type Tokens struct {
	Input, CachedInput, Output, Reasoning *int
}

// Reasons a cell has no cost (Cost's second result; summary.json counts
// them per group). NoPrice is not recorded per cell: it is what a cell
// without a cost and without a reason means.
const (
	NoPrice  = "no price for the model in bench.yaml's pricing block"
	NoTokens = "the provider reported no input or output token count"
	// NotRun is a priced cell bench did not send (a budget spent, a load
	// stage's time up).
	NotRun = "not run"
)

// Cost is the cell's cost in USD, or ok false with the reason there is
// none. A count larger than the one it is part of (cached above input,
// reasoning above output) is taken as the whole; a negative count is no
// count (BadTokens: never priced as $0), and a cost past what a number
// holds is none (CostOverflow).
func (p Price) Cost(t Tokens) (usd float64, ok bool, missing string) {
	if p.Input == nil || p.Output == nil {
		return 0, false, NoPrice
	}
	if t.Input == nil || t.Output == nil {
		return 0, false, NoTokens
	}
	for _, n := range []*int{t.Input, t.Output, t.CachedInput, t.Reasoning} {
		if n != nil && *n < 0 {
			return 0, false, BadTokens
		}
	}
	in, out := *t.Input, *t.Output
	cached, reasoning := 0, 0
	if t.CachedInput != nil {
		cached = min(*t.CachedInput, in)
	}
	if t.Reasoning != nil {
		reasoning = min(*t.Reasoning, out)
	}
	cachedPrice, reasoningPrice := *p.Input, *p.Output
	if p.CachedInput != nil {
		cachedPrice = *p.CachedInput
	}
	if p.Reasoning != nil {
		reasoningPrice = *p.Reasoning
	}
	usd = (float64(in-cached)**p.Input + float64(cached)*cachedPrice +
		float64(out-reasoning)**p.Output + float64(reasoning)*reasoningPrice) / PerMillion
	if !ValidCost(usd) {
		return 0, false, CostOverflow
	}
	return usd, true, ""
}

// Check returns the first problem of a price as (key, message), or "" when
// it is usable: input and output present, no price negative.
func (p Price) Check() (key, msg string) {
	for _, f := range []struct {
		key      string
		v        *float64
		required bool
	}{{"input", p.Input, true}, {"cached_input", p.CachedInput, false}, {"output", p.Output, true}, {"reasoning", p.Reasoning, false}} {
		switch {
		case f.v == nil && f.required:
			return f.key, "missing: USD per million " + words(f.key) + " tokens (0 for a free one)"
		case f.v != nil && !(*f.v >= 0):
			return f.key, fmt.Sprintf("%v is negative: a price is USD per million tokens, 0 or more", *f.v)
		case f.v != nil && math.IsInf(*f.v, 1):
			return f.key, "is not a finite number: a price is USD per million tokens"
		}
	}
	return "", ""
}

func words(key string) string {
	if key == "cached_input" {
		return "cached input"
	}
	return key
}
