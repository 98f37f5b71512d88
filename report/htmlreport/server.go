package htmlreport

import (
	"bench/internal/record/rundir"
	"bench/report"
)

// MaxServerPlots bounds the sweeps that get a server plot (each reads its
// suite's whole server file).
const MaxServerPlots = 50

// ReadServer reads a suite's server readings (its _server.jsonl); none is
// no error.
func ReadServer(runDir, provider, model string, thinking *string) ([]rundir.ServerSample, []string, error) {
	return rundir.ReadServerFile(runDir, provider, model, thinking)
}

// pageServer is what a sweep's server said of itself, for the plot under
// its capacity curves: its readings on the stages' time axis (seconds
// from the first stage's start), the stages as bands, and a series per
// mapped figure it had.
type pageServer struct {
	T      []float64       `json:"t"`
	Stages []pageStageSpan `json:"stages"`
	Series []serverSeries  `json:"series"`
	// Server names the exposition (vllm, llamacpp...), "" for residency
	// alone.
	Server string `json:"server"`
}

type pageStageSpan struct {
	Name  string  `json:"name"`
	Start float64 `json:"start"`
	End   float64 `json:"end"`
}

// serverSeries is one figure over time: a count (requests) or a share (0-1).
type serverSeries struct {
	Key    string     `json:"key"`
	Label  string     `json:"label"`
	Scale  string     `json:"scale"`
	Values []*float64 `json:"values"`
}

// newServer lays out a group's readings between its first stage's start
// and its last's end (nil without any), at most MaxTimelinePoints of them
// (evenly thinned). The prefix cache's hit rate is drawn per interval:
// the hits over the queries between two readings (or the server's gauge).
func newServer(g *report.Group, samples []rundir.ServerSample) *pageServer {
	var from, to int64
	var spans []pageStageSpan
	for _, st := range g.Stages {
		if st.StartUS <= 0 || st.EndUS <= st.StartUS {
			continue
		}
		if from == 0 || st.StartUS < from {
			from = st.StartUS
		}
		to = max(to, st.EndUS)
	}
	if from == 0 {
		return nil
	}
	for _, st := range g.Stages {
		if st.StartUS > 0 && st.EndUS > st.StartUS {
			spans = append(spans, pageStageSpan{Name: st.Stage, Start: sec(st.StartUS - from), End: sec(st.EndUS - from)})
		}
	}
	var in []rundir.ServerSample
	for _, s := range samples {
		if s.TimeUS >= from && s.TimeUS <= to {
			in = append(in, s)
		}
	}
	if len(in) == 0 {
		return nil
	}
	if step := (len(in) + MaxTimelinePoints - 1) / MaxTimelinePoints; step > 1 {
		thin := in[:0:0]
		for i := 0; i < len(in); i += step {
			thin = append(thin, in[i])
		}
		in = thin
	}
	ps := &pageServer{Stages: spans}
	for _, s := range in {
		ps.T = append(ps.T, sec(s.TimeUS-from))
		if s.Server != "" {
			ps.Server = s.Server
		}
	}
	add := func(key, label, scale string, get func(i int) *float64) {
		vals := make([]*float64, len(in))
		any := false
		for i := range in {
			vals[i] = get(i)
			any = any || vals[i] != nil
		}
		if any {
			ps.Series = append(ps.Series, serverSeries{Key: key, Label: label, Scale: scale, Values: vals})
		}
	}
	add("running", "running", "count", func(i int) *float64 { return in[i].Running })
	add("waiting", "waiting", "count", func(i int) *float64 { return in[i].Waiting })
	add("kv_cache_usage", "KV-cache usage", "share", func(i int) *float64 { return in[i].KVCacheUsage })
	add("prefix_cache_hit_rate", "prefix-cache hits", "share", func(i int) *float64 {
		if r := in[i].PrefixCacheHitRate; r != nil {
			return r
		}
		if i == 0 {
			return nil
		}
		a, b := in[i-1], in[i]
		if a.PrefixCacheQueries == nil || b.PrefixCacheQueries == nil || a.PrefixCacheHits == nil || b.PrefixCacheHits == nil {
			return nil
		}
		q := *b.PrefixCacheQueries - *a.PrefixCacheQueries
		if q <= 0 {
			return nil
		}
		v := min(1, max(0, (*b.PrefixCacheHits-*a.PrefixCacheHits)/q))
		return &v
	})
	add("generated_tokens_per_s", "generated tok/s", "rate", func(i int) *float64 {
		if i == 0 || in[i].GeneratedTokens == nil || in[i-1].GeneratedTokens == nil || in[i].TimeUS <= in[i-1].TimeUS {
			return nil
		}
		v := max(0, *in[i].GeneratedTokens-*in[i-1].GeneratedTokens) / sec(in[i].TimeUS-in[i-1].TimeUS)
		return &v
	})
	add("preemptions", "preemptions", "count", func(i int) *float64 { return in[i].Preemptions })
	add("model_held", "model held", "share", func(i int) *float64 {
		if h := in[i].ModelHeld; h != nil {
			v := 0.0
			if *h {
				v = 1
			}
			return &v
		}
		return nil
	})
	return ps
}

func sec(us int64) float64 { return float64(us) / 1e6 }
