package session

import (
	"strings"
	"testing"

	"bench/config"
	"bench/providers"
	"bench/run/plan"
)

// The projection as the dry run prints it: each entry's cells and
// warm-ups at its price, a model without one named and not counted, an
// entry without an output cap said, the budget beside the total; and a
// plan projected past its budget is refused, one within it is not.
func TestProjectionLines(t *testing.T) {
	cfg, err := config.Parse("bench.yaml", []byte(`run: {repetitions: 2}
prompts: {only: [P0]}
providers:
  - name: api
    type: openai_responses
    base_url: http://127.0.0.1:1/v1
    max_tokens: 100
    models: [a]
  - name: local
    type: ollama
    warmup: false
    models: [m, n]
pricing:
  - {model: a, input: 1000, output: 1000}
  - {model: m, input: 0, output: 0}
`), providers.Kinds)
	if err != nil {
		t.Fatal(err)
	}
	pl := plan.New(cfg)
	lines := projectionLines(cfg, pl, 0)
	if len(lines) != 3 || !strings.HasPrefix(lines[0], "  projected cost: api $0.") || !strings.Contains(lines[0], "(2 cells + 1 warm-up); local $0 and unpriced n; in all $0.") ||
		!strings.HasSuffix(lines[0], ", the unpriced models not counted") || lines[2] != "  no output cap (max_tokens) for local: each answer counted at 4096 tokens" {
		t.Errorf("projection:\n%s", strings.Join(lines, "\n"))
	}
	pr := plan.NewProjector(cfg).Plan(pl)
	// api: 2 cells of (P0's bytes / 4 + 100) tokens and a warm-up of
	// (22 bytes / 4 + 16) tokens, at $1000 per million.
	in, out, _ := plan.NewProjector(cfg).Tokens(pl.Cells[0])
	if want := (2*float64(in+out) + float64(6+16)) * 1000 / 1e6; out != 100 || abs(pr.Entries[0].USD-want) > 1e-12 {
		t.Errorf("api projected $%v (%d in, %d out), want $%v", pr.Entries[0].USD, in, out, want)
	}
	over, under := pr.USD*0.9, pr.USD*1.1
	cfg.Run.MaxCostUSD = &over
	if why := overBudget(cfg, pl, 0); !strings.Contains(why, "more than run.max_cost_usd") {
		t.Errorf("over budget: %q", why)
	}
	cfg.Run.MaxCostUSD = &under
	if why := overBudget(cfg, pl, 0); why != "" {
		t.Errorf("within budget: %q", why)
	}
	if why := overBudget(cfg, pl, pr.USD*0.2); why == "" {
		t.Error("what is spent counts")
	}
}

func abs(v float64) float64 {
	if v < 0 {
		return -v
	}
	return v
}
