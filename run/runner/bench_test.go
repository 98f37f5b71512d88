package runner

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"bench/config"
	"bench/internal/record/results"
	"bench/internal/record/secrets"
	"bench/providers"
	"bench/run/output"
	"bench/run/plan"
)

// sseServer replays the recorded Ollama /v1/chat/completions stream
// (testdata/v1_chat_stream_text_usage.http) with its content chunk repeated
// so each response has `chunks` content deltas.
func sseServer(tb testing.TB, chunks int) *httptest.Server {
	raw, err := os.ReadFile("testdata/v1_chat_stream_text_usage.http")
	if err != nil {
		tb.Fatal(err)
	}
	var data []string
	sc := bufio.NewScanner(bytes.NewReader(raw))
	for sc.Scan() {
		if line := sc.Text(); strings.HasPrefix(line, "data: ") {
			data = append(data, line)
		}
	}
	// data: content, content, content, finish, usage, [DONE]. The repeated
	// chunk is the plain-text one (" to check memory."), so the figures are
	// the harness's per-chunk cost, not tool detection over 512 commands.
	content, tail := data[2], data[3:]
	var body bytes.Buffer
	body.WriteString(data[0] + "\n\n")
	for i := 1; i < chunks; i++ {
		body.WriteString(content + "\n\n")
	}
	for _, l := range tail {
		body.WriteString(l + "\n\n")
	}
	payload := body.Bytes()
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Write(payload)
	}))
}

type discard struct{}

func (discard) AddRecord(*results.Record) error { return nil }
func (discard) Critical()                       {}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkRunner runs whole sweeps through the runner and the ollama_openai
// provider against an in-process streaming server. Per cell it reports
// process CPU time (harness and the in-process server together) and
// allocations; the per-chunk cost is the slope between the chunk counts.
func BenchmarkRunner(b *testing.B) {
	for _, chunks := range []int{4, 64, 512} {
		b.Run(fmt.Sprintf("chunks=%d", chunks), func(b *testing.B) {
			srv := sseServer(b, chunks)
			defer srv.Close()
			c, err := config.Parse("bench.yaml", []byte("providers:\n  - type: ollama_openai\n    base_url: "+srv.URL+"/v1\n    models: [scripted]\n"), providers.Kinds)
			if err != nil {
				b.Fatal(err)
			}
			cfg := testConfig(c.Providers, 8, 1, 4)
			p, err := providers.New(&cfg.Providers[0])
			if err != nil {
				b.Fatal(err)
			}
			pl := plan.New(cfg)
			b.ReportAllocs()
			b.ResetTimer()
			cpu0 := cpuTime()
			for i := 0; i < b.N; i++ {
				out, err := Run(context.Background(), Options{Config: cfg, Plan: pl, Providers: map[string]providers.Provider{"ollama_openai": p}, Outputs: []output.Output{discard{}}})
				if err != nil || out.ByStatus["ok"] != len(pl.Cells) {
					b.Fatalf("run: %v %v", err, out.ByStatus)
				}
			}
			cells := float64(b.N * len(pl.Cells))
			b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/cells, "cpu-µs/cell")
			b.ReportMetric(float64(chunks), "chunks/cell")
		})
	}
}

// scrubRecord is a cell's record as finish gets it: an answer and its
// reasoning of out bytes each, a tool call with arguments, a timeline, the
// turns of an agentic cell and provider metrics; nothing in it is a secret
// (the common case, where the scrub must find nothing and copy nothing).
func scrubRecord(out int) *results.Record {
	text := strings.Repeat("I will run `free -h` to check memory, then {\"unit\": \"MB\"}. ", out/59+1)[:out]
	args := json.RawMessage(`{"command":"free -h","path":"/var/log/syslog","lines":20}`)
	rec := &results.Record{RawOutput: text, Reasoning: text, FinishReason: "stop", PromptName: "native_tool",
		AvailabilityStatus: results.StatusOK, ToolCalls: []string{"get_memory_usage"}, ExpectedTools: []string{"get_memory_usage"},
		ToolCallDetails: []results.ToolCall{{Name: "get_memory_usage", Arguments: args, Source: results.SourceNative, ID: "call_0"}},
		ProviderMetrics: map[string]any{"response_id": "resp_0123456789", "status": "completed", "eval_count": 120, "retry_statuses": []int{429}},
		ParsedOutput:    json.RawMessage(`{"unit":"MB"}`)}
	for _, e := range []string{"request_start", "connected", "request_written", "first_byte", "first_text", "tool_call", "end"} {
		rec.Timeline = append(rec.Timeline, results.TimelineEvent{Event: e, Detail: "new"})
	}
	for range 3 {
		rec.TurnDetails = append(rec.TurnDetails, results.Turn{Text: text[:min(len(text), 512)],
			Calls: []results.TurnCall{{ID: "call_1", Name: "get_weather", Arguments: args, Result: "18 C", ResultHash: "sha256:0123"}}})
	}
	return rec
}

// BenchmarkFinish is the per-cell cost of the record's one scrub
// (results.Record.Scrub with the provider's secrets: an API key and a
// dozen credentials from the environment) and its bounds, for answers of
// 1 KiB and of the default max_output_bytes (64 KiB); "none" is the same
// record with no secret at all, the floor.
func BenchmarkFinish(b *testing.B) {
	env := []string{"OPENAI_API_KEY=sk-proj-0123456789abcdefghijklmnopqrstuvwxyzABCD"}
	for i := range 12 {
		env = append(env, fmt.Sprintf("SERVICE%d_TOKEN=tok-%d-Zq8Xw7Cv6Bn5Mm4Ll3Kk2Jj1Hh0Gg", i, i))
	}
	vals := map[string]string{}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		vals[k] = v
	}
	withSecrets := secrets.Spec{Env: secrets.Inherited(env)}.Compile(func(n string) (string, bool) { v, ok := vals[n]; return v, ok })
	cfg := &config.Config{Run: config.Run{MaxOutputBytes: providers.DefaultMaxOutputBytes}}
	for _, out := range []int{1 << 10, 64 << 10} {
		for _, sec := range []struct {
			name string
			s    providers.Secrets
		}{{"none", providers.Secrets{}}, {"13-secrets", withSecrets}} {
			b.Run(fmt.Sprintf("out=%dKiB/%s", out>>10, sec.name), func(b *testing.B) {
				recs := make([]*results.Record, b.N)
				for i := range recs {
					recs[i] = scrubRecord(out)
				}
				b.ReportAllocs()
				b.ResetTimer()
				cpu0 := cpuTime()
				for i := 0; i < b.N; i++ {
					finish(recs[i], cfg, sec.s)
				}
				b.ReportMetric(float64((cpuTime()-cpu0).Nanoseconds())/float64(b.N)/1000, "cpu-µs/cell")
			})
		}
	}
}
