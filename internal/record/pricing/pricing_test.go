package pricing

import (
	"math"
	"strings"
	"testing"
)

func f(v float64) *float64 { return &v }
func n(v int) *int         { return &v }

// The cost is tokens × prices, each kind at its own price, cached tokens
// out of the input and reasoning out of the output; missing prices fall
// back to input and output; missing counts give no cost.
func TestCost(t *testing.T) {
	full := Price{Input: f(2.5), CachedInput: f(1.25), Output: f(10), Reasoning: f(12)}
	for _, c := range []struct {
		name    string
		p       Price
		tok     Tokens
		want    float64
		ok      bool
		missing string
	}{
		{"plain", Price{Input: f(3), Output: f(15)}, Tokens{Input: n(1000), Output: n(200)}, (1000*3.0 + 200*15.0) / 1e6, true, ""},
		// 10,000 input of which 4,000 cached; 2,000 output of which 500 reasoning.
		{"every kind", full, Tokens{Input: n(10000), CachedInput: n(4000), Output: n(2000), Reasoning: n(500)},
			(6000*2.5 + 4000*1.25 + 1500*10 + 500*12.0) / 1e6, true, ""},
		{"defaults", Price{Input: f(2), Output: f(8)}, Tokens{Input: n(10000), CachedInput: n(4000), Output: n(2000), Reasoning: n(500)},
			(10000*2.0 + 2000*8.0) / 1e6, true, ""},
		{"free", Price{Input: f(0), Output: f(0)}, Tokens{Input: n(5), Output: n(5)}, 0, true, ""},
		{"cached above input", full, Tokens{Input: n(100), CachedInput: n(300), Output: n(0)}, 100 * 1.25 / 1e6, true, ""},
		{"no output count", full, Tokens{Input: n(100)}, 0, false, NoTokens},
		{"no input count", full, Tokens{Output: n(100)}, 0, false, NoTokens},
		{"no price", Price{Input: f(1)}, Tokens{Input: n(1), Output: n(1)}, 0, false, NoPrice},
		// Issue 31, item 16: a negative count is no count, never $0.
		{"negative input", full, Tokens{Input: n(-100), Output: n(10)}, 0, false, BadTokens},
		{"negative reasoning", full, Tokens{Input: n(100), Output: n(10), Reasoning: n(-1)}, 0, false, BadTokens},
		{"past what a number holds", Price{Input: f(math.MaxFloat64), Output: f(math.MaxFloat64)}, Tokens{Input: n(math.MaxInt), Output: n(math.MaxInt)}, 0, false, CostOverflow},
	} {
		got, ok, missing := c.p.Cost(c.tok)
		if ok != c.ok || missing != c.missing || math.Abs(got-c.want) > 1e-15 {
			t.Errorf("%s: cost %v ok %v (%q), want %v ok %v (%q)", c.name, got, ok, missing, c.want, c.ok, c.missing)
		}
	}
}

// The most specific entry wins: provider and model, then model, then
// provider.
func TestLookup(t *testing.T) {
	tab := Table{
		{Provider: "local", Price: Price{Input: f(0), Output: f(0)}},
		{Model: "gpt", Price: Price{Input: f(1), Output: f(2)}},
		{Provider: "azure", Model: "gpt", Price: Price{Input: f(3), Output: f(4)}},
	}
	for _, c := range []struct {
		provider, model string
		want            float64
	}{{"openai", "gpt", 1}, {"azure", "gpt", 3}, {"local", "qwen", 0}, {"local", "gpt", 1}} {
		p := tab.Lookup(c.provider, c.model)
		if p == nil || *p.Input != c.want {
			t.Errorf("%s/%s: %+v, want input %v", c.provider, c.model, p, c.want)
		}
	}
	if p := tab.Lookup("openai", "qwen"); p != nil {
		t.Errorf("openai/qwen priced %+v; nothing applies", p)
	}
}

func TestCheck(t *testing.T) {
	for _, c := range []struct {
		p        Price
		key, has string
	}{
		{Price{Input: f(1), Output: f(2)}, "", ""},
		{Price{Output: f(2)}, "input", "missing"},
		{Price{Input: f(1)}, "output", "missing"},
		{Price{Input: f(1), Output: f(2), CachedInput: f(-0.5)}, "cached_input", "negative"},
		{Price{Input: f(math.NaN()), Output: f(2)}, "input", "negative"},
	} {
		key, msg := c.p.Check()
		if key != c.key || (c.has != "" && !strings.Contains(msg, c.has)) {
			t.Errorf("%+v: %s %q, want %s with %q", c.p, key, msg, c.key, c.has)
		}
	}
}

// The one overflow-safe sum (issue 31, items 3, 11, 16): costs that sum
// past a float64 and counts past an int64 are no total and say so; a
// negative or non-finite value is left out and said; a record's figure
// (Whole) is whole or nil.
func TestSums(t *testing.T) {
	var c USD
	c.Add(1e308)
	c.Add(1e308)
	if c.Total() != nil || c.Whole() != nil || c.Problem() != CostOverflow {
		t.Errorf("1e308 twice: %v %v %q", c.Total(), c.Whole(), c.Problem())
	}
	var d USD
	for _, v := range []float64{0.5, -5, math.Inf(1), math.NaN(), 0.25} {
		d.Add(v)
	}
	if tot := d.Total(); tot == nil || *tot != 0.75 || d.Whole() != nil || d.Problem() != BadCost+": 3 of them left out" {
		t.Errorf("bad costs: %v %v %q", tot, d.Whole(), d.Problem())
	}
	var e USD
	if e.Total() != nil || e.Problem() != "" {
		t.Error("empty sum has a total")
	}
	var k Count
	k.Add(math.MaxInt64)
	k.Add(math.MaxInt64)
	if k.Total() != nil || k.WholeInt() != nil || k.Problem() != TokensOverflow {
		t.Errorf("int64-max twice: %v %q (wrapped to -2 before)", k.Total(), k.Problem())
	}
	var m Count
	m.AddPtr(n(10))
	m.AddPtr(n(-3))
	m.AddPtr(nil)
	if tot := m.Total(); tot == nil || *tot != 10 || m.WholeInt() != nil || m.Problem() != BadTokens+": left out" {
		t.Errorf("a negative count: %v %v %q", tot, m.WholeInt(), m.Problem())
	}
	var w Count
	w.AddPtr(n(4))
	w.AddPtr(n(5))
	if got := w.WholeInt(); got == nil || *got != 9 || w.Problem() != "" {
		t.Errorf("plain counts: %v", got)
	}
}
