package main

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"bench/internal/exitcode"
	"bench/internal/record/results"
	"bench/internal/testpeer/faultserver"
)

// BenchmarkFloodSoak runs the real bench binary against the fault server's
// floods for 20 s per provider (BENCH_SOAK_SECONDS to change it): a fast
// endless answer, an endless reasoning stream, endless tool-call pieces,
// one line that never ends and a keep-alive flood, side by side, each cell
// ending at run.timeout. It reports bench's own peak RSS (VmHWM) per
// provider, and how far past the timeout a cell ended (the timeline's end
// against run.timeout), the worst of all cells. BENCH_SOAK_PROVIDERS
// (e.g. claude_code_cli) keeps some providers only. Run:
//
//	go test ./cmd/bench -run '^$' -bench FloodSoak -benchtime 1x
func BenchmarkFloodSoak(b *testing.B) {
	secs := 20
	if v, err := strconv.Atoi(os.Getenv("BENCH_SOAK_SECONDS")); err == nil && v > 0 {
		secs = v
	}
	s := faultserver.Start(b)
	floods := []string{"flood", "flood_reasoning", "flood_tool", "endless_line", "comment_flood"}
	cli := ""
	if p := os.Getenv("BENCH_CLAUDE_BIN"); p != "" {
		cli = p
	}
	kinds := map[string]string{
		"ollama_openai":    fmt.Sprintf("base_url: %s/v1", s.URL()),
		"ollama":           fmt.Sprintf("base_url: %s", s.URL()),
		"openai_responses": fmt.Sprintf("base_url: %s/v1", s.URL()),
	}
	if cli != "" {
		kinds["claude_code_cli"] = fmt.Sprintf("command: %s\n    env: {ANTHROPIC_BASE_URL: %s, ANTHROPIC_AUTH_TOKEN: x, ANTHROPIC_API_KEY: \"\", CLAUDE_CODE_MAX_RETRIES: \"0\", CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: \"1\", HOME: %s}", cli, s.URL(), b.TempDir())
	}
	worst := 0.0
	for range b.N {
		for _, typ := range []string{"ollama_openai", "ollama", "openai_responses", "claude_code_cli"} {
			if only := os.Getenv("BENCH_SOAK_PROVIDERS"); only != "" && !strings.Contains(only, typ) {
				continue
			}
			opts, ok := kinds[typ]
			if !ok {
				b.Logf("%s: skipped (set BENCH_CLAUDE_BIN)", typ)
				continue
			}
			provs := fmt.Sprintf("providers:\n  - type: %s\n    %s\n    models: [%s]\n", typ, opts, strings.Join(floods, ", "))
			// Side by side, as one load: no warm-up (a flood never ends one) and
			// interleaved (the five models share one endpoint).
			dir := benchDir(b, fmt.Sprintf("run:\n  timeout: %ds\n  concurrency: 5\n  warmup: false\n  interleave: true\n", secs), provs, "T0")
			peak, recs := soak(b, dir)
			over := 0.0
			for _, r := range recs {
				if class(r) != "error/timeout" {
					b.Errorf("%s %s: %s", typ, r.Model, class(r))
				}
				end := r.Timeline[len(r.Timeline)-1].AtMS
				over = max(over, end-float64(secs*1000))
				if os.Getenv("BENCH_SOAK_CELLS") != "" {
					b.Logf("  %s %s: end %.1f ms, %d of %d bytes, %d chunks", typ, r.Model, end, len(r.RawOutput), r.RawOutputBytes, r.Chunks)
				}
			}
			worst = max(worst, over)
			b.ReportMetric(peak, "peak-rss-MB-"+typ)
			b.Logf("%s: peak RSS %.1f MB, worst cell %.1f ms past its %d s timeout", typ, peak, over, secs)
		}
	}
	b.ReportMetric(worst, "worst-ms-past-timeout")
}

// soak runs bench in dir, sampling its peak RSS (VmHWM) until it exits.
func soak(b *testing.B, dir string) (float64, []results.Record) {
	cmd, stdout, stderr := startIn(b, dir, "run", "--config", "bench.yaml", "--run-id", "soak", "--quiet")
	peak := 0.0
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t := time.NewTicker(50 * time.Millisecond)
	defer t.Stop()
	for {
		if kb := vmHWM(cmd.Process.Pid); kb > 0 {
			peak = max(peak, float64(kb)/1024)
		}
		select {
		case err := <-done:
			if exitCode(err) != exitcode.OK {
				b.Fatalf("exit %d\n%s%s", exitCode(err), stdout, stderr)
			}
			return peak, readRecords(b, filepath.Join(dir, "runs", "soak", "results.jsonl"))
		case <-t.C:
		}
	}
}

// vmHWM is a process's peak resident set size in KiB, 0 if unknown.
func vmHWM(pid int) int {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			n, _ := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")))
			return n
		}
	}
	return 0
}
