package plan

import (
	"testing"

	"bench/config"
	"bench/prompts"
	"bench/results"
	"bench/validators"
)

func testConfig(provs []config.Provider, nPrompts, reps int) *config.Config {
	c := &config.Config{Run: config.Run{ID: "t", Concurrency: 1, Repetitions: reps}}
	c.Providers = provs
	for i := 0; i < nPrompts; i++ {
		c.PromptSet = append(c.PromptSet, prompts.Prompt{ID: "P" + string(rune('0'+i)), Name: "p", Prompt: "say OK",
			Validator: &validators.Spec{Type: "noop"}})
	}
	return c
}

func TestPlanWithout(t *testing.T) {
	low := "low"
	cfg := testConfig([]config.Provider{{Name: "a", Type: "ollama", Concurrency: 1, Models: []string{"m1", "m2"}, ThinkingLevels: []*string{nil, &low}}}, 3, 2)
	full := New(cfg)
	if len(full.Cells) != 2*2*3*2 || len(full.Suites) != 4 {
		t.Fatalf("%d cells, %d suites", len(full.Cells), len(full.Suites))
	}
	done := map[results.Key]bool{}
	for _, c := range full.Cells[:7] { // all of suite 0 (6 cells) and one of suite 1
		r := &results.Record{Provider: c.Provider.Name, ProviderType: c.Provider.Type, Model: c.Model, ThinkingLevel: c.ThinkingLevel, PromptID: c.Prompt.ID, Repetition: c.Repetition}
		done[r.Key()] = true
	}
	rest := full.Without(done)
	if len(rest.Cells) != 24-7 || rest.Suites[0].Cells != 0 || rest.Suites[1].Cells != 5 || rest.Suites[2].Cells != 6 {
		t.Errorf("%d cells left, suites %+v", len(rest.Cells), rest.Suites)
	}
	if rest.Cells[0].Key() != full.Cells[7].Key() {
		t.Errorf("order changed: first left is %+v", rest.Cells[0].Key())
	}
}
