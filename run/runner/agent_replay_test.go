package runner

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// responsesReplay answers the n-th request with the n-th recorded stream
// (the last repeats), one event at a time, and keeps each request body.
type responsesReplay struct {
	*httptest.Server
	files  []string
	mu     sync.Mutex
	bodies []map[string]any
}

func newResponsesReplay(t *testing.T, files ...string) *responsesReplay {
	rr := &responsesReplay{files: files}
	rr.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body map[string]any
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
			t.Errorf("request body: %v", err)
		}
		rr.mu.Lock()
		rr.bodies = append(rr.bodies, body)
		file := rr.files[min(len(rr.bodies), len(rr.files))-1]
		rr.mu.Unlock()
		raw, err := os.ReadFile(filepath.Join("testdata", "responses", file))
		if err != nil {
			t.Error(err)
			return
		}
		// A recording is the response's headers, a blank line, its body.
		payload := raw[bytes.Index(raw, []byte("\r\n\r\n"))+4:]
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		for _, ev := range bytes.SplitAfter(payload, []byte("\n\n")) {
			w.Write(ev)
			w.(http.Flusher).Flush()
		}
	}))
	t.Cleanup(rr.Close)
	return rr
}

func (rr *responsesReplay) requests() []map[string]any {
	rr.mu.Lock()
	defer rr.mu.Unlock()
	return append([]map[string]any(nil), rr.bodies...)
}

func responsesConfig(url, task string) string {
	// No warm-up: the replay server answers its recorded turns in order.
	return fmt.Sprintf(`run:
  timeout: 30s
  warmup: false
providers:
  - type: openai_responses
    base_url: %s/v1
    api_key_env: BENCH_AGENT_TEST_KEY
    models: [gpt-test]
prompts:
  files: [%s]
`, url, task)
}

const memoryTask = `prompts:
  - id: M
    name: memory
    prompt: "How much memory is free?"
    max_turns: 3
    tools:
      - name: get_memory
        parameters: {type: object, properties: {unit: {type: string}}}
        rules:
          - args: {unit: MB}
            result: "free: 2048 MB"
    validators:
      - type: tool_sequence
        calls: [{name: get_memory, args: {unit: MB}}]
      - {type: no_unknown_tools}
      - {type: regex_fullmatch, pattern: "(?s).*free.*"}
`

// The Responses API over two recorded turns: a function_call, then a text
// answer. The second request echoes the call as a function_call item and
// carries bench's result as the function_call_output of the same call_id.
func TestResponsesAgentLoop(t *testing.T) {
	t.Setenv("BENCH_AGENT_TEST_KEY", "sk-agent-test-0123456789")
	rr := newResponsesReplay(t, "v1_responses_stream_function_call.http", "v1_responses_stream_text.http")
	task := filepath.Join(t.TempDir(), "task.yaml")
	if err := os.WriteFile(task, []byte(memoryTask), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, provs := loadConfig(t, responsesConfig(rr.URL, task))
	dir := t.TempDir()
	r := sweepByKey(t, cfg, provs, dir)["openai_responses/M"]
	if !r.Success || r.Turns != 2 || r.ObjectivePass == nil || !*r.ObjectivePass || r.ToolUseSuccess == nil || !*r.ToolUseSuccess {
		t.Fatalf("success %v turns %d pass %v %v use %v: %+v", r.Success, r.Turns, r.ObjectivePass, r.Violation, r.ToolUseSuccess, r.TurnDetails)
	}
	c := r.TurnDetails[0].Calls[0]
	if c.ID != "call_aem8zluu" || c.Name != "get_memory" || string(c.Arguments) != `{"unit":"MB"}` || c.Result != "free: 2048 MB" || c.Rule != 0 {
		t.Errorf("call %+v", c)
	}
	if r.RawOutput != "I will run `free -h` to check memory." || r.InputTokens == nil || r.OutputTokens == nil {
		t.Errorf("answer %q tokens %v/%v", r.RawOutput, r.InputTokens, r.OutputTokens)
	}
	reqs := rr.requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests", len(reqs))
	}
	in, _ := json.Marshal(reqs[1]["input"])
	want := `[{"content":"How much memory is free?","role":"user","type":"message"},` +
		`{"arguments":"{\"unit\":\"MB\"}","call_id":"call_aem8zluu","name":"get_memory","type":"function_call"},` +
		`{"call_id":"call_aem8zluu","output":"free: 2048 MB","type":"function_call_output"}]`
	if string(in) != want {
		t.Errorf("turn 2 input\n got %s\nwant %s", in, want)
	}
	if tools, _ := json.Marshal(reqs[1]["tools"]); !strings.Contains(string(tools), `"name":"get_memory"`) || reqs[1]["store"] != false {
		t.Errorf("turn 2 tools %s store %v", tools, reqs[1]["store"])
	}
	checkTrace(t, dir, cfg, r, true)
}

// A native call of a tool the task does not offer (the recording calls
// get_memory; this task has only get_disk) gets an error naming the tools,
// and fails no_unknown_tools.
func TestResponsesAgentUnknownTool(t *testing.T) {
	t.Setenv("BENCH_AGENT_TEST_KEY", "sk-agent-test-0123456789")
	rr := newResponsesReplay(t, "v1_responses_stream_function_call.http", "v1_responses_stream_text.http")
	task := filepath.Join(t.TempDir(), "task.yaml")
	src := strings.NewReplacer("name: get_memory", "name: get_disk").Replace(memoryTask)
	if err := os.WriteFile(task, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, provs := loadConfig(t, responsesConfig(rr.URL, task))
	dir := t.TempDir()
	r := sweepByKey(t, cfg, provs, dir)["openai_responses/M"]
	if !r.Success || r.ObjectivePass == nil || *r.ObjectivePass || !strings.Contains(*r.Violation, "called unknown tool get_memory") {
		t.Fatalf("success %v pass %v %v", r.Success, r.ObjectivePass, r.Violation)
	}
	c := r.TurnDetails[0].Calls[0]
	if !c.Unknown || !c.IsError || c.Result != `error: unknown tool "get_memory"; available tools: get_disk` {
		t.Errorf("call %+v", c)
	}
	in, _ := json.Marshal(rr.requests()[1]["input"])
	if !strings.Contains(string(in), `"output":"error: unknown tool \"get_memory\"; available tools: get_disk"`) {
		t.Errorf("the error did not go back: %s", in)
	}
	tr := checkTrace(t, dir, cfg, r, false)
	if tr.Steps[2].Action != "error" || tr.Steps[2].Eval != -1 {
		t.Errorf("unknown call step: %+v", tr.Steps[2])
	}
}
