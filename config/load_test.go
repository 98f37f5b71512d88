package config_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"bench/config"
	"bench/providers"
)

const loadProviders = "providers:\n  - type: ollama_openai\n    models: [m]\n"

// A load block, an SLO and synthetic prompts decode with their defaults,
// and an entry's own block replaces the run-wide one.
func TestLoadBlock(t *testing.T) {
	c, err := config.Parse("bench.yaml", []byte(`load:
  sweep: {rate: [2, 4.5]}
  arrival: gamma
  requests: 20
  warmup: 3
slo:
  ttft_ms: 200
  itl_ms: {p99: 50, p50: 20}
prompts:
  synthetic: {input_tokens: [128, 1024], output_tokens: 32}
providers:
  - type: ollama_openai
    models: [m]
  - name: closed
    type: ollama_openai
    models: [m]
    load:
      sweep: {concurrency: [1, 2, 4, 8]}
`), providers.Kinds)
	if err != nil {
		t.Fatal(err)
	}
	l := c.Providers[0].Load
	if l != c.Load || !l.Open() || l.Arrival != "gamma" || l.Burstiness != 1 || l.Seed != 1 || l.StopErrorRate != 0.5 ||
		time.Duration(l.StageTimeout) != 10*time.Minute {
		t.Errorf("run-wide block = %+v", l)
	}
	if own := c.Providers[1].Load; own == c.Load || own.Open() || len(own.Sweep.Concurrency) != 4 {
		t.Errorf("entry's block = %+v", own)
	}
	if *c.SLO.TTFTMS.PerRequest != 200 || c.SLO.ITLMS.Percentiles[99] != 50 || c.SLO.ITLMS.Percentiles[50] != 20 {
		t.Errorf("slo = %+v", c.SLO)
	}
	if len(c.PromptSet) != 2 || c.PromptSet[0].ID != "S128x32" || c.PromptSet[1].MaxTokens != 32 {
		t.Errorf("prompts = %d, first %q", len(c.PromptSet), c.PromptSet[0].ID)
	}
	// 3 warm-up + 2 × 20 cells; 4 levels × 2 prompts.
	if n := c.Cells(); n != 43+8 {
		t.Errorf("cells = %d, want 51", n)
	}
	// config.json reads back the same blocks (a resumed run plans from it).
	b, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"sweep":{"rate":[2,4.5]}`, `"itl_ms":{"p50":20,"p99":50}`, `"ttft_ms":200`, `"sweep":{"concurrency":[1,2,4,8]}`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("config.json lacks %s:\n%s", want, b)
		}
	}
}

// A search decodes with its defaults, runs open loop (rate) with a probe
// of 32 streams, and plans max_stages stages; config.json keeps it.
func TestSearchBlock(t *testing.T) {
	c, err := config.Parse("bench.yaml", []byte("slo: {ttft_ms: 50}\nload:\n  requests: 100\n  warmup: 4\n  search: {rate: auto}\n"+loadProviders), providers.Kinds)
	if err != nil {
		t.Fatal(err)
	}
	l := c.Load
	if s := l.Search; s == nil || !s.Probe() || s.Attainment != 0.95 || s.Confidence != 0.95 || s.Tolerance != 0.05 || s.MaxStages != 8 ||
		!l.Open() || !l.Staged() || l.Concurrency != 32 || l.Arrival != "poisson" {
		t.Fatalf("search block = %+v, search %+v", l, l.Search)
	}
	if n := c.Cells(); n != 4+8*100 {
		t.Errorf("cells = %d, want 804", n)
	}
	b, _ := json.Marshal(c)
	if want := `"search":{"rate":"auto","attainment":0.95,"confidence":0.95,"tolerance":0.05,"max_stages":8}`; !strings.Contains(string(b), want) {
		t.Errorf("config.json lacks %s:\n%s", want, b)
	}
	c, err = config.Parse("bench.yaml", []byte("slo: {ttft_ms: 50}\nload:\n  requests: 100\n  search: {concurrency: [1, 64], max_stages: 12}\n"+loadProviders), providers.Kinds)
	if err != nil {
		t.Fatal(err)
	}
	if s := c.Load.Search; c.Load.Open() || s.Probe() || s.Mode() != "concurrency" || s.FirstLevel() != 1 || c.Cells() != 1200 {
		t.Errorf("concurrency search = %+v, %d cells", s, c.Cells())
	}
}

// Synthetic prompts are deterministic and about as long as asked.
func TestSyntheticPrompt(t *testing.T) {
	c1, err := config.Parse("bench.yaml", []byte("prompts:\n  synthetic: {input_tokens: [256], output_tokens: 8}\n"+loadProviders), providers.Kinds)
	if err != nil {
		t.Fatal(err)
	}
	c2, _ := config.Parse("bench.yaml", []byte("prompts:\n  synthetic: {input_tokens: [256], output_tokens: 8}\n"+loadProviders), providers.Kinds)
	p := c1.PromptSet[0]
	if p.Prompt != c2.PromptSet[0].Prompt {
		t.Error("the same lengths gave two texts")
	}
	if n := len(strings.Fields(p.Prompt)); n != 256 {
		t.Errorf("%d words, want 256", n)
	}
}

// Bad load and SLO blocks are config errors at their file and line.
func TestLoadErrors(t *testing.T) {
	for _, tc := range []struct{ name, yaml, want string }{
		{"zero rate", "load:\n  rate: 0\n", "bench.yaml:2: load.rate: must be more than 0"},
		{"negative rate", "load:\n  rate: -3\n", "bench.yaml:2: load.rate: must be more than 0"},
		{"negative sweep rate", "load:\n  sweep:\n    rate: [1, -2]\n", "bench.yaml:3: load.sweep.rate[1]: must be more than 0"},
		{"empty sweep", "load:\n  sweep: {concurrency: []}\n", "bench.yaml:2: load.sweep: has no levels"},
		{"bare list", "load:\n  sweep: [1, 2]\n", "bench.yaml:2: load.sweep: a bare list"},
		{"unknown arrival", "load:\n  rate: 2\n  arrival: bursty\n", `bench.yaml:3: load.arrival: "bursty" is not an arrival shape`},
		{"unknown slo metric", "slo:\n  ttft: 100\n", `bench.yaml:2: slo.ttft: unknown field "ttft"`},
		{"bad percentile", "slo:\n  e2e_ms: {p100: 5}\n", `bench.yaml:2: slo.e2e_ms: "p100" is not a percentile`},
		{"too long a stage", "load:\n  rate: 0.1\n  requests: 100\n  stage_timeout: 5m\n", "bench.yaml:4: load.stage_timeout: a stage at 0.1 requests/s is scheduled over 16m40s, longer than the stage timeout (5m0s)"},
		{"closed duration", "load:\n  sweep: {concurrency: [2]}\n  duration: 30s\n", "bench.yaml:3: load.duration: a closed loop's stages are counted in requests"},
		{"search without slo", "load:\n  requests: 100\n  search: {rate: auto}\n", "bench.yaml:3: load.search: needs an slo: block with a per-request target"},
		{"search on percentiles only", "slo:\n  e2e_ms: {p99: 400}\nload:\n  requests: 100\n  search: {rate: auto}\n", "bench.yaml:5: load.search: needs an slo: block with a per-request target"},
		{"search too small a stage", "slo: {ttft_ms: 50}\nload:\n  requests: 20\n  search: {rate: auto}\n", "bench.yaml:3: load.requests: with 20 requests a stage, even all 20 meeting the SLO give attainment a lower bound of 0.839 (95 % confidence), below the 0.95 asked: no stage could pass; send at least 73 requests a stage"},
		{"search and sweep", "slo: {ttft_ms: 50}\nload:\n  requests: 100\n  sweep: {rate: [1]}\n  search: {rate: auto}\n", "load.search: a search finds its own levels; leave sweep out"},
		{"search bracket", "slo: {ttft_ms: 50}\nload:\n  requests: 100\n  search: {rate: [8, 2]}\n", "bench.yaml:4: load.search.rate: [8, 2] is empty"},
		{"search attainment", "slo: {ttft_ms: 50}\nload:\n  requests: 100\n  search: {attainment: 95}\n", "load.search.attainment: is the share of requests"},
		{"search whole streams", "slo: {ttft_ms: 50}\nload:\n  requests: 100\n  search: {concurrency: [1.5, 8]}\n", "load.search.concurrency: streams are whole numbers"},
		{"search duration", "slo: {ttft_ms: 50}\nload:\n  duration: 10s\n  search: {rate: auto}\n", "load.duration: a search's levels are found while it runs"},
		{"search slow bottom", "slo: {ttft_ms: 50}\nload:\n  requests: 100\n  stage_timeout: 1m\n  search: {rate: [0.5, 8]}\n", "bench.yaml:4: load.stage_timeout: a search stage at its bracket's bottom (0.5 requests/s) is scheduled over 3m20s"},
		{"entry's block", "providers:\n  - type: ollama_openai\n    models: [m]\n    load:\n      rate: 0\n", "bench.yaml:5: providers[0].load.rate: must be more than 0"},
		// Issue 31, items 12 and 19.
		{"stage keys without stages", "load: {concurrency: 2, requests: 20, warmup: 3}\n",
			"bench.yaml:1: load.requests: applies to the stages of a sweep or a rate, and this block has neither (it is a closed loop at its concurrency); for one stage of 2 streams, write sweep: {concurrency: [2]}"},
		{"warm-up without stages", "load: {concurrency: 2, requests: 20, warmup: 3}\n", "bench.yaml:1: load.warmup: applies to the stages of a sweep or a rate"},
		{"stage timeout without stages", "load:\n  stage_timeout: 1m\n", "bench.yaml:2: load.stage_timeout: applies to the stages of a sweep or a rate"},
		{"zero concurrency", "load:\n  concurrency: 0\n", "bench.yaml:2: load.concurrency: must be from 1 to 10000"},
		{"a rate past what a schedule holds", "load:\n  rate: 1e-300\n", "bench.yaml:2: load.stage_timeout: a stage at 1e-300 requests/s is scheduled over 2.5e+301 s, longer than the stage timeout (10m0s)"},
		{"zero burstiness", "load:\n  rate: 2\n  arrival: gamma\n  burstiness: 0\n", "bench.yaml:4: load.burstiness: is gamma's shape: more than 0"},
		{"zero max_concurrency", "load:\n  rate: 2\n  max_concurrency: 0\n", "bench.yaml:3: load.max_concurrency: must be from 1 to 10000"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			y := tc.yaml
			if !strings.Contains(y, "providers:") {
				y += loadProviders
			}
			_, err := config.Parse("bench.yaml", []byte(y), providers.Kinds)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v\nwant %s", err, tc.want)
			}
		})
	}
}
