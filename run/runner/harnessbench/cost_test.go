package harnessbench

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"bench/internal/record/results"
	"bench/providers"
	"bench/run/output"
	"bench/run/plan"
	"bench/run/runner"
)

func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

type discard struct{}

func (discard) AddRecord(*results.Record) error { return nil }
func (discard) Critical()                       {}

// bareClient is the least a Go client must do with the stream: post the
// request, split the lines, decode each chunk's JSON into the one field it
// needs and keep the text.
func bareClient(url, model string) (string, error) {
	return bareWith(http.DefaultClient, url, model)
}

// bareWith is bareClient on a given client.
func bareWith(c *http.Client, url, model string) (string, error) {
	body, _ := json.Marshal(map[string]any{"model": model, "stream": true,
		"messages": []map[string]string{{"role": "user", "content": "go"}}})
	res, err := c.Post(url+"/v1/chat/completions", "application/json", bytes.NewReader(body))
	if err != nil {
		return "", err
	}
	defer res.Body.Close()
	br := bufio.NewReader(res.Body)
	var text strings.Builder
	for {
		line, err := br.ReadSlice('\n')
		if len(line) > 6 && bytes.HasPrefix(line, []byte("data: ")) {
			data := bytes.TrimSpace(line[6:])
			if bytes.Equal(data, []byte("[DONE]")) {
				return text.String(), nil
			}
			var ch struct {
				Choices []struct {
					Delta struct {
						Content string `json:"content"`
					} `json:"delta"`
				} `json:"choices"`
			}
			if err := json.Unmarshal(data, &ch); err != nil {
				return "", err
			}
			for _, c := range ch.Choices {
				text.WriteString(c.Delta.Content)
			}
		}
		if err != nil {
			return "", err
		}
	}
}

// fourAtATime returns a function that runs cellsPerOp calls of one, 4 at
// a time, as bench's cells run.
func fourAtATime(b *testing.B, one func() error) func() {
	return func() {
		var wg sync.WaitGroup
		sem := make(chan struct{}, 4)
		for i := 0; i < cellsPerOp; i++ {
			wg.Add(1)
			sem <- struct{}{}
			go func() {
				defer wg.Done()
				defer func() { <-sem }()
				if err := one(); err != nil {
					b.Error(err)
				}
			}()
		}
		wg.Wait()
	}
}

// BenchmarkChunkCost is CPU per streamed chunk, in the client's process
// only (the controlled server runs in its own): bench (the whole runner,
// the ollama_openai provider, record assembly and scoring) and a bare Go
// client reading the same stream, in two regimes: every chunk flushed
// alone, 200 µs apart, and all chunks in one write (many per read, as from
// a busy server). Per chunk is the slope between cells of 516 and of 4
// chunks, run 4 at a time. The four measurements take turns, b.N rounds of
// them, and each figure is the median round, so a machine whose load
// drifts (other processes) weighs on both clients alike. bench/bare is
// what the issue bounds (1.3).
//
//	go test ./run/runner/harnessbench -run '^$' -bench ChunkCost -benchtime 10x
func BenchmarkChunkCost(b *testing.B) {
	srv := startServer(b)
	for _, regime := range []struct{ name, spec string }{
		{"flushed", "gap=200us"},
		{"batched", "batch=1"},
	} {
		b.Run(regime.name, func(b *testing.B) {
			clients := []string{"bench", "bare"}
			var runs [2][2]func()
			for ci, client := range clients {
				for si, chunks := range []int{4, 516} {
					runs[ci][si] = cellRunner(b, client, srv.URL, fmt.Sprintf("chunks=%d,%s", chunks, regime.spec))
					runs[ci][si]() // connections and caches warm
				}
			}
			perChunk := [2][]float64{}
			for i := 0; i < b.N; i++ {
				for ci := range clients {
					var cost [2]time.Duration
					for si := range cost {
						c0 := cpuTime()
						runs[ci][si]()
						cost[si] = (cpuTime() - c0) / cellsPerOp
					}
					perChunk[ci] = append(perChunk[ci], float64(cost[1]-cost[0])/512/1e3)
				}
			}
			var ratios []float64
			for i := range perChunk[0] {
				ratios = append(ratios, perChunk[0][i]/perChunk[1][i])
			}
			b.ReportMetric(quantile(perChunk[0], 0.5), "bench-µs/chunk")
			b.ReportMetric(quantile(perChunk[1], 0.5), "bare-µs/chunk")
			b.ReportMetric(quantile(perChunk[0], 0.5)/quantile(perChunk[1], 0.5), "bench/bare")
			b.ReportMetric(quantile(ratios, 0.5), "round-ratio-p50")
		})
	}
}

// cellsPerOp cells run per benchmark op, 4 at a time.
const cellsPerOp = 8

// cellRunner returns a function that runs cellsPerOp cells of model with
// the named client.
func cellRunner(b *testing.B, client, url, model string) func() {
	if client == "bare" {
		return fourAtATime(b, func() error { _, err := bareClient(url, model); return err })
	}
	cfg := sweepConfig(b, url, model, 4, cellsPerOp)
	cfg.Providers[0].Warmup = false
	p, err := providers.New(&cfg.Providers[0])
	if err != nil {
		b.Fatal(err)
	}
	pl := plan.New(cfg)
	return func() {
		out, err := runner.Run(context.Background(), runner.Options{Config: cfg, Plan: pl, Outputs: []output.Output{discard{}},
			Providers: map[string]providers.Provider{cfg.Providers[0].Name: p}})
		if err != nil || out.ByStatus["ok"] != cellsPerOp {
			b.Fatalf("run: %v %v", err, out.ByStatus)
		}
	}
}
