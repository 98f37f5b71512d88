package runner

import (
	"context"
	"math"
	"testing"

	"bench/config"
	"bench/internal/record/pricing"
	"bench/providers"
	"bench/run/output"
	"bench/run/plan"
)

// Each cell is priced as it is recorded: its tokens at the pricing
// block's price for its provider entry and model; the provider's own cost
// wins; without a price no cost is invented, and a price without tokens
// says why.
func TestCellCost(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	n := func(v int) *int { return &v }
	for _, c := range []struct {
		name          string
		table         pricing.Table
		usage         providers.Usage
		providerCost  *float64
		want          *float64
		source, empty string
	}{
		{"priced", pricing.Table{{Model: "m", Price: pricing.Price{Input: f(2), CachedInput: f(0.5), Output: f(8), Reasoning: f(10)}}},
			providers.Usage{InputTokens: n(1000), CachedInputTokens: n(600), OutputTokens: n(300), ReasoningTokens: n(100)},
			nil, f((400*2 + 600*0.5 + 200*8 + 100*10.0) / 1e6), CostFromPricing, ""},
		{"provider's own", pricing.Table{{Model: "m", Price: pricing.Price{Input: f(2), Output: f(8)}}},
			providers.Usage{InputTokens: n(1000), OutputTokens: n(300)}, f(0.25), f(0.25), CostFromProvider, ""},
		{"no price", nil, providers.Usage{InputTokens: n(1000), OutputTokens: n(300)}, nil, nil, "", ""},
		{"price of another entry", pricing.Table{{Provider: "b", Price: pricing.Price{Input: f(2), Output: f(8)}}},
			providers.Usage{InputTokens: n(1000), OutputTokens: n(300)}, nil, nil, "", ""},
		{"no tokens", pricing.Table{{Provider: "a", Price: pricing.Price{Input: f(2), Output: f(8)}}},
			providers.Usage{OutputTokens: n(300)}, nil, nil, "", pricing.NoTokens},
	} {
		t.Run(c.name, func(t *testing.T) {
			clk := newFakeClock()
			p := &scripted{}
			p.stream = func(ctx context.Context, req providers.Request, emit providers.EmitFunc) (*providers.Response, error) {
				emit(providers.Event{Kind: providers.EventRequestStart})
				emit(providers.Event{Kind: providers.EventText, Text: "OK"})
				return &providers.Response{Text: "OK", Usage: c.usage, CostUSD: c.providerCost}, nil
			}
			cfg := testConfig([]config.Provider{{Name: "a", Type: "ollama", Concurrency: 1, Models: []string{"m"}, ThinkingLevels: []*string{nil}}}, 1, 1, 1)
			cfg.Pricing = c.table
			sink := &memSink{}
			if _, err := Run(context.Background(), Options{Config: cfg, Plan: plan.New(cfg), Clock: clk, Providers: map[string]providers.Provider{"a": p}, Outputs: []output.Output{sink}}); err != nil {
				t.Fatal(err)
			}
			r := sink.recs[0]
			if (r.CostUSD == nil) != (c.want == nil) || (r.CostUSD != nil && math.Abs(*r.CostUSD-*c.want) > 1e-15) ||
				r.CostSource != c.source || r.CostMissing != c.empty {
				t.Errorf("cost %v source %q missing %q; want %v %q %q", deref(r.CostUSD), r.CostSource, r.CostMissing, deref(c.want), c.source, c.empty)
			}
			if c.usage.CachedInputTokens != nil && deref(r.CachedInputTokens) != *c.usage.CachedInputTokens {
				t.Errorf("cached input tokens %v", deref(r.CachedInputTokens))
			}
		})
	}
}
