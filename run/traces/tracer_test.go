package traces

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"

	"bench/config"
	"bench/internal/record/results"
	"bench/internal/record/rundir"
	"bench/run/output"
	"bench/run/plan"
	"bench/run/traces/tracetest"
)

// fakeClock steps a fixed amount per reading.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time { c.t = c.t.Add(time.Millisecond); return c.t }

// runTrace writes the records as one run's trace into dir and returns the
// checked spans by name.
func runTrace(t *testing.T, dir string, cfg *config.Config, o Options, recs ...*results.Record) (*Tracer, []tracetest.Span) {
	t.Helper()
	clk := &fakeClock{t: t0.Add(-time.Second)}
	o.Config, o.RunDir, o.Version, o.Now = cfg, dir, "v9.9.9-test", clk.now
	if o.Getenv == nil {
		o.Getenv = func(string) string { return "" }
	}
	tr, err := New(context.Background(), o)
	if err != nil || tr == nil {
		t.Fatalf("New: %v %v", tr, err)
	}
	for _, r := range recs {
		if err := tr.AddRecord(r); err != nil {
			t.Fatal(err)
		}
	}
	tr.RunEnd(output.End{Reason: "finished", Planned: len(recs), Recorded: len(recs)})
	if err := tr.Stop(); err != nil {
		t.Fatal(err)
	}
	spans, err := tracetest.CheckFile(tr.Path(), forbidden...)
	if err != nil {
		t.Fatalf("%s breaks the spec:\n%v", tr.Path(), err)
	}
	return tr, spans
}

func named(t *testing.T, spans []tracetest.Span, name string) []tracetest.Span {
	t.Helper()
	var out []tracetest.Span
	for _, s := range spans {
		if s.Name == name {
			out = append(out, s)
		}
	}
	return out
}

func one(t *testing.T, spans []tracetest.Span, name string) tracetest.Span {
	t.Helper()
	got := named(t, spans, name)
	if len(got) != 1 {
		t.Fatalf("%d spans named %q, want 1", len(got), name)
	}
	return got[0]
}

func children(spans []tracetest.Span, parent tracetest.Span) []tracetest.Span {
	var out []tracetest.Span
	for _, s := range spans {
		if s.ParentSpanID == parent.SpanID {
			out = append(out, s)
		}
	}
	return out
}

func at(t *testing.T, s string) time.Time {
	t.Helper()
	v, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestTree(t *testing.T) {
	cfg := testConfig(t)
	tr, spans := runTrace(t, t.TempDir(), cfg, Options{}, retried(), skipped(), cli(), agentic())

	// root, 3 suites (oo/scripted, oo/missing, cc/sonnet), and the cells:
	// retried 1+2 attempts+2 tools+1 assert, skipped 1+1+1, cli 1+1+1,
	// agentic 1+2 turns+2 calls+2 attempts+1 assert.
	if len(spans) != 1+3+6+3+3+8 {
		t.Errorf("%d spans, want 24", len(spans))
	}
	root := one(t, spans, RootName)
	if root.Kind != KindSkillExecute || root.ParentSpanID != "" || root.Attributes["sop.level"] != "L2" ||
		root.Attributes["bench.run.id"] != "run-1" || root.Attributes["bench.version"] != "v9.9.9-test" || root.Status != StatusOK {
		t.Errorf("root = %+v", root)
	}
	if got := len(children(spans, root)); got != 3 {
		t.Errorf("root has %d children, want the 3 suites", got)
	}
	suite := one(t, spans, "suite oo/scripted")
	if suite.Attributes["gen_ai.provider.name"] != "ollama" || suite.Attributes["bench.cells"] != 2.0 || suite.Kind != KindCustom {
		t.Errorf("suite = %+v", suite)
	}
	if s := one(t, spans, "suite oo/missing"); s.Status != StatusSkipped {
		t.Errorf("a suite of skipped cells is %s", s.Status)
	}
	if s := one(t, spans, "suite cc/sonnet"); s.Status != StatusError || s.Error.Type != "cells_failed" {
		t.Errorf("a suite with a failed cell: %+v", s)
	}

	// The retried cell: its id is the traceparent the runner sent.
	cell := named(t, spans, "cell T1 #1")[0]
	for _, c := range named(t, spans, "cell T1 #1") {
		if c.Attributes["gen_ai.request.model"] == "scripted" {
			cell = c
		}
	}
	pc := plan.Cell{Provider: &cfg.Providers[0], Model: "scripted", Prompt: &cfg.PromptSet[0], Repetition: 1}
	if want := "00-" + cell.TraceID + "-" + cell.SpanID + "-01"; tr.TraceParent(pc) != want {
		t.Errorf("traceparent %s, want the cell span's %s", tr.TraceParent(pc), want)
	}
	if cell.DurationMS != 40.25 || cell.StartTime != "2026-11-22T10:00:00.123456Z" || cell.EndTime != "2026-11-22T10:00:00.163706Z" {
		t.Errorf("cell window %s–%s (%v ms), want the timeline's 40.25 ms", cell.StartTime, cell.EndTime, cell.DurationMS)
	}
	for k, want := range map[string]any{
		"gen_ai.operation.name": "chat", "gen_ai.provider.name": "ollama", "gen_ai.system": "ollama", "gen_ai.request.model": "scripted",
		"gen_ai.usage.input_tokens": 30.0, "gen_ai.usage.output_tokens": 12.0, "bench.ttft_ms": 5.0, "bench.e2e_ms": 14.0,
		"bench.prompt.size": float64(len(promptText)), "bench.prompt.sha256": hash(promptText), "bench.output.sha256": hash(answerText),
		"bench.retries": 1.0, "bench.prompt.id": "T1",
	} {
		if cell.Attributes[k] != want {
			t.Errorf("cell %s = %v, want %v", k, cell.Attributes[k], want)
		}
	}
	if fr, _ := cell.Attributes["gen_ai.response.finish_reasons"].([]any); len(fr) != 1 || fr[0] != "tool_calls" {
		t.Errorf("finish reasons %v", cell.Attributes["gen_ai.response.finish_reasons"])
	}
	kids := children(spans, cell)
	if len(kids) != 3 {
		t.Fatalf("retried cell has %d children, want 2 attempts and the check: %+v", len(kids), kids)
	}
	a0, a1, check := kids[0], kids[1], kids[2]
	if a0.Kind != KindHTTPRequest || a0.Status != StatusError || a0.Error.Type != "http_503" || a0.Attributes["http.response.status_code"] != 503.0 ||
		a0.Attributes["server.address"] != "127.0.0.1" || a0.Attributes["server.port"] != 11434.0 {
		t.Errorf("failed attempt = %+v", a0)
	}
	if a0.DurationMS != 5.399 || len(a0.Events) != 4 || a0.Events[3].Name != "retry" || a0.Events[3].Attributes["bench.retry.wait_ms"] != 20.0 {
		t.Errorf("failed attempt: %v ms, events %+v", a0.DurationMS, a0.Events)
	}
	if a1.Status != StatusOK || a1.Attributes["bench.attempt"] != 1.0 || a1.DurationMS != 14.65 {
		t.Errorf("answering attempt = %+v", a1)
	}
	var names []string
	for _, e := range a1.Events {
		names = append(names, e.Name)
	}
	if strings.Join(names, ",") != "connected,request_written,first_byte,first_token" || a1.Events[3].Attributes["bench.token.kind"] != "tool_call" {
		t.Errorf("answering attempt's events %+v", a1.Events)
	}
	tools := children(spans, a1)
	if len(tools) != 2 || tools[0].Name != "tool_call get_memory_usage" || tools[0].StartTime != "2026-11-22T10:00:00.153956Z" ||
		tools[0].Attributes["gen_ai.tool.call.id"] != "call_1" || tools[0].Attributes["bench.tool.arguments.sha256"] != hash(argsText) ||
		tools[1].Name != "tool_call free" || tools[1].Attributes["bench.tool.source"] != "text" || tools[1].StartTime != "2026-11-22T10:00:00.154956Z" {
		t.Errorf("tool calls %+v", tools)
	}
	if check.Kind != KindAssertionCheck || check.Status != StatusError || check.Attributes["assertions.total"] != 2.0 ||
		check.Attributes["assertions.passed"] != 1.0 || check.Attributes["assertions.failed"] != 1.0 || check.Error.Type != "assertion_failed" {
		t.Errorf("assertion = %+v", check)
	}

	// The skipped cell is skipped; its request failed.
	for _, c := range named(t, spans, "cell T1 #1") {
		switch c.Attributes["gen_ai.request.model"] {
		case "missing":
			k := children(spans, c)
			if c.Status != StatusSkipped || c.Error != nil || len(k) != 2 || k[0].Status != StatusError || k[0].Error.Type != "model_not_found" ||
				k[0].Attributes["http.response.status_code"] != 404.0 || k[1].Status != StatusSkipped {
				t.Errorf("skipped cell %+v, children %+v", c, k)
			}
		case "sonnet":
			k := children(spans, c)
			if c.Status != StatusError || c.Error.Type != "timeout" || c.Attributes["gen_ai.operation.name"] != "invoke_agent" || len(k) != 2 ||
				k[0].Kind != KindToolCall || k[0].Name != "exec claude" || k[0].Attributes["bench.exit_code"] != -1.0 || k[0].Status != StatusError {
				t.Errorf("cli cell %+v, children %+v", c, k)
			}
		}
	}

	// The agentic cell: turns with their calls and requests.
	ag := one(t, spans, "cell T2 #1")
	turns := children(spans, ag)
	if len(turns) != 3 || turns[0].Name != "turn 1" || turns[1].Name != "turn 2" || turns[0].Kind != KindLLMReason {
		t.Fatalf("agentic children %+v", turns)
	}
	if turns[0].EndTime != "2026-11-22T10:00:00.214956Z" || turns[0].Events[0].Name != "reply_end" {
		t.Errorf("turn 1 must cover its reply and its calls: %s, events %+v", turns[0].EndTime, turns[0].Events)
	}
	t1 := children(spans, turns[0])
	if len(t1) != 3 || t1[0].Name != "execute_tool read_file" || t1[0].Attributes["bench.tool.result.sha256"] != hash(resultText) ||
		t1[0].Attributes["gen_ai.operation.name"] != "execute_tool" || t1[1].Status != StatusError || t1[1].Attributes["bench.tool.unknown"] != true ||
		t1[2].Kind != KindHTTPRequest {
		t.Errorf("turn 1 children %+v", t1)
	}
	if t2 := children(spans, turns[1]); len(t2) != 1 || t2[0].Kind != KindHTTPRequest {
		t.Errorf("turn 2 children %+v", t2)
	}
}

// A resumed run writes a second file whose root links to the first.
func TestResumeLinksToTheEarlierTrace(t *testing.T) {
	dir := t.TempDir()
	cfg := testConfig(t)
	first, _ := runTrace(t, dir, cfg, Options{}, retried())
	second, spans := runTrace(t, dir, cfg, Options{Resume: true, Done: 1}, skipped())
	files, _ := filepath.Glob(filepath.Join(dir, rundir.TracesDir, "*.jsonl"))
	if len(files) != 2 || first.TraceID() == second.TraceID() {
		t.Fatalf("files %v; trace ids %s %s", files, first.TraceID(), second.TraceID())
	}
	root := one(t, spans, RootName)
	if root.Attributes["bench.resume.previous_trace_id"] != first.TraceID().String() ||
		root.Attributes["bench.resume.previous_span_id"] != rootID(first.TraceID()).String() || root.Attributes["bench.resume.cells_done"] != 1.0 {
		t.Errorf("resumed root %+v", root.Attributes)
	}
	b, _ := os.ReadFile(first.Path())
	if !bytes.Contains(b, []byte(`"span_id":"`+rootID(first.TraceID()).String()+`"`)) {
		t.Error("the link names no span of the first trace")
	}
}

func TestNothingOn(t *testing.T) {
	cfg := testConfig(t)
	cfg.Traces.NDJSON = false
	tr, err := New(context.Background(), Options{Config: cfg, RunDir: t.TempDir(), Getenv: func(string) string { return "" }})
	if tr != nil || err != nil {
		t.Fatalf("NDJSON off and no endpoint: %v %v, want no tracer", tr, err)
	}
}

// The checker catches each rule being broken.
func TestCheckCatches(t *testing.T) {
	cfg := testConfig(t)
	_, spans := runTrace(t, t.TempDir(), cfg, Options{}, retried())
	var good bytes.Buffer
	for _, s := range spans {
		good.Write(mustJSON(t, s))
		good.WriteByte('\n')
	}
	if _, err := tracetest.Check(bytes.NewReader(good.Bytes())); err != nil {
		t.Fatalf("re-encoded trace fails: %v", err)
	}
	lines := strings.Split(strings.TrimSpace(good.String()), "\n")
	cell := 0
	for i, l := range lines {
		if strings.Contains(l, `"name":"cell T1 #1"`) {
			cell = i
		}
	}
	for _, tc := range []struct{ name, from, to, want string }{
		{"missing end_time", `"end_time":`, `"x_end":`, "end_time is missing"},
		{"bad duration", `"duration_ms":40.25`, `"duration_ms":41`, "is not end − start"},
		{"bad kind", `"kind":"custom"`, `"kind":"cell"`, "not one of the spec's"},
		{"bad status", `"status":"ok"`, `"status":"fine"`, "not ok, error or skipped"},
		{"upper attr", `"bench.retries"`, `"Bench.Retries"`, "not a lowercase dotted name"},
		{"no ms", `.123456Z"`, `Z"`, "not ISO-8601 UTC with milliseconds"},
		{"error without status", `"status":"ok"`, `"status":"ok","error":{"type":"x","message":"y"}`, "error is set but status is ok"},
		{"unknown field", `"status":"ok"`, `"status":"ok","extra":1`, "extra is not a field"},
		{"forbidden", `"bench.prompt.id":"T1"`, `"bench.prompt.id":"zeta-prompt-text"`, "forbidden string"},
	} {
		t.Run(strings.ReplaceAll(tc.name, " ", "_"), func(t *testing.T) {
			bad := append([]string(nil), lines...)
			if !strings.Contains(bad[cell], tc.from) {
				t.Fatalf("cell line has no %q: %s", tc.from, bad[cell])
			}
			bad[cell] = strings.Replace(bad[cell], tc.from, tc.to, 1)
			_, err := tracetest.Check(strings.NewReader(strings.Join(bad, "\n")), forbidden...)
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "line "+itoa(cell+1)) {
				t.Errorf("err = %v, want %q at line %d", err, tc.want, cell+1)
			}
		})
	}
	// Tree rules: a child outside its parent, a duplicate id, a lost parent.
	for _, tc := range []struct {
		name string
		edit func([]tracetest.Span)
		want string
	}{
		{"outside parent", func(s []tracetest.Span) {
			s[1].StartTime = "2020-01-01T00:00:00.000000Z"
			s[1].DurationMS = durMS(t, s[1])
		}, "outside its parent"},
		{"duplicate id", func(s []tracetest.Span) { s[2].SpanID = s[1].SpanID }, "is also line"},
		{"lost parent", func(s []tracetest.Span) { s[1].ParentSpanID = "00000000000000ff" }, "names no span"},
		{"two roots", func(s []tracetest.Span) { s[1].ParentSpanID = "" }, "2 root spans"},
		{"other trace", func(s []tracetest.Span) { s[1].TraceID = strings.Repeat("ab", 16) }, "is not the trace's"},
		{"no assertion", func(s []tracetest.Span) {
			for i := range s {
				if s[i].Kind == KindAssertionCheck {
					s[i].Kind = KindCustom
				}
			}
		}, "assertion.check children"},
	} {
		t.Run(strings.ReplaceAll(tc.name, " ", "_"), func(t *testing.T) {
			cp := append([]tracetest.Span(nil), spans...)
			tc.edit(cp)
			var buf bytes.Buffer
			for _, s := range cp {
				buf.Write(mustJSON(t, s))
				buf.WriteByte('\n')
			}
			if _, err := tracetest.Check(&buf); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want %q", err, tc.want)
			}
		})
	}
}

func durMS(t *testing.T, s tracetest.Span) float64 {
	return float64(at(t, s.EndTime).Sub(at(t, s.StartTime)).Microseconds()) / 1000
}

// Every attribute key bench writes is lowercase and dotted: the NDJSON
// writer relies on it to write keys without escaping.
func TestAttributeKeys(t *testing.T) {
	src, err := os.ReadFile("attrs.go")
	if err != nil {
		t.Fatal(err)
	}
	keys := regexp.MustCompile(`(?m)^\s+key\w+\s+= (?:attribute\.Key\("([^"]+)"\)|semconv\.(\w+))`).FindAllStringSubmatch(string(src), -1)
	if len(keys) < 60 {
		t.Fatalf("found %d keys in attrs.go", len(keys))
	}
	for _, k := range keys {
		name := k[1]
		if name == "" {
			continue // a semantic-conventions constant, checked below
		}
		if !tracetest.AttrName.MatchString(name) {
			t.Errorf("%q is not lowercase and dotted", name)
		}
	}
	for _, k := range []attribute.Key{keyOperation, keyProviderName, keyRequestModel, keyPromptName, keyInputTokens, keyOutputTokens,
		keyFinishReasons, keyToolName, keyToolCallID, keyToolType, keyAgentName, keyEvalName, keyEvalLabel, keyEvalValue,
		keyHTTPMethod, keyHTTPStatus, keyServerAddr, keyServerPort, keyErrorType} {
		if !tracetest.AttrName.MatchString(string(k)) {
			t.Errorf("%q is not lowercase and dotted", k)
		}
	}
}

// gen_ai.provider.name is the kind's: the convention's well-known value
// (the server's maker, not the protocol), and the type itself for a kind
// this bench does not know.
func TestGenAIProviderIsTheKinds(t *testing.T) {
	for typ, want := range map[string]string{
		"ollama": "ollama", "ollama_openai": "ollama", "openai_responses": "openai",
		"claude_code_cli": "anthropic", "a_kind_from_the_future": "a_kind_from_the_future",
	} {
		if got := genAIProvider(typ); got != want {
			t.Errorf("%s: gen_ai.provider.name %q, want %q", typ, got, want)
		}
	}
}
