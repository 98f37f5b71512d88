package rundir

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"sort"
)

// ServerSample is one reading of what a suite's model server said of
// itself, one line of its ServerSuffix file: the server's Prometheus
// /metrics mapped to common names (package servermetrics says from which
// series of vLLM, llama.cpp's server, SGLang and TGI), and which models it
// held (Ollama's /api/ps). A figure the server did not export is absent,
// never 0. Counters (the prefix cache's queries and hits, preemptions,
// generated and prompt tokens) are the server's own running totals: a
// stage's figure is their difference across it.
type ServerSample struct {
	// TimeUS is when the reading was taken, on the run's clock, µs since
	// the epoch: the scale of a stage's stage_start_us and its cells'
	// ended_at_us.
	TimeUS int64 `json:"t_us"`
	// Server names the exposition the figures were mapped from (vllm,
	// llamacpp, sglang, tgi); "" when only residency was read.
	Server string `json:"server,omitempty"`
	// Running and Waiting are the requests the server was serving and
	// holding in its queue.
	Running *float64 `json:"running,omitempty"`
	Waiting *float64 `json:"waiting,omitempty"`
	// KVCacheUsage is the share of the KV cache in use, 0 to 1.
	KVCacheUsage *float64 `json:"kv_cache_usage,omitempty"`
	// PrefixCacheQueries and PrefixCacheHits count prompt tokens looked up
	// in the prefix cache and found there (vLLM's and llama.cpp's
	// counters); PrefixCacheHitRate is a hit rate the server reports as a
	// gauge instead (SGLang, vLLM before its counters).
	PrefixCacheQueries *float64 `json:"prefix_cache_queries,omitempty"`
	PrefixCacheHits    *float64 `json:"prefix_cache_hits,omitempty"`
	PrefixCacheHitRate *float64 `json:"prefix_cache_hit_rate,omitempty"`
	// Preemptions counts requests the server preempted (vLLM).
	Preemptions *float64 `json:"preemptions,omitempty"`
	// GeneratedTokens and PromptTokens count the tokens the server
	// generated and the prompt tokens it processed, as it counts them.
	GeneratedTokens *float64 `json:"generated_tokens,omitempty"`
	PromptTokens    *float64 `json:"prompt_tokens,omitempty"`
	// Models are the models the server held (Ollama's /api/ps), and
	// ModelHeld whether the suite's model was one of them.
	Models    []string `json:"models,omitempty"`
	ModelHeld *bool    `json:"model_held,omitempty"`
}

// Empty says the reading holds no figure at all.
func (s *ServerSample) Empty() bool {
	for _, v := range s.Values() {
		if v != nil {
			return false
		}
	}
	return s.ModelHeld == nil && s.Models == nil
}

// ServerSeries are the mapped series by their names in summary.json and
// the server files, in the order the reports list them.
var ServerSeries = []string{"running", "waiting", "kv_cache_usage", "prefix_cache_queries", "prefix_cache_hits",
	"prefix_cache_hit_rate", "preemptions", "generated_tokens", "prompt_tokens"}

// Values are the sample's figures in ServerSeries' order.
func (s *ServerSample) Values() []*float64 {
	return []*float64{s.Running, s.Waiting, s.KVCacheUsage, s.PrefixCacheQueries, s.PrefixCacheHits,
		s.PrefixCacheHitRate, s.Preemptions, s.GeneratedTokens, s.PromptTokens}
}

// maxServerLine bounds one line of a server file: a reading is a dozen
// numbers and the names of the models held.
const maxServerLine = 64 << 10

// ReadServerSamples parses a server file (name is for messages). A line
// that is not a reading (bad JSON, no t_us, a figure that is not finite
// or is negative) is skipped with a warning naming the file and the line,
// at most ten of them; readings come back in time order. Only a read
// error, or a line past maxServerLine, is an error (what was read before
// it is kept).
func ReadServerSamples(r io.Reader, name string) ([]ServerSample, []string, error) {
	out, warnings, err := ReadLines(r, name, "server reading", maxServerLine, checkServerSample)
	sort.SliceStable(out, func(i, j int) bool { return out[i].TimeUS < out[j].TimeUS })
	return out, warnings, err
}

// ReadServerFile reads the server file of a suite of the run directory:
// none is (nil, nil, nil).
func ReadServerFile(runDir, provider, model string, thinking *string) ([]ServerSample, []string, error) {
	path := Path(runDir, ResourceFiles(provider, model, thinking).Server)
	f, err := Open(path, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	return ReadServerSamples(f, path)
}

// ReadLines parses a file of one JSON value a line (name is for
// messages, noun names a value in them): a line that is not one value,
// or that check (nil: none) says why it cannot be used, is skipped with a
// warning naming the file and the line, at most ten and a count of the
// rest. Only a read error, or a line past maxLine, is an error; what was
// read before it is kept.
func ReadLines[T any](r io.Reader, name, noun string, maxLine int, check func(*T) string) ([]T, []string, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), maxLine)
	var out []T
	var warnings []string
	const maxWarnings = 10
	bad := 0
	warn := func(line int, why string) {
		bad++
		if bad <= maxWarnings {
			warnings = append(warnings, fmt.Sprintf("%s:%d: %s skipped: %s", name, line, noun, why))
		}
	}
	line := 0
	for sc.Scan() {
		line++
		text := bytes.TrimSpace(sc.Bytes())
		if len(text) == 0 {
			continue
		}
		var v T
		dec := json.NewDecoder(bytes.NewReader(text))
		if err := dec.Decode(&v); err != nil {
			warn(line, err.Error())
			continue
		}
		if dec.More() {
			warn(line, "more than one JSON value on the line")
			continue
		}
		if check != nil {
			if why := check(&v); why != "" {
				warn(line, why)
				continue
			}
		}
		out = append(out, v)
	}
	var err error
	if serr := sc.Err(); serr != nil {
		err = fmt.Errorf("read %s: %w", name, serr)
		if errors.Is(serr, bufio.ErrTooLong) {
			err = fmt.Errorf("%s:%d: line longer than %d bytes; the rest of the file is skipped", name, line+1, maxLine)
		}
	}
	if bad > maxWarnings {
		warnings = append(warnings, fmt.Sprintf("%s: %d more %ss skipped", name, bad-maxWarnings, noun))
	}
	return out, warnings, err
}

// checkServerSample says why a decoded reading cannot be used, or "".
func checkServerSample(s *ServerSample) string {
	if s.TimeUS <= 0 {
		return "t_us missing or not positive"
	}
	for i, v := range s.Values() {
		if v != nil && (math.IsNaN(*v) || math.IsInf(*v, 0) || *v < 0) {
			return fmt.Sprintf("%s %v is not a count or a share", ServerSeries[i], *v)
		}
	}
	if s.KVCacheUsage != nil && *s.KVCacheUsage > 1 {
		return fmt.Sprintf("kv_cache_usage %v is above 1", *s.KVCacheUsage)
	}
	return ""
}
