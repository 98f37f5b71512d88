package harnessbench

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"bench/providers"
)

// BenchmarkTTFTTransit splits the error BenchmarkTTFTFidelity reports at
// 256 streams into its two legs, on the one clock both processes share
// (Unix time): "up", from bench's request-written stamp to the request's
// arrival at the server's socket, and "down", from the server writing the
// first delta to its arrival at bench's socket (the kernel's receive time,
// which is what bench stamps). Both are the kernel carrying bytes over
// loopback; neither is bench's own doing. It streams through the provider
// bench uses, on connections opened beforehand, 4 rounds of 256 at once.
//
//	go test ./run/runner/harnessbench -run '^$' -bench TTFTTransit -benchtime 1x
func BenchmarkTTFTTransit(b *testing.B) {
	srv := startServer(b)
	cfg := sweepConfig(b, srv.URL, "x", 1, 1)
	p, err := providers.New(&cfg.Providers[0])
	if err != nil {
		b.Fatal(err)
	}
	const streams = 256
	if err := p.(providers.Preconnector).Preconnect(context.Background(), streams); err != nil {
		b.Fatal(err)
	}
	type cell struct {
		written, first time.Time
		tp             string
	}
	var mu sync.Mutex
	var cells []cell
	for i := 0; i < b.N; i++ {
		for round := 0; round < 4; round++ {
			var wg sync.WaitGroup
			for s := 0; s < streams; s++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					c := cell{tp: fmt.Sprintf("00-%032x-%016x-01", i*4+round+1, s)}
					_, err := p.Stream(context.Background(), providers.Request{Model: "chunks=16,gap=10ms,prefill=20ms", Prompt: "go", TraceParent: c.tp}, func(e providers.Event) {
						switch {
						case e.Kind == providers.EventRequestWritten:
							c.written = e.At
						case e.Kind == providers.EventText && c.first.IsZero():
							c.first = e.At
						}
					})
					if err != nil {
						b.Error(err)
					}
					mu.Lock()
					cells = append(cells, c)
					mu.Unlock()
				}()
			}
			wg.Wait()
		}
	}
	tm := srv.timings(b)
	var up, down []float64
	for _, c := range cells {
		t, ok := tm[c.tp]
		if !ok || t.ArrivalNS == 0 || c.written.IsZero() || c.first.IsZero() {
			b.Fatalf("cell %s: incomplete stamps", c.tp)
		}
		up = append(up, float64(t.ArrivalNS-c.written.UnixNano())/1e6)
		down = append(down, float64(c.first.UnixNano()-t.WriteNS)/1e6)
	}
	for _, q := range []float64{0.5, 0.95, 0.99} {
		b.ReportMetric(quantile(up, q), fmt.Sprintf("up-p%02.0f-ms", q*100))
		b.ReportMetric(quantile(down, q), fmt.Sprintf("down-p%02.0f-ms", q*100))
	}
}
