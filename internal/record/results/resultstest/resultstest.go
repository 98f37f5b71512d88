// Package resultstest writes large results.jsonl files for the benchmarks
// and size tests of the readers: lines of every field a real run writes
// (the answer as markdown with newlines and quotes, the reasoning, the
// timeline, the inter-token histogram, the judge and its samples, tool
// calls, an agentic cell's turns, check errors, provider metrics, costs,
// a load stage), about 7 KB each, so a million of them is the 7 GB run of
// issue 31.
//
// Layer: test peers (tests and benchmarks only; production code never
// imports it).
package resultstest

import (
	"fmt"
	"math"
	"os"
	"strings"
	"testing"

	"bench/internal/record/results"
)

// Groups and Prompts are how many groups (provider × model × thinking
// level) and prompts a Rich run has.
const (
	Groups  = 12
	Prompts = 20
)

var (
	// answer is a markdown answer of about 2.8 KB: lines, a code block,
	// quotes, a non-ASCII letter or two, as models write them.
	answer = strings.Repeat("## Memory\n\nRun `free -h` to see it; the \"available\" column is what matters.\n\n```sh\nfree -h\nvmstat 1 5\n```\n\n- used: what processes hold\n- buff/cache: reclaimable — the kernel's\n\n", 15)
	// thought is the reasoning, about 1.2 KB.
	thought = strings.Repeat("The user wants memory figures. free(1) reads /proc/meminfo; \"available\" estimates what can be given without swapping.\n", 10)
	reason  = "The answer names free -h and explains the \"available\" column correctly; it runs the command as asked.\n"
	levels  = []*string{nil, ptr("low"), ptr("high")}
)

func ptr[T any](v T) *T { return &v }

// Rich is line i of a Rich run (every field a real run writes): 12 groups,
// 20 prompts (60 cells, their least common multiple, a repetition), every
// cell distinct; every fifth fails its
// check, every fiftieth errors and every fiftieth more is rate limited;
// every tenth is an agentic cell with three turns, half are judged, one in
// 25 has a check error.
func Rich(i int) *results.Record {
	g := i % Groups
	pass := i%5 != 0
	ttft := int64(100 + i%700)
	tps := 20 + float64(i%90)/3
	out := 400 + i%300
	in := 120 + i%40
	status, success := results.StatusOK, true
	var ft, msg *string
	switch i % 50 {
	case 7:
		status, success, ft, msg = results.StatusError, false, ptr(results.FailTimeout), ptr("no complete answer within run.timeout (120s)")
	case 13:
		status, success, ft, msg = results.StatusRateLimited, false, ptr(results.FailHTTP429), ptr("HTTP 429: slow down, retry after 2s")
	}
	start := 1771000000000 + int64(i)*10
	e2e := int64(500 + i%2000)
	r := &results.Record{
		RecordType: results.RecordType, RunID: "bench-7k", Provider: fmt.Sprintf("prov%d", g%3), ProviderType: "ollama_openai",
		Model: fmt.Sprintf("model-%d:7b", g/3), ThinkingLevel: levels[g%3], PromptID: fmt.Sprintf("P%d", i%Prompts),
		PromptName: fmt.Sprintf("prompt_%d", i%Prompts), Repetition: i / 60, AvailabilityStatus: status,
		StartedAtMS: start, EndedAtMS: start + e2e, E2EMS: e2e, TTFTMS: &ttft, Success: success, FailureType: ft,
		ObjectivePass: ptr(pass), InputTokens: &in, OutputTokens: &out, RawOutput: answer, RawOutputBytes: len(answer),
		ParsedOutput: []byte(`{"commands":["free -h","vmstat 1 5"],"ok":true}`),
		ToolCalls:    []string{"run_command"}, ToolCallCount: 1, ErrorMessage: msg,
		TTFOMS: &ttft, TokensPerS: &tps, ReasoningTokens: ptr(180 + i%50), CachedInputTokens: ptr(64),
		CostUSD: ptr(float64(in)*2e-7 + float64(out)*6e-7), CostSource: "pricing", QueueMS: ptr(0.412 + float64(i%7)/10),
		RawOutputTruncated: false, Reasoning: thought, FinishReason: "stop", Chunks: out, RetryWaitMS: 0,
		ToolCallDetails: []results.ToolCall{{Name: "run_command", Arguments: []byte(`{"command":"free -h","timeout_s":10}`), Source: "native", ID: fmt.Sprintf("call_%08x", i), SchemaValid: ptr(true)}},
		ProviderMetrics: map[string]any{"eval_count": out, "eval_duration_ns": 9123456789, "prompt_eval_count": in, "prompt_eval_duration_ns": 81234567, "load_duration_ns": 1234567},
		StartedAtUS:     start*1000 + 417, Category: "shell", TPOTMS: ptr(float64(e2e-ttft) / float64(out-1)), PrefillTokensPerS: ptr(float64(in) / float64(ttft) * 1000),
		Stage: "c=4", StageMode: "concurrency", StageLevel: ptr(4.0), StageStartUS: 1771000000000000, EndedAtUS: (start+e2e)*1000 + 417,
		SentAtMS: ptr(float64(i%1000) * 10.5), SlotWaitMS: ptr(0.0),
	}
	r.Timeline = []results.TimelineEvent{
		{Event: results.EventRequestStart, AtMS: 0}, {Event: results.EventConnected, AtMS: 0.183, Detail: "reused"},
		{Event: results.EventRequestWritten, AtMS: 0.412}, {Event: results.EventFirstByte, AtMS: float64(ttft) - 3.25},
		{Event: results.EventFirstReasoning, AtMS: float64(ttft) - 1.5}, {Event: results.EventFirstText, AtMS: float64(ttft)},
		{Event: results.EventToolCall, AtMS: float64(e2e) - 20.125, Call: 0}, {Event: results.EventEnd, AtMS: float64(e2e)},
	}
	itl := &results.ITL{N: out - 1, P50: 21.387, P95: 34.112, P99: 52.9, Max: 88.004}
	for k := range 36 {
		itl.Hist = append(itl.Hist, int64(1000+k*3+i%5), int64(1+(k*7+i)%23))
	}
	r.ITLMS = itl
	if !pass {
		r.Violation = ptr("expected exactly 4 bullets, got 3")
	}
	if i%2 == 0 {
		score := 0.25 + float64(i%4)/4
		verdict := results.VerdictPass
		if score < 0.5 {
			verdict = results.VerdictFail
		}
		j := &results.Judge{Verdict: verdict, Score: &score, Reason: reason, Provider: "judge", Model: "judge-model:14b",
			InputTokens: ptr(900 + i%100), OutputTokens: ptr(60), StartedAtMS: start + e2e + 5, LatencyMS: 1800 + int64(i%400),
			Spec: "sha256:9f2c1a4e7b3d5f60", CostUSD: nil}
		for k := range 3 {
			j.Samples = append(j.Samples, results.JudgeSample{Verdict: verdict, Score: &score, Reason: reason, InputTokens: ptr(300 + k), OutputTokens: ptr(20), LatencyMS: 600 + int64(k*10)})
		}
		r.Judge = j
	}
	if i%25 == 11 {
		r.CheckErrors = []results.CheckError{{Type: results.ValidatorError, Check: "command", Index: 1, Message: "exit status 2: stderr: lint.sh: line 3: jq: command not found"}}
	}
	if i%10 == 4 {
		r.Turns = 3
		for k := range 3 {
			t := results.Turn{StartMS: float64(k) * 400, EndMS: float64(k)*400 + 350, TTFTMS: ptr(float64(ttft)), Text: "Let me check the memory first.\n"}
			if k < 2 {
				t.Calls = []results.TurnCall{{ID: fmt.Sprintf("t%d_%d", i, k), Name: "run_command", Arguments: []byte(`{"command":"free -h"}`),
					Result: "              total        used        free\nMem:           23Gi       1.2Gi        21Gi\n", ResultHash: "sha256:5e884898da28047151d0e56f8dc6292773603d0d6aabbdd62a11ef721d1542d8",
					Rule: k, StartMS: float64(k)*400 + 300, EndMS: float64(k)*400 + 301.5}}
			} else {
				t.Text = answer[:600]
			}
			r.TurnDetails = append(r.TurnDetails, t)
		}
	}
	if math.IsNaN(*r.TPOTMS) {
		r.TPOTMS = nil
	}
	return r
}

// Write writes the records rec(0) to rec(n-1) to a new results.jsonl at
// path through the run's writer and returns the file's size.
func Write(tb testing.TB, path string, n int, rec func(i int) *results.Record) int64 {
	tb.Helper()
	w, err := results.Create(path)
	if err != nil {
		tb.Fatal(err)
	}
	for i := range n {
		if err := w.Write(rec(i)); err != nil {
			tb.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		tb.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		tb.Fatal(err)
	}
	return fi.Size()
}
