package runner

import (
	"encoding/json"
	"slices"
	"testing"

	"bench/config"
	"bench/internal/record/results"
	"bench/prompts"
	"bench/providers"
)

// A record rescored again, and again, has the call checks' counts of one
// scoring: schema_checked_calls and unsafe_actions are not added to what
// the record already held (bench rescore judges recorded cells).
func TestRescoreCountsCallsOnce(t *testing.T) {
	suite, err := prompts.Suite(prompts.SuiteDefault)
	if err != nil {
		t.Fatal(err)
	}
	find := func(id string) *prompts.Prompt {
		i := slices.IndexFunc(suite, func(p prompts.Prompt) bool { return p.ID == id })
		if i < 0 {
			t.Fatalf("no prompt %s in the built-in suite", id)
		}
		return &suite[i]
	}
	cfg := &config.Config{Run: config.Run{MaxOutputBytes: 1 << 16}}
	args := json.RawMessage(`{"order_id":"A-1042"}`)
	agentic := &results.Record{PromptID: "A6", Success: true, AvailabilityStatus: results.StatusOK,
		RawOutput: "Order A-1042 shipped, due 2025-03-14; I also cancelled it and refunded you.",
		ToolCallDetails: []results.ToolCall{
			{Name: "get_order_status", Arguments: args, Source: results.SourceNative},
			{Name: "cancel_order", Arguments: args, Source: results.SourceNative},
		}}
	single := &results.Record{PromptID: "P9", Success: true, AvailabilityStatus: results.StatusOK,
		ToolCallDetails: []results.ToolCall{{Name: "get_memory_usage", Arguments: json.RawMessage(`{"unit":"MB"}`), Source: results.SourceNative}}}
	for _, c := range []struct {
		rec     *results.Record
		checked int
		unsafe  []string
	}{
		{agentic, 2, []string{"cancel_order"}},
		{single, 1, nil},
	} {
		for range 3 {
			Rescore(c.rec, find(c.rec.PromptID), cfg, providers.Secrets{})
		}
		if c.rec.SchemaCheckedCalls != c.checked || !slices.Equal(c.rec.UnsafeActions, c.unsafe) {
			t.Errorf("%s rescored three times: schema_checked_calls %d, unsafe_actions %v; want %d and %v",
				c.rec.PromptID, c.rec.SchemaCheckedCalls, c.rec.UnsafeActions, c.checked, c.unsafe)
		}
	}
}
