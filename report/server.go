package report

import (
	"bench/internal/record/rundir"
)

// StageServer is what the model server said of itself during a stage:
// its readings (the suite's _server.jsonl) taken between the stage's
// start and its last cell's end. Gauges (requests running and waiting,
// the KV cache's usage) are the mean and the highest reading; counters
// (the prefix cache's queries and hits, preemptions, generated and prompt
// tokens) the difference between the last reading at or before the
// stage's end and the last at or before its start (the first in the
// stage when none came before): each end is off by at most the tokens of
// one interval. A series the server did not export is absent.
type StageServer struct {
	// Server is the exposition mapped (vllm, llamacpp, sglang, tgi; ""
	// when only residency was read); Samples the readings in the stage.
	Server  string `json:"server,omitempty"`
	Samples int    `json:"samples"`

	Running      *MeanMax `json:"running,omitempty"`
	Waiting      *MeanMax `json:"waiting,omitempty"`
	KVCacheUsage *MeanMax `json:"kv_cache_usage,omitempty"`
	// PrefixCacheHitRate is the stage's hits over its queries (in
	// tokens), or the mean of the rate a server reports as a gauge.
	PrefixCacheHitRate *float64 `json:"prefix_cache_hit_rate,omitempty"`
	PrefixCacheQueries *float64 `json:"prefix_cache_queries,omitempty"`
	PrefixCacheHits    *float64 `json:"prefix_cache_hits,omitempty"`
	Preemptions        *float64 `json:"preemptions,omitempty"`
	GeneratedTokens    *float64 `json:"generated_tokens,omitempty"`
	// GeneratedTokensPerS is GeneratedTokens over the time between the
	// two readings it was taken from.
	GeneratedTokensPerS *float64 `json:"generated_tokens_per_s,omitempty"`
	PromptTokens        *float64 `json:"prompt_tokens,omitempty"`
	// ModelResident is the share of the readings in which the server held
	// the suite's model (Ollama's /api/ps).
	ModelResident *float64 `json:"model_resident,omitempty"`
}

// MeanMax is a gauge over a stage.
type MeanMax struct {
	Mean float64 `json:"mean"`
	Max  float64 `json:"max"`
}

// readServer reads a suite's server file: none is (nil, nil, nil).
func readServer(runDir string, g *Group) ([]rundir.ServerSample, []string, error) {
	return rundir.ReadServerFile(runDir, g.Provider, g.Model, g.ThinkingLevel)
}

// attachServer gives each of a group's stages the readings of its window.
func attachServer(g *Group, samples []rundir.ServerSample) {
	for _, st := range g.Stages {
		if st.StartUS > 0 && st.EndUS > st.StartUS {
			st.Server = stageServer(samples, st.StartUS, st.EndUS)
		}
	}
}

// stageServer is the figures of the readings in [from, to] (µs), nil
// when none falls in it.
func stageServer(samples []rundir.ServerSample, from, to int64) *StageServer {
	var in []rundir.ServerSample
	var before *rundir.ServerSample
	for i := range samples {
		s := &samples[i]
		switch {
		case s.TimeUS < from:
			before = s
		case s.TimeUS <= to:
			in = append(in, *s)
		}
	}
	if len(in) == 0 {
		return nil
	}
	out := &StageServer{Samples: len(in)}
	for _, s := range in {
		if s.Server != "" {
			out.Server = s.Server
		}
	}
	gauge := func(get func(*rundir.ServerSample) *float64) *MeanMax {
		var mm MeanMax
		n := 0
		for i := range in {
			if v := get(&in[i]); v != nil {
				mm.Mean += *v
				mm.Max = max(mm.Max, *v)
				n++
			}
		}
		if n == 0 {
			return nil
		}
		mm.Mean /= float64(n)
		mm.Mean, mm.Max = *round(mm.Mean), *round(mm.Max)
		return &mm
	}
	out.Running = gauge(func(s *rundir.ServerSample) *float64 { return s.Running })
	out.Waiting = gauge(func(s *rundir.ServerSample) *float64 { return s.Waiting })
	out.KVCacheUsage = gauge(func(s *rundir.ServerSample) *float64 { return s.KVCacheUsage })
	// A counter's difference: from the last reading before the stage that
	// has it (else the stage's first that has it) to the stage's last.
	delta := func(get func(*rundir.ServerSample) *float64) (d, span *float64) {
		var base, last *rundir.ServerSample
		if before != nil && get(before) != nil {
			base = before
		}
		for i := range in {
			if get(&in[i]) == nil {
				continue
			}
			if base == nil {
				base = &in[i]
			}
			last = &in[i]
		}
		if base == nil || last == nil || last == base {
			return nil, nil
		}
		v := max(0, *get(last)-*get(base)) // a restarted server's counter went back to 0
		sp := float64(last.TimeUS-base.TimeUS) / 1e6
		return round(v), &sp
	}
	out.PrefixCacheQueries, _ = delta(func(s *rundir.ServerSample) *float64 { return s.PrefixCacheQueries })
	out.PrefixCacheHits, _ = delta(func(s *rundir.ServerSample) *float64 { return s.PrefixCacheHits })
	out.Preemptions, _ = delta(func(s *rundir.ServerSample) *float64 { return s.Preemptions })
	var span *float64
	out.GeneratedTokens, span = delta(func(s *rundir.ServerSample) *float64 { return s.GeneratedTokens })
	if out.GeneratedTokens != nil && span != nil && *span > 0 {
		out.GeneratedTokensPerS = round(*out.GeneratedTokens / *span)
	}
	out.PromptTokens, _ = delta(func(s *rundir.ServerSample) *float64 { return s.PromptTokens })
	if q, h := out.PrefixCacheQueries, out.PrefixCacheHits; q != nil && h != nil && *q > 0 {
		out.PrefixCacheHitRate = round(*h / *q)
	} else if r := gauge(func(s *rundir.ServerSample) *float64 { return s.PrefixCacheHitRate }); r != nil {
		out.PrefixCacheHitRate = &r.Mean
	}
	held, n := 0, 0
	for _, s := range in {
		if s.ModelHeld != nil {
			n++
			if *s.ModelHeld {
				held++
			}
		}
	}
	if n > 0 {
		out.ModelResident = round(float64(held) / float64(n))
	}
	return out
}
