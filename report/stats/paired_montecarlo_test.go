package stats

import (
	"math"
	"math/rand/v2"
	"testing"
)

// The paired tests' figures, on drawn samples with fixed seeds (the same
// on every run): their false-alarm rate at alpha 0.05, their power
// against the unpaired tests, and the minimum detectable effect's
// promise. Run with -v for the tables:
//
//	go test ./report/stats -run 'PairedFalseAlarm|PairedPower|McNemarPower|MDEIsDetected' -v

// slotRuns draws two runs of one prompt, n repetitions each: lognormal
// jitter sigma around 200 ms, the new run slower by factor, and a factor
// of each repetition's slot (its place in the run's schedule: the same
// neighbours, the same cache state) drawn once and shared by both runs,
// with spread slot (0: no such effect, every sample independent).
func slotRuns(r *rand.Rand, n int, sigma, slot, factor float64) (base, cur []float64) {
	base, cur = make([]float64, n), make([]float64, n)
	for i := range base {
		s := math.Exp(slot * r.NormFloat64())
		base[i] = 200 * s * math.Exp(sigma*r.NormFloat64())
		cur[i] = 200 * factor * s * math.Exp(sigma*r.NormFloat64())
	}
	return base, cur
}

// judgeOneAlone judges one comparison in a family of one at the gate's
// defaults.
func judgeOneAlone(c Comparison) Verdict {
	vs, _ := Judge([]Comparison{c}, DefaultOptions())
	return vs[0]
}

// TestPairedFalseAlarm: 2,000 same-distribution comparisons at each n and
// spread of the slot effect: the paired test's rate of significance at
// alpha 0.05 and of the gate's regressions stay at or below alpha (two
// standard errors of slack, 0.0098).
func TestPairedFalseAlarm(t *testing.T) {
	const trials = 2000
	for _, slot := range []float64{0, 0.15} {
		for _, n := range []int{8, 16, 32} {
			r := rand.New(rand.NewPCG(41, uint64(n)+uint64(slot*100)))
			var sigP, sigU, regP int
			for range trials {
				b, c := slotRuns(r, n, 0.15, slot, 1)
				cp, err := ComparePaired([]Stratum{{Base: b, Cur: c}})
				if err != nil {
					t.Fatal(err)
				}
				cu, _ := CompareSamples(b, c)
				sigP += b2i(cp.P <= 0.05)
				sigU += b2i(cu.P <= 0.05)
				regP += b2i(judgeOneAlone(cp).Change == Regression)
			}
			p, u, g := float64(sigP)/trials, float64(sigU)/trials, float64(regP)/trials
			t.Logf("no change, n=%d, slot effect %.0f%%: significant at 0.05: paired %.4f, unpaired %.4f; gate regressions (paired) %.4f", n, 100*slot, p, u, g)
			if p > 0.05+0.0098 || g > 0.05 {
				t.Errorf("n=%d slot %v: paired false-alarm rate %.4f (regressions %.4f) above alpha 0.05", n, slot, p, g)
			}
		}
	}
}

// TestPairedPower: a 10 % rise at n = 8, 16, 32 repetitions, judged
// alone (a family of one), paired against unpaired (Mann-Whitney U),
// with and without the slot effect. Without it every sample is
// independent and pairing gains nothing (the signed-rank test has
// fewer outcomes at small n: its smallest p for 8 pairs is 0.0078); with
// it the pairs cancel the shared part and the paired test sees the
// change the unpaired test cannot.
func TestPairedPower(t *testing.T) {
	const trials = 1000
	for _, slot := range []float64{0, 0.15} {
		for _, n := range []int{8, 16, 32} {
			r := rand.New(rand.NewPCG(42, uint64(n)+uint64(slot*100)))
			var p, u int
			for range trials {
				b, c := slotRuns(r, n, 0.1, slot, 1.1)
				cp, _ := ComparePaired([]Stratum{{Base: b, Cur: c}})
				cu, _ := CompareSamples(b, c)
				p += b2i(cp.P <= 0.05)
				u += b2i(cu.P <= 0.05)
			}
			pp, pu := float64(p)/trials, float64(u)/trials
			t.Logf("10%% slower, jitter 10%%, n=%d, slot effect %.0f%%: significant at 0.05: paired %.3f, unpaired %.3f", n, 100*slot, pp, pu)
			if slot > 0 && pp < pu+0.1 {
				t.Errorf("n=%d with a slot effect: paired power %.3f not above unpaired %.3f", n, pp, pu)
			}
			if slot == 0 && pp < pu-0.1 {
				t.Errorf("n=%d without a slot effect: paired power %.3f far below unpaired %.3f", n, pp, pu)
			}
		}
	}
}

// passRuns draws the pass/fail outcomes of two runs of prompts whose
// pass probability p_i is drawn from Beta(0.4, 0.1) (mean 0.8, most
// prompts nearly always or nearly never passed, as a model's are), n
// repetitions each; the new run's probability is p_i (1 - drop/0.8),
// an expected drop of drop points. It returns the matched outcomes.
func passRuns(r *rand.Rand, prompts, n int, drop float64) (base, cur []bool) {
	for range prompts {
		p := betaDraw(r, 0.4, 0.1)
		q := p * (1 - drop/0.8)
		for range n {
			base = append(base, r.Float64() < p)
			cur = append(cur, r.Float64() < q)
		}
	}
	return base, cur
}

// betaDraw draws Beta(a, b) from two gamma draws (Marsaglia-Tsang, with
// the a < 1 boost).
func betaDraw(r *rand.Rand, a, b float64) float64 {
	x, y := gammaDraw(r, a), gammaDraw(r, b)
	return x / (x + y)
}

func gammaDraw(r *rand.Rand, a float64) float64 {
	if a < 1 {
		return gammaDraw(r, a+1) * math.Pow(r.Float64(), 1/a)
	}
	d := a - 1.0/3
	c := 1 / math.Sqrt(9*d)
	for {
		x := r.NormFloat64()
		v := 1 + c*x
		if v <= 0 {
			continue
		}
		v = v * v * v
		if u := r.Float64(); math.Log(u) < 0.5*x*x+d-d*v+d*math.Log(v) {
			return d * v
		}
	}
}

// rateTests is the exact McNemar p-value of matched outcomes and Fisher's
// exact test of the two rates, as compare judged them before.
func rateTests(base, cur []bool) (mcnemar, fisher float64) {
	var b, c, pb, pc int
	for i := range base {
		switch {
		case base[i] && !cur[i]:
			b++
		case !base[i] && cur[i]:
			c++
		}
		pb += b2i(base[i])
		pc += b2i(cur[i])
	}
	mcnemar, _ = McNemarExact(b, c)
	n := len(base)
	fisher, _ = FisherExact(pb, n-pb, pc, n-pc)
	return mcnemar, fisher
}

// TestMcNemarPower: 16 prompts at n = 8, 16, 32 repetitions; 2,000
// unchanged pairs of runs at each n for the false-alarm rate at alpha
// 0.05, and 1,000 with a 5-point drop for the power, McNemar on the
// matched cells against Fisher on the two rates.
func TestMcNemarPower(t *testing.T) {
	for _, n := range []int{8, 16, 32} {
		r := rand.New(rand.NewPCG(43, uint64(n)))
		var fm, ff int
		const nulls = 2000
		for range nulls {
			m, f := rateTests(passRuns(r, 16, n, 0))
			fm += b2i(m <= 0.05)
			ff += b2i(f <= 0.05)
		}
		var pm, pf int
		const trials = 1000
		for range trials {
			m, f := rateTests(passRuns(r, 16, n, 0.05))
			pm += b2i(m <= 0.05)
			pf += b2i(f <= 0.05)
		}
		fam, faf := float64(fm)/nulls, float64(ff)/nulls
		pwm, pwf := float64(pm)/trials, float64(pf)/trials
		t.Logf("16 prompts x %d repetitions (%d cells): no change: significant at 0.05: McNemar %.4f, Fisher %.4f; 5-point drop: McNemar %.3f, Fisher %.3f",
			n, 16*n, fam, faf, pwm, pwf)
		if fam > 0.05+0.0098 {
			t.Errorf("n=%d: McNemar false-alarm rate %.4f above alpha", n, fam)
		}
		if pwm <= pwf {
			t.Errorf("n=%d: McNemar power %.3f not above Fisher's %.3f", n, pwm, pwf)
		}
	}
}

// TestMDEIsDetected checks the promise of a "~": at the effect MDE
// states, a comparison of the same sizes and spread is flagged as a
// regression at least 80 % of the time. For each n and test, pairs of
// unchanged runs are drawn; each "~" states its MDE; then a fresh pair
// of runs is drawn with the new run slower by exactly that effect, and
// judged under the same family bar. The same for a family of 16 prompts
// judged together (Holm), the MDE of each prompt's "~" checked on that
// prompt alone at the family's bar.
func TestMDEIsDetected(t *testing.T) {
	const trials = 400
	for _, tc := range []struct {
		name   string
		paired bool
		family int
		sigma  float64
	}{
		{"paired, alone", true, 1, 0.15},
		{"unpaired, alone", false, 1, 0.15},
		{"paired, alone, jitter 30%", true, 1, 0.3},
		{"unpaired, family of 16", false, 16, 0.15},
		{"paired, family of 16", true, 16, 0.15},
	} {
		for _, n := range []int{8, 16, 32} {
			r := rand.New(rand.NewPCG(44, uint64(n)*7+uint64(tc.family)+uint64(tc.sigma*100)))
			opt := DefaultOptions()
			compare := func(b, c []float64) Comparison {
				if tc.paired {
					cp, _ := ComparePaired([]Stratum{{Base: b, Cur: c}})
					return cp
				}
				cu, _ := CompareSamples(b, c)
				return cu
			}
			stated, detected := 0, 0
			var sum float64
			for range trials {
				cs := make([]Comparison, tc.family)
				for p := range cs {
					b, c := slotRuns(r, n, tc.sigma, 0, 1)
					cs[p] = compare(b, c)
				}
				vs, _ := Judge(cs, opt)
				v := vs[0]
				if v.Change != Same || v.MDEPct == 0 {
					continue
				}
				stated++
				sum += v.MDEPct
				// The same family again, prompt 0 slower by the stated MDE.
				for p := range cs {
					f := 1.0
					if p == 0 {
						f = 1 + v.MDEPct/100
					}
					b, c := slotRuns(r, n, tc.sigma, 0, f)
					cs[p] = compare(b, c)
				}
				again, _ := Judge(cs, opt)
				detected += b2i(again[0].Change == Regression)
			}
			if stated == 0 {
				t.Logf("%s, n=%d: no comparison judged", tc.name, n)
				continue
			}
			rate := float64(detected) / float64(stated)
			t.Logf("%s, n=%d, jitter %.0f%%: %d \"~\" stated a mean MDE of %.1f %%; at that effect flagged in %.3f", tc.name, n, 100*tc.sigma, stated, sum/float64(stated), rate)
			if rate < 0.8 {
				t.Errorf("%s, n=%d: the stated MDE is detected in only %.3f of %d trials", tc.name, n, rate, stated)
			}
		}
	}
}
