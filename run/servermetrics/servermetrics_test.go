package servermetrics

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"bench/internal/record/rundir"
)

func read(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// serve answers every request with body under contentType.
func serve(t *testing.T, contentType, body string, status int) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if contentType != "" {
			w.Header().Set("Content-Type", contentType)
		}
		w.WriteHeader(status)
		fmt.Fprint(w, body)
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/metrics"
}

func f(v float64) *float64 { return &v }

func eq(a, b *float64) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }

// The recorded lines of vLLM's docs (less the elisions the docs made)
// map what they have, and nothing is made up for what they do not.
func TestVLLMDocsExample(t *testing.T) {
	var keep []string
	for _, l := range strings.Split(read(t, "vllm-docs-example.txt"), "\n") {
		if l == "..." || strings.HasPrefix(l, "$ ") {
			continue
		}
		keep = append(keep, l)
	}
	got, notes, err := New("").parse([]byte(strings.Join(keep, "\n")))
	if err != nil || len(notes) > 0 {
		t.Fatalf("err %v, notes %v", err, notes)
	}
	want := map[string]*float64{"running": f(8), "generated_tokens": f(27453)}
	for i, v := range got.Values() {
		if !eq(v, want[seriesName(i)]) {
			t.Errorf("%s = %v, want %v", seriesName(i), show(v), show(want[seriesName(i)]))
		}
	}
	if got.Server != "vllm" {
		t.Errorf("server %q", got.Server)
	}
}

func seriesName(i int) string { return rundirSeries[i] }

func show(v *float64) any {
	if v == nil {
		return nil
	}
	return *v
}

// Every mapped vLLM and llama.cpp series comes out of the full texts, the
// deprecated vLLM names losing to their successors.
func TestMapServers(t *testing.T) {
	for _, tc := range []struct {
		file, server string
		want         map[string]*float64
	}{
		{"vllm-v1.txt", "vllm", map[string]*float64{"running": f(8), "waiting": f(3), "kv_cache_usage": f(0.4375),
			"prefix_cache_queries": f(51200), "prefix_cache_hits": f(38400), "preemptions": f(2),
			"generated_tokens": f(27453), "prompt_tokens": f(51200)}},
		{"llamacpp.txt", "llamacpp", map[string]*float64{"running": f(4), "waiting": f(2),
			"prefix_cache_queries": f(51200), "prefix_cache_hits": f(38400), "generated_tokens": f(27453), "prompt_tokens": f(12800)}},
	} {
		got, notes, err := New("").parse([]byte(read(t, tc.file)))
		if err != nil || len(notes) > 0 {
			t.Fatalf("%s: err %v, notes %v", tc.file, err, notes)
		}
		if got.Server != tc.server {
			t.Errorf("%s: server %q", tc.file, got.Server)
		}
		for i, v := range got.Values() {
			if !eq(v, tc.want[seriesName(i)]) {
				t.Errorf("%s: %s = %v, want %v", tc.file, seriesName(i), show(v), show(tc.want[seriesName(i)]))
			}
		}
	}
}

// SGLang's and TGI's names (lines written for the test) and the old
// gauges map too; engines add up, shares average.
func TestMapOthers(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		want       map[string]*float64
	}{
		{"sglang", `sglang:num_running_reqs{model_name="m"} 5
sglang:num_queue_reqs{model_name="m"} 7
sglang:token_usage{model_name="m"} 0.5
sglang:cache_hit_rate{model_name="m"} 0.25
sglang:generation_tokens_total{model_name="m"} 100
sglang:prompt_tokens_total{model_name="m"} 400
`, map[string]*float64{"running": f(5), "waiting": f(7), "kv_cache_usage": f(0.5), "prefix_cache_hit_rate": f(0.25),
			"generated_tokens": f(100), "prompt_tokens": f(400)}},
		{"tgi", `# TYPE tgi_batch_current_size gauge
tgi_batch_current_size 3
# TYPE tgi_queue_size gauge
tgi_queue_size 9
# TYPE tgi_request_generated_tokens histogram
tgi_request_generated_tokens_bucket{le="+Inf"} 4
tgi_request_generated_tokens_sum 512
tgi_request_generated_tokens_count 4
`, map[string]*float64{"running": f(3), "waiting": f(9), "generated_tokens": f(512)}},
		{"vllm two engines, v0 gauges", `vllm:num_requests_running{engine="0"} 2
vllm:num_requests_running{engine="1"} 3
vllm:gpu_cache_usage_perc{engine="0"} 0.2
vllm:gpu_cache_usage_perc{engine="1"} 0.6
vllm:gpu_prefix_cache_hit_rate{engine="0"} 0.5
vllm:gpu_prefix_cache_hit_rate{engine="1"} 0.7
`, map[string]*float64{"running": f(5), "kv_cache_usage": f(0.4), "prefix_cache_hit_rate": f(0.6)}},
	} {
		got, _, err := New("").parse([]byte(tc.text))
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		for i, v := range got.Values() {
			w := tc.want[seriesName(i)]
			if (v == nil) != (w == nil) || (v != nil && (*v-*w > 1e-9 || *w-*v > 1e-9)) {
				t.Errorf("%s: %s = %v, want %v", tc.name, seriesName(i), show(v), show(w))
			}
		}
	}
}

// The bad answers of the issue: HTML, NaN, a huge label set, a 404,
// nothing mapped, an endless body. Each is one clear message; NaN and
// the huge family leave the rest of the reading intact.
func TestBadAnswers(t *testing.T) {
	ctx := context.Background()
	huge := strings.Builder{}
	huge.WriteString("vllm:num_requests_running 4\n")
	for i := 0; i < MaxSeries+1; i++ {
		fmt.Fprintf(&huge, "vllm:num_requests_waiting{request_id=\"r%d\"} 1\n", i)
	}
	for _, tc := range []struct {
		name, ctype, body string
		status            int
		permanent         string // the error's text, "" for none
		note              string
		running           *float64
	}{
		{"html", "text/html; charset=utf-8", "<!doctype html><html><body>login</body></html>", 200, "answered text/html", "", nil},
		{"html as text", "text/plain", "<html><body>oops</body></html>\n", 200, "HTML page", "", nil},
		{"404", "text/plain", "404 page not found", 404, "no /metrics", "", nil},
		{"nothing mapped", "text/plain", "process_cpu_seconds_total 3\n", 200, "none of the 1 series families", "", nil},
		{"nan", "text/plain", "vllm:num_requests_running 2\nvllm:kv_cache_usage_perc NaN\n", 200, "", "vllm:kv_cache_usage_perc has a value that is NaN", f(2)},
		{"huge label set", "text/plain", huge.String(), 200, "", "vllm:num_requests_waiting has 1025 series", f(4)},
	} {
		sc := New(serve(t, tc.ctype, tc.body, tc.status))
		got, notes, err := sc.Scrape(ctx)
		switch {
		case tc.permanent != "":
			if !IsPermanent(err) || !strings.Contains(err.Error(), tc.permanent) {
				t.Errorf("%s: err %v, want a permanent one saying %q", tc.name, err, tc.permanent)
			}
			continue
		case err != nil:
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if len(notes) != 1 || !strings.Contains(notes[0], tc.note) {
			t.Errorf("%s: notes %q, want one saying %q", tc.name, notes, tc.note)
		}
		if !eq(got.Running, tc.running) {
			t.Errorf("%s: running %v", tc.name, show(got.Running))
		}
		if _, again, _ := sc.Scrape(ctx); len(again) != 0 {
			t.Errorf("%s: said again: %q", tc.name, again)
		}
	}
	big := New(serve(t, "text/plain", strings.Repeat("x", MaxBytes+10), 200))
	if _, _, err := big.Scrape(ctx); !IsPermanent(err) || !strings.Contains(err.Error(), "longer than 4 MiB") {
		t.Errorf("huge answer: %v", err)
	}
	flaky := New(serve(t, "text/plain", "busy", 503))
	if _, _, err := flaky.Scrape(ctx); err == nil || IsPermanent(err) {
		t.Errorf("503: %v, want a passing error", err)
	}
}

var rundirSeries = rundir.ServerSeries
