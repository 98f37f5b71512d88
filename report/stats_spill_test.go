package report

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"bench/internal/record/results/resultstest"
)

// Figures from values spilled to the tape (a chunk of 6, past 7 values:
// every estimator of a 12-group run of 3,000 lines of every field,
// whole and fractional values, load stages) are the figures of values
// held in the heap, byte for byte in summary.json, tiers.json and
// summary.md; and they are when an estimator's values turn fractional
// after it spilled.
func TestSpilledFiguresAreTheSame(t *testing.T) {
	dir := t.TempDir()
	resultstest.Write(t, filepath.Join(dir, "results.jsonl"), 3000, resultstest.Rich)
	files := func() []string {
		t.Helper()
		s, err := LoadEach(dir, nil)
		if err != nil {
			t.Fatal(err)
		}
		s.GeneratedAt = time.Time{}
		sum, _ := json.Marshal(s)
		tiers, _ := json.Marshal(TierRanking(s))
		var md strings.Builder
		if err := WriteMarkdown(&md, s); err != nil {
			t.Fatal(err)
		}
		return []string{string(sum), string(tiers), md.String()}
	}
	defer func(at, chunk int) { spillAt, spillChunk = at, chunk }(spillAt, spillChunk)
	spillAt = 1 << 40
	held := files()
	spillAt, spillChunk = 7, 6
	spilled := files()
	for i, name := range []string{"summary.json", "tiers.json", "summary.md"} {
		if held[i] != spilled[i] {
			t.Errorf("%s differs with the values spilled", name)
		}
	}

	e, h := newExact(&spill{}), &exact{}
	defer e.sp.tape.Close()
	for i := range 41 {
		v := float64(i * 3 % 17)
		if i > 20 {
			v += 0.5
		}
		e.Add(v)
		h.Add(v)
	}
	if e.spilled == nil {
		t.Fatal("the estimator did not spill")
	}
	if gs, hs := e.Stats(), h.Stats(); *gs.P50 != *hs.P50 || *gs.P99 != *hs.P99 || *gs.Mean != *hs.Mean || e.Quantile(0.3) != h.Quantile(0.3) {
		t.Errorf("spilled %v, held %v", gs, hs)
	}
}
