package main

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

	"bench/internal/record/results"
	"bench/internal/testpeer/anthropictest"
	"bench/internal/testpeer/testmodel"
	"bench/validators/bfcl"
)

// bfclScript answers six sampled cases with function calls, each chosen by
// its question's last word (unique in the sample), and every other case
// with text: a model that abstains, right for irrelevance, wrong for the
// rest, so every cell gets an answer the checker judges.
var bfclScript = testmodel.Script{
	testmodel.Default: {"No function fits this request."},
	// simple_python_10: right.
	"10cm.": {`<tool_call>{"name": "calculate_area", "arguments": {"base": 6, "height": 10}}</tool_call>`},
	// simple_python_161: detail_level left out, which the answer does not
	// mark optional.
	"detail.": {`<tool_call>{"name": "crime_statute_lookup", "arguments": {"jurisdiction": "California", "crime": "theft"}}</tool_call>`},
	// simple_python_89: right, a dict parameter.
	"StudentDB.": {`<tool_call>{"name": "db_fetch_records", "arguments": {"database_name": "StudentDB", "table_name": "students", "conditions": {"department": "Science", "school": "Bluebird High School"}}}</tool_call>`},
	// parallel_1: both calls, in the other order: right.
	"seconds.": {`<tool_call>{"name": "calculate_em_force", "arguments": {"b_field": 5, "area": 2, "d_time": 10}}{"name": "calculate_em_force", "arguments": {"b_field": 5, "area": 2, "d_time": 4}}</tool_call>`},
	// parallel_multiple_17: one of the two calls.
	"hours?": {`<tool_call>{"name": "steps_calorie_calculation", "arguments": {"calorie": 500}}</tool_call>`},
	// irrelevance_9: a call where none fits.
	"x=3.": {`<tool_call>{"name": "CalculateTax", "arguments": {"annual_income": 50000, "tax_rate": 0.2, "other_deductions": 0}}</tool_call>`},
}

// responsesBFCL is an OpenAI Responses server built from the recorded
// streams (runner/testdata/responses): a request that offers calculate_area
// gets the recorded function call with that name and simple_python_10's
// right arguments, any other the recorded text answer. It keeps every
// request body.
type responsesBFCL struct {
	*httptest.Server
	mu     sync.Mutex
	bodies []map[string]any
}

func newResponsesBFCL(t *testing.T) *responsesBFCL {
	load := func(name string) []byte {
		raw, err := os.ReadFile(filepath.Join("..", "..", "run", "runner", "testdata", "responses", name))
		if err != nil {
			t.Fatal(err)
		}
		return raw[bytes.Index(raw, []byte("\r\n\r\n"))+4:]
	}
	text, call := load("v1_responses_stream_text.http"), load("v1_responses_stream_function_call.http")
	args, _ := json.Marshal(`{"base": 6, "height": 10}`)
	call = bytes.ReplaceAll(call, []byte(`"get_memory"`), []byte(`"calculate_area"`))
	call = bytes.ReplaceAll(call, []byte(`"{\"unit\":\"MB\"}"`), args)
	rs := &responsesBFCL{}
	rs.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body map[string]any
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
			t.Errorf("request body: %v", err)
		}
		rs.mu.Lock()
		rs.bodies = append(rs.bodies, body)
		rs.mu.Unlock()
		payload := text
		if tools, _ := json.Marshal(body["tools"]); bytes.Contains(tools, []byte(`"name":"calculate_area"`)) {
			payload = call
		}
		w.Header().Set("Content-Type", "text/event-stream")
		for _, ev := range bytes.SplitAfter(payload, []byte("\n\n")) {
			w.Write(ev)
			w.(http.Flusher).Flush()
		}
	}))
	t.Cleanup(rs.Close)
	return rs
}

// bench run --suite bfcl runs every sampled case on each HTTP provider
// kind (the Claude Code CLI's run is TestBFCLSuiteOnClaudeCode), each
// offering the case's functions natively, and BFCL's checker judges every
// cell: the scripted answers get the verdicts derived from BFCL's rules,
// the categories their counts in summary.json, tiers.json and report.html.
func TestBFCLSuiteOnEveryProvider(t *testing.T) {
	s := needServer(t)
	if err := s.Create(bgctx(), "bfcl", bfclScript); err != nil {
		t.Fatal(err)
	}
	oai := newResponsesBFCL(t)
	t.Setenv("BENCH_E2E_BFCL_KEY", "sk-bfcl-e2e-0123456789abcdef")
	cfg := fmt.Sprintf(`run:
  concurrency: 8
  timeout: 120s
providers:
  - type: ollama_openai
    base_url: %s/v1
    concurrency: 4
    models: [bfcl]
  - type: ollama
    base_url: %s
    concurrency: 4
    models: [bfcl]
  - type: openai_responses
    base_url: %s/v1
    api_key_env: BENCH_E2E_BFCL_KEY
    concurrency: 4
    warmup: false
    models: [gpt-bfcl]
`, s.URL(), s.URL(), oai.URL)
	code, stdout, stderr, recs, dir := runBench(t, cfg, "--suite", "bfcl", "--quiet")
	if code != 0 || len(recs) != 3*5*bfcl.PerCategory {
		t.Fatalf("exit %d, %d records\n%s%s", code, len(recs), stdout, stderr)
	}
	runDir := filepath.Join(dir, "runs", "e2e")

	cases, err := bfcl.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	byID := map[string]*bfcl.Case{}
	for i := range cases {
		byID[cases[i].ID] = &cases[i]
	}
	// Every cell of every case on every provider was answered and judged.
	seen := map[string]int{}
	for _, r := range recs {
		c := byID[r.PromptID]
		if c == nil {
			t.Fatalf("record of %s, not a sampled case", r.PromptID)
		}
		seen[r.Provider]++
		if !r.Success || r.ObjectivePass == nil || r.Category != c.Category {
			t.Errorf("%s/%s: %s success %v pass %v category %q (%v)", r.Provider, r.PromptID, r.AvailabilityStatus, r.Success, r.ObjectivePass, r.Category, deref(r.ErrorMessage))
		}
		if (r.ToolUseSuccess == nil) != (c.Category == bfcl.Irrelevance) {
			t.Errorf("%s/%s: tool_use_success %v", r.Provider, r.PromptID, r.ToolUseSuccess)
		}
		if len(r.TurnDetails) != 0 {
			t.Errorf("%s/%s: a BFCL cell is single-turn, got turn_details", r.Provider, r.PromptID)
		}
	}
	for _, p := range []string{"ollama_openai", "ollama", "openai_responses"} {
		if seen[p] != 200 {
			t.Errorf("%s: %d cells, want every one of the 200 cases", p, seen[p])
		}
	}

	// The scripted answers' verdicts, on both Ollama protocols.
	type verdict struct {
		pass bool
		why  string
	}
	want := map[string]verdict{
		"simple_python_10":     {true, ""},
		"simple_python_161":    {false, "BFCL simple_function_checker:missing_optional: Optional parameter 'detail_level' not provided"},
		"simple_python_89":     {true, ""},
		"parallel_1":           {true, ""},
		"parallel_multiple_17": {false, "BFCL parallel_function_checker_no_order:wrong_count"},
		"irrelevance_9":        {false, "BFCL irrelevance_error:decoder_success"},
		"multiple_1":           {false, "BFCL ast_decoder:decoder_failed"}, // abstained
		"irrelevance_34":       {true, ""},                                 // abstained, rightly
	}
	for _, p := range []string{"ollama_openai", "ollama"} {
		for id, v := range want {
			r := find(t, recs, p, "bfcl", id)
			if *r.ObjectivePass != v.pass || (!v.pass && (r.Violation == nil || !strings.HasPrefix(*r.Violation, v.why))) {
				t.Errorf("%s/%s: pass %v %v, want %v %q; calls %s", p, id, *r.ObjectivePass, deref(r.Violation), v.pass, v.why, callsOf(r))
			}
		}
		if r := find(t, recs, p, "bfcl", "simple_python_10"); r.ToolUseSuccess == nil || !*r.ToolUseSuccess || r.SchemaCheckedCalls != 1 || r.SchemaInvalidCalls != 0 {
			t.Errorf("%s simple_python_10: tool use %v schema %d/%d", p, r.ToolUseSuccess, r.SchemaInvalidCalls, r.SchemaCheckedCalls)
		}
	}
	// The Responses server called calculate_area for simple_python_10.
	if r := find(t, recs, "openai_responses", "gpt-bfcl", "simple_python_10"); !*r.ObjectivePass {
		t.Errorf("openai_responses simple_python_10: %v %s", deref(r.Violation), callsOf(r))
	}

	// Per category, as summary.json and tiers.json give them.
	wantCats := map[string]map[string]int{ // provider -> category -> succeeded of 40
		"ollama":           {"simple": 2, "multiple": 0, "parallel": 1, "parallel_multiple": 0, "irrelevance": 39},
		"ollama_openai":    {"simple": 2, "multiple": 0, "parallel": 1, "parallel_multiple": 0, "irrelevance": 39},
		"openai_responses": {"simple": 1, "multiple": 0, "parallel": 0, "parallel_multiple": 0, "irrelevance": 40},
	}
	var sum struct {
		Groups []struct {
			Provider   string `json:"provider"`
			Categories map[string]struct {
				N, Succeeded int
				CI           []float64 `json:"ci"`
			} `json:"categories"`
		} `json:"groups"`
	}
	readJSONFile(t, filepath.Join(runDir, "summary.json"), &sum)
	var tiers struct {
		Ranking []struct {
			Provider   string                     `json:"provider"`
			Categories map[string]json.RawMessage `json:"categories"`
		} `json:"ranking"`
	}
	readJSONFile(t, filepath.Join(runDir, "tiers.json"), &tiers)
	for _, g := range sum.Groups {
		for cat, n := range wantCats[g.Provider] {
			c := g.Categories[cat]
			if c.N != 40 || c.Succeeded != n || len(c.CI) != 2 {
				t.Errorf("summary.json %s %s: %+v, want %d of 40", g.Provider, cat, c, n)
			}
		}
	}
	for _, tr := range tiers.Ranking {
		if len(tr.Categories) != 5 {
			t.Errorf("tiers.json %s: categories %v", tr.Provider, tr.Categories)
		}
	}
	html, _ := os.ReadFile(filepath.Join(runDir, "report.html"))
	if !bytes.Contains(html, []byte(`id="category-table"`)) || !bytes.Contains(html, []byte("<th>parallel_multiple</th>")) {
		t.Error("report.html has no category table")
	}

	// Every request offered the case's functions natively, as function
	// tools converted like BFCL's handlers convert them.
	bodies := oai.bodies
	if len(bodies) != 200 {
		t.Errorf("%d Responses requests, want one per case", len(bodies))
	}
	found := 0
	for _, b := range bodies {
		tools, _ := json.Marshal(b["tools"])
		if !bytes.Contains(tools, []byte(`"type":"function"`)) {
			t.Errorf("a Responses request without function tools: %.300s", tools)
			break
		}
		if bytes.Contains(tools, []byte(`"name":"math_circle_area"`)) {
			found++
			if !bytes.Contains(tools, []byte(`"radius":{"description":"The radius of the circle. This is a float type value.","format":"float","type":"number"}`)) {
				t.Errorf("multiple_1's float parameter was not converted as BFCL does: %s", tools)
			}
		}
	}
	if found != 1 {
		t.Errorf("multiple_1's tools seen in %d Responses requests", found)
	}
}

// The BFCL suite on the Claude Code CLI: bench serves each case's
// functions over MCP (bench mcp-serve), the CLI offers them to the model (a
// text answer here), and BFCL's checker judges every cell. A CLI cell costs
// a Node process: about a second on an idle 2-core machine, but 30-40 s
// when the machine is shared by several test runs (every case then takes
// half an hour, past the suite's timeout). So the test runs two cases of
// each category, and every sampled case with BENCH_BFCL_ALL_CASES=1 (the
// full run, measured once, is in the note).
func TestBFCLSuiteOnClaudeCode(t *testing.T) {
	cli := anthropictest.ClaudeBin(t)
	anth := anthropictest.Start(t)
	cfg := fmt.Sprintf(`run:
  concurrency: 4
  timeout: 300s
providers:
  - type: claude_code_cli
    command: %s
    concurrency: 4
    env:
      ANTHROPIC_BASE_URL: %s
      ANTHROPIC_AUTH_TOKEN: e2e-token
      ANTHROPIC_API_KEY: ""
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1"
      CLAUDE_CODE_MAX_RETRIES: "0"
      HOME: %s
    models: [%s]
prompts:
  suites: [bfcl]
`, cli, anth.URL, t.TempDir(), anthropictest.ModelText)
	args := []string{"--quiet"}
	n := 5 * bfcl.PerCategory
	if os.Getenv("BENCH_BFCL_ALL_CASES") == "" {
		args = append(args, "--prompts", "simple_python_10,simple_python_14,multiple_1,multiple_6,parallel_1,parallel_5,parallel_multiple_17,parallel_multiple_23,irrelevance_9,irrelevance_34")
		n = 10
	}
	code, stdout, stderr, recs, dir := runBench(t, cfg, args...)
	if code != 0 || len(recs) != n {
		t.Fatalf("exit %d, %d records, want %d\n%s%s", code, len(recs), n, stdout, stderr)
	}
	pass := map[string]int{}
	for _, r := range recs {
		if !r.Success || r.ObjectivePass == nil || r.Category == "" || len(r.TurnDetails) != 0 {
			t.Errorf("%s: %s success %v pass %v category %q (%v)", r.PromptID, r.AvailabilityStatus, r.Success, r.ObjectivePass, r.Category, deref(r.ErrorMessage))
			continue
		}
		if *r.ObjectivePass {
			pass[r.Category]++
		}
	}
	// A text answer is right for irrelevance only.
	if want := n / 5; pass["irrelevance"] != want || len(pass) != 1 {
		t.Errorf("passed per category %v, want irrelevance's %d only", pass, want)
	}
	// Each cell's request offered that case's functions as bench's MCP tools.
	offered := map[string]bool{}
	for _, r := range anth.Requests() {
		var body struct {
			Tools []struct{ Name string } `json:"tools"`
		}
		json.Unmarshal(r.Body, &body)
		for _, tl := range body.Tools {
			offered[tl.Name] = true
		}
	}
	for _, r := range recs {
		for _, name := range r.ExpectedTools {
			if !offered["mcp__bench__"+name] {
				t.Errorf("%s: %s was never offered to the model as mcp__bench__%s", r.PromptID, name, name)
			}
		}
	}
	var sum struct {
		Groups []struct {
			Categories map[string]struct{ N int } `json:"categories"`
		} `json:"groups"`
	}
	readJSONFile(t, filepath.Join(dir, "runs", "e2e", "summary.json"), &sum)
	if len(sum.Groups) != 1 || len(sum.Groups[0].Categories) != 5 || sum.Groups[0].Categories["simple"].N != n/5 {
		t.Errorf("summary.json categories: %+v", sum.Groups)
	}
}

// A BFCL case through the Claude Code CLI: the model's tool_use of the
// MCP tool reaches bench's server, and the call, named as the case offers
// it, passes BFCL's checker.
func TestBFCLClaudeCodeCall(t *testing.T) {
	cli := anthropictest.ClaudeBin(t)
	anth := anthropictest.Start(t)
	anth.Conversation("cli-bfcl",
		anthropictest.Reply{ToolName: "mcp__bench__calculate_area", ToolInput: []string{`{"base": 6, `, `"height": 10}`}},
		anthropictest.Reply{Text: []string{"The area is 30 square cm."}},
	)
	cfg := fmt.Sprintf(`run:
  timeout: 120s
providers:
  - type: claude_code_cli
    command: %s
    env:
      ANTHROPIC_BASE_URL: %s
      ANTHROPIC_AUTH_TOKEN: e2e-token
      ANTHROPIC_API_KEY: ""
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1"
      HOME: %s
    models: [cli-bfcl]
prompts:
  suites: [bfcl]
`, cli, anth.URL, t.TempDir())
	code, stdout, stderr, recs, _ := runBench(t, cfg, "--prompts", "simple_python_10,simple_python_14", "--quiet")
	if code != 0 || len(recs) != 2 {
		t.Fatalf("exit %d, %d records\n%s%s", code, len(recs), stdout, stderr)
	}
	r := find(t, recs, "claude_code_cli", "cli-bfcl", "simple_python_10")
	if !r.Success || r.ObjectivePass == nil || !*r.ObjectivePass || r.ToolUseSuccess == nil || !*r.ToolUseSuccess || strings.Join(r.ToolCalls, ",") != "calculate_area" {
		t.Errorf("simple_python_10 through the CLI: %s pass %v %v use %v calls %s", r.AvailabilityStatus, r.ObjectivePass, deref(r.Violation), r.ToolUseSuccess, callsOf(r))
	}
	// The other case got the same call, of a function it does not offer.
	r = find(t, recs, "claude_code_cli", "cli-bfcl", "simple_python_14")
	if r.ObjectivePass == nil || *r.ObjectivePass || r.Violation == nil || !strings.Contains(*r.Violation, "wrong_func_name") {
		t.Errorf("simple_python_14 through the CLI: pass %v %v calls %s", r.ObjectivePass, deref(r.Violation), callsOf(r))
	}
}

func callsOf(r results.Record) string {
	b, _ := json.Marshal(r.ToolCallDetails)
	return string(b)
}

func readJSONFile(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

func deref(s *string) string {
	if s == nil {
		return "<nil>"
	}
	return *s
}
