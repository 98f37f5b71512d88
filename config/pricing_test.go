package config_test

import (
	"fmt"
	"strings"
	"testing"

	"bench/config"
	"bench/providers"
)

const pricedProviders = `providers:
  - name: hosted
    type: openai_responses
    base_url: http://127.0.0.1:1/v1
    api_key_env: BENCH_TEST_KEY
    models: [gpt-a, gpt-b]
  - type: ollama
    models: [qwen3:4b]
`

// A complete pricing block loads, every kind of entry, and config.json
// records it.
func TestPricingLoads(t *testing.T) {
	c, err := config.Parse("bench.yaml", []byte(pricedProviders+`pricing:
  - model: gpt-a
    input: 2.5
    cached_input: 1.25
    output: 10
    reasoning: 10
  - provider: hosted
    model: gpt-b
    input: 0.4
    output: 1.6
  - provider: ollama
    input: 0
    output: 0
`), providers.Kinds)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Pricing) != 3 {
		t.Fatalf("pricing %+v", c.Pricing)
	}
	if p := c.Pricing.Lookup("hosted", "gpt-a"); p == nil || *p.Input != 2.5 || *p.CachedInput != 1.25 {
		t.Errorf("hosted/gpt-a priced %+v", p)
	}
	if p := c.Pricing.Lookup("ollama", "qwen3:4b"); p == nil || *p.Output != 0 {
		t.Errorf("ollama/qwen3:4b priced %+v", p)
	}
}

// Bad prices are config errors at their file:line: negative, not a
// number, a model or provider the config does not have, a missing price,
// a duplicate.
func TestPricingErrors(t *testing.T) {
	for _, c := range []struct{ name, block, want string }{
		{"negative", "pricing:\n  - model: gpt-a\n    input: -1\n    output: 2\n", "bench.yaml:11: pricing[0].input: -1 is negative"},
		{"not a number", "pricing:\n  - model: gpt-a\n    input: 1\n    output: cheap\n", "bench.yaml:12: pricing[0].output: wrong type: got string cheap, want a number"},
		{"unknown model", "pricing:\n  - model: gpt-z\n    input: 1\n    output: 2\n", "bench.yaml:10: pricing[0].model: \"gpt-z\" is not a model of any provider entry"},
		{"unknown provider", "pricing:\n  - provider: azure\n    input: 1\n    output: 2\n", "bench.yaml:10: pricing[0].provider: \"azure\" is not the name of a provider entry"},
		{"model of another entry", "pricing:\n  - provider: ollama\n    model: gpt-a\n    input: 1\n    output: 2\n", "bench.yaml:11: pricing[0].model: \"gpt-a\" is not a model of provider entry \"ollama\""},
		{"missing output", "pricing:\n  - model: gpt-a\n    input: 1\n", "bench.yaml:10: pricing[0].output: missing"},
		{"names nothing", "pricing:\n  - input: 1\n    output: 2\n", "bench.yaml:10: pricing[0]: names neither a model nor a provider entry"},
		{"duplicate", "pricing:\n  - model: gpt-a\n    input: 1\n    output: 2\n  - model: gpt-a\n    input: 1\n    output: 3\n", "bench.yaml:13: pricing[1]: prices the same provider and model as pricing[0]"},
		{"unknown key", "pricing:\n  - model: gpt-a\n    input: 1\n    outptu: 2\n", "bench.yaml:12: pricing[0].outptu: unknown field \"outptu\" (did you mean \"output\"?)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := config.Parse("bench.yaml", []byte(pricedProviders+c.block), providers.Kinds)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error\n%v\nwant %s", err, c.want)
			}
		})
	}
}

// A budget: more than 0, given in bench.yaml or by --max-cost (whose
// error names the flag and the key), and a price for every model it pays
// for (the error at the model's line: one without a price is never
// counted as free).
func TestBudget(t *testing.T) {
	priced := "pricing:\n  - model: gpt-a\n    input: 1\n    output: 2\n  - model: gpt-b\n    input: 1\n    output: 2\n  - provider: ollama\n    input: 0\n    output: 0\n"
	c, err := config.Parse("bench.yaml", []byte("run: {max_cost_usd: 2.5}\n"+pricedProviders+priced), providers.Kinds)
	if err != nil || *c.Run.MaxCostUSD != 2.5 {
		t.Fatalf("err %v", err)
	}
	for _, tc := range []struct{ name, run, block, want string }{
		{"zero", "run: {max_cost_usd: 0}\n", priced, "bench.yaml:1: run.max_cost_usd: 0: must be more than 0 USD"},
		{"negative", "run: {max_cost_usd: -3}\n", priced, "bench.yaml:1: run.max_cost_usd: -3: must be more than 0 USD"},
		{"not a number", "run: {max_cost_usd: lots}\n", priced, "bench.yaml:1: run.max_cost_usd: wrong type"},
		{"a model without a price", "run: {max_cost_usd: 1}\n", "pricing:\n  - model: gpt-a\n    input: 1\n    output: 2\n",
			"bench.yaml:7: providers[0].models[1]: \"gpt-b\" of \"hosted\" has no price in the pricing block, and run.max_cost_usd cannot count it"},
		{"no pricing at all", "run: {max_cost_usd: 1}\n", "", "bench.yaml:9: providers[1].models[0]: \"qwen3:4b\" of \"ollama\" has no price"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := config.Parse("bench.yaml", []byte(tc.run+pricedProviders+tc.block), providers.Kinds)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error\n%v\nwant %s", err, tc.want)
			}
		})
	}
	path := writeConfig(t, pricedProviders+priced)
	for _, v := range []float64{0, -1} {
		_, err := config.LoadWith(path, providers.Kinds, &config.Overrides{MaxCost: &v})
		if want := fmt.Sprintf("--max-cost %v: run.max_cost_usd: %v: must be more than 0 USD", v, v); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("--max-cost %v: error %v, want %q", v, err, want)
		}
	}
	five := 5.0
	if c, err := config.LoadWith(path, providers.Kinds, &config.Overrides{MaxCost: &five}); err != nil || *c.Run.MaxCostUSD != 5 {
		t.Errorf("--max-cost 5: %v", err)
	}
}
