package stats

import (
	"math"
	"math/rand/v2"
	"testing"
)

// The Monte Carlo tests below prove the gate's two promises with a fixed
// seed, so their figures are the same on every run: it does not cry wolf
// when nothing changed, and it does catch a real regression.

// latencyModel draws latencies for one prompt: lognormal around median
// (ms) with jitter sigma on the log scale, rounded to a clock tick (0 for
// none), and the first sample of a run paying loadMs of model load time,
// as the first cell of a model does.
type latencyModel struct {
	median, sigma, tick, loadMs float64
}

func (m latencyModel) draw(r *rand.Rand, n int, factor float64) []float64 {
	xs := make([]float64, n)
	for i := range xs {
		v := m.median * factor * math.Exp(m.sigma*r.NormFloat64())
		if i == 0 {
			v += m.loadMs
		}
		if m.tick > 0 {
			v = math.Max(m.tick, math.Round(v/m.tick)*m.tick)
		}
		xs[i] = v
	}
	return xs
}

// randomFamily draws the 16 prompt models of one family: medians from
// 20 ms to 5 s (log-uniform), jitter from 5 % to 40 %, a 1 ms clock in
// one family out of three (so ties occur and the normal approximation
// runs), and a 2 s load time on the family's first prompt.
func randomFamily(r *rand.Rand, family int) []latencyModel {
	ms := make([]latencyModel, 16)
	for p := range ms {
		ms[p] = latencyModel{
			median: 20 * math.Pow(250, r.Float64()),
			sigma:  0.05 + 0.35*r.Float64(),
		}
		if family%3 == 0 {
			ms[p].tick = 1
		}
	}
	ms[0].loadMs = 2000
	return ms
}

type alarmCounts struct {
	families, regressionFamilies, sigHolmFamilies, sigRawFamilies int
	comparisons, sigRawComparisons                                int
}

func (a alarmCounts) rate(n int) float64 { return float64(n) / float64(a.families) }

// TestFalseAlarmRate runs the gate on families of 16 prompts whose base
// and new samples come from the same distribution, each side with 4 to 30
// samples, and counts families where anything is flagged.
func TestFalseAlarmRate(t *testing.T) {
	const families = 2000
	r := rand.New(rand.NewPCG(2026, 12))
	opt := DefaultOptions()
	raw := opt
	raw.Correction = NoCorrection
	var c alarmCounts
	for f := 0; f < families; f++ {
		models := randomFamily(r, f)
		cs := make([]Comparison, len(models))
		for p, m := range models {
			base := m.draw(r, 4+r.IntN(27), 1)
			cur := m.draw(r, 4+r.IntN(27), 1)
			var err error
			if cs[p], err = CompareSamples(base, cur); err != nil {
				t.Fatal(err)
			}
		}
		vs, err := Judge(cs, opt)
		if err != nil {
			t.Fatal(err)
		}
		rawVs, _ := Judge(cs, raw)
		var reg, sigHolm, sigRaw bool
		for i := range vs {
			reg = reg || vs[i].Change == Regression
			sigHolm = sigHolm || vs[i].Significant
			sigRaw = sigRaw || rawVs[i].Significant
			c.comparisons++
			if rawVs[i].Significant {
				c.sigRawComparisons++
			}
		}
		c.families++
		c.regressionFamilies += b2i(reg)
		c.sigHolmFamilies += b2i(sigHolm)
		c.sigRawFamilies += b2i(sigRaw)
	}
	perComparison := float64(c.sigRawComparisons) / float64(c.comparisons)
	t.Logf("%d families of 16 prompts, n = 4..30 a side, no real change:", families)
	t.Logf("  families with a regression (the gate fails): %.4f", c.rate(c.regressionFamilies))
	t.Logf("  families with anything significant after Holm: %.4f", c.rate(c.sigHolmFamilies))
	t.Logf("  families with anything significant without correction: %.4f", c.rate(c.sigRawFamilies))
	t.Logf("  single comparisons significant at 0.05 without correction: %.4f", perComparison)
	if got := c.rate(c.regressionFamilies); got > opt.Alpha {
		t.Errorf("false-alarm rate %.4f > alpha %v", got, opt.Alpha)
	}
	// Holm's bound on its own (significance, before threshold and floor)
	// is alpha; for 16 independent tests it is nearly reached
	// (1-(1-0.05/16)^16 = 0.0488), so allow two standard errors of the
	// estimate (0.0097 for 2000 families).
	if got := c.rate(c.sigHolmFamilies); got > opt.Alpha+0.0097 {
		t.Errorf("family-wise error rate after Holm %.4f > alpha %v", got, opt.Alpha)
	}
	// The U test itself must hold its level (two standard errors of slack
	// for 32,000 comparisons is 0.0024).
	if perComparison > opt.Alpha+0.0025 {
		t.Errorf("per-comparison rate %.4f > alpha %v", perComparison, opt.Alpha)
	}
	// Without correction a family of 16 raises far more false alarms: the
	// simulation can see what the correction prevents.
	if got := c.rate(c.sigRawFamilies); got < 3*opt.Alpha {
		t.Errorf("uncorrected family rate %.4f: the simulation does not show the need for correction", got)
	}
}

// TestPower measures how often a 30 % rise of the median latency at
// n = 10 a side is flagged as a regression by the default gate, when it
// hits every prompt of a family of 16 and when it hits one prompt only.
func TestPower(t *testing.T) {
	const families = 300
	opt := DefaultOptions()
	for _, sigma := range []float64{0.1, 0.15, 0.2, 0.3} {
		r := rand.New(rand.NewPCG(7, uint64(sigma*100)))
		var allFlagged, allTotal, anyFamily, oneFlagged int
		for f := 0; f < families; f++ {
			models := make([]latencyModel, 16)
			for p := range models {
				models[p] = latencyModel{median: 50 * math.Pow(40, r.Float64()), sigma: sigma}
			}
			// Every prompt slower by 30 %.
			cs := make([]Comparison, 16)
			for p, m := range models {
				cs[p], _ = CompareSamples(m.draw(r, 10, 1), m.draw(r, 10, 1.3))
			}
			vs, _ := Judge(cs, opt)
			any := false
			for _, v := range vs {
				if v.Change == Regression {
					allFlagged++
					any = true
				}
				allTotal++
			}
			anyFamily += b2i(any)
			// Only prompt 0 slower by 30 %.
			for p, m := range models {
				factor := 1.0
				if p == 0 {
					factor = 1.3
				}
				cs[p], _ = CompareSamples(m.draw(r, 10, 1), m.draw(r, 10, factor))
			}
			vs, _ = Judge(cs, opt)
			oneFlagged += b2i(vs[0].Change == Regression)
		}
		all := float64(allFlagged) / float64(allTotal)
		fam := float64(anyFamily) / families
		one := float64(oneFlagged) / families
		t.Logf("30%% slower, n=10, jitter %.0f%%: whole family slower: %.3f of prompts flagged, gate fails in %.3f of families; one prompt of 16 slower: flagged in %.3f",
			100*sigma, all, fam, one)
		if sigma <= 0.2 && fam < 0.95 {
			t.Errorf("jitter %v: a family-wide 30%% regression fails the gate in only %.3f of trials", sigma, fam)
		}
		if sigma <= 0.15 && (all < 0.5 || one < 0.5) {
			t.Errorf("jitter %v: a 30%% regression is detected in only %.3f (all) / %.3f (one) of trials", sigma, all, one)
		}
	}
}

// TestPowerSinglePrompt measures one comparison judged alone (a family of
// one) by sample size; run with -v for the figures.
func TestPowerSinglePrompt(t *testing.T) {
	opt := DefaultOptions()
	for _, n := range []int{4, 6, 10, 20} {
		r := rand.New(rand.NewPCG(8, uint64(n)))
		flagged := 0
		const trials = 400
		for i := 0; i < trials; i++ {
			m := latencyModel{median: 200, sigma: 0.2}
			c, _ := CompareSamples(m.draw(r, n, 1), m.draw(r, n, 1.3))
			vs, _ := Judge([]Comparison{c}, opt)
			flagged += b2i(vs[0].Change == Regression)
		}
		rate := float64(flagged) / trials
		t.Logf("one comparison alone, 30%% slower, jitter 20%%, n=%d a side: flagged in %.3f", n, rate)
		if n >= 10 && rate < 0.5 {
			t.Errorf("n=%d: flagged in only %.3f of trials", n, rate)
		}
	}
}
