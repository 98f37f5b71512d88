package runner

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"bench/config"
	"bench/internal/record/forsy"
	"bench/internal/record/results"
	"bench/internal/testpeer/ollamatest"
	"bench/internal/testpeer/testmodel"
	"bench/prompts"
	"bench/providers"
	"bench/run/output"
	"bench/run/plan"
)

// The built-in agentic tasks against a real Ollama serving scripted models,
// through both of its protocols. A scripted model's reply is picked by the
// last word of the rendered prompt (testmodel.Template): the task's prompt
// for turn 1, then the last tool result, rendered as [RESULT]...[/RESULT]
// (or, in text mode, the last word of the command's output), so each
// scripted result of the task triggers the model's next turn.

// toolCall is a scripted reply that Ollama parses into a native tool call.
func toolCall(name, args string) string {
	return `<tool_call>{"name": "` + name + `", "arguments": ` + args + `}</tool_call>`
}

// agentModels are the scripted models: one that completes every built-in
// task, one that loops until max_turns, one that calls a tool the task does
// not have, one that stops after its first call.
var agentModels = map[string]testmodel.Script{
	"agent-good": {
		"°F":                            {toolCall("get_weather", `{"city": "Paris"}`)},
		`"clear"}[/RESULT]`:             {toolCall("convert_temperature", `{"value": 18, "from": "C", "to": "F"}`)},
		"F[/RESULT]":                    {"64.4 °F"},
		"digits.":                       {toolCall("find_files", `{"directory": "/srv", "pattern": "*.yaml"}`)},
		"/srv/web/config.yaml[/RESULT]": {toolCall("read_file", `{"path": "/srv/web/config.yaml"}`)},
		"info[/RESULT]":                 {"8443"},
		"USD":                           {toolCall("convert_currency", `{"amount": 250, "from": "EUR", "to": "USD"}`)},
		"request[/RESULT]":              {toolCall("convert_currency", `{"amount": 250, "from": "EUR", "to": "USD"} `)},
		"1.0842}[/RESULT]":              {"271.05 USD"},
		"number.":                       {"144"},
		"name.":                         {`<tool_call>{"name": "get_weather", "arguments": {"city": "Oslo"}}{"name": "get_weather", "arguments": {"city": "Madrid"}}</tool_call>`},
		`"sunny"}[/RESULT]`:             {"Madrid"},
		"2025-01-31":                    {toolCall("get_order_status", `{"order_id": "A-1042"}`)},
		`"2025-03-14"}[/RESULT]`:        {"shipped, 2025-03-14"},
		"12G":                           {"$ df -h /"},
		"/data":                         {"33G"},
	},
	"agent-loop": {
		"°F":                {toolCall("get_weather", `{"city": "Paris"}`)},
		`"clear"}[/RESULT]`: {toolCall("get_weather", `{"city": "Paris"} `)},
		"12G":               {"$ df -h /"},
		"/data":             {"$ df -h"},
	},
	"agent-unknown": {
		"12G":   {"$ diskinfo --free /"},
		"found": {"I could not check the disk."},
	},
	"agent-stop": {
		"°F":                            {toolCall("get_weather", `{"city": "Paris"}`)},
		`"clear"}[/RESULT]`:             {"It is 18 degrees in Paris."},
		"digits.":                       {toolCall("find_files", `{"directory": "/srv", "pattern": "*.yaml"}`)},
		"/srv/web/config.yaml[/RESULT]": {"The config file is /srv/web/config.yaml."},
	},
}

var (
	ollamaOnce sync.Once
	ollamaSrv  *ollamatest.Server
	ollamaErr  error
)

// sharedOllama starts one real Ollama with the scripted agent models for
// the package's tests; TestMain stops it.
func sharedOllama(t *testing.T) *ollamatest.Server {
	t.Helper()
	ollamaOnce.Do(func() {
		ollamaSrv, ollamaErr = ollamatest.StartServer()
		if ollamaErr != nil {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		for name, script := range agentModels {
			if ollamaErr = ollamaSrv.Create(ctx, name, script); ollamaErr != nil {
				return
			}
		}
	})
	ollamatest.Check(t, ollamaErr)
	return ollamaSrv
}

func stopOllama() {
	if ollamaSrv != nil {
		ollamaSrv.Close()
	}
}

// loadConfig loads a bench.yaml the way `bench run` does and builds its
// providers.
func loadConfig(t *testing.T, yaml string) (*config.Config, map[string]providers.Provider) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "bench.yaml")
	if err := os.WriteFile(path, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(path, providers.Kinds)
	if err != nil {
		t.Fatal(err)
	}
	provs := map[string]providers.Provider{}
	for i := range cfg.Providers {
		p, err := providers.New(&cfg.Providers[i])
		if err != nil {
			t.Fatal(err)
		}
		provs[cfg.Providers[i].Name] = p
	}
	return cfg, provs
}

// sweepAll runs cfg with work traces into dir and returns the records.
func sweepAll(t *testing.T, cfg *config.Config, provs map[string]providers.Provider, dir string) []*results.Record {
	t.Helper()
	sink := &memSink{}
	out, err := Run(context.Background(), Options{Config: cfg, Plan: plan.New(cfg), Providers: provs, Outputs: []output.Output{sink, NewWorkTraces(dir, cfg.PromptSet, "test")}})
	if err != nil || out.EndReason != EndFinished {
		t.Fatalf("run: %v %+v", err, out)
	}
	return sink.recs
}

// sweepByKey is sweepAll with the records by provider/prompt.
func sweepByKey(t *testing.T, cfg *config.Config, provs map[string]providers.Provider, dir string) map[string]*results.Record {
	t.Helper()
	recs := map[string]*results.Record{}
	for _, r := range sweepAll(t, cfg, provs, dir) {
		recs[r.Provider+"/"+r.PromptID] = r
	}
	return recs
}

// checkTrace reads the record's work trace, validates it, and checks it
// ends as the record does.
func checkTrace(t *testing.T, dir string, cfg *config.Config, r *results.Record, completed bool) *forsy.Trace {
	t.Helper()
	var p *prompts.Prompt
	for i := range cfg.PromptSet {
		if cfg.PromptSet[i].ID == r.PromptID {
			p = &cfg.PromptSet[i]
		}
	}
	cell := WorkTraceCell(r, p, "test")
	data, err := os.ReadFile(filepath.Join(dir, forsy.FileName(cell.Task)))
	if err != nil {
		t.Fatalf("%s/%s: no work trace: %v", r.Provider, r.PromptID, err)
	}
	tr := requireTrace(t, data)
	if tr.Summary.GoalAchieved != completed || tr.Summary.TotalTurns != r.Turns {
		t.Errorf("%s/%s trace: goal %v turns %d, want %v %d (%s)", r.Provider, r.PromptID, tr.Summary.GoalAchieved, tr.Summary.TotalTurns, completed, r.Turns, deref(tr.Summary.GoalNotes))
	}
	return tr
}

func agentConfig(url, model string, only ...string) string {
	return fmt.Sprintf(`run:
  concurrency: 4
  timeout: 60s
providers:
  - type: ollama
    base_url: %s
    concurrency: 2
    models: [%s]
  - type: ollama_openai
    base_url: %s/v1
    concurrency: 2
    models: [%s]
prompts:
  only: [%s]
`, url, model, url, model, strings.Join(only, ", "))
}

var bothProtocols = []string{"ollama", "ollama_openai"}

// A model that follows each task's one right trajectory completes every
// built-in task through both protocols: the dependent calls chained, the
// file found then read, the failed call retried, no tool when none is
// needed, two calls in one turn, the distractor left alone, the text-mode
// command run.
func TestOllamaAgentCompletesEveryTask(t *testing.T) {
	srv := sharedOllama(t)
	tasks := []string{"A1", "A2", "A3", "A4", "A5", "A6", "A7"}
	cfg, provs := loadConfig(t, agentConfig(srv.URL(), "agent-good", tasks...))
	dir := t.TempDir()
	recs := sweepByKey(t, cfg, provs, dir)
	turns := map[string]int{"A1": 3, "A2": 3, "A3": 3, "A4": 1, "A5": 2, "A6": 2, "A7": 2}
	calls := map[string]string{
		"A1": "get_weather,convert_temperature", "A2": "find_files,read_file", "A3": "convert_currency,convert_currency",
		"A4": "", "A5": "get_weather,get_weather", "A6": "get_order_status", "A7": "df",
	}
	answers := map[string]string{"A1": "64.4 °F", "A2": "8443", "A3": "271.05 USD", "A4": "144", "A5": "Madrid", "A6": "shipped, 2025-03-14", "A7": "33G"}
	for _, prov := range bothProtocols {
		for _, id := range tasks {
			r := recs[prov+"/"+id]
			if r == nil {
				t.Fatalf("no record for %s/%s", prov, id)
			}
			where := prov + "/" + id
			if r.AvailabilityStatus != "ok" || !r.Success || r.ObjectivePass == nil || !*r.ObjectivePass {
				t.Errorf("%s: %s success %v pass %v %v %v; turns %+v", where, r.AvailabilityStatus, r.Success, r.ObjectivePass, r.Violation, r.ErrorMessage, r.TurnDetails)
				continue
			}
			if r.Turns != turns[id] || strings.Join(r.ToolCalls, ",") != calls[id] || r.RawOutput != answers[id] {
				t.Errorf("%s: %d turns, calls %v, answer %q", where, r.Turns, r.ToolCalls, r.RawOutput)
			}
			wantUse := id != "A4"
			if (r.ToolUseSuccess != nil) != wantUse || (wantUse && !*r.ToolUseSuccess) {
				t.Errorf("%s: tool_use_success %v", where, r.ToolUseSuccess)
			}
			if r.TTFTMS == nil || r.E2EMS < int64(r.TurnDetails[len(r.TurnDetails)-1].EndMS-r.TurnDetails[0].StartMS)-1 {
				t.Errorf("%s: ttft %v e2e %d does not cover the turns %+v; timeline %+v", where, r.TTFTMS, r.E2EMS, r.TurnDetails, r.Timeline)
			}
			for k, tn := range r.TurnDetails {
				if tn.TTFTMS == nil || tn.EndMS < tn.StartMS || (k > 0 && tn.StartMS < r.TurnDetails[k-1].EndMS) {
					t.Errorf("%s turn %d: %+v", where, k+1, tn)
				}
			}
			checkTrace(t, dir, cfg, r, true)
		}
		// The failed first call and its retry, as bench answered them.
		a3 := recs[prov+"/A3"].TurnDetails
		if c := a3[0].Calls[0]; !c.FailFirst || !c.IsError || !strings.HasPrefix(c.Result, "error: 503") {
			t.Errorf("%s A3 first call: %+v", prov, c)
		}
		if c := a3[1].Calls[0]; c.IsError || c.Rule != 0 || c.ResultHash != forsy.Hash(`{"amount": 271.05, "currency": "USD", "rate": 1.0842}`) {
			t.Errorf("%s A3 retry: %+v", prov, c)
		}
		// Two calls in one turn, each answered by its own rule.
		if c := recs[prov+"/A5"].TurnDetails[0].Calls; len(c) != 2 || c[0].Rule != 0 || c[1].Rule != 1 {
			t.Errorf("%s A5 calls: %+v", prov, c)
		}
	}
	// The chat protocol gives call ids, Ollama's native API none.
	if recs["ollama_openai/A1"].TurnDetails[0].Calls[0].ID == "" || recs["ollama/A1"].TurnDetails[0].Calls[0].ID != "" {
		t.Errorf("call ids: chat %q, native %q", recs["ollama_openai/A1"].TurnDetails[0].Calls[0].ID, recs["ollama/A1"].TurnDetails[0].Calls[0].ID)
	}
}

// A model that calls the same tool again and again is stopped at
// max_turns, natively and in text mode; its last calls never run.
func TestOllamaAgentLoopsUntilMaxTurns(t *testing.T) {
	srv := sharedOllama(t)
	cfg, provs := loadConfig(t, agentConfig(srv.URL(), "agent-loop", "A1", "A7"))
	dir := t.TempDir()
	recs := sweepByKey(t, cfg, provs, dir)
	for _, prov := range bothProtocols {
		for id, max := range map[string]int{"A1": 4, "A7": 3} {
			r := recs[prov+"/"+id]
			where := prov + "/" + id
			if !r.Success || r.Turns != max || len(r.ToolCalls) != max || r.ObjectivePass == nil || *r.ObjectivePass ||
				r.Violation == nil || !strings.Contains(*r.Violation, fmt.Sprintf("max_turns (%d)", max)) {
				t.Errorf("%s: success %v turns %d calls %v pass %v %v", where, r.Success, r.Turns, r.ToolCalls, r.ObjectivePass, r.Violation)
				continue
			}
			last := r.TurnDetails[max-1].Calls
			if len(last) != 1 || !last[0].Unanswered {
				t.Errorf("%s: last turn's calls %+v", where, last)
			}
			tr := checkTrace(t, dir, cfg, r, false)
			if tr.TerminationReason != "partial_then_stopped" {
				t.Errorf("%s: trace termination %s", where, tr.TerminationReason)
			}
		}
		// A1 never converted: the trajectory check fails too.
		if r := recs[prov+"/A1"]; r.ToolUseSuccess == nil || *r.ToolUseSuccess {
			t.Errorf("%s/A1 tool_use_success %v", prov, r.ToolUseSuccess)
		}
	}
}

// A model that runs a command the task does not have gets "command not
// found", and the cell fails no_unknown_tools. (Ollama parses native calls
// only of the tools offered, so an unknown native tool cannot come from it:
// the Responses and CLI tests cover that.)
func TestOllamaAgentCallsUnknownTool(t *testing.T) {
	srv := sharedOllama(t)
	cfg, provs := loadConfig(t, agentConfig(srv.URL(), "agent-unknown", "A7"))
	dir := t.TempDir()
	recs := sweepByKey(t, cfg, provs, dir)
	for _, prov := range bothProtocols {
		r := recs[prov+"/A7"]
		if !r.Success || r.Turns != 2 || r.ObjectivePass == nil || *r.ObjectivePass || !strings.Contains(*r.Violation, "called unknown tool diskinfo") {
			t.Errorf("%s: success %v turns %d pass %v %v", prov, r.Success, r.Turns, r.ObjectivePass, r.Violation)
			continue
		}
		c := r.TurnDetails[0].Calls[0]
		if c.Name != "diskinfo" || !c.Unknown || !c.IsError || c.Result != "diskinfo: command not found" || r.ToolUseSuccess == nil || *r.ToolUseSuccess {
			t.Errorf("%s: call %+v tool use %v", prov, c, r.ToolUseSuccess)
		}
		checkTrace(t, dir, cfg, r, false)
	}
}

// A model that answers right after its first call, without the second one
// the task needs, fails the trajectory and the answer.
func TestOllamaAgentStopsAfterFirstCall(t *testing.T) {
	srv := sharedOllama(t)
	cfg, provs := loadConfig(t, agentConfig(srv.URL(), "agent-stop", "A1", "A2"))
	dir := t.TempDir()
	recs := sweepByKey(t, cfg, provs, dir)
	for _, prov := range bothProtocols {
		for id, call := range map[string]string{"A1": "get_weather", "A2": "find_files"} {
			r := recs[prov+"/"+id]
			where := prov + "/" + id
			if !r.Success || r.Turns != 2 || strings.Join(r.ToolCalls, ",") != call || r.ObjectivePass == nil || *r.ObjectivePass ||
				r.ToolUseSuccess == nil || *r.ToolUseSuccess || !strings.Contains(*r.Violation, "missing call 2 of 2") {
				t.Errorf("%s: success %v turns %d calls %v pass %v use %v %v", where, r.Success, r.Turns, r.ToolCalls, r.ObjectivePass, r.ToolUseSuccess, r.Violation)
				continue
			}
			tr := checkTrace(t, dir, cfg, r, false)
			if tr.TerminationReason != "other" {
				t.Errorf("%s: trace termination %s", where, tr.TerminationReason)
			}
		}
	}
}
