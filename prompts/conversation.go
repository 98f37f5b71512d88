package prompts

import (
	"fmt"
	"math/rand/v2"
	"strings"

	"bench/internal/record/results"
	"bench/validators"
)

// Roles of a HistoryMessage.
const (
	RoleUser      = "user"
	RoleAssistant = "assistant"
)

// HistoryMessage is one message of a conversation turn's history after
// the prompt: an earlier reply of the assistant or a later user turn, and
// in a replayed agentic turn (Replay) the calls of a reply and the results
// bench answered (RoleTool).
type HistoryMessage struct {
	Role string `json:"role"`
	Text string `json:"text"`
	// ToolCalls are an assistant reply's calls, ids included.
	ToolCalls []results.ToolCall `json:"tool_calls,omitempty"`
	// CallID and Name are the call a tool message answers; IsError marks
	// an error result.
	CallID  string `json:"call_id,omitempty"`
	Name    string `json:"name,omitempty"`
	IsError bool   `json:"is_error,omitempty"`
}

// ConversationSpec shapes generated multi-turn conversations: a system
// prefix of SystemTokens shared by every conversation, Turns user turns
// of UserTokens each, the assistant's earlier replies of OutputTokens
// carried forward in the history, Conversations of them, the words drawn
// by a generator seeded with Seed.
type ConversationSpec struct {
	SystemTokens, Turns, UserTokens, OutputTokens, Conversations int
	Seed                                                         uint64
}

// TurnTokens is about how many input tokens turn t (from 1) of a
// conversation sends: the system prefix, t user turns and the t-1
// replies before the last.
func (c ConversationSpec) TurnTokens(t int) int {
	return c.SystemTokens + t*c.UserTokens + (t-1)*c.OutputTokens
}

// Conversations are the prompts of the spec's conversations, one a turn,
// conversation by conversation and turn by turn: turn t's prompt is the
// conversation's first user turn, its History the replies and user turns
// up to its own, so each turn's input is the last one's with one reply and
// one user turn added, as an agent's growing context is, and a server's
// prefix cache can serve all of the earlier part. The replies in the
// history are generated, not the model's own (every turn can then be sent
// whenever the load says, without waiting for the one before); the same
// spec gives the same text on every machine. Each prompt's MaxTokens is
// OutputTokens and its validator noop; Conversation and Turn name it.
func Conversations(c ConversationSpec) []Prompt {
	system := fmt.Sprintf("You are a careful assistant in a long session. Read this shared context first: %s",
		words(rand.New(rand.NewPCG(c.Seed, 0)), c.SystemTokens))
	out := make([]Prompt, 0, c.Conversations*c.Turns)
	for conv := 1; conv <= c.Conversations; conv++ {
		var users, replies []string
		for t := 1; t <= c.Turns; t++ {
			rng := rand.New(rand.NewPCG(c.Seed, uint64(conv)<<32|uint64(t)))
			users = append(users, fmt.Sprintf("Turn %d: %s", t, words(rng, c.UserTokens)))
			replies = append(replies, words(rng, c.OutputTokens))
		}
		for t := 1; t <= c.Turns; t++ {
			var hist []HistoryMessage
			for i := 1; i < t; i++ {
				hist = append(hist, HistoryMessage{Role: RoleAssistant, Text: replies[i-1]}, HistoryMessage{Role: RoleUser, Text: users[i]})
			}
			out = append(out, Prompt{
				ID:           ConversationID(conv, t),
				Name:         fmt.Sprintf("conversation %d turn %d", conv, t),
				System:       system,
				Prompt:       users[0],
				History:      hist,
				Conversation: fmt.Sprintf("C%d", conv),
				Turn:         t,
				MaxTokens:    c.OutputTokens,
				Validator:    &validators.Spec{Type: "noop"},
				Source:       "conversations",
			})
		}
	}
	return out
}

// ConversationID names turn t of conversation conv: C<conv>T<t>.
func ConversationID(conv, t int) string { return fmt.Sprintf("C%dT%d", conv, t) }

// words are n of syntheticWords drawn by rng.
func words(rng *rand.Rand, n int) string {
	var b strings.Builder
	b.Grow(6 * n)
	for i := range n {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(syntheticWords[rng.IntN(len(syntheticWords))])
	}
	return b.String()
}
