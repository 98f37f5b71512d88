package stats

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"math"
	"slices"
	"testing"
)

// decodeSamples splits fuzz bytes into two samples. The first byte picks
// the split point and the encoding: raw float64 bits (any value, NaN and
// ±Inf included) or small integers (so ties abound).
func decodeSamples(data []byte) (a, b []float64) {
	if len(data) == 0 {
		return nil, nil
	}
	head, rest := data[0], data[1:]
	var vals []float64
	if head&1 == 0 {
		for len(rest) >= 8 {
			vals = append(vals, math.Float64frombits(binary.LittleEndian.Uint64(rest)))
			rest = rest[8:]
		}
	} else {
		for _, c := range rest {
			vals = append(vals, float64(int8(c))/4)
		}
	}
	split := int(head>>1) % (len(vals) + 1)
	return vals[:split], vals[split:]
}

func encodeFloats(split byte, xs ...float64) []byte {
	out := []byte{split << 1}
	for _, v := range xs {
		out = binary.LittleEndian.AppendUint64(out, math.Float64bits(v))
	}
	return out
}

func bad(xs []float64) bool {
	return slices.ContainsFunc(xs, func(v float64) bool { return math.IsNaN(v) || math.Abs(v) > MaxAbs })
}

func finiteAll(t *testing.T, what string, vs ...float64) {
	t.Helper()
	for _, v := range vs {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			t.Fatalf("%s holds %v", what, v)
		}
	}
}

func FuzzCompareJudge(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{1})
	f.Add(encodeFloats(2, 1, 2, 3, 4, 5, 6, 7, 8))
	f.Add(encodeFloats(4, 5, 5, 5, 5, 5, 5, 5, 5))                                  // identical, all tied
	f.Add(encodeFloats(1, 1, math.Inf(1), 2, 3))                                    // +Inf
	f.Add(encodeFloats(3, 1, 2, math.NaN(), 4, 5))                                  // NaN
	f.Add(encodeFloats(2, -1e300, 1e300, 1e300, -1e300))                            // extreme but allowed
	f.Add(encodeFloats(2, 5e-324, 5e-324, 1, 2))                                    // subnormal base median
	f.Add(encodeFloats(0, 1, 2, 3))                                                 // empty base
	f.Add(append([]byte{9}, []byte("\x10\x10\x11\x12\x10\x10\x13\x10\x10\x11")...)) // small ints with ties
	f.Fuzz(func(t *testing.T, data []byte) {
		base, cur := decodeSamples(data)
		c, err := CompareSamples(base, cur)
		if bad(base) || bad(cur) {
			var ve *ValueError
			if !errors.As(err, &ve) {
				t.Fatalf("bad value accepted: err %v", err)
			}
			return
		}
		if err != nil {
			t.Fatalf("good input rejected: %v", err)
		}
		finiteAll(t, "comparison", c.MedianBase, c.MedianCur, c.DeltaPct, c.P, c.ShiftPct,
			c.Shift.Estimate, c.Shift.Lo, c.Shift.Hi, c.Shift.Confidence)
		if !(c.P >= 0 && c.P <= 1) {
			t.Fatalf("p = %v", c.P)
		}
		if c.Test != "" && !(c.Shift.Lo <= c.Shift.Estimate && c.Shift.Estimate <= c.Shift.Hi) {
			t.Fatalf("shift %+v out of order", c.Shift)
		}
		// 1+1 values give an interval with no coverage guarantee: 0.
		if c.Test != "" && !(c.Shift.Confidence >= 0 && c.Shift.Confidence < 1) {
			t.Fatalf("confidence %v", c.Shift.Confidence)
		}
		for _, corr := range []Correction{Holm, BH, NoCorrection} {
			opt := DefaultOptions()
			opt.Correction = corr
			opt.MinSamples = 1
			vs, err := Judge([]Comparison{c, c}, opt)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := json.Marshal(vs); err != nil {
				t.Fatalf("verdicts do not encode: %v", err)
			}
		}
	})
}

// FuzzShiftSelection checks the large-sample selection against brute
// force on tie-heavy samples big enough to take that path.
func FuzzShiftSelection(f *testing.F) {
	seed := make([]byte, 120)
	for i := range seed {
		seed[i] = byte(i * 37)
	}
	f.Add(byte(50), seed)
	f.Add(byte(60), make([]byte, 130)) // every value 0
	f.Fuzz(func(t *testing.T, split byte, data []byte) {
		if len(data) > 400 {
			data = data[:400]
		}
		var vals []float64
		for _, c := range data {
			vals = append(vals, float64(int8(c)%16))
		}
		s := int(split) % (len(vals) + 1)
		x, y := vals[:s], vals[s:]
		if len(x) == 0 || len(y) == 0 {
			return
		}
		xs, ys := sortedCopy(x), sortedCopy(y)
		want := bruteShift(ys, xs)
		d := newDiffs(xs, ys)
		for _, k := range []int{1, len(want) / 3, len(want) / 2, len(want)/2 + 1, len(want)} {
			if k < 1 {
				continue
			}
			if got := d.kth(k); got != want[k-1] {
				t.Fatalf("%d+%d: kth(%d) = %v, want %v", len(x), len(y), k, got, want[k-1])
			}
		}
		if k := len(want) / 2; k >= 1 {
			if got := d.next(k, want[k-1]); got != want[k] {
				t.Fatalf("next(%d) = %v, want %v", k, got, want[k])
			}
		}
		sh, err := HodgesLehmann(y, x, 0.95)
		if err != nil {
			t.Fatal(err)
		}
		med := want[len(want)/2]
		if len(want)%2 == 0 {
			med = (want[len(want)/2-1] + med) / 2
		}
		if sh.Estimate != med {
			t.Fatalf("estimate %v, brute force %v", sh.Estimate, med)
		}
	})
}

func FuzzFisherExact(f *testing.F) {
	f.Add(3, 1, 1, 3)
	f.Add(0, 0, 0, 0)
	f.Add(-1, 2, 3, 4)
	f.Add(100000, 0, 0, 100000)
	f.Fuzz(func(t *testing.T, a, b, c, d int) {
		// Keep tables within what a run can hold, so the fuzzer spends
		// its time on shapes rather than on huge supports.
		for _, v := range []*int{&a, &b, &c, &d} {
			if *v > 200000 || *v < -200000 {
				*v %= 200000
			}
		}
		p, err := FisherExact(a, b, c, d)
		if a < 0 || b < 0 || c < 0 || d < 0 {
			if err == nil {
				t.Fatal("negative count accepted")
			}
			return
		}
		if err != nil || !(p >= 0 && p <= 1) {
			t.Fatalf("p = %v, err %v", p, err)
		}
		if q, _ := FisherExact(d, c, b, a); math.Abs(p-q) > 1e-9*math.Max(p, 1e-300) && math.Abs(p-q) > 1e-12 {
			t.Fatalf("not symmetric: %v vs %v", p, q)
		}
	})
}

func FuzzAdjust(f *testing.F) {
	f.Add(encodeFloats(0, 0.01, 0.04, 0.03, 0.005))
	f.Add(encodeFloats(0, math.NaN(), 0.5, math.NaN()))
	f.Add(encodeFloats(0))
	f.Add(encodeFloats(0, -1, 2, math.Inf(1), 0))
	f.Fuzz(func(t *testing.T, data []byte) {
		_, p := decodeSamples(append([]byte{0}, data...))
		for _, adj := range [][]float64{AdjustHolm(p), AdjustBH(p)} {
			if len(adj) != len(p) {
				t.Fatalf("length %d, want %d", len(adj), len(p))
			}
			for i := range p {
				if math.IsNaN(p[i]) != math.IsNaN(adj[i]) {
					t.Fatalf("NaN at %d not kept: %v -> %v", i, p[i], adj[i])
				}
				if p[i] >= 0 && p[i] <= 1 && !(adj[i] >= p[i] && adj[i] <= 1) {
					// Only when every p-value is a probability is the
					// adjusted one bounded by it and by 1.
					if !slices.ContainsFunc(p, func(v float64) bool { return v < 0 || v > 1 }) {
						t.Fatalf("adjusted %v for raw %v", adj[i], p[i])
					}
				}
			}
		}
	})
}

func FuzzMedian(f *testing.F) {
	f.Add(encodeFloats(0, 3, 1, 2))
	f.Add(encodeFloats(0, math.Inf(-1), math.Inf(1)))
	f.Add(encodeFloats(0, math.MaxFloat64, math.MaxFloat64))
	f.Fuzz(func(t *testing.T, data []byte) {
		_, xs := decodeSamples(append([]byte{0}, data...))
		m := Median(xs)
		if len(xs) == 0 || slices.ContainsFunc(xs, math.IsNaN) {
			if !math.IsNaN(m) {
				t.Fatalf("Median = %v, want NaN", m)
			}
			return
		}
		s := sortedCopy(xs)
		if !math.IsNaN(m) && (m < s[(len(s)-1)/2] || m > s[len(s)/2]) {
			t.Fatalf("Median %v outside the middle of %v", m, s)
		}
	})
}
