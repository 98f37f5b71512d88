package servermetrics

import (
	"bench/internal/testpeer/apartserver"
	"context"
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"
)

// cpu is the process's user and system CPU so far.
func cpu() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// padded is the vLLM text grown to about size bytes with histograms of
// the TTFT one's shape under other names (families bench does not map,
// which the parser still reads): a busy vLLM server's /metrics is 20-60
// KB, mostly histograms, against the 6 KB of the kept text.
func padded(b *testing.B, size int) string {
	raw, err := os.ReadFile("testdata/vllm-v1.txt")
	if err != nil {
		b.Fatal(err)
	}
	var s strings.Builder
	s.Write(raw)
	les := []string{"0.001", "0.005", "0.01", "0.02", "0.04", "0.06", "0.08", "0.1", "0.25", "0.5", "0.75", "1.0", "2.5", "5.0", "7.5", "10.0", "+Inf"}
	for i := 0; s.Len() < size; i++ {
		name := fmt.Sprintf("vllm:padding_%d_seconds", i)
		fmt.Fprintf(&s, "# HELP %s Histogram written for the benchmark's size.\n# TYPE %s histogram\n", name, name)
		for j, le := range les {
			fmt.Fprintf(&s, "%s_bucket{engine=\"0\",le=\"%s\",model_name=\"meta-llama/Llama-3.1-8B-Instruct\"} %d.0\n", name, le, j*7)
		}
		fmt.Fprintf(&s, "%s_count{engine=\"0\",model_name=\"meta-llama/Llama-3.1-8B-Instruct\"} 112.0\n", name)
		fmt.Fprintf(&s, "%s_sum{engine=\"0\",model_name=\"meta-llama/Llama-3.1-8B-Instruct\"} 5.32\n", name)
	}
	return s.String()
}

func TestMain(m *testing.M) {
	apartserver.Serve()
	os.Exit(m.Run())
}

// BenchmarkScrape measures one scrape of a server's /metrics as the
// watcher takes it (GET over loopback, the body read, parsed by expfmt
// and mapped) against a server in a process of its own (apartserver)
// answering the kept vLLM text (6 KB) and that text grown to 40 KB (a busy
// vLLM server's size). It reports the CPU of one scrape (bench's alone:
// the server's is another process's), what that is in percent of one core
// at the default interval (100 ms), and the CPU of the parse and mapping
// alone ("parse").
func BenchmarkScrape(b *testing.B) {
	for _, size := range []int{0, 40 << 10} {
		body := padded(b, size)
		label := fmt.Sprintf("%dKB", len(body)>>10)
		b.Run(label, func(b *testing.B) {
			url := apartserver.Start(b, body, "text/plain; version=0.0.4; charset=utf-8")
			sc := New(url + "/metrics")
			ctx := context.Background()
			if r, _, err := sc.Scrape(ctx); err != nil || r.Running == nil || r.PrefixCacheHits == nil {
				b.Fatalf("scrape: %+v %v", r, err)
			}
			b.ReportAllocs()
			b.ResetTimer()
			c0 := cpu()
			for i := 0; i < b.N; i++ {
				if _, _, err := sc.Scrape(ctx); err != nil {
					b.Fatal(err)
				}
			}
			per := float64((cpu() - c0).Microseconds()) / float64(b.N)
			b.ReportMetric(per, "cpu-µs/scrape")
			b.ReportMetric(100*per/100e3, "%core@100ms")
		})
		b.Run(label+"/parse", func(b *testing.B) {
			sc := New("http://unused")
			raw := []byte(body)
			b.ReportAllocs()
			b.ResetTimer()
			c0 := cpu()
			for i := 0; i < b.N; i++ {
				if _, _, err := sc.parse(raw); err != nil {
					b.Fatal(err)
				}
			}
			per := float64((cpu() - c0).Microseconds()) / float64(b.N)
			b.ReportMetric(per, "cpu-µs/scrape")
			b.ReportMetric(100*per/100e3, "%core@100ms")
		})
	}
}
