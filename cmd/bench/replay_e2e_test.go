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
	"bench/internal/exitcode"
	"bench/internal/record/results"
	"bench/internal/testpeer/testmodel"
)

// replayTask is an agentic task a scripted model does in three turns:
// two lookups, then the answer.
const replayTask = `prompts:
  - id: TRIP
    name: trip
    system: "You are a travel assistant with tools. Use them before you answer."
    prompt: "Find booking LX-1 and tell me the hotel and the weather there. tripstart"
    max_turns: 4
    tools:
      - name: get_booking
        description: "A booking by id."
        parameters: {type: object, properties: {id: {type: string}}, required: [id]}
        rules: [{args: {id: LX-1}, result: "Booking LX-1: two nights at hotel Casa do Rio in Lisbon, check-in from three. bookres"}]
      - name: get_weather
        description: "Today's weather in a city."
        parameters: {type: object, properties: {city: {type: string}}, required: [city]}
        rules: [{args: {city: Lisbon}, result: "Lisbon: sunny and warm all day with a light breeze. wxres"}]
    validator: {type: regex_fullmatch, pattern: "(?s).*Casa.*"}
`

// A recorded agentic run replayed as load: bench records a real agentic
// run (a scripted model on the test Ollama, 2 repetitions of a 3-turn
// task), then replays its cells against the fake server with its prefix
// cache, once at the recorded pacing (load.arrival: recorded) and once at
// a chosen rate. Each replayed request is the one the model saw at that
// turn (the server's log counts its messages, tool calls, tool results and
// words, and they match what results.jsonl recorded), each turn is sent
// at its recorded time, and the per-turn figures are the server's: its
// cached tokens exactly, its TTFT within 5 ms or 5 %.
func TestLoadReplayAgenticRun(t *testing.T) {
	serialTest(t)
	s := needServer(t)
	script := testmodel.Script{
		"tripstart":        toolCall(`{"name": "get_booking", "arguments": {"id": "LX-1"}}`),
		"bookres[/RESULT]": toolCall(`{"name": "get_weather", "arguments": {"city": "Lisbon"}}`),
		"wxres[/RESULT]":   {"Hotel Casa do Rio; sunny in Lisbon."},
	}
	if err := s.Create(bgctx(), "replayer", script); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "prompts.yaml"), []byte(replayTask), 0o644)
	os.WriteFile(filepath.Join(dir, "record.yaml"), []byte(fmt.Sprintf(`run: {concurrency: 1, repetitions: 2, timeout: 60s}
prompts: {files: [prompts.yaml]}
providers:
  - type: ollama
    base_url: %s
    models: [replayer]
`, s.URL())), 0o644)
	if code, out, errOut := benchIn(t, dir, nil, "run", "--config", "record.yaml", "--run-id", "rec", "--quiet"); code != 0 {
		t.Fatalf("recording run exit %d\n%s%s", code, out, errOut)
	}
	rec := readRecords(t, filepath.Join(dir, "runs", "rec", "results.jsonl"))
	if len(rec) != 2 {
		t.Fatalf("%d recorded cells", len(rec))
	}
	// What each recorded turn sent: its send time and its words (the
	// system message, the prompt, then every earlier reply and result).
	type sent struct {
		at                         float64 // ms since the epoch
		words, messages, toolCalls int
	}
	var want []sent
	turnWords := map[int]int{}
	for _, r := range rec {
		if !r.Success || len(r.TurnDetails) != 3 {
			t.Fatalf("recorded cell: success %v, %d turns (%v)", r.Success, len(r.TurnDetails), r.ErrorMessage)
		}
		words := len(strings.Fields("You are a travel assistant with tools. Use them before you answer.")) +
			len(strings.Fields("Find booking LX-1 and tell me the hotel and the weather there. tripstart"))
		messages, calls := 2, 0
		// A sweep's cell records its start in ms (started_at_us is a load
		// cell's); the turns are µs-precise from it.
		start := float64(r.StartedAtMS)
		if r.StartedAtUS != 0 {
			start = float64(r.StartedAtUS) / 1000
		}
		for i, turn := range r.TurnDetails {
			want = append(want, sent{start + turn.StartMS, words, messages, calls})
			turnWords[i+1] = words
			words += len(strings.Fields(turn.Text))
			messages++
			for _, c := range turn.Calls {
				words += len(strings.Fields(c.Result))
				messages++
				calls++
			}
		}
	}
	slices.SortStableFunc(want, func(a, b sent) int { return cmp.Compare(a.at, b.at) })

	svc := loadserver.Service{TTFT: 20 * time.Millisecond, PerInputToken: 200 * time.Microsecond, Gap: 2 * time.Millisecond, Tokens: 8, PrefixCache: true}
	for _, pacing := range []struct{ id, load, stage string }{
		{"recorded", "{arrival: recorded}", "recorded"},
		{"rate", "{rate: 20, arrival: constant}", "rate=20"},
	} {
		srv := loadserver.New(svc, nil)
		url := serveLoopback(t, srv)
		os.WriteFile(filepath.Join(dir, pacing.id+".yaml"), []byte(fmt.Sprintf(`run: {warmup: false, timeout: 30s}
prompts:
  replay: {run: runs/rec}
load: %s
providers:
  - name: fake
    type: ollama_openai
    base_url: %s/v1
    models: [fake]
`, pacing.load, url)), 0o644)
		if code, out, errOut := benchIn(t, dir, nil, "run", "--config", pacing.id+".yaml", "--run-id", pacing.id, "--quiet"); code != 0 {
			t.Fatalf("%s replay exit %d\n%s%s", pacing.id, code, out, errOut)
		}
		runDir := filepath.Join(dir, "runs", pacing.id)
		recs := readRecords(t, filepath.Join(runDir, "results.jsonl"))
		log := srv.Log()
		if len(recs) != len(want) || len(log) != len(want) {
			t.Fatalf("%s: %d records and %d requests at the server, want %d", pacing.id, len(recs), len(log), len(want))
		}
		// Each recorded turn's request, as the server counted it (a turn's
		// is the same in both cells: the same replies and results).
		byWords := map[int]loadserver.Entry{}
		for _, e := range log {
			byWords[e.InputWords] = e
		}
		for i, w := range want {
			e, ok := byWords[w.words]
			if !ok || e.Messages != w.messages || e.ToolCalls != w.toolCalls || e.ToolResults != w.toolCalls {
				t.Errorf("%s: turn %d sent %d words in %d messages with %d calls; the server had %+v", pacing.id, i, w.words, w.messages, w.toolCalls, e)
			}
		}
		turns := map[int]int{}
		for _, r := range recs {
			if r.Stage != pacing.stage || r.Conversation == "" || r.ConversationTurn < 1 || !r.Success {
				t.Fatalf("%s: %s stage %q conversation %q turn %d success %v (%v)", pacing.id, r.PromptID, r.Stage, r.Conversation, r.ConversationTurn, r.Success, r.ErrorMessage)
			}
			turns[r.ConversationTurn]++
			if r.InputTokens == nil || *r.InputTokens != turnWords[r.ConversationTurn] {
				t.Errorf("%s: %s (turn %d) sent %v tokens, the recorded turn %d words", pacing.id, r.PromptID, r.ConversationTurn, r.InputTokens, turnWords[r.ConversationTurn])
			}
		}
		if turns[1] != 2 || turns[2] != 2 || turns[3] != 2 {
			t.Errorf("%s: turns %v, want 2 of each of 3", pacing.id, turns)
		}
		if pacing.id == "recorded" {
			// Each replayed request was due when the recorded run sent
			// its turn, from the first: the think time kept.
			slices.SortFunc(recs, func(a, b results.Record) int { return cmp.Compare(*a.ScheduledAtMS, *b.ScheduledAtMS) })
			for i, r := range recs {
				if d := *r.ScheduledAtMS - (want[i].at - want[0].at); math.Abs(d) > 0.01 {
					t.Errorf("replayed turn %s due at %.3f ms, recorded at %.3f ms", r.PromptID, *r.ScheduledAtMS, want[i].at-want[0].at)
				}
			}
		}
		sum := readSummary(t, runDir)
		g := groupOf(t, sum, "fake")
		if len(g.ConversationTurns) != 3 {
			t.Fatalf("%s: %d turns in summary.json", pacing.id, len(g.ConversationTurns))
		}
		busy := groupBusy(t, runDir, g)
		for _, ct := range g.ConversationTurns {
			var cached, input int
			var ttft []float64
			for _, e := range log {
				if e.InputWords == turnWords[ct.Turn] {
					cached += e.CachedTokens
					input += e.InputWords
					ttft = append(ttft, e.TTFTMS())
				}
			}
			if ct.N != 2 || ct.CachedInputTokens == nil || *ct.CachedInputTokens != int64(cached) || ct.InputTokens == nil || *ct.InputTokens != int64(input) {
				t.Errorf("%s turn %d: n %d, bench %v of %v input tokens cached, the server's log %d of %d", pacing.id, ct.Turn, ct.N, ct.CachedInputTokens, ct.InputTokens, cached, input)
			}
			want := p50(ttft)
			if !busy && (ct.TTFTMS.P50 == nil || math.Abs(*ct.TTFTMS.P50-want) > max(5, 0.05*want)) {
				t.Errorf("%s turn %d: TTFT p50 %v ms, the server's %.2f ms", pacing.id, ct.Turn, show(ct.TTFTMS.P50), want)
			}
			t.Logf("%s turn %d: %v input tokens, cached %v (server %d of %d), TTFT p50 %v ms (server %.2f ms)",
				pacing.id, ct.Turn, show(ptrFloat(ct.InputTokens)), show(ct.CachedInputShare), cached, input, show(ct.TTFTMS.P50), want)
		}
		// Later turns find the earlier ones in the cache.
		if first, last := g.ConversationTurns[0], g.ConversationTurns[2]; *last.CachedInputShare <= *first.CachedInputShare {
			t.Errorf("%s: cached share turn 1 %v, turn 3 %v", pacing.id, *first.CachedInputShare, *last.CachedInputShare)
		}
	}

	// Bad input: a run with no agentic cells (the replay's own), a
	// directory that is no run, arrival: recorded with a rate or without
	// replayed prompts. Each is a config error at its line.
	bad := []struct{ name, yaml, want string }{
		{"no agentic cells", "prompts:\n  replay: {run: runs/rate}\n", "bad.yaml:2: prompts.replay.run: runs/rate has no agentic cells"},
		{"no run", "prompts:\n  replay:\n    run: nowhere\n", "bad.yaml:3: prompts.replay.run: nowhere has no config.json"},
		{"recorded with a rate", "prompts:\n  replay: {run: runs/rec}\nload: {arrival: recorded, rate: 5}\n", "bad.yaml:3: load.rate: arrival: recorded sends each replayed turn when the recorded run sent it"},
		{"recorded without replay", "prompts:\n  files: [prompts.yaml]\nload: {arrival: recorded}\n", `bad.yaml:3: load.arrival: recorded needs every prompt to be a replayed turn (prompts.replay), and "TRIP" is not`},
	}
	for _, b := range bad {
		os.WriteFile(filepath.Join(dir, "bad.yaml"), []byte(b.yaml+"providers:\n  - {type: ollama_openai, base_url: http://127.0.0.1:9/v1, models: [m]}\n"), 0o644)
		code, out, errOut := benchIn(t, dir, nil, "run", "--config", "bad.yaml", "--run-id", "bad", "--quiet")
		if code != exitcode.Usage || !strings.Contains(errOut, b.want) {
			t.Errorf("%s: exit %d, want %d with %q\n%s%s", b.name, code, exitcode.Usage, b.want, out, errOut)
		}
	}
}

func ptrFloat(n *int64) *float64 {
	if n == nil {
		return nil
	}
	f := float64(*n)
	return &f
}
