package stats

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
)

// around returns n values spread evenly (±spread, relative) around median.
func around(median, spread float64, n int) []float64 {
	xs := make([]float64, n)
	for i := range xs {
		f := 0.0
		if n > 1 {
			f = float64(i)/float64(n-1)*2 - 1
		}
		xs[i] = median * (1 + spread*f)
	}
	return xs
}

func mustCompare(t *testing.T, base, cur []float64) Comparison {
	t.Helper()
	c, err := CompareSamples(base, cur)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestJudge(t *testing.T) {
	latency := DefaultOptions()
	throughput := DefaultOptions()
	throughput.HigherIsBetter = true
	throughput.Floor = 0.5
	cases := []struct {
		name      string
		base, cur []float64
		opt       Options
		want      Change
		reason    string
	}{
		{"too few base samples", around(100, 0.05, 3), around(200, 0.05, 10), latency, NotJudged, "need >= 4 samples a side (base 3, new 10)"},
		{"too few new samples", around(100, 0.05, 10), nil, latency, NotJudged, "no samples on a side (base 10, new 0)"},
		{"50% slower", around(100, 0.05, 10), around(150, 0.05, 10), latency, Regression, "shift +50 (+50%"},
		{"50% faster", around(150, 0.05, 10), around(100, 0.05, 10), latency, Improvement, "shift -50 (-33.33%"},
		{"throughput drop", around(40, 0.05, 10), around(20, 0.05, 10), throughput, Regression, "shift -20"},
		{"throughput rise", around(20, 0.05, 10), around(40, 0.05, 10), throughput, Improvement, "shift +20"},
		{"significant but within 10%", around(100, 0.01, 10), around(105, 0.01, 10), latency, Same, "within the 10% threshold"},
		{"significant, 100% slower but within the 5 ms floor", around(2, 0.05, 10), around(4, 0.05, 10), latency, Same, "within the floor of 5"},
		{"identical", around(100, 0.05, 10), around(100, 0.05, 10), latency, Same, "not significant: p=1 > alpha 0.05"},
		{"4+4 fully separated is significant", around(100, 0.05, 4), around(200, 0.05, 4), latency, Regression, "p=0.0286"},
		{"3+3 can never be", around(100, 0.05, 3), around(200, 0.05, 3), Options{Alpha: 0.05, Threshold: 0.1, Floor: 5, MinSamples: 3, Correction: Holm}, NotJudged, "n=3+3 cannot reach p <= 0.05 (smallest possible p 0.1)"},
		{"all tied", []float64{7, 7, 7, 7}, []float64{7, 7, 7, 7}, latency, Same, "not significant: p=1"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			vs, err := Judge([]Comparison{mustCompare(t, c.base, c.cur)}, c.opt)
			if err != nil {
				t.Fatal(err)
			}
			v := vs[0]
			if v.Change != c.want || !strings.Contains(v.Reason, c.reason) {
				t.Errorf("got %s %q, want %s containing %q", v.Change, v.Reason, c.want, c.reason)
			}
			if _, err := json.Marshal(v); err != nil {
				t.Errorf("verdict does not encode: %v", err)
			}
		})
	}
}

// A family of 16 unchanged prompts and one slower one.
func TestJudgeFamilyCorrection(t *testing.T) {
	cs := make([]Comparison, 16)
	for i := range cs {
		cs[i] = mustCompare(t, around(100, 0.2, 6), around(100, 0.19, 6))
	}
	for _, tc := range []struct {
		n    int // samples a side of the slower prompt, fully separated
		corr Correction
		want Change
		text string
	}{
		// 5+5: exact p = 2/C(10,5) = 0.00794 at best, above Holm's bar
		// alpha/16: it cannot be judged in this family, and leaving it out
		// makes a family of 15. BH's bar can reach alpha: judged, and 16
		// times its p is 0.127.
		{5, Holm, NotJudged, "n=5+5 cannot reach p <= 0.00333 after Holm over 15 comparisons (smallest possible p 0.00794)"},
		{5, BH, Same, "BH-adjusted over 16: 0.127"},
		{5, NoCorrection, Regression, "p=0.00794"},
		// 6+6: exact p = 2/C(12,6) = 0.00216; 16 times that is 0.0346.
		{6, Holm, Regression, "Holm-adjusted over 16: 0.0346"},
	} {
		cs[3] = mustCompare(t, around(100, 0.05, tc.n), around(150, 0.05, tc.n))
		opt := DefaultOptions()
		opt.Correction = tc.corr
		vs, err := Judge(cs, opt)
		if err != nil {
			t.Fatal(err)
		}
		if vs[3].Change != tc.want || !strings.Contains(vs[3].Reason, tc.text) {
			t.Errorf("n=%d %s: got %s %q, want %s with %q", tc.n, tc.corr, vs[3].Change, vs[3].Reason, tc.want, tc.text)
		}
		for i, v := range vs {
			if i != 3 && v.Change != Same {
				t.Errorf("%s: prompt %d flagged: %s", tc.corr, i, v.Reason)
			}
		}
	}
	// 4+4 fully separated (p = 0.0286) cannot survive Holm over 16: not
	// judged, and the reason says so.
	cs[3] = mustCompare(t, around(100, 0.05, 4), around(150, 0.05, 4))
	vs, _ := Judge(cs, DefaultOptions())
	if vs[3].Change != NotJudged || vs[3].NotJudged != WhyFewSamples || !strings.Contains(vs[3].Reason, "cannot reach p <= 0.00333 after Holm over 15 comparisons") {
		t.Errorf("got %s %q", vs[3].Change, vs[3].Reason)
	}
	// Comparisons lacking samples are left out of the family: 15 of them
	// do not dilute the one that has enough.
	for i := range cs {
		if i != 3 {
			cs[i] = mustCompare(t, around(100, 0.05, 2), around(100, 0.05, 2))
		}
	}
	vs, _ = Judge(cs, DefaultOptions())
	if vs[3].Change != Regression || vs[3].AdjustedP != vs[3].P {
		t.Errorf("alone in its family: got %s adjusted %v raw %v", vs[3].Change, vs[3].AdjustedP, vs[3].P)
	}
}

// The first cell of a model includes its load time. An identical rerun
// has it too, and even a run where only the new side pays it is not a
// regression: the U test works on ranks, so one outlier moves U by at most
// the other side's size.
func TestJudgeLoadTimeOutlier(t *testing.T) {
	base := around(120, 0.1, 10)
	cur := around(120, 0.1, 10)
	cur[0] += 4000
	vs, _ := Judge([]Comparison{mustCompare(t, base, cur)}, DefaultOptions())
	if vs[0].Change != Same {
		t.Errorf("load-time outlier flagged: %s", vs[0].Reason)
	}
	base[0] += 4000
	vs, _ = Judge([]Comparison{mustCompare(t, base, cur)}, DefaultOptions())
	if vs[0].Change != Same {
		t.Errorf("identical rerun flagged: %s", vs[0].Reason)
	}
}

func TestOptionsValidate(t *testing.T) {
	if err := DefaultOptions().Validate(); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		mut  func(*Options)
		want string
	}{
		{func(o *Options) { o.Alpha = 0 }, "alpha"},
		{func(o *Options) { o.Alpha = math.NaN() }, "alpha"},
		{func(o *Options) { o.Threshold = -0.1 }, "threshold"},
		{func(o *Options) { o.Floor = math.Inf(1) }, "floor"},
		{func(o *Options) { o.MinSamples = 0 }, "min samples"},
		{func(o *Options) { o.Correction = "bonferroni" }, "correction"},
		{func(o *Options) { *o = Options{} }, "alpha"},
	} {
		o := DefaultOptions()
		tc.mut(&o)
		err := o.Validate()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: error %v, want one naming %q", o, err, tc.want)
		}
		if _, err := Judge(nil, o); err == nil {
			t.Errorf("Judge accepted %+v", o)
		}
	}
}

func TestCompareSamplesOddInput(t *testing.T) {
	// Bad values are errors that name the side and index.
	for _, tc := range []struct {
		base, cur []float64
		want      string
	}{
		{[]float64{1, math.NaN()}, []float64{1}, "base[1] = NaN"},
		{[]float64{1}, []float64{2, 3, math.Inf(1)}, "cur[2] = +Inf"},
		{[]float64{-2e300}, []float64{1}, "base[0] = -2e+300"},
	} {
		if _, err := CompareSamples(tc.base, tc.cur); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("error %v, want %q", err, tc.want)
		}
	}
	// A zero base median: no percentages, a warning, and JSON still works.
	c := mustCompare(t, []float64{0, 0, 0, 1, 0}, []float64{5, 6, 7, 8, 9})
	if c.DeltaPct != 0 || c.ShiftPct != 0 || len(c.Warnings) == 0 {
		t.Errorf("zero base median: %+v", c)
	}
	// Empty sides: no test, P = 1.
	c = mustCompare(t, nil, nil)
	if c.P != 1 || c.Test != "" || len(c.Warnings) == 0 {
		t.Errorf("empty: %+v", c)
	}
	// A subnormal base median overflows the ratio: clamped, not Inf.
	c = mustCompare(t, []float64{5e-324, 5e-324}, []float64{1e300, 1e300})
	if math.IsInf(c.DeltaPct, 0) || math.IsInf(c.ShiftPct, 0) {
		t.Errorf("ratio overflowed: %+v", c)
	}
	if _, err := json.Marshal(c); err != nil {
		t.Error(err)
	}
	// The caller's slices are left alone.
	base, cur := []float64{3, 1, 2}, []float64{9, 7, 8}
	mustCompare(t, base, cur)
	if base[0] != 3 || cur[0] != 9 {
		t.Error("CompareSamples sorted its input")
	}
}

func TestHodgesLehmannErrors(t *testing.T) {
	for _, conf := range []float64{0, 1, -0.5, 1.5, math.NaN()} {
		if _, err := HodgesLehmann([]float64{1}, []float64{2}, conf); err == nil {
			t.Errorf("confidence %v accepted", conf)
		}
	}
	if _, err := HodgesLehmann(nil, []float64{2}, 0.95); err == nil {
		t.Error("empty base accepted")
	}
	if _, err := MannWhitney([]float64{1}, nil); err == nil {
		t.Error("empty y accepted")
	}
	// One value a side: the only difference is the estimate and interval.
	s, err := HodgesLehmann([]float64{1}, []float64{4}, 0.95)
	if err != nil || s.Estimate != 3 || s.Lo != 3 || s.Hi != 3 {
		t.Errorf("1+1: %+v %v", s, err)
	}
}

// CompareSamples may be called from many goroutines: the shared exact
// tables are built once and only read. Run under -race.
func TestConcurrentCompare(t *testing.T) {
	done := make(chan Comparison)
	for g := 0; g < 8; g++ {
		go func(g int) {
			c, _ := CompareSamples(around(100, 0.1, 5+g), around(130, 0.1, 40-g))
			done <- c
		}(g)
	}
	for g := 0; g < 8; g++ {
		if c := <-done; c.Test != MethodExact {
			t.Errorf("test %q", c.Test)
		}
	}
}
