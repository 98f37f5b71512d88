package harnessbench

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"bench/config"
	"bench/internal/record/results"
	"bench/prompts"
	"bench/providers"
	"bench/run/output"
	"bench/run/plan"
	"bench/run/runner"
	"bench/validators"
)

// loadConfig is a run of cells prompts against one ollama_openai entry
// at url, under the load block given (its YAML lines, indented).
func loadConfig(tb testing.TB, url, model, load string, cells int) *config.Config {
	tb.Helper()
	c, err := config.Parse("bench.yaml", []byte(fmt.Sprintf(
		"run:\n  timeout: 60s\n  warmup: false\nload:\n%sproviders:\n  - type: ollama_openai\n    base_url: %s/v1\n    models: [%q]\n",
		load, url, model)), providers.Kinds)
	if err != nil {
		tb.Fatal(err)
	}
	c.PromptSet = nil
	for i := 0; i < cells; i++ {
		c.PromptSet = append(c.PromptSet, prompts.Prompt{ID: fmt.Sprintf("P%d", i), Name: "p", Prompt: "go",
			Validator: &validators.Spec{Type: "noop"}})
	}
	return c
}

// loadSweep runs cfg once, its provider's connections opened first (as a
// warm-up does), and returns the records.
func loadSweep(tb testing.TB, cfg *config.Config, conns int) []*results.Record {
	tb.Helper()
	p, err := providers.New(&cfg.Providers[0])
	if err != nil {
		tb.Fatal(err)
	}
	if pc, ok := p.(providers.Preconnector); ok {
		if err := pc.Preconnect(context.Background(), conns); err != nil {
			tb.Fatal(err)
		}
	}
	sink := &memSink{}
	pl := plan.New(cfg)
	out, err := runner.Run(context.Background(), runner.Options{Config: cfg, Plan: pl, Outputs: []output.Output{sink, parents{pl}},
		Providers: map[string]providers.Provider{cfg.Providers[0].Name: p}})
	if err != nil || out.ByStatus["ok"] != len(pl.Cells) {
		tb.Fatalf("sweep: %v %v", err, out.ByStatus)
	}
	return sink.recs
}

// BenchmarkOpenLoop is issue 26's first generator goal: open-loop Poisson
// arrivals at 2,000 requests/s (4,000 requests, one chunk each, against
// the controlled server in its own process) with the schedule slip
// (sent − due, the generator's own lateness) p99 under 1 ms. It reports
// the slip's percentiles and the rate the cells were sent at against the
// rate the schedule drew.
//
//	go test ./run/runner/harnessbench -run '^$' -bench OpenLoop -benchtime 3x
func BenchmarkOpenLoop(b *testing.B) {
	srv := startServer(b)
	var slip []float64
	var sent, offered []float64
	for i := 0; i < b.N; i++ {
		cfg := loadConfig(b, srv.URL, "chunks=1", "  rate: 2000\n  arrival: poisson\n  requests: 4000\n", 1)
		cfg.Providers[0].Load.Seed = int64(i + 1)
		recs := loadSweep(b, cfg, 64)
		first, last := 1e18, 0.0
		fdue, ldue := 1e18, 0.0
		for _, r := range recs {
			slip = append(slip, *r.ScheduleSlipMS)
			first, last = min(first, *r.SentAtMS), max(last, *r.SentAtMS)
			fdue, ldue = min(fdue, *r.ScheduledAtMS), max(ldue, *r.ScheduledAtMS)
		}
		sent = append(sent, float64(len(recs)-1)/((last-first)/1000))
		offered = append(offered, float64(len(recs)-1)/((ldue-fdue)/1000))
	}
	b.ReportMetric(quantile(slip, 0.50), "slip-p50-ms")
	b.ReportMetric(quantile(slip, 0.99), "slip-p99-ms")
	b.ReportMetric(quantile(slip, 1), "slip-max-ms")
	b.ReportMetric(quantile(sent, 0.5), "sent-req/s")
	b.ReportMetric(quantile(offered, 0.5), "offered-req/s")
}

// BenchmarkManyStreams is the second goal: 1,000 concurrent streams, each
// 20 ms to its first token and 50 ms between tokens (20,000 tokens/s in
// all), 2,000 cells of 20 tokens in a closed loop at 1,000, with the TTFT
// error (bench's TTFT outside the server's own first-write interval, as
// BenchmarkTTFTFidelity) p99 under 2 ms. Two starts:
//
//   - together: all 1,000 streams at once, so their tokens come in waves
//     of 1,000 every 50 ms, a wave's reads queued behind each other;
//   - ramp=1s: the streams started over a second (load.ramp), so their
//     tokens interleave, then 1,000 run at once.
//
// It also reports the token rate while the streams ran (streams × the
// median cell's tokens over its request-to-end time) and over the whole
// sweep's wall time (connections and ramp included).
//
//	go test ./run/runner/harnessbench -run '^$' -bench ManyStreams -benchtime 1x
func BenchmarkManyStreams(b *testing.B) {
	srv := startServer(b)
	for _, start := range []struct{ name, load string }{{"together", ""}, {"ramp=1s", "  ramp: 1s\n"}} {
		b.Run(start.name, func(b *testing.B) { manyStreams(b, srv, start.load) })
	}
}

func manyStreams(b *testing.B, srv *server, ramp string) {
	const streams, cells = 1000, 2000
	var errs []float64
	var tokRate, steady []float64
	for i := 0; i < b.N; i++ {
		cfg := loadConfig(b, srv.URL, "chunks=20,gap=50ms,prefill=20ms", fmt.Sprintf("  sweep: {concurrency: [%d]}\n%s", streams, ramp), cells)
		start := time.Now()
		recs := loadSweep(b, cfg, streams)
		wall := time.Since(start)
		server := srv.timings(b)
		pl := plan.New(cfg)
		byPrompt := map[string]string{}
		for _, c := range pl.Cells {
			byPrompt[c.Prompt.ID] = fmt.Sprintf("00-%032x-%016x-01", 1, cellIndex(pl, c))
		}
		tokens := 0
		var perCell []float64
		for _, r := range recs {
			w, ok1 := at(r, results.EventRequestWritten)
			f, ok2 := at(r, results.EventFirstText)
			end, ok4 := at(r, results.EventEnd)
			st, ok3 := server[byPrompt[r.PromptID]]
			if !ok1 || !ok2 || !ok3 || !ok4 || st.ArrivalTTFTNS == 0 {
				b.Fatalf("cell %s: written %v, first text %v, end %v, server timing %v", r.PromptID, ok1, ok2, ok4, ok3)
			}
			ttft, lo := f-w, float64(st.ArrivalTTFTNS)/1e6
			hi := lo + float64(st.FlushNS)/1e6
			errs = append(errs, ttft-min(max(ttft, lo), hi))
			tokens += *r.OutputTokens
			perCell = append(perCell, float64(*r.OutputTokens)/((end-w)/1000))
		}
		tokRate = append(tokRate, float64(tokens)/wall.Seconds())
		steady = append(steady, streams*quantile(perCell, 0.5))
	}
	b.ReportMetric(quantile(errs, 0.50), "err-p50-ms")
	b.ReportMetric(quantile(errs, 0.99), "err-p99-ms")
	b.ReportMetric(quantile(errs, 1), "err-max-ms")
	b.ReportMetric(quantile(steady, 0.5), "streaming-tok/s")
	b.ReportMetric(quantile(tokRate, 0.5), "wall-tok/s")
}

// pooledBare runs cellsPerOp cells, 4 at a time, with a bare client
// that keeps its connections (as bench's transport does; Go's default
// keeps 2 per host, and a new connection per request would weigh on the
// bare side).
func pooledBare(b *testing.B, url, model string) func() {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = 64
	c := &http.Client{Transport: tr}
	return fourAtATime(b, func() error { _, err := bareWith(c, url, model); return err })
}

// BenchmarkRequestCost is bench's CPU per request against a bare Go
// client's on the same stream (4 chunks, all in one write, so the fixed
// cost of a request dominates), in this process only: the whole runner
// with the ollama_openai provider, record assembly and scoring, and the
// results.jsonl encoding (a discarding writer). The measurements take
// turns as in BenchmarkChunkCost; bench/bare is the ratio of medians.
//
//	go test ./run/runner/harnessbench -run '^$' -bench RequestCost -benchtime 10x
func BenchmarkRequestCost(b *testing.B) {
	srv := startServer(b)
	model := "chunks=4,batch=1"
	runs := []func(){cellRunner(b, "bench", srv.URL, model), pooledBare(b, srv.URL, model)}
	for _, r := range runs {
		r()
	}
	per := [2][]float64{}
	for i := 0; i < b.N; i++ {
		for ci, r := range runs {
			c0 := cpuTime()
			r()
			per[ci] = append(per[ci], float64((cpuTime()-c0)/cellsPerOp)/1e3)
		}
	}
	b.ReportMetric(quantile(per[0], 0.5), "bench-µs/req")
	b.ReportMetric(quantile(per[1], 0.5), "bare-µs/req")
	b.ReportMetric(quantile(per[0], 0.5)/quantile(per[1], 0.5), "bench/bare")
}
