package results

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"testing"
)

// A record with a NaN or an infinity in a float is still written (issue
// 31, items 3 and 11): each becomes null (0 where it cannot), and
// provider_metrics says where; the run does not stop, and a resume does
// not meet the same cell again.
func TestWriteNonFinite(t *testing.T) {
	p := filepath.Join(t.TempDir(), "results.jsonl")
	w, err := Create(p)
	if err != nil {
		t.Fatal(err)
	}
	inf, nan := math.Inf(1), math.NaN()
	r := &Record{RecordType: RecordType, Provider: "p", Model: "m", PromptID: "P0", AvailabilityStatus: StatusOK, Success: true,
		TokensPerS: &nan, Judge: &Judge{Verdict: VerdictPass, CostUSD: &inf, Samples: []JudgeSample{}},
		ProviderMetrics: map[string]any{"total_cost_usd": inf, "ok": 1.5, "nested": map[string]any{"x": math.Inf(-1)}},
		Timeline:        []TimelineEvent{{Event: EventEnd, AtMS: nan}}}
	if err := w.Write(r); err != nil {
		t.Fatalf("write: %v", err)
	}
	w.Close()
	var back Record
	b, _ := os.ReadFile(p)
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	got, _ := json.Marshal(back.ProviderMetrics[NonFiniteKey])
	if back.TokensPerS != nil || back.Judge.CostUSD != nil || back.ProviderMetrics["total_cost_usd"] != nil || back.ProviderMetrics["ok"] != 1.5 ||
		string(got) != `["tokens_per_s","provider_metrics.nested.x","provider_metrics.total_cost_usd","timeline[0].at_ms","judge.cost_usd"]` {
		t.Errorf("written: %s\ndropped %s", b, got)
	}
}
