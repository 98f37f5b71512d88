package traces

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"bench/config"
	"bench/internal/record/results"
	"bench/prompts"
	"bench/validators"
)

// Texts that must never reach a trace: the spans carry their sizes and
// hashes only.
const (
	promptText = "Which command shows free memory? zeta-prompt-text"
	systemText = "You are terse. zeta-system-text"
	answerText = "I will run `free -h` to check memory. zeta-answer-text"
	argsText   = `{"unit":"MB","zeta":"zeta-args-text"}`
	resultText = "total used free zeta-result-text"
	secretText = "sk-zeta-0123456789SECRET"
)

var forbidden = []string{promptText, systemText, answerText, argsText, resultText, secretText, "zeta-"}

var t0 = time.Date(2026, 11, 22, 10, 0, 0, 123456000, time.UTC)

func ptr[T any](v T) *T { return &v }

func testConfig(t *testing.T) *config.Config {
	t.Helper()
	return &config.Config{
		Run: config.Run{ID: "run-1", Concurrency: 2, Repetitions: 1},
		Providers: []config.Provider{
			{Name: "oo", Type: "ollama_openai", Server: config.Server{Endpoint: "http://127.0.0.1:11434/v1"}},
			{Name: "cc", Type: "claude_code_cli", Server: config.Server{Command: "/home/someone/bin/claude"}},
		},
		PromptSet: []prompts.Prompt{
			{ID: "T1", Name: "native_tool", System: systemText, Prompt: promptText,
				Validator: &validators.Spec{Type: "tool_invocation", ExpectedTools: []string{"get_memory_usage"}}},
			{ID: "T2", Name: "agentic", Prompt: promptText, MaxTurns: 3, Validator: &validators.Spec{Type: "noop"}},
		},
		Traces: config.Traces{NDJSON: true, Timeout: config.Duration(2 * time.Second)},
	}
}

func tl(event string, at float64) results.TimelineEvent {
	return results.TimelineEvent{Event: event, AtMS: at}
}

func base(provider, typ, model, prompt string, start time.Time) *results.Record {
	return &results.Record{
		RecordType: results.RecordType, RunID: "run-1", Provider: provider, ProviderType: typ, Model: model,
		PromptID: prompt, PromptName: strings.ToLower(prompt), Repetition: 1,
		StartedAtMS: start.UnixMilli(), StartedAtUS: start.UnixMicro(), ToolCalls: []string{}, ToolCallDetails: []results.ToolCall{},
	}
}

// retried is an HTTP cell whose first attempt got a 503 and whose second
// answered with a native tool call and a command in its text.
func retried() *results.Record {
	r := base("oo", "ollama_openai", "scripted", "T1", t0)
	r.AvailabilityStatus, r.Success = results.StatusOK, true
	r.EndedAtMS = t0.Add(40250 * time.Microsecond).UnixMilli()
	r.E2EMS, r.TTFTMS, r.TTFOMS = 14, ptr[int64](5), ptr[int64](5)
	r.InputTokens, r.OutputTokens, r.FinishReason = ptr(30), ptr(12), "tool_calls"
	r.RawOutput, r.RawOutputBytes = answerText, len(answerText)
	r.Retries, r.RetryWaitMS = 1, 20
	r.ProviderMetrics = map[string]any{"retry_statuses": []int{503}}
	r.ToolCalls, r.ToolCallCount = []string{"get_memory_usage", "free"}, 2
	r.ToolCallDetails = []results.ToolCall{
		{Name: "get_memory_usage", Arguments: []byte(argsText), Source: results.SourceNative, ID: "call_1"},
		{Name: "free", Arguments: []byte(`"free -h"`), Source: results.SourceText, Match: "`free -h`"},
	}
	r.ObjectivePass, r.ToolUseSuccess = ptr(true), ptr(false)
	r.Timeline = []results.TimelineEvent{
		tl("request_start", 0.101), {Event: "connected", AtMS: 0.3, Detail: "new"}, tl("request_written", 0.4), tl("first_byte", 5),
		{Event: "retry", AtMS: 5.5, WaitMS: 20, Detail: "http_503"},
		{Event: "request_start", AtMS: 25.6, Attempt: 1}, {Event: "connected", AtMS: 25.7, Detail: "reused"}, tl("request_written", 25.8),
		tl("first_byte", 30), tl("tool_call", 30.5), tl("first_text", 31.5), tl("end", 40.25),
	}
	return r
}

// skipped is a cell whose model the server does not have.
func skipped() *results.Record {
	r := base("oo", "ollama_openai", "missing", "T1", t0.Add(2*time.Millisecond))
	r.AvailabilityStatus, r.FailureType, r.HTTPStatus = results.StatusSkippedUnavailable, ptr(results.FailModelNotFound), ptr(404)
	r.ErrorMessage = ptr("model \"missing\" not found")
	r.EndedAtMS = r.StartedAtMS + 1
	r.E2EMS = 1
	r.Timeline = []results.TimelineEvent{tl("request_start", 0.05), tl("connected", 0.2), tl("end", 1.2)}
	return r
}

// cli is a Claude Code CLI cell that timed out.
func cli() *results.Record {
	r := base("cc", "claude_code_cli", "sonnet", "T1", t0.Add(time.Millisecond))
	r.AvailabilityStatus, r.FailureType = results.StatusError, ptr(results.FailTimeout)
	r.ErrorMessage = ptr("no complete answer within run.timeout")
	r.EndedAtMS = r.StartedAtMS + 1500
	r.E2EMS, r.TTFTMS = 1500, ptr[int64](900)
	r.ProviderMetrics = map[string]any{"exit_code": -1, "startup_ms": int64(399)}
	r.ToolUseSuccess = ptr(false)
	r.Timeline = []results.TimelineEvent{tl("request_start", 0.01), tl("first_byte", 400), tl("first_text", 900), tl("end", 1500)}
	return r
}

// agentic is a two-turn cell: a tool call answered by bench, then the answer.
func agentic() *results.Record {
	r := base("oo", "ollama_openai", "scripted", "T2", t0.Add(50*time.Millisecond))
	r.AvailabilityStatus, r.Success = results.StatusOK, true
	r.EndedAtMS = r.StartedAtMS + 100
	r.RawOutput, r.RawOutputBytes = answerText, len(answerText)
	r.ObjectivePass = nil
	r.Turns = 2
	r.TurnDetails = []results.Turn{
		{StartMS: 0.1, EndMS: 40, TTFTMS: ptr(10.5), Calls: []results.TurnCall{
			{ID: "c1", Name: "read_file", Arguments: []byte(argsText), Result: resultText, ResultHash: hash(resultText), Rule: 0, StartMS: 40.2, EndMS: 41},
			{ID: "c2", Name: "nope", Arguments: []byte(`{}`), Result: "unknown tool", ResultHash: hash("unknown tool"), Rule: -1, IsError: true, Unknown: true, StartMS: 41, EndMS: 41.5},
		}},
		{StartMS: 42, EndMS: 99, TTFTMS: ptr(8.0), Text: answerText},
	}
	r.Timeline = []results.TimelineEvent{
		tl("request_start", 0.1), tl("first_byte", 9), tl("tool_call", 10.5), tl("request_start", 42), tl("first_text", 50), tl("end", 100),
	}
	return r
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
