package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"bench/internal/record/results"
	"bench/internal/record/rundir"
	"bench/internal/testpeer/otelcoltest"
	"bench/run/traces"
	"bench/run/traces/tracetest"
)

// headerLog is a reverse proxy in front of a model server that records
// the traceparent of every request: what a traced server would join.
type headerLog struct {
	mu   sync.Mutex
	seen map[string][]string // path → traceparents
}

func traceparentProxy(t *testing.T, target string) (*httptest.Server, *headerLog) {
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	h := &headerLog{seen: map[string][]string{}}
	rp := httputil.NewSingleHostReverseProxy(u)
	rp.FlushInterval = -1 // stream as the server does
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.mu.Lock()
		h.seen[r.URL.Path] = append(h.seen[r.URL.Path], r.Header.Get("Traceparent"))
		h.mu.Unlock()
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv, h
}

func (h *headerLog) get(path string) []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.seen[path]...)
}

// runBenchEnv is runBench with extra environment variables.
func runBenchEnv(t *testing.T, env []string, config string, args ...string) (int, string, string, []results.Record, string) {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "prompts.yaml"), []byte(promptFile), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "bench.yaml"), []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(benchBin, append([]string{"run", "--config", filepath.Join(dir, "bench.yaml"), "--run-id", "e2e"}, args...)...)
	cmd.Env = append(noOTEL(), env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return code, out.String(), errb.String(), readRecords(t, filepath.Join(dir, "runs", "e2e", "results.jsonl")), filepath.Join(dir, "runs", "e2e")
}

// noOTEL is the environment without OTEL_* variables: each test says
// what it wants.
func noOTEL() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "OTEL_") {
			env = append(env, kv)
		}
	}
	return env
}

// traceFile checks the run's one trace file against the spec and returns
// its spans.
func traceFile(t *testing.T, runDir string, forbidden ...string) (string, []tracetest.Span) {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(runDir, rundir.TracesDir, "*.jsonl"))
	if len(files) != 1 {
		t.Fatalf("trace files %v, want one", files)
	}
	spans, err := tracetest.CheckFile(files[0], forbidden...)
	if err != nil {
		t.Fatalf("%s breaks the spec:\n%v", files[0], err)
	}
	return files[0], spans
}

// texts are what no trace may hold: the prompts and the answers.
func texts(recs []results.Record) []string {
	out := []string{"Say the phrase: alpha", "How much memory is free? beta", "Which command shows disk space? gamma", "Use the tool."}
	for _, r := range recs {
		if len(r.RawOutput) > 8 {
			out = append(out, r.RawOutput)
		}
	}
	return out
}

func us(ms float64) int64 { return int64(math.Round(ms * 1000)) }

func spanUS(t *testing.T, s tracetest.Span) (start, end int64) {
	t.Helper()
	a, err1 := time.Parse(time.RFC3339Nano, s.StartTime)
	b, err2 := time.Parse(time.RFC3339Nano, s.EndTime)
	if err1 != nil || err2 != nil {
		t.Fatalf("times of %s: %v %v", s.Name, err1, err2)
	}
	return a.UnixMicro(), b.UnixMicro()
}

// msAgree says a duration in µs (from stamps rounded to µs) is the
// record's whole milliseconds (from the same stamps in ns): equal up to
// the microsecond the rounding may move it across a millisecond.
// msAgree says a duration in µs rounds to ms whole milliseconds, as
// results.jsonl rounds them (a microsecond either way for the stamps'
// own rounding).
func msAgree(durUS, ms int64) bool { return durUS+501 >= ms*1000 && durUS-501 < ms*1000 }

// writtenUS is when the span's request was on the wire (its request_written
// event), or its start: ttft_ms and e2e_ms are timed from the write.
func writtenUS(t *testing.T, s tracetest.Span) int64 {
	start, _ := spanUS(t, s)
	for _, e := range s.Events {
		if e.Name == "request_written" {
			at, err := time.Parse(time.RFC3339Nano, e.Timestamp)
			if err != nil {
				t.Fatal(err)
			}
			return at.UnixMicro()
		}
	}
	return start
}

// One bench run against the real Ollama with the export on: the collector
// receives one trace holding the NDJSON's tree, with the GenAI attributes
// and the durations of results.jsonl, and every request carried the
// traceparent of its cell's span.
func TestTraceToRealCollector(t *testing.T) {
	s := needServer(t)
	for _, protocol := range []string{"http/protobuf", "grpc", "http/json"} {
		t.Run(strings.ReplaceAll(protocol, "/", "_"), func(t *testing.T) {
			col := otelcoltest.Start(t)
			proxy, hdr := traceparentProxy(t, s.URL())
			ep := col.HTTPEndpoint()
			if protocol == "grpc" {
				ep = "http://" + col.GRPCEndpoint()
			}
			code, stdout, stderr, recs, runDir := runBenchEnv(t,
				[]string{"OTEL_EXPORTER_OTLP_ENDPOINT=" + ep, "OTEL_EXPORTER_OTLP_PROTOCOL=" + protocol, "OTEL_SERVICE_NAME=bench-e2e"},
				sweepConfig(proxy.URL))
			if code != 0 || len(recs) != 20 || len(warnings(stderr)) > 0 {
				t.Fatalf("exit %d, %d records\n%s%s", code, len(recs), stdout, stderr)
			}
			_, spans := traceFile(t, runDir, texts(recs)...)

			// The span count, from the records alone.
			want := 1 + 4
			for _, r := range recs {
				want += 2 + len(r.ToolCallDetails)
				for _, e := range r.Timeline {
					if e.Event == results.EventRequestStart {
						want++
					}
				}
			}
			if len(spans) != want {
				t.Errorf("NDJSON has %d spans, want %d", len(spans), want)
			}
			got := col.WaitSpans(t, want, 30*time.Second)
			col.Stop()
			got = col.Spans(t)
			if len(got) != want {
				t.Fatalf("collector holds %d spans, want %d", len(got), want)
			}
			otlp := map[string]otelcoltest.Span{}
			for _, o := range got {
				if o.TraceID != spans[0].TraceID {
					t.Fatalf("collector holds trace %s besides %s: one run is one trace", o.TraceID, spans[0].TraceID)
				}
				otlp[o.SpanID] = o
				if o.Resource["service.name"] != "bench-e2e" {
					t.Errorf("service.name %v", o.Resource["service.name"])
				}
			}
			byID := map[string]tracetest.Span{}
			for _, n := range spans {
				byID[n.SpanID] = n
				o, ok := otlp[n.SpanID]
				ns, ne := spanUS(t, n)
				if !ok || o.Name != n.Name || o.ParentSpanID != n.ParentSpanID || o.StartUnixNano != ns*1000 || o.EndUnixNano != ne*1000 {
					t.Errorf("span %s %q: OTLP %+v", n.SpanID, n.Name, o)
				}
			}

			// The tree: root → 4 suites → 20 cells.
			var root tracetest.Span
			suites, cells := map[string]bool{}, map[string]tracetest.Span{}
			for _, n := range spans {
				switch {
				case n.ParentSpanID == "":
					root = n
				case strings.HasPrefix(n.Name, "suite "):
					suites[n.SpanID] = true
				case strings.HasPrefix(n.Name, "cell "):
					cells[fmt.Sprint(n.Attributes["bench.provider"], "/", n.Attributes["gen_ai.request.model"], "/", n.Attributes["bench.prompt.id"])] = n
				}
			}
			if root.Name != traces.RootName || root.Attributes["bench.run.id"] != "e2e" || root.Attributes["bench.cells.recorded"] != 20.0 || len(suites) != 4 || len(cells) != 20 {
				t.Fatalf("root %+v, %d suites, %d cells", root, len(suites), len(cells))
			}
			for _, r := range recs {
				c, ok := cells[r.Provider+"/"+r.Model+"/"+r.PromptID]
				if !ok || !suites[c.ParentSpanID] || byID[c.ParentSpanID].ParentSpanID != root.SpanID {
					t.Errorf("%s/%s/%s: cell %+v not under a suite under the root", r.Provider, r.Model, r.PromptID, c)
					continue
				}
				checkCell(t, r, c, spans)
			}

			// Every inference request named its cell's span, and each
			// suite's warm-up its suite's.
			ids, suiteIDs := map[string]bool{}, map[string]bool{}
			for _, c := range cells {
				ids["00-"+c.TraceID+"-"+c.SpanID+"-01"] = true
			}
			for id := range suites {
				suiteIDs["00-"+root.TraceID+"-"+id+"-01"] = true
			}
			var sent []string
			warmups := map[string]bool{}
			for _, tp := range append(hdr.get("/v1/chat/completions"), hdr.get("/api/chat")...) {
				if suiteIDs[tp] {
					warmups[tp] = true
					continue
				}
				sent = append(sent, tp)
			}
			seen := map[string]bool{}
			for _, tp := range sent {
				if !ids[tp] {
					t.Errorf("a request carried traceparent %q, not a cell or suite span of the trace", tp)
				}
				seen[tp] = true
			}
			if len(warmups) == 0 {
				t.Error("no warm-up request named its suite's span")
			}
			asked := 0 // cells that sent a request (not those skipped before)
			for _, r := range recs {
				for _, e := range r.Timeline {
					if e.Event == results.EventRequestStart {
						asked++
						break
					}
				}
			}
			if asked < 15 || len(sent) < asked || len(seen) != asked {
				t.Errorf("%d inference requests naming %d cells, want every one of the %d cells that sent one", len(sent), len(seen), asked)
			}
		})
	}
}

// checkCell compares a cell's spans with its record.
func checkCell(t *testing.T, r results.Record, c tracetest.Span, spans []tracetest.Span) {
	t.Helper()
	where := r.Provider + "/" + r.Model + "/" + r.PromptID
	end := r.Timeline[len(r.Timeline)-1]
	if end.Event != results.EventEnd || us(c.DurationMS) != us(end.AtMS) {
		t.Errorf("%s: cell span %v ms, timeline end %v ms", where, c.DurationMS, end.AtMS)
	}
	if c.Attributes["gen_ai.operation.name"] != "chat" || c.Attributes["gen_ai.provider.name"] != "ollama" || c.Attributes["gen_ai.request.model"] != r.Model {
		t.Errorf("%s: GenAI attributes %v", where, c.Attributes)
	}
	if r.OutputTokens != nil && (c.Attributes["gen_ai.usage.output_tokens"] != float64(*r.OutputTokens) || c.Attributes["gen_ai.usage.input_tokens"] != float64(*r.InputTokens)) {
		t.Errorf("%s: usage %v/%v, record %d/%d", where, c.Attributes["gen_ai.usage.input_tokens"], c.Attributes["gen_ai.usage.output_tokens"], *r.InputTokens, *r.OutputTokens)
	}
	if c.Attributes["bench.e2e_ms"] != float64(r.E2EMS) {
		t.Errorf("%s: bench.e2e_ms %v, record %d", where, c.Attributes["bench.e2e_ms"], r.E2EMS)
	}
	var last tracetest.Span
	var check tracetest.Span
	for _, s := range spans {
		if s.ParentSpanID != c.SpanID {
			continue
		}
		switch s.Kind {
		case traces.KindHTTPRequest:
			last = s
		case traces.KindAssertionCheck:
			check = s
		}
	}
	requests := 0
	for _, e := range r.Timeline {
		if e.Event == results.EventRequestStart {
			requests++
		}
	}
	if requests == 0 {
		// Skipped before any request (the model is not on the server).
		if last.SpanID != "" || c.Status != "skipped" {
			t.Errorf("%s: no request made, yet a request span %+v or status %s", where, last, c.Status)
		}
		return
	}
	_, le := spanUS(t, last)
	ls := writtenUS(t, last)
	if last.SpanID == "" || !msAgree(le-ls, r.E2EMS) {
		t.Errorf("%s: last request %v ms, e2e_ms %d", where, last.DurationMS, r.E2EMS)
	}
	if r.TTFTMS != nil {
		ok := false
		for _, e := range last.Events {
			if e.Name == "first_token" {
				at, _ := time.Parse(time.RFC3339Nano, e.Timestamp)
				ok = msAgree(at.UnixMicro()-ls, *r.TTFTMS) && c.Attributes["bench.ttft_ms"] == float64(*r.TTFTMS)
			}
		}
		if !ok {
			t.Errorf("%s: first_token event of %+v does not give ttft_ms %d", where, last.Events, *r.TTFTMS)
		}
	}
	wantStatus := map[bool]string{true: "ok", false: "error"}[r.AvailabilityStatus == "ok" && r.FailureType == nil]
	if r.AvailabilityStatus == results.StatusSkippedUnavailable {
		wantStatus = "skipped"
	}
	if c.Status != wantStatus {
		t.Errorf("%s: cell status %s, want %s", where, c.Status, wantStatus)
	}
	judged := 0
	for _, v := range []*bool{r.ObjectivePass, r.ToolUseSuccess} {
		if v != nil {
			judged++
		}
	}
	if check.Attributes["assertions.total"] != float64(judged) {
		t.Errorf("%s: assertions %v, record judged %d", where, check.Attributes, judged)
	}
}

// comparable is a record less what differs between two runs of the same
// cells: the timing fields, and the server's own timings.
func comparable(t *testing.T, recs []results.Record) []string {
	t.Helper()
	var out []string
	for _, r := range recs {
		r.StartedAtMS, r.EndedAtMS, r.StartedAtUS, r.E2EMS = 0, 0, 0, 0
		r.TTFTMS, r.TTFOMS, r.TTFRMS, r.TokensPerS, r.ReasoningTokensPerS = nil, nil, nil, nil, nil
		r.QueueMS, r.LoadMS, r.ColdStart = nil, nil, false
		r.Timeline, r.ProviderMetrics = nil, nil
		// The serving metrics are timings too (the load work's).
		r.ITLMS, r.TPOTMS, r.PrefillTokensPerS = nil, nil, nil
		r.StageStartUS, r.EndedAtUS = 0, 0
		r.ScheduledAtMS, r.SentAtMS, r.ScheduleSlipMS, r.SlotWaitMS = nil, nil, nil, nil
		for i := range r.ToolCallDetails {
			r.ToolCallDetails[i].ID = "" // the server makes them up
		}
		for i := range r.TurnDetails {
			r.TurnDetails[i].StartMS, r.TurnDetails[i].EndMS, r.TurnDetails[i].TTFTMS = 0, 0, nil
		}
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, string(b))
	}
	sort.Strings(out)
	return out
}

// A collector that refuses connections or accepts and never answers: one
// warning, the run finishes, and results.jsonl holds what a run without
// any tracing holds.
func TestCollectorDownChangesNoResult(t *testing.T) {
	s := needServer(t)
	cfg := sweepConfig(s.URL()) + "traces:\n  timeout: 1s\n"
	began := time.Now()
	code, _, stderr, plain, _ := runBenchEnv(t, nil, cfg+"  ndjson: false\n")
	t.Logf("untraced run took %s", time.Since(began).Round(time.Millisecond))
	if code != 0 || len(plain) != 20 || len(warnings(stderr)) > 0 {
		t.Fatalf("untraced run: exit %d, %d records\n%s", code, len(plain), stderr)
	}
	want := comparable(t, plain)
	stalled, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer stalled.Close()
	go func() {
		var held []net.Conn
		defer func() {
			for _, c := range held {
				c.Close()
			}
		}()
		for {
			c, err := stalled.Accept()
			if err != nil {
				return
			}
			held = append(held, c)
		}
	}()
	refused, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refusedAddr := refused.Addr().String()
	refused.Close()
	for _, tc := range []struct{ name, addr, protocol string }{
		{"refused_http", refusedAddr, "http/protobuf"}, {"refused_grpc", refusedAddr, "grpc"},
		{"stalled_http", stalled.Addr().String(), "http/protobuf"}, {"stalled_grpc", stalled.Addr().String(), "grpc"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			began := time.Now()
			code, stdout, stderr, recs, runDir := runBenchEnv(t,
				[]string{"OTEL_EXPORTER_OTLP_ENDPOINT=http://" + tc.addr, "OTEL_EXPORTER_OTLP_PROTOCOL=" + tc.protocol}, cfg)
			t.Logf("run took %s", time.Since(began).Round(time.Millisecond))
			if code != 0 || len(recs) != 20 {
				t.Fatalf("exit %d, %d records\n%s%s", code, len(recs), stdout, stderr)
			}
			if w := warnings(stderr); len(w) != 1 || !strings.HasPrefix(w[0], "bench: warning: traces: OTLP export ("+tc.protocol+") failed") {
				t.Errorf("want one warning, got %d:\n%s", len(w), stderr)
			}
			got := comparable(t, recs)
			for i := range got {
				if got[i] != want[i] {
					t.Errorf("results.jsonl differs from an untraced run's:\n%s\nuntraced:\n%s", got[i], want[i])
				}
			}
			traceFile(t, runDir, texts(recs)...)
		})
	}
}

// A resumed run writes a second trace whose root links to the first, and
// bench report reads results.jsonl alone, whatever traces/ holds.
func TestResumedRunLinksTraces(t *testing.T) {
	s := needServer(t)
	dir := t.TempDir()
	for _, f := range []struct{ name, body string }{{"prompts.yaml", promptFile}, {"bench.yaml", sweepConfig(s.URL())}} {
		if err := os.WriteFile(filepath.Join(dir, f.name), []byte(f.body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	bench := func(args ...string) string {
		cmd := exec.Command(benchBin, args...)
		cmd.Env = noOTEL()
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("bench %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	run := []string{"run", "--config", filepath.Join(dir, "bench.yaml"), "--run-id", "e2e", "--prompts", "T0"}
	bench(run...)
	runDir := filepath.Join(dir, "runs", "e2e")
	_, first := traceFile(t, runDir)
	if out := bench(append(run, "--resume")...); !strings.Contains(out, "2 of 4 cells already recorded") { // the missing model's cells run again
		t.Fatalf("resume:\n%s", out)
	}
	files, _ := filepath.Glob(filepath.Join(runDir, rundir.TracesDir, "*.jsonl"))
	if len(files) != 2 {
		t.Fatalf("trace files %v, want the first run's and the resumed one's", files)
	}
	var second []tracetest.Span
	for _, f := range files {
		spans, err := tracetest.CheckFile(f)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if spans[0].TraceID != first[0].TraceID {
			second = spans
		}
	}
	var firstRoot string
	for _, s := range first {
		if s.ParentSpanID == "" {
			firstRoot = s.SpanID
		}
	}
	// The resumed run ran the missing model's two cells again (unavailable
	// cells are retried); its root links to the first trace.
	var root *tracetest.Span
	cells := 0
	for i, s := range second {
		switch {
		case s.ParentSpanID == "":
			root = &second[i]
		case strings.HasPrefix(s.Name, "cell "):
			cells++
		}
	}
	if root == nil || cells != 2 || root.Attributes["bench.resume.previous_trace_id"] != first[0].TraceID ||
		root.Attributes["bench.resume.previous_span_id"] != firstRoot || root.Attributes["bench.resume.cells_done"] != 2.0 {
		t.Errorf("resumed trace %+v, want 2 cells and a root linking to %s/%s", second, first[0].TraceID, firstRoot)
	}
	bench("report", runDir)
}

// warnings are stderr's warning lines but the machine-busy one: a busy
// machine (other tests beside this one) is said in a warning of its own,
// which is the sampler's finding, not the traces'.
func warnings(stderr string) []string {
	var out []string
	for _, l := range strings.Split(notBusy(stderr), "\n") {
		if strings.Contains(l, "warning") {
			out = append(out, l)
		}
	}
	return out
}

// notBusy is stderr without the machine-busy warning's lines.
func notBusy(stderr string) string {
	var kept []string
	for _, l := range strings.SplitAfter(stderr, "\n") {
		if !strings.Contains(l, "the machine was busy during its suite") {
			kept = append(kept, l)
		}
	}
	return strings.Join(kept, "")
}
