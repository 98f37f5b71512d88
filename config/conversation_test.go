package config_test

import (
	"reflect"
	"strings"
	"testing"

	"bench/config"
	"bench/prompts"
	"bench/providers"
)

// prompts.conversations gives one prompt a turn, the same text from the
// same seed, each turn carrying the one before it whole (its history
// grows by a reply and a user turn), and leaves the built-in suite out.
func TestConversationPrompts(t *testing.T) {
	y := "prompts:\n  conversations: {count: 2, system_tokens: 64, turns: 3, user_tokens: 8, output_tokens: 5, seed: 4}\n" + loadProviders
	c1, err := config.Parse("bench.yaml", []byte(y), providers.Kinds)
	if err != nil {
		t.Fatal(err)
	}
	c2, _ := config.Parse("bench.yaml", []byte(y), providers.Kinds)
	other, _ := config.Parse("bench.yaml", []byte(strings.Replace(y, "seed: 4", "seed: 5", 1)), providers.Kinds)
	ps := c1.PromptSet
	if len(ps) != 6 {
		t.Fatalf("%d prompts, want 2 conversations × 3 turns", len(ps))
	}
	for i, p := range ps {
		conv, turn := i/3+1, i%3+1
		if p.ID != prompts.ConversationID(conv, turn) || p.Turn != turn || p.MaxTokens != 5 || len(p.History) != 2*(turn-1) {
			t.Fatalf("prompt %d: %s turn %d max_tokens %d, %d history messages", i, p.ID, p.Turn, p.MaxTokens, len(p.History))
		}
		if p.System != ps[0].System || p.Prompt != ps[(conv-1)*3].Prompt {
			t.Errorf("%s: not the shared prefix and its conversation's first turn", p.ID)
		}
		if turn > 1 {
			prev := ps[i-1]
			for j, m := range prev.History {
				if !reflect.DeepEqual(p.History[j], m) {
					t.Errorf("%s: history %d is not the last turn's", p.ID, j)
				}
			}
			if r := p.History[len(p.History)-2]; r.Role != prompts.RoleAssistant || len(strings.Fields(r.Text)) != 5 {
				t.Errorf("%s: the reply carried is %+v", p.ID, r)
			}
			if u := p.History[len(p.History)-1]; u.Role != prompts.RoleUser || len(strings.Fields(u.Text)) != 8+2 {
				t.Errorf("%s: the user turn is %+v", p.ID, u)
			}
		}
		if p.History == nil && turn > 1 || (turn == 1 && p.History != nil) {
			t.Errorf("%s: history %v", p.ID, p.History)
		}
		if c2.PromptSet[i].Prompt != p.Prompt || (turn > 1 && !reflect.DeepEqual(c2.PromptSet[i].History[0], p.History[0])) {
			t.Errorf("%s: the same seed gave another text", p.ID)
		}
	}
	if ps[0].Prompt == ps[3].Prompt {
		t.Error("two conversations open with the same turn")
	}
	if other.PromptSet[0].System == ps[0].System {
		t.Error("another seed gave the same prefix")
	}
}

// A conversation that does not fit the model's context, and lengths out
// of bounds, are config errors at their line.
func TestConversationErrors(t *testing.T) {
	for _, tc := range []struct{ name, yaml, want string }{
		{"longer than the context", "prompts:\n  conversations:\n    system_tokens: 4000\n    turns: 20\n    user_tokens: 200\n    output_tokens: 300\n    context_tokens: 8192\n",
			"bench.yaml:4: prompts.conversations.turns: the last of 20 turns holds about 14000 tokens with its answer, more than context_tokens (8192): at most 8 turns fit"},
		{"no turns", "prompts:\n  conversations: {turns: 0, user_tokens: 8, output_tokens: 8}\n", "prompts.conversations.turns: must be from 1 to 1000"},
		{"no user turn", "prompts:\n  conversations: {turns: 2, output_tokens: 8}\n", "prompts.conversations.user_tokens: must be from 1 to"},
		{"too many", "prompts:\n  conversations: {count: 20000, turns: 2, user_tokens: 8, output_tokens: 8}\n", "prompts.conversations.count: must be from 1 to 10000"},
		{"unknown key", "prompts:\n  conversations: {turn: 2}\n", `unknown field "turn"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := config.Parse("bench.yaml", []byte(tc.yaml+loadProviders), providers.Kinds)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v\nwant %s", err, tc.want)
			}
		})
	}
}
