package stats

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"testing"
)

// referenceCase is one series with the change points Apache Otava's own
// code found on it (testdata/otava_reference.py made the file).
type referenceCase struct {
	Name         string    `json:"name"`
	Window       int       `json:"window"`
	MaxP         float64   `json:"max_p"`
	MinMagnitude float64   `json:"min_magnitude"`
	Series       []float64 `json:"series"`
	TrueSteps    []int     `json:"true_steps"`
	ChangePoints []struct {
		Index      int     `json:"index"`
		QHat       float64 `json:"qhat"`
		P          float64 `json:"p_value"`
		MeanBefore float64 `json:"mean_before"`
		MeanAfter  float64 `json:"mean_after"`
	} `json:"change_points"`
}

// The detector finds what Otava finds, point for point, with the same
// p-values and means, on Otava's own test series and 36 synthetic ones
// (no step to three, noise 1 to 5 %, three settings).
func TestOtavaReference(t *testing.T) {
	b, err := os.ReadFile("testdata/otava_reference.json")
	if err != nil {
		t.Fatal(err)
	}
	var ref struct {
		Commit string          `json:"otava_commit"`
		Cases  []referenceCase `json:"cases"`
	}
	if err := json.Unmarshal(b, &ref); err != nil {
		t.Fatal(err)
	}
	points := 0
	for _, c := range ref.Cases {
		got := DetectChanges(c.Series, ChangeOptions{Window: c.Window, MaxP: c.MaxP, MinMagnitude: c.MinMagnitude})
		if len(got) != len(c.ChangePoints) {
			t.Errorf("%s: %d change points %v, Otava %d", c.Name, len(got), indexes(got), len(c.ChangePoints))
			continue
		}
		for i, w := range c.ChangePoints {
			g := got[i]
			if g.Index != w.Index || !close(g.P, w.P) || !close(g.MeanBefore, w.MeanBefore) || !close(g.MeanAfter, w.MeanAfter) || !close(g.QHat, w.QHat) {
				t.Errorf("%s: point %d: got %+v, Otava %+v", c.Name, i, g, w)
			}
			points++
		}
	}
	t.Logf("%d series, %d change points, as Otava %s finds them", len(ref.Cases), points, ref.Commit)
	if points < 20 {
		t.Errorf("only %d change points compared", points)
	}
}

// close compares to a relative 1e-6 (scipy's t distribution and this
// one's incomplete beta differ in the last digits), and tiny p-values to
// an absolute 1e-12.
func close(a, b float64) bool {
	return math.Abs(a-b) <= 1e-6*math.Max(math.Abs(a), math.Abs(b)) || math.Abs(a-b) < 1e-12
}

func indexes(ps []ChangePoint) []int {
	out := make([]int, len(ps))
	for i, p := range ps {
		out[i] = p.Index
	}
	return out
}

// nightly draws n nightly values around 100 with relative noise, times
// 1+step from index at on.
func nightly(r *rand.Rand, n, at int, step, noise float64) []float64 {
	s := make([]float64, n)
	for i := range s {
		level := 100.0
		if at >= 0 && i >= at {
			level *= 1 + step
		}
		s[i] = level * (1 + noise*r.NormFloat64())
	}
	return s
}

// The figures: 60 nightly runs with a 5 % step at run 40 and 3 %
// noise should show the change within ±2 runs; 60 without a step should
// show none. Measured over 1,000 seeds with bench history's settings
// (ChangeOptions{Window: 60, MaxP: 1e-4, MinMagnitude: 0.02, MinSegment: 3}) and stated (go
// test -v -run Nightly). At this signal (a step of 1.67 noise standard
// deviations) no estimator places every step within ±2: even the least
// squares location misses by 3 or more in about 15 % of series, so the
// test asserts the rates measured here, with a margin.
func TestNightlyStep(t *testing.T) {
	const seeds = 1000
	opt := ChangeOptions{Window: 60, MaxP: 1e-4, MinMagnitude: 0.02, MinSegment: 3}
	var within2, within5, extra, alarms int
	for seed := range uint64(seeds) {
		r := rand.New(rand.NewPCG(seed, 40))
		cps := DetectChanges(nightly(r, 60, 40, 0.05, 0.03), opt)
		near2, near5 := false, false
		for _, c := range cps {
			d := math.Abs(float64(c.Index - 40))
			near2 = near2 || d <= 2
			near5 = near5 || d <= 5
			if d > 5 {
				extra++
			}
		}
		within2 += b2i(near2)
		within5 += b2i(near5)
		if len(DetectChanges(nightly(r, 60, -1, 0, 0.03), opt)) > 0 {
			alarms++
		}
	}
	f := func(n int) float64 { return float64(n) / seeds }
	t.Logf("60 runs, 5%% step at run 40, 3%% noise, %d seeds: change point within ±2 runs in %.3f, within ±5 in %.3f; %d points further off",
		seeds, f(within2), f(within5), extra)
	t.Logf("60 runs, no step, 3%% noise, %d seeds: a change point (false alarm) in %.4f of series", seeds, f(alarms))
	if f(within2) < 0.78 || f(within5) < 0.9 {
		t.Errorf("the step found within ±2 in %.3f, within ±5 in %.3f of series", f(within2), f(within5))
	}
	if f(alarms) > 0.01 {
		t.Errorf("false-alarm rate %.4f per flat series", f(alarms))
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// Short and degenerate series give no change point and no panic.
func TestDegenerate(t *testing.T) {
	for _, s := range [][]float64{nil, {1}, {1, 2}, {5, 5, 5, 5, 5, 5}, {1, 1, 1, 9, 9, 9}} {
		cps := DetectChanges(s, DefaultChangeOptions())
		for _, c := range cps {
			if math.IsNaN(c.P) || c.Index <= 0 || c.Index >= len(s) {
				t.Errorf("%v: %+v", s, c)
			}
		}
	}
	if cps := DetectChanges([]float64{1, 1, 1, 1, 9, 9, 9, 9}, DefaultChangeOptions()); len(cps) != 1 || cps[0].Index != 4 || cps[0].P != 0 {
		t.Errorf("a clean step: %+v", cps)
	}
}

// One outlying last night: Otava's settings (MinSegment 0) call it a
// change point; with three points a side required there is none.
func TestMinSegment(t *testing.T) {
	s := []float64{100, 101, 99, 100, 102, 98, 100, 101, 99, 100, 150}
	if cps := DetectChanges(s, ChangeOptions{Window: 50, MaxP: 0.001}); len(cps) != 1 || cps[0].Index != 10 {
		t.Errorf("MinSegment 0: %v, want the last point", indexes(cps))
	}
	if cps := DetectChanges(s, ChangeOptions{Window: 50, MaxP: 0.001, MinSegment: 3}); len(cps) != 0 {
		t.Errorf("MinSegment 3: %v, want none", indexes(cps))
	}
}
