package report

import (
	"testing"

	"bench/internal/record/rundir"
)

// A stage's server figures: gauges over the readings inside its window,
// counters from the last reading before it to its last inside, residency
// as a share; readings outside the window count for nothing else.
func TestStageServer(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	yes, no := true, false
	smp := func(t int64, run, kv, q, h, gen float64, held *bool) rundir.ServerSample {
		return rundir.ServerSample{TimeUS: t, Server: "vllm", Running: f(run), KVCacheUsage: f(kv), PrefixCacheQueries: f(q),
			PrefixCacheHits: f(h), GeneratedTokens: f(gen), ModelHeld: held}
	}
	samples := []rundir.ServerSample{
		smp(900, 9, 0.9, 0, 0, 0, &yes),          // before: the counters' base
		smp(1000, 2, 0.2, 100, 10, 50, &yes),     // in
		smp(1500000, 4, 0.6, 300, 160, 250, &no), // in
		smp(2000001, 9, 0.9, 999, 999, 999, &no), // after
	}
	got := stageServer(samples, 1000, 2000000)
	if got == nil || got.Samples != 2 || got.Server != "vllm" {
		t.Fatalf("%+v", got)
	}
	if *got.Running != (MeanMax{3, 4}) || *got.KVCacheUsage != (MeanMax{0.4, 0.6}) {
		t.Errorf("gauges %+v %+v", *got.Running, *got.KVCacheUsage)
	}
	if *got.PrefixCacheQueries != 300 || *got.PrefixCacheHits != 160 || *got.PrefixCacheHitRate != 0.533 || *got.GeneratedTokens != 250 {
		t.Errorf("counters %v %v %v %v", *got.PrefixCacheQueries, *got.PrefixCacheHits, *got.PrefixCacheHitRate, *got.GeneratedTokens)
	}
	if *got.GeneratedTokensPerS != 166.767 || *got.ModelResident != 0.5 || got.Waiting != nil || got.Preemptions != nil {
		t.Errorf("rate %v, resident %v, waiting %v, preemptions %v", *got.GeneratedTokensPerS, *got.ModelResident, got.Waiting, got.Preemptions)
	}
	if stageServer(samples, 3000000, 4000000) != nil {
		t.Error("a stage without readings has server figures")
	}
}
