// Package servermetrics reads a model server's own view of itself: its
// Prometheus /metrics, parsed by the Prometheus project's own text-format
// parser (github.com/prometheus/common/expfmt), with the well-known series
// of vLLM, llama.cpp's server, SGLang and TGI mapped to common names
// (rundir.ServerSample: running, waiting, KV-cache usage, the prefix
// cache's queries and hits or hit rate, preemptions, generated and prompt
// tokens). The runner's watcher of a lane's server scrapes it on the run's
// clock during every suite (see run/runner), and the resource recorder
// writes the readings beside the suite's other resource files.
//
// A scrape is bounded: the answer is read up to MaxBytes, a mapped family
// of more than MaxSeries series is left out, and a figure that is NaN or
// infinite is left out of the reading; each such problem is said once. An
// answer that is not Prometheus text (an HTML page, a 404) ends the
// scraping of that server with one message (Permanent).
//
// Layer: the run (what the run's watcher of a server reads; imports only
// the record's rundir).
package servermetrics

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"mime"
	"net/http"
	"sort"
	"strings"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"bench/internal/record/rundir"
)

// MaxBytes bounds one /metrics answer: a vLLM server's is 20-60 KB, and
// one past this is a misconfigured endpoint or a label set gone wild,
// whose parse would cost more memory than the run itself.
const MaxBytes = 4 << 20

// MaxSeries bounds the series of one mapped family: a server sums a few
// (one per engine, per model, per finish reason); thousands are a label
// with one value per request, left out rather than added up.
const MaxSeries = 1024

// Timeout bounds one scrape.
const Timeout = 2 * time.Second

// Servers are the expositions mapped, by the prefix of their series.
var Servers = []string{"vllm", "llamacpp", "sglang", "tgi"}

// field is one common name's place in a sample.
type field func(*rundir.ServerSample) **float64

var (
	running   field = func(s *rundir.ServerSample) **float64 { return &s.Running }
	waiting   field = func(s *rundir.ServerSample) **float64 { return &s.Waiting }
	kvUsage   field = func(s *rundir.ServerSample) **float64 { return &s.KVCacheUsage }
	queries   field = func(s *rundir.ServerSample) **float64 { return &s.PrefixCacheQueries }
	hits      field = func(s *rundir.ServerSample) **float64 { return &s.PrefixCacheHits }
	hitRate   field = func(s *rundir.ServerSample) **float64 { return &s.PrefixCacheHitRate }
	preempted field = func(s *rundir.ServerSample) **float64 { return &s.Preemptions }
	generated field = func(s *rundir.ServerSample) **float64 { return &s.GeneratedTokens }
	prompt    field = func(s *rundir.ServerSample) **float64 { return &s.PromptTokens }
)

// rule maps one family of one server to a common name. Several families
// may map to one name (a deprecated one beside its successor): the first
// of them the server exports wins. A share is the mean of the family's
// series (one per engine); anything else their sum.
type rule struct {
	server, family string
	to             field
	share          bool
}

// rules are the mapped series. vLLM: vllm/v1/metrics/loggers.py (the
// gpu_ names are the deprecated ones of 0.9, and gpu_prefix_cache_hit_rate
// v0's gauge). llama.cpp: tools/server's to_metrics (kv_cache_usage_ratio
// is older servers'; prompt_tokens_total excludes the tokens read from the
// cache, prompt_tokens_cached_total counts those, so the prefix cache's
// queries are their sum). SGLang: its sglang: gauges and counters. TGI:
// its tgi_ queue and batch gauges and the sums of its token histograms.
var rules = []rule{
	{"vllm", "vllm:num_requests_running", running, false},
	{"vllm", "vllm:num_requests_waiting", waiting, false},
	{"vllm", "vllm:kv_cache_usage_perc", kvUsage, true},
	{"vllm", "vllm:gpu_cache_usage_perc", kvUsage, true},
	{"vllm", "vllm:prefix_cache_queries_total", queries, false},
	{"vllm", "vllm:gpu_prefix_cache_queries_total", queries, false},
	{"vllm", "vllm:prefix_cache_hits_total", hits, false},
	{"vllm", "vllm:gpu_prefix_cache_hits_total", hits, false},
	{"vllm", "vllm:gpu_prefix_cache_hit_rate", hitRate, true},
	{"vllm", "vllm:num_preemptions_total", preempted, false},
	{"vllm", "vllm:generation_tokens_total", generated, false},
	{"vllm", "vllm:prompt_tokens_total", prompt, false},

	{"llamacpp", "llamacpp:requests_processing", running, false},
	{"llamacpp", "llamacpp:requests_deferred", waiting, false},
	{"llamacpp", "llamacpp:kv_cache_usage_ratio", kvUsage, true},
	{"llamacpp", "llamacpp:prompt_tokens_cached_total", hits, false},
	{"llamacpp", "llamacpp:tokens_predicted_total", generated, false},
	{"llamacpp", "llamacpp:prompt_tokens_total", prompt, false},

	{"sglang", "sglang:num_running_reqs", running, false},
	{"sglang", "sglang:num_queue_reqs", waiting, false},
	{"sglang", "sglang:token_usage", kvUsage, true},
	{"sglang", "sglang:cache_hit_rate", hitRate, true},
	{"sglang", "sglang:generation_tokens_total", generated, false},
	{"sglang", "sglang:prompt_tokens_total", prompt, false},

	{"tgi", "tgi_batch_current_size", running, false},
	{"tgi", "tgi_queue_size", waiting, false},
	{"tgi", "tgi_request_generated_tokens", generated, false},
	{"tgi", "tgi_request_input_length", prompt, false},
}

// Families are the names of the mapped families of a server, in the
// order the rules give them.
func Families(server string) []string {
	var out []string
	for _, r := range rules {
		if r.server == server {
			out = append(out, r.family)
		}
	}
	return out
}

// Map reads the mapped series out of parsed families. It returns the
// reading (Server naming the exposition with the most mapped families
// present; none: an empty reading) and a note for each family left out
// (a NaN or infinite value, too many series), keyed by family so a
// caller can say each once.
func Map(fams map[string]*dto.MetricFamily) (rundir.ServerSample, map[string]string) {
	var out rundir.ServerSample
	count := map[string]int{}
	for _, r := range rules {
		if fams[r.family] != nil {
			count[r.server]++
		}
	}
	for _, name := range Servers {
		if count[name] > count[out.Server] || (out.Server == "" && count[name] > 0) {
			out.Server = name
		}
	}
	if out.Server == "" {
		return out, nil
	}
	notes := map[string]string{}
	for _, r := range rules {
		f := fams[r.family]
		if r.server != out.Server || f == nil || *r.to(&out) != nil {
			continue
		}
		if n := len(f.GetMetric()); n > MaxSeries {
			notes[r.family] = fmt.Sprintf("%s has %d series, more than the %d bench adds up; left out", r.family, n, MaxSeries)
			continue
		}
		sum, n := 0.0, 0
		bad := false
		for _, m := range f.GetMetric() {
			v, ok := value(m)
			if !ok {
				continue
			}
			if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
				bad = true
				continue
			}
			sum += v
			n++
		}
		if bad {
			notes[r.family] = fmt.Sprintf("%s has a value that is NaN, infinite or negative; those series are left out", r.family)
		}
		if n == 0 {
			continue
		}
		v := sum
		if r.share {
			v = min(sum/float64(n), 1)
		}
		*r.to(&out) = &v
	}
	// llama.cpp counts the prompt tokens it computed apart from those it
	// read from its cache: the cache was asked for both.
	if out.Server == "llamacpp" && out.PrefixCacheHits != nil && out.PromptTokens != nil {
		q := *out.PrefixCacheHits + *out.PromptTokens
		out.PrefixCacheQueries = &q
	}
	return out, notes
}

// value is a series' figure: a gauge's, counter's or untyped value, a
// histogram's or summary's sum (TGI's token counts are histograms).
func value(m *dto.Metric) (float64, bool) {
	switch {
	case m.Gauge != nil:
		return m.Gauge.GetValue(), true
	case m.Counter != nil:
		return m.Counter.GetValue(), true
	case m.Untyped != nil:
		return m.Untyped.GetValue(), true
	case m.Histogram != nil:
		return m.Histogram.GetSampleSum(), true
	case m.Summary != nil:
		return m.Summary.GetSampleSum(), true
	}
	return 0, false
}

// Error is a scrape that failed. A Permanent one will fail the same way
// every time (not Prometheus text, no /metrics, too large, nothing
// mapped): the watcher stops asking and says it once.
type Error struct {
	Permanent bool
	Msg       string
}

func (e *Error) Error() string { return e.Msg }

// Scraper reads one server's /metrics. It is used by one goroutine at a
// time (the parser is reused between scrapes).
type Scraper struct {
	url    string
	client *http.Client
	parser expfmt.TextParser
	buf    bytes.Buffer
	kept   []byte // the lines parsed of the last answer
	// noted are the families whose problems were said already.
	noted map[string]bool
}

// New returns a scraper of url, with its own client (a scrape must not
// take one of the cells' pooled connections).
func New(url string) *Scraper {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConnsPerHost = 1
	return &Scraper{url: url, client: &http.Client{Transport: t, Timeout: Timeout},
		parser: expfmt.NewTextParser(model.UTF8Validation), noted: map[string]bool{}}
}

// URL is the endpoint scraped.
func (s *Scraper) URL() string { return s.url }

// Scrape reads the server once and maps what it said. notes are the
// problems of families not said before (each once a run). A reading with
// no figure is a Permanent error: the server exports none of the mapped
// series.
func (s *Scraper) Scrape(ctx context.Context) (rundir.ServerSample, []string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.url, nil)
	if err != nil {
		return rundir.ServerSample{}, nil, &Error{Permanent: true, Msg: err.Error()}
	}
	// The classic text format: a server that can also speak OpenMetrics
	// must not answer in it (its "# EOF" is no text-format line).
	req.Header.Set("Accept", "text/plain;version=0.0.4;q=1,*/*;q=0.1")
	resp, err := s.client.Do(req)
	if err != nil {
		return rundir.ServerSample{}, nil, err
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusNotFound:
		io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		return rundir.ServerSample{}, nil, &Error{Permanent: true, Msg: "the server has no /metrics there (HTTP 404)"}
	case resp.StatusCode != http.StatusOK:
		io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		return rundir.ServerSample{}, nil, fmt.Errorf("HTTP %d", resp.StatusCode)
	}
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt == "text/html" || mt == "application/json" {
		return rundir.ServerSample{}, nil, &Error{Permanent: true, Msg: fmt.Sprintf("it answered %s, not Prometheus text", mt)}
	}
	s.buf.Reset()
	n, err := s.buf.ReadFrom(io.LimitReader(resp.Body, MaxBytes+1))
	if err != nil {
		return rundir.ServerSample{}, nil, err
	}
	if n > MaxBytes {
		return rundir.ServerSample{}, nil, &Error{Permanent: true, Msg: fmt.Sprintf("its answer is longer than %d MiB", MaxBytes>>20)}
	}
	return s.parse(s.buf.Bytes())
}

// parse maps one answer's text. Only the lines of mapped families are
// handed to the parser (see keep): a busy vLLM server's 40 KB of
// histograms cost expfmt 2 ms of CPU and 12,000 allocations a scrape,
// 2 % of a core at 100 ms, for series bench never reads.
func (s *Scraper) parse(body []byte) (rundir.ServerSample, []string, error) {
	if looksHTML(body) {
		return rundir.ServerSample{}, nil, &Error{Permanent: true, Msg: "not Prometheus text: it answered an HTML page"}
	}
	kept, families := keep(body, s.kept[:0])
	s.kept = kept
	fams, err := s.parser.TextToMetricFamilies(bytes.NewReader(kept))
	if err != nil {
		return rundir.ServerSample{}, nil, &Error{Permanent: true, Msg: "not Prometheus text: " + err.Error()}
	}
	smp, problems := Map(fams)
	if smp.Empty() {
		return smp, nil, &Error{Permanent: true, Msg: fmt.Sprintf("none of the %d series families it exports is one bench maps (vLLM, llama.cpp's server, SGLang, TGI)", families)}
	}
	var notes []string
	for _, fam := range sortedKeys(problems) {
		if !s.noted[fam] {
			s.noted[fam] = true
			notes = append(notes, problems[fam])
		}
	}
	return smp, notes, nil
}

// mapped are the families the rules read.
var mapped = func() map[string]bool {
	m := map[string]bool{}
	for _, r := range rules {
		m[r.family] = true
	}
	return m
}()

// keep appends to dst the lines of body that belong to a mapped family
// (its HELP and TYPE comments, its samples, a histogram's or summary's
// _bucket, _sum, _count lines) and says how many families body has. It
// does not parse: each line is kept or dropped whole by the metric name
// that begins it, and the parser judges what is kept.
func keep(body, dst []byte) ([]byte, int) {
	families := 0
	var last []byte
	for len(body) > 0 {
		line := body
		if i := bytes.IndexByte(body, '\n'); i >= 0 {
			line, body = body[:i+1], body[i+1:]
		} else {
			body = nil
		}
		name := metricName(line)
		if len(name) == 0 {
			continue
		}
		base, suffixed := trimSuffix(name)
		if !bytes.Equal(base, last) {
			last = base
			families++
		}
		// The map lookups of string(b) do not copy b.
		if mapped[string(name)] || (suffixed && mapped[string(base)]) {
			dst = append(dst, line...)
			if line[len(line)-1] != '\n' {
				dst = append(dst, '\n')
			}
		}
	}
	return dst, families
}

// metricName is the metric a line is about: a sample's name, or the
// family a HELP or TYPE comment names; nil for other lines.
func metricName(line []byte) []byte {
	line = bytes.TrimLeft(line, " \t")
	if len(line) > 0 && line[0] == '#' {
		rest := bytes.TrimLeft(line[1:], " \t")
		if !bytes.HasPrefix(rest, []byte("HELP")) && !bytes.HasPrefix(rest, []byte("TYPE")) {
			return nil
		}
		line = bytes.TrimLeft(rest[4:], " \t")
	}
	end := bytes.IndexAny(line, "{ \t\r\n")
	if end < 0 {
		end = len(line)
	}
	return line[:end]
}

// histogramSuffixes end the samples of a histogram or summary family.
var histogramSuffixes = [][]byte{[]byte("_bucket"), []byte("_sum"), []byte("_count")}

// trimSuffix is a sample name's family less a histogram's or summary's
// suffix, and whether it had one.
func trimSuffix(name []byte) ([]byte, bool) {
	for _, suf := range histogramSuffixes {
		if bytes.HasSuffix(name, suf) {
			return name[:len(name)-len(suf)], true
		}
	}
	return name, false
}

func looksHTML(b []byte) bool {
	head := strings.ToLower(string(b[:min(len(b), 512)]))
	return strings.Contains(head, "<html") || strings.Contains(head, "<!doctype")
}

func sortedKeys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// IsPermanent says whether err will recur on every scrape.
func IsPermanent(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Permanent
}
