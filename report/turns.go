package report

import (
	"fmt"
	"slices"
	"strings"

	"bench/internal/format"
	"bench/internal/record/pricing"
	"bench/internal/record/results"
)

// ConversationTurn is a group's figures for one turn of its generated
// conversations (prompts.conversations), over every conversation: how
// TTFT grows with the history, and how much of it the server's prefix
// cache served.
type ConversationTurn struct {
	Turn     int `json:"turn"`
	N        int `json:"n"`
	NSuccess int `json:"n_success"`
	// TTFTMS and E2EMS are over the turn's answered cells that count for
	// speed (no cold start, no warm-up stage).
	TTFTMS Stats `json:"ttft_ms"`
	E2EMS  Stats `json:"e2e_ms"`
	// InputTokens and CachedInputTokens are the answered cells' sums as
	// the server reported them (nil when none reported one, or the sum
	// overflowed); CachedInputShare their ratio, over the cells whose
	// server reported the cache at all (nil when none did).
	InputTokens       *int64   `json:"input_tokens"`
	CachedInputTokens *int64   `json:"cached_input_tokens"`
	CachedInputShare  *float64 `json:"cached_input_share"`
}

// turnAcc collects one turn's cells.
type turnAcc struct {
	n, ok                   int
	ttft, e2e               exact
	in, cached, cacheableIn pricing.Count
}

// addTurn counts a record of a conversation turn into its group's turns.
func addTurn(turns map[int]*turnAcc, r *results.Record, success, speed bool) map[int]*turnAcc {
	if r.ConversationTurn <= 0 || !counted(r) {
		return turns
	}
	if turns == nil {
		turns = map[int]*turnAcc{}
	}
	t := turns[r.ConversationTurn]
	if t == nil {
		t = &turnAcc{}
		turns[r.ConversationTurn] = t
	}
	t.n++
	if !success {
		return turns
	}
	t.ok++
	if speed {
		t.e2e.Add(float64(r.E2EMS))
		if r.TTFTMS != nil {
			t.ttft.Add(float64(*r.TTFTMS))
		}
	}
	t.in.AddPtr(r.InputTokens)
	if r.InputTokens != nil && r.CachedInputTokens != nil {
		t.cached.AddPtr(r.CachedInputTokens)
		t.cacheableIn.AddPtr(r.InputTokens)
	}
	return turns
}

// finishTurns is the turns' figures, turn by turn.
func finishTurns(turns map[int]*turnAcc) []*ConversationTurn {
	if len(turns) == 0 {
		return nil
	}
	out := make([]*ConversationTurn, 0, len(turns))
	for n, t := range turns {
		ct := &ConversationTurn{Turn: n, N: t.n, NSuccess: t.ok, TTFTMS: t.ttft.Stats(), E2EMS: t.e2e.Stats(),
			InputTokens: t.in.Total(), CachedInputTokens: t.cached.Total()}
		if c, ok := t.cached.Sum(); ok {
			if in, ok := t.cacheableIn.Sum(); ok && in > 0 {
				ct.CachedInputShare = round(float64(c) / float64(in))
			}
		}
		out = append(out, ct)
	}
	slices.SortFunc(out, func(a, b *ConversationTurn) int { return a.Turn - b.Turn })
	return out
}

// writeTurns renders the per-turn figures of generated conversations.
func writeTurns(b *strings.Builder, s *Summary) {
	any := false
	for _, g := range s.Groups {
		any = any || len(g.ConversationTurns) > 0
	}
	if !any {
		return
	}
	b.WriteString("## Conversation turns\n\n")
	b.WriteString("Per turn of the generated conversations (prompts.conversations), over every conversation: each turn sends the shared prefix and the history so far, so TTFT follows what the server's prefix cache did not hold. Cached is the share of the turn's input tokens the server reported as read from its cache.\n\n")
	b.WriteString("| provider | model | thinking | turn | n | TTFT p50 | TTFT p95 | e2e p50 | input tokens | cached |\n|---|---|---|--:|--:|--:|--:|--:|--:|--:|\n")
	for _, g := range ranked(s) {
		for _, t := range g.ConversationTurns {
			cached := "n/a"
			if t.CachedInputShare != nil {
				v := 100 * *t.CachedInputShare
				cached = format.Pct(&v)
			}
			in := "n/a"
			if t.InputTokens != nil {
				in = fmt.Sprint(*t.InputTokens)
			}
			fmt.Fprintf(b, "| %s | %s | %s | %d | %d | %s | %s | %s | %s | %s |\n", md(g.Provider), md(g.Model), level(g.ThinkingLevel),
				t.Turn, t.N, msStr(t.TTFTMS.P50), msStr(t.TTFTMS.P95), msStr(t.E2EMS.P50), in, cached)
		}
	}
	b.WriteString("\n")
}
