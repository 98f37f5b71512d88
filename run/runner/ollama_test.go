package runner_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"bench/config"
	"bench/internal/record/results"
	"bench/internal/record/rundir"
	"bench/internal/testpeer/ollamatest"
	"bench/internal/testpeer/testmodel"
	"bench/providers"
	"bench/report"
	"bench/run/output"
	"bench/run/plan"
	"bench/run/resources"
	"bench/run/runner"
)

// These run the real runner against a real Ollama (internal/testpeer/ollamatest):
// two scripted models behind one server reached by two provider entries,
// its native API and its /v1.

type memSink struct {
	mu   sync.Mutex
	recs []*results.Record
}

func (m *memSink) Critical() {}

func (m *memSink) AddRecord(r *results.Record) error {
	m.mu.Lock()
	m.recs = append(m.recs, r)
	m.mu.Unlock()
	return nil
}

// alphaBeta is the script both models answer: the prompt's last word picks
// the reply. Each model gets one more trigger of its own, so the two are
// different files (one file would be one model to the server).
var alphaBeta = testmodel.Script{
	"hello": {"Hello", " there", "!"},
	"count": {"one", " two", " three", " four", " five", " six", " seven", " eight"},
	"think": {"<think>", "Let", " me", " see.", "</think>", "Done", " now.", " Bye!"},
}

const promptsYAML = `prompts:
  - {id: P0, name: hello, prompt: "Say hello", validator: {type: exact, value: "Hello there!"}}
  - {id: P1, name: count, prompt: "Please count", validator: {type: exact, value: "one two three four five six seven eight"}}
  - {id: P2, name: hello2, prompt: "Again hello", validator: {type: exact, value: "Hello there!"}}
  - {id: P3, name: count2, prompt: "Again count", validator: {type: exact, value: "one two three four five six seven eight"}}
`

// sharedServerConfig is a run against srv through both kinds, two models
// each, with extra appended to the run block.
func sharedServerConfig(t testing.TB, srv *ollamatest.Server, extra string, reps int) *config.Config {
	t.Helper()
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "prompts.yaml"), []byte(promptsYAML), 0o644)
	yaml := fmt.Sprintf(`run:
  concurrency: 4
  repetitions: %d
  timeout: 60s
%sproviders:
  - name: native
    type: ollama
    base_url: %s
    models: [alpha, beta]
  - name: v1
    type: ollama_openai
    base_url: %s/v1
    models: [alpha, beta]
prompts:
  files: [prompts.yaml]
`, reps, extra, srv.URL(), srv.URL())
	path := filepath.Join(dir, "bench.yaml")
	os.WriteFile(path, []byte(yaml), 0o644)
	cfg, err := config.Load(path, providers.Kinds)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

func buildProviders(t testing.TB, cfg *config.Config) map[string]providers.Provider {
	t.Helper()
	m := map[string]providers.Provider{}
	for i := range cfg.Providers {
		p, err := providers.New(&cfg.Providers[i])
		if err != nil {
			t.Fatal(err)
		}
		m[cfg.Providers[i].Name] = p
	}
	return m
}

// loads counts the models the server loaded (its log says so once each).
func loads(srv *ollamatest.Server) int {
	return strings.Count(srv.LogTail(1_000_000), "llama runner started")
}

// On a server that holds one model at a time, two provider entries that
// share it run one model at a time: the server loads each model once (by
// the suites' warm-ups), no cell is a cold start, and each suite's
// resource window holds its own cells and no other suite's.
func TestSharedServerNoReload(t *testing.T) {
	srv := ollamatest.Start(t, "OLLAMA_MAX_LOADED_MODELS=1", "OLLAMA_NUM_PARALLEL=4")
	createAlphaBeta(t, srv)
	cfg := sharedServerConfig(t, srv, "", 2)
	dir := t.TempDir()
	rec := resources.NewRecorder(dir)
	sink := &memSink{}
	pl := plan.New(cfg)
	out, err := runner.Run(context.Background(), runner.Options{Config: cfg, Plan: pl, Providers: buildProviders(t, cfg), Outputs: []output.Output{sink, rec}})
	if err != nil || out.ByStatus["ok"] != len(pl.Cells) {
		t.Fatalf("run: %v %v", err, out.ByStatus)
	}
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	if n := loads(srv); n != 2 {
		t.Errorf("the server loaded a model %d times, want 2 (alpha once, beta once)", n)
	}
	for _, r := range sink.recs {
		if r.ColdStart || !r.Success || r.ObjectivePass == nil || !*r.ObjectivePass {
			t.Errorf("%s/%s %s: cold %v, success %v, pass %v", r.Provider, r.Model, r.PromptID, r.ColdStart, r.Success, r.ObjectivePass)
		}
	}
	for _, s := range pl.Suites {
		sr, err := rundir.ReadSuite(dir, s.Provider, s.Model, s.ThinkingLevel)
		if err != nil || sr == nil || sr.Before == nil || sr.After == nil {
			t.Fatalf("%s/%s: resource record %+v, %v", s.Provider, s.Model, sr, err)
		}
		if sr.Warmup == nil || sr.Warmup.Error != "" {
			t.Errorf("%s/%s: warm-up %+v", s.Provider, s.Model, sr.Warmup)
		}
		from, to := sr.Before.TakenAt.UnixMilli(), sr.After.TakenAt.UnixMilli()
		for _, r := range sink.recs {
			own := r.Provider == s.Provider && r.Model == s.Model
			inside := r.StartedAtMS >= from && r.EndedAtMS <= to
			overlaps := r.StartedAtMS < to && r.EndedAtMS > from
			if own && !inside {
				t.Errorf("%s/%s: its cell %s ran outside its window", s.Provider, s.Model, r.PromptID)
			}
			if !own && overlaps {
				t.Errorf("%s/%s: the window holds %s/%s %s", s.Provider, s.Model, r.Provider, r.Model, r.PromptID)
			}
		}
	}
}

// With run.interleave the two models are mixed on that server, which then
// swaps them; the cells that waited for a swap are flagged cold.
func TestInterleavedSwapsFlagged(t *testing.T) {
	srv := ollamatest.Start(t, "OLLAMA_MAX_LOADED_MODELS=1", "OLLAMA_NUM_PARALLEL=4")
	createAlphaBeta(t, srv)
	cfg := sharedServerConfig(t, srv, "  interleave: true\n", 2)
	sink := &memSink{}
	pl := plan.New(cfg)
	out, err := runner.Run(context.Background(), runner.Options{Config: cfg, Plan: pl, Providers: buildProviders(t, cfg), Outputs: []output.Output{sink}})
	if err != nil || out.ByStatus["ok"] != len(pl.Cells) {
		t.Fatalf("run: %v %v", err, out.ByStatus)
	}
	n := loads(srv)
	cold := map[string]int{}
	for _, r := range sink.recs {
		if r.ColdStart {
			cold[r.Provider]++
			if r.Provider == "native" && (r.LoadMS == nil || *r.LoadMS <= 50) {
				t.Errorf("native cold cell %s without its load time: %v", r.PromptID, r.LoadMS)
			}
		}
	}
	if n < 3 || cold["native"] == 0 {
		t.Errorf("%d loads, cold cells %v: want swaps, and the native cells that waited for one flagged", n, cold)
	}
	t.Logf("%d loads; cold cells by provider %v of %d", n, cold, len(sink.recs))
}

func createAlphaBeta(t testing.TB, srv *ollamatest.Server) {
	t.Helper()
	for _, name := range []string{"alpha", "beta"} {
		script := testmodel.Script{name: {"I am " + name}}
		for k, v := range alphaBeta {
			script[k] = v
		}
		srv.CreateModel(t, name, script)
	}
}

// BenchmarkOllamaSweep runs sweeps against a fresh (cold) real Ollama with
// the defaults (warm-up on, one suite at a time per server) and reports
// what summary.json would: the worst group's TTFT p95/p50 and the cold
// cells. "two-models" is one /v1 provider with two models on a server that
// holds several; "shared-one-slot" is both kinds sharing a server that
// holds one model at a time. Each op starts a new server, so every model
// load is real. For the native cells it also reports the server's own
// time to first token (server_ttft_ms: load and prompt evaluation) as the
// same worst p95/p50, and how far bench's TTFT sits above it: on a shared
// machine the server's own spread is most of the TTFT spread.
//
//	go test ./run/runner -run '^$' -bench OllamaSweep -benchtime 3x
func BenchmarkOllamaSweep(b *testing.B) {
	for _, sc := range []struct {
		name string
		env  []string
		only string
	}{
		{"two-models", nil, "v1"},
		{"shared-one-slot", []string{"OLLAMA_MAX_LOADED_MODELS=1"}, ""},
	} {
		b.Run(sc.name, func(b *testing.B) {
			var worst, ratios, cold, loadsTotal, srvWorst, nativeWorst float64
			var gaps []float64
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				srv := ollamatest.Start(b, sc.env...)
				createAlphaBeta(b, srv)
				cfg := sharedServerConfig(b, srv, "", 6)
				if sc.only != "" {
					for _, p := range cfg.Providers {
						if p.Name == sc.only {
							cfg.Providers = []config.Provider{p}
						}
					}
				}
				pl := plan.New(cfg)
				sink := &memSink{}
				b.StartTimer()
				out, err := runner.Run(context.Background(), runner.Options{Config: cfg, Plan: pl, Providers: buildProviders(b, cfg), Outputs: []output.Output{sink}})
				b.StopTimer()
				if err != nil || out.ByStatus["ok"] != len(pl.Cells) {
					b.Fatalf("run: %v %v", err, out.ByStatus)
				}
				recs := make([]results.Record, len(sink.recs))
				srvTTFT, benchTTFT := map[string][]float64{}, map[string][]float64{}
				for j, r := range sink.recs {
					recs[j] = *r
					// The native API says how long the server itself took to
					// its first token (load and prompt): bench's TTFT beside it.
					if st, ok := r.ProviderMetrics["server_ttft_ms"].(float64); ok && r.TTFTMS != nil && !r.ColdStart {
						srvTTFT[r.Model] = append(srvTTFT[r.Model], st)
						benchTTFT[r.Model] = append(benchTTFT[r.Model], float64(*r.TTFTMS))
						gaps = append(gaps, float64(*r.TTFTMS)-st)
					}
				}
				spread := func(xs []float64) float64 {
					slices.Sort(xs)
					return pct(xs, 0.95) / pct(xs, 0.5)
				}
				for m := range srvTTFT {
					srvWorst = max(srvWorst, spread(srvTTFT[m]))
					nativeWorst = max(nativeWorst, spread(benchTTFT[m]))
				}
				s := report.Summarize(recs)
				for _, g := range s.Groups {
					r := *g.TTFTMS.P95 / *g.TTFTMS.P50
					worst = max(worst, r)
					ratios += r / float64(len(s.Groups)*b.N)
					cold += float64(g.NColdStart) / float64(b.N)
					b.Logf("%s: ttft p50 %.0f p95 %.0f ms, %d cold, load %v", g.Label(), *g.TTFTMS.P50, *g.TTFTMS.P95, g.NColdStart, g.LoadMS)
				}
				loadsTotal += float64(loads(srv)) / float64(b.N)
				srv.Close()
				b.StartTimer()
			}
			b.ReportMetric(worst, "worst-p95/p50")
			b.ReportMetric(ratios, "mean-p95/p50")
			b.ReportMetric(cold, "cold-cells")
			b.ReportMetric(loadsTotal, "model-loads")
			if len(gaps) > 0 {
				slices.Sort(gaps)
				b.ReportMetric(srvWorst, "native-server-worst-p95/p50")
				b.ReportMetric(nativeWorst, "native-bench-worst-p95/p50")
				b.ReportMetric(gaps[len(gaps)/2], "bench-minus-server-p50-ms")
				b.ReportMetric(gaps[int(0.95*float64(len(gaps)-1))], "bench-minus-server-p95-ms")
			}
		})
	}
}

// BenchmarkOllamaReasoningRates streams a thinking model's reasoning and
// answer (40 tokens each) through the native kind. Ollama reports one
// decode rate for the whole reply (eval_count / eval_duration), not one per
// kind of token, and on a loaded machine its pacing stalls for tens of
// milliseconds at a time, so the truth bench can be held to here is the
// whole stream: stream-err is bench's rate over its own window (first
// reasoning delta to the end, from the timeline) against the server's.
// answer-dev and reasoning-dev are how far each of bench's per-kind rates
// sits from that one average: the server's pacing, not an error (the
// controlled server, which times each delta it writes, checks those:
// runner/harnessbench BenchmarkDecodeRates).
//
//	go test ./run/runner -run '^$' -bench OllamaReasoningRates -benchtime 1x
func BenchmarkOllamaReasoningRates(b *testing.B) {
	srv := ollamatest.Start(b)
	script := testmodel.Script{"think": {"<think>"}}
	for i := 0; i < 40; i++ {
		script["think"] = append(script["think"], fmt.Sprintf(" r%d", i))
	}
	script["think"] = append(script["think"], "</think>")
	for i := 0; i < 40; i++ {
		script["think"] = append(script["think"], fmt.Sprintf(" a%d", i))
	}
	srv.CreateModel(b, "thinker", script, ollamatest.WithThinking())
	dir := b.TempDir()
	os.WriteFile(filepath.Join(dir, "prompts.yaml"), []byte("prompts:\n  - {id: P0, name: t, prompt: \"Please think\", validator: {type: noop}}\n"), 0o644)
	path := filepath.Join(dir, "bench.yaml")
	os.WriteFile(path, []byte(fmt.Sprintf("run:\n  concurrency: 1\n  repetitions: 10\nproviders:\n  - type: ollama\n    base_url: %s\n    models: [thinker]\n    thinking_levels: [high]\nprompts:\n  files: [prompts.yaml]\n", srv.URL())), 0o644)
	cfg, err := config.Load(path, providers.Kinds)
	if err != nil {
		b.Fatal(err)
	}
	var streamErr, answerDev, reasoningDev []float64
	for i := 0; i < b.N; i++ {
		sink := &memSink{}
		pl := plan.New(cfg)
		if _, err := runner.Run(context.Background(), runner.Options{Config: cfg, Plan: pl, Providers: buildProviders(b, cfg), Outputs: []output.Output{sink}}); err != nil {
			b.Fatal(err)
		}
		for _, r := range sink.recs {
			count, _ := r.ProviderMetrics["eval_count"].(int)
			evalMS, _ := r.ProviderMetrics["eval_ms"].(float64)
			first, end := -1.0, -1.0
			for _, e := range r.Timeline {
				switch e.Event {
				case results.EventFirstReasoning:
					first = e.AtMS
				case results.EventEnd:
					end = e.AtMS
				}
			}
			if count == 0 || evalMS == 0 || first < 0 {
				b.Fatalf("cell %s: server %v, timeline %v", r.PromptID, r.ProviderMetrics, r.Timeline)
			}
			truth := float64(count-1) / (evalMS / 1000)
			mine := float64(count-1) / ((end - first) / 1000)
			streamErr = append(streamErr, 100*(mine-truth)/truth)
			// A window the server crammed into a few milliseconds has no
			// rate (the null rule): nothing to compare.
			if r.TokensPerS != nil {
				answerDev = append(answerDev, 100*(*r.TokensPerS-truth)/truth)
			}
			if r.ReasoningTokensPerS != nil {
				reasoningDev = append(reasoningDev, 100*(*r.ReasoningTokensPerS-truth)/truth)
			}
		}
	}
	for _, m := range []struct {
		name string
		xs   []float64
	}{{"stream-err", streamErr}, {"answer-dev", answerDev}, {"reasoning-dev", reasoningDev}} {
		if len(m.xs) == 0 {
			continue
		}
		slices.Sort(m.xs)
		b.ReportMetric(m.xs[len(m.xs)/2], m.name+"-p50-%")
		b.ReportMetric(max(-m.xs[0], m.xs[len(m.xs)-1]), m.name+"-max-%")
	}
}

// pct is the p-quantile of sorted xs as the report computes it (linear
// between closest ranks).
func pct(xs []float64, p float64) float64 {
	h := float64(len(xs)-1) * p
	lo := int(h)
	if lo >= len(xs)-1 {
		return xs[len(xs)-1]
	}
	return xs[lo] + (h-float64(lo))*(xs[lo+1]-xs[lo])
}
