package main

import (
	"cmp"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"bench/cmd/fakellm/loadserver"
	"bench/internal/record/results"
)

// The Done-when for multi-turn load: generated conversations (a
// shared system prefix of 256 tokens, 4 turns of 32-token user turns, the
// history carried forward) swept by the real bench binary against the
// fake server with a prefix cache, whose prefill costs 0.2 ms a word it
// did not have cached. Each turn's requests carry the history (the
// server saw inputs growing by a reply and a user turn a turn, and
// answered the output length the config asked for); summary.json's
// per-turn figures match the server's own log: the cached tokens bench
// recorded per turn are those the server says it served, the cached
// share is their ratio, and each turn's TTFT median is the server's
// (its first write − when bench wrote the request) within 5 ms or 5 %; summary.md has the turns'
// table.
func TestLoadConversationTurns(t *testing.T) {
	serialTest(t)
	svc := loadserver.Service{TTFT: 20 * time.Millisecond, PerInputToken: 200 * time.Microsecond, Gap: 2 * time.Millisecond, Tokens: 16, PrefixCache: true}
	srv := loadserver.New(svc, nil)
	url := serveLoopback(t, srv)
	const convs, turns, out = 3, 4, 12
	cfg := fmt.Sprintf(`run: {warmup: false, timeout: 30s, concurrency: 1}
prompts:
  conversations: {count: %d, system_tokens: 256, turns: %d, user_tokens: 32, output_tokens: %d, seed: 7}
providers:
  - name: fake
    type: ollama_openai
    base_url: %s/v1
    models: [fake]
    concurrency: 1
`, convs, turns, out, url)
	code, stdout, stderr, recs, dir := runBench(t, cfg)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	if len(recs) != convs*turns {
		t.Fatalf("%d records, want %d", len(recs), convs*turns)
	}
	log := srv.Log()
	if len(log) != convs*turns {
		t.Fatalf("the server saw %d requests, want %d", len(log), convs*turns)
	}
	// A turn's input length is the same in every conversation: bench's
	// records name the turn, the server's log the words it was sent.
	words := map[int]int{}
	for _, r := range recs {
		if r.ConversationTurn < 1 || r.Conversation == "" || r.InputTokens == nil {
			t.Fatalf("record %s: conversation %q turn %d input %v", r.PromptID, r.Conversation, r.ConversationTurn, r.InputTokens)
		}
		if w, ok := words[r.ConversationTurn]; ok && w != *r.InputTokens {
			t.Fatalf("turn %d sent %d and %d tokens", r.ConversationTurn, w, *r.InputTokens)
		}
		words[r.ConversationTurn] = *r.InputTokens
		if r.OutputTokens == nil || *r.OutputTokens != out {
			t.Errorf("%s: %v output tokens, want the %d asked", r.PromptID, r.OutputTokens, out)
		}
	}
	for tn := 2; tn <= turns; tn++ {
		// One reply (12 words) and one user turn ("Turn N:" and 32 words).
		if d := words[tn] - words[tn-1]; d != out+32+2 {
			t.Errorf("turn %d sends %d words more than turn %d, want %d (the history carried forward)", tn, d, tn-1, out+32+2)
		}
	}
	sum := readSummary(t, filepath.Join(dir, "runs", "e2e"))
	g := groupOf(t, sum, "fake")
	if len(g.ConversationTurns) != turns {
		t.Fatalf("%d turns in summary.json", len(g.ConversationTurns))
	}
	// The server's first write from the moment bench wrote the request
	// (one machine, one wall clock; the server's own arrival stamp comes
	// after it has read and parsed the request), pairing cells and entries
	// in the order bench wrote them and the server had them (one stream).
	written := make([]float64, 0, len(recs))
	for _, r := range recs {
		for _, e := range r.Timeline {
			if e.Event == results.EventRequestWritten {
				written = append(written, float64(r.StartedAtUS)*1000+e.AtMS*1e6)
				break
			}
		}
	}
	slices.Sort(written)
	slices.SortFunc(log, func(a, b loadserver.Entry) int { return cmp.Compare(a.ArrivalNS, b.ArrivalNS) })
	if len(written) != len(log) {
		t.Fatalf("%d cells wrote their request, the server had %d", len(written), len(log))
	}
	for _, ct := range g.ConversationTurns {
		var ttft []float64
		cached, input, n := 0, 0, 0
		for i, e := range log {
			if e.InputWords == words[ct.Turn] {
				n++
				cached += e.CachedTokens
				input += e.InputWords
				ttft = append(ttft, (float64(e.FirstNS)-written[i])/1e6)
			}
		}
		if n != convs || ct.N != convs || ct.NSuccess != convs {
			t.Errorf("turn %d: %d cells, %d answered, the server saw %d", ct.Turn, ct.N, ct.NSuccess, n)
			continue
		}
		if ct.CachedInputTokens == nil || ct.InputTokens == nil || *ct.CachedInputTokens != int64(cached) || *ct.InputTokens != int64(input) {
			t.Errorf("turn %d: bench recorded %v of %v input tokens cached, the server's log %d of %d", ct.Turn, ct.CachedInputTokens, ct.InputTokens, cached, input)
		}
		if ct.CachedInputShare == nil || math.Abs(*ct.CachedInputShare-float64(cached)/float64(input)) > 0.001 {
			t.Errorf("turn %d: cached share %v, the server's %v", ct.Turn, show(ct.CachedInputShare), float64(cached)/float64(input))
		}
		want := p50(ttft)
		if ct.TTFTMS.P50 == nil || math.Abs(*ct.TTFTMS.P50-want) > max(5, 0.05*want) {
			t.Errorf("turn %d: TTFT p50 %v ms, the server's %v ms", ct.Turn, show(ct.TTFTMS.P50), want)
		}
		t.Logf("turn %d: %d input tokens a cell, cached share %v (server %d of %d), TTFT p50 %v ms (server %.2f ms)",
			ct.Turn, words[ct.Turn], show(ct.CachedInputShare), cached, input, show(ct.TTFTMS.P50), want)
	}
	// Later turns hit the cache for all but their new part: their share
	// is well above the first turn's.
	first, last := g.ConversationTurns[0], g.ConversationTurns[turns-1]
	if *last.CachedInputShare <= *first.CachedInputShare {
		t.Errorf("cached share: turn 1 %v, turn %d %v", *first.CachedInputShare, turns, *last.CachedInputShare)
	}
	md, err := os.ReadFile(filepath.Join(dir, "runs", "e2e", "summary.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(md), "## Conversation turns") || !slices.ContainsFunc(strings.Split(string(md), "\n"), func(l string) bool { return strings.HasPrefix(l, "| fake | fake | – | 4 | 3 |") }) {
		t.Errorf("summary.md has no turns table:\n%s", md)
	}
}
