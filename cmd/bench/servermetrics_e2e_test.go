package main

import (
	"fmt"
	"math"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"bench/cmd/fakellm/loadserver"
	"bench/internal/record/rundir"
	"bench/report"
)

// serveLoopback serves h on 127.0.0.1 (an openai_chat server on this
// machine is scraped at its /metrics by default).
func serveLoopback(t testing.TB, h http.Handler) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: h}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return "http://" + ln.Addr().String()
}

// The Done-when for the server's metrics: two fake servers of
// known service (two slots, 20 ms to the first token, 4 ms gaps, 16
// tokens, a prefix cache) export /metrics in vLLM's and llama.cpp's
// shapes (templates kept from their code and docs, with the servers'
// live figures); the real bench binary sweeps each, scraping one at the
// openai_chat default (base_url's /metrics) and one at its metrics_url.
// Every series each exposition maps appears in every stage's
// summary.json figures; the generated tokens the server counted in a
// stage are the tokens bench received in it, within what one interval at
// each end can hold; the cached-token share bench recorded equals what
// the server's log says it served; and report.html draws the server plot
// of each sweep, with every mapped series, in headless Chromium.
func TestLoadServerMetricsPerStage(t *testing.T) {
	serialTest(t)
	svc := loadserver.Service{TTFT: 20 * time.Millisecond, Gap: 4 * time.Millisecond, Tokens: 16, Slots: 2, PrefixCache: true}
	vsvc, lsvc := svc, svc
	vsvc.Metrics, lsvc.Metrics = "vllm", "llamacpp"
	vllm, llama := loadserver.New(vsvc, nil), loadserver.New(lsvc, nil)
	vurl, lurl := serveLoopback(t, vllm), serveLoopback(t, llama)
	cfg := fmt.Sprintf(`run: {warmup: false, timeout: 30s}
load:
  sweep: {concurrency: [1, 4]}
  requests: 24
prompts:
  synthetic: {input_tokens: [48], output_tokens: 16}
providers:
  - name: vllm
    type: openai_chat
    base_url: %s/v1
    models: [fake]
    metrics_interval: 20ms
  - name: llamacpp
    type: ollama_openai
    base_url: %s/v1
    models: [fake]
    metrics_url: %s/metrics
    metrics_interval: 20ms
`, vurl, lurl, lurl)
	code, stdout, stderr, recs, dir := runBench(t, cfg)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	if strings.Contains(stderr, "metrics") {
		t.Errorf("stderr speaks of the metrics:\n%s", stderr)
	}
	run := filepath.Join(dir, "runs", "e2e")
	sum := readSummary(t, run)
	want := map[string][]string{
		"vllm":     {"running", "waiting", "kv_cache_usage", "prefix_cache_queries", "prefix_cache_hits", "prefix_cache_hit_rate", "preemptions", "generated_tokens", "generated_tokens_per_s", "prompt_tokens"},
		"llamacpp": {"running", "waiting", "prefix_cache_queries", "prefix_cache_hits", "prefix_cache_hit_rate", "generated_tokens", "generated_tokens_per_s", "prompt_tokens"},
	}
	for provider, keys := range want {
		g := groupOf(t, sum, provider)
		if len(g.Stages) != 2 {
			t.Fatalf("%s: %d stages", provider, len(g.Stages))
		}
		for _, st := range g.Stages {
			ss := st.Server
			if ss == nil || ss.Server != provider || ss.Samples < 5 {
				t.Fatalf("%s %s: server figures %+v", provider, st.Stage, ss)
			}
			have := serverKeys(ss)
			for _, k := range keys {
				if !slices.Contains(have, k) {
					t.Errorf("%s %s: summary.json's server figures lack %s (have %v)", provider, st.Stage, k, have)
				}
			}
			// The server counts a token as it writes it, bench as it
			// reads it: a stage's counts differ by what the 20 ms before
			// each end held (2 streams at c=1... up to 4 slots' worth).
			got := 0
			for _, r := range recs {
				if r.Provider == provider && r.Stage == st.Stage && r.OutputTokens != nil {
					got += *r.OutputTokens
				}
			}
			tol := 2 * float64(svc.Slots) * (20.0 / 4) * 1.5 // two ends × slots × tokens a slot writes in an interval, with room for a late reading
			if d := math.Abs(*ss.GeneratedTokens - float64(got)); d > tol {
				t.Errorf("%s %s: the server counted %v tokens generated, bench received %d (more than %v apart)", provider, st.Stage, *ss.GeneratedTokens, got, tol)
			}
			t.Logf("%s %s: %d readings; generated %v by the server, %d received; running %+v waiting %+v; prefix hit rate %v, bench's cached share %v",
				provider, st.Stage, ss.Samples, *ss.GeneratedTokens, got, *ss.Running, *ss.Waiting, show(ss.PrefixCacheHitRate), show(st.CachedInputShare))
			if st.Stage == "c=4" && (ss.Waiting.Max < 1 || ss.Running.Max != 2) {
				t.Errorf("%s c=4: running %+v, waiting %+v; two slots and four streams", provider, *ss.Running, *ss.Waiting)
			}
		}
		// What bench recorded of the cache is what the server served.
		var cached, input, logCached, logInput int
		for _, r := range recs {
			if r.Provider == provider && r.CachedInputTokens != nil && r.InputTokens != nil {
				cached += *r.CachedInputTokens
				input += *r.InputTokens
			}
		}
		srv := vllm
		if provider == "llamacpp" {
			srv = llama
		}
		for _, e := range srv.Log() {
			logCached += e.CachedTokens
			logInput += e.InputWords
		}
		if cached == 0 || cached != logCached || input != logInput {
			t.Errorf("%s: bench recorded %d of %d input tokens cached, the server's log %d of %d", provider, cached, input, logCached, logInput)
		}
		f := srv.Figures()
		if float64(f.PrefixHits) != float64(logCached) {
			t.Errorf("%s: /metrics' hits %d, the log's %d", provider, f.PrefixHits, logCached)
		}
		for _, st := range g.Stages {
			if st.CachedInputShare == nil || st.Server.PrefixCacheHitRate == nil || math.Abs(*st.CachedInputShare-*st.Server.PrefixCacheHitRate) > 0.1 {
				t.Errorf("%s %s: bench's cached share %v, the server's hit rate %v", provider, st.Stage, st.CachedInputShare, st.Server.PrefixCacheHitRate)
			}
		}
		if _, err := os.Stat(filepath.Join(run, rundir.ResourceFiles(provider, "fake", nil).Server)); err != nil {
			t.Errorf("%s: %v", provider, err)
		}
	}

	p := openReport(t, run)
	var plots map[string]string
	if err := p.Eval(`(() => {
		const out = {};
		for (const el of document.querySelectorAll("[data-plot^=capacity-server]"))
			if (window.benchReport.plots.includes(el.dataset.plot)) out[window.benchReport.data.sweeps[+el.dataset.sweep].label] = el.dataset.series || "";
		return out;
	})()`, &plots); err != nil {
		t.Fatal(err)
	}
	plotted := map[string][]string{
		"vllm":     {"running", "waiting", "kv_cache_usage", "prefix_cache_hit_rate", "generated_tokens_per_s", "preemptions"},
		"llamacpp": {"running", "waiting", "prefix_cache_hit_rate", "generated_tokens_per_s"},
	}
	for provider, keys := range plotted {
		got := strings.Split(plots[provider+"/fake"], ",")
		for _, k := range keys {
			if !slices.Contains(got, k) {
				t.Errorf("report.html's server plot of %s lacks %s (drawn: %v)", provider, k, plots)
			}
		}
	}
}

func show(v *float64) any {
	if v == nil {
		return nil
	}
	return *v
}

// serverKeys are the figures a stage's server block has, by their
// summary.json names.
func serverKeys(s *report.StageServer) []string {
	var out []string
	for k, v := range map[string]bool{"running": s.Running != nil, "waiting": s.Waiting != nil, "kv_cache_usage": s.KVCacheUsage != nil,
		"prefix_cache_queries": s.PrefixCacheQueries != nil, "prefix_cache_hits": s.PrefixCacheHits != nil, "prefix_cache_hit_rate": s.PrefixCacheHitRate != nil,
		"preemptions": s.Preemptions != nil, "generated_tokens": s.GeneratedTokens != nil, "generated_tokens_per_s": s.GeneratedTokensPerS != nil,
		"prompt_tokens": s.PromptTokens != nil} {
		if v {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}
