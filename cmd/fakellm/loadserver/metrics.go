package loadserver

import (
	"bytes"
	"embed"
	"fmt"
	"io"
	"sort"
	"sync"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

//go:embed templates/*.txt
var templates embed.FS

// Expositions are the /metrics shapes the server can serve.
var Expositions = []string{"vllm", "llamacpp"}

// liveFigures are what the server's /metrics reports of itself: requests
// in service and waiting, the prompt and generated tokens, the prefix
// cache's queries and hits, the tokens the running requests hold.
type liveFigures struct {
	mu                    sync.Mutex
	running, waiting      int
	promptTokens          int64 // words computed (not read from the cache)
	queried, hits         int64
	generatedTokens, inKV int64
}

func (l *liveFigures) arrive(words, cached int) {
	l.mu.Lock()
	l.waiting++
	l.queried += int64(words)
	l.hits += int64(cached)
	l.promptTokens += int64(words - cached)
	l.mu.Unlock()
}

func (l *liveFigures) leaveQueue() {
	l.mu.Lock()
	l.waiting--
	l.mu.Unlock()
}

func (l *liveFigures) start(words int) {
	l.mu.Lock()
	l.waiting--
	l.running++
	l.inKV += int64(words)
	l.mu.Unlock()
}

func (l *liveFigures) generated() {
	l.mu.Lock()
	l.generatedTokens++
	l.inKV++
	l.mu.Unlock()
}

// end frees a request's slot and its KV cache: its prompt and the tokens
// it generated (generated() counted those in as they were written).
func (l *liveFigures) end(words, generated int) {
	l.mu.Lock()
	l.running--
	l.inKV -= int64(words + generated)
	l.mu.Unlock()
}

// Figures are the live figures at one moment, as /metrics serves them.
type Figures struct {
	Running, Waiting                        int
	PromptTokens, PrefixQueries, PrefixHits int64
	GeneratedTokens, KVTokensInUse          int64
}

func (l *liveFigures) read() Figures {
	l.mu.Lock()
	defer l.mu.Unlock()
	return Figures{Running: l.running, Waiting: l.waiting, PromptTokens: l.promptTokens, PrefixQueries: l.queried,
		PrefixHits: l.hits, GeneratedTokens: l.generatedTokens, KVTokensInUse: l.inKV}
}

// Figures are the server's live figures now (what /metrics would say).
func (s *Server) Figures() Figures { return s.live.read() }

// exposition is a template's families, parsed once, and where each live
// figure goes in them.
type exposition struct {
	mu   sync.Mutex
	fams []*dto.MetricFamily
	set  map[string]func(f Figures, kv int) float64
	buf  bytes.Buffer
}

// sets are, per exposition, the families that carry live figures. vLLM
// counts every prompt token and the prefix cache's queries and hits
// apart; llama.cpp counts the computed prompt tokens and the cached ones.
var sets = map[string]map[string]func(f Figures, kv int) float64{
	"vllm": {
		"vllm:num_requests_running":           func(f Figures, _ int) float64 { return float64(f.Running) },
		"vllm:num_requests_waiting":           func(f Figures, _ int) float64 { return float64(f.Waiting) },
		"vllm:kv_cache_usage_perc":            kvShare,
		"vllm:gpu_cache_usage_perc":           kvShare,
		"vllm:prefix_cache_queries_total":     func(f Figures, _ int) float64 { return float64(f.PrefixQueries) },
		"vllm:gpu_prefix_cache_queries_total": func(f Figures, _ int) float64 { return float64(f.PrefixQueries) },
		"vllm:prefix_cache_hits_total":        func(f Figures, _ int) float64 { return float64(f.PrefixHits) },
		"vllm:gpu_prefix_cache_hits_total":    func(f Figures, _ int) float64 { return float64(f.PrefixHits) },
		"vllm:num_preemptions_total":          func(Figures, int) float64 { return 0 },
		"vllm:prompt_tokens_total":            func(f Figures, _ int) float64 { return float64(f.PrefixQueries) },
		"vllm:generation_tokens_total":        func(f Figures, _ int) float64 { return float64(f.GeneratedTokens) },
	},
	"llamacpp": {
		"llamacpp:requests_processing":        func(f Figures, _ int) float64 { return float64(f.Running) },
		"llamacpp:requests_deferred":          func(f Figures, _ int) float64 { return float64(f.Waiting) },
		"llamacpp:prompt_tokens_total":        func(f Figures, _ int) float64 { return float64(f.PromptTokens) },
		"llamacpp:prompt_tokens_cached_total": func(f Figures, _ int) float64 { return float64(f.PrefixHits) },
		"llamacpp:tokens_predicted_total":     func(f Figures, _ int) float64 { return float64(f.GeneratedTokens) },
	},
}

func kvShare(f Figures, kv int) float64 { return min(1, float64(f.KVTokensInUse)/float64(kv)) }

// mustExposition parses a template; an unknown name or a template that
// does not parse is the program's bug.
func mustExposition(name string) *exposition {
	set, ok := sets[name]
	if !ok {
		panic(fmt.Sprintf("loadserver: unknown exposition %q (one of %v)", name, Expositions))
	}
	b, err := templates.ReadFile("templates/" + map[string]string{"vllm": "vllm-v1.txt", "llamacpp": "llamacpp.txt"}[name])
	if err != nil {
		panic(err)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	m, err := p.TextToMetricFamilies(bytes.NewReader(b))
	if err != nil {
		panic(fmt.Sprintf("loadserver: template %s: %v", name, err))
	}
	x := &exposition{set: set}
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		x.fams = append(x.fams, m[n])
	}
	return x
}

// write serves the template with the live figures in their families.
func (x *exposition) write(w io.Writer, l *liveFigures, kv int) {
	f := l.read()
	x.mu.Lock()
	defer x.mu.Unlock()
	x.buf.Reset()
	for _, fam := range x.fams {
		if set := x.set[fam.GetName()]; set != nil {
			v := set(f, kv)
			for _, m := range fam.Metric {
				switch {
				case m.Gauge != nil:
					m.Gauge.Value = &v
				case m.Counter != nil:
					m.Counter.Value = &v
				case m.Untyped != nil:
					m.Untyped.Value = &v
				}
			}
		}
		expfmt.MetricFamilyToText(&x.buf, fam)
	}
	w.Write(x.buf.Bytes())
}
