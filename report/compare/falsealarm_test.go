package compare

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"bench/internal/record/results"
)

// pairedNight draws one run of 2 groups x 8 prompts x reps: each prompt a
// pass probability (its difficulty, the same in both runs: most prompts
// nearly always or nearly never passed) and a latency level, each cell
// lognormal around it with 15 % jitter and a factor of its slot in the
// schedule shared by both runs (slot[g][p][rep]).
func pairedNight(r *rand.Rand, pass [][]float64, level [][]float64, slot [][][]float64, reps int) []*results.Record {
	var recs []*results.Record
	for g := range pass {
		for p := range pass[g] {
			for rep := range reps {
				ok := r.Float64() < pass[g][p]
				v := int64(math.Max(1, math.Round(level[g][p]*slot[g][p][rep]*math.Exp(0.15*r.NormFloat64()))))
				rc := rec(fmt.Sprintf("Q%d", p), rep, latency(v, v+200, 40))
				rc.Model = fmt.Sprintf("m%d", g)
				if !ok {
					rc.ObjectivePass = ptr(false)
				}
				recs = append(recs, rc)
			}
		}
	}
	return recs
}

// statisticalFindings are a compare's findings that rest on a test: the
// rates' and latency's, not a cell's rules.
func statisticalFindings(res *Result) int {
	n := 0
	for _, f := range res.Findings {
		if f.Scope != "cell" && f.Metric != MetricTier {
			n++
		}
	}
	return n
}

// The paired gate's false-alarm rate over whole compares: 1,000 pairs of
// runs of the same models (2 groups x 8 prompts x 8 repetitions: pass/fail
// matched by cell, latency by repetition), nothing changed between them.
// With alpha split between quality and latency and Holm within each, the
// share of compares raising any statistical finding (a group's or a
// category's rate, a group's or a prompt's latency) must stay at most
// alpha (0.05, with two standard errors of slack for 1,000: 0.014).
// Run with -v for the figure:
//
//	go test ./report/compare -run TestPairedCompareFalseAlarmRate -v
func TestPairedCompareFalseAlarmRate(t *testing.T) {
	trials := 1000
	if testing.Short() || raceBuild {
		trials = 200
	}
	r := rand.New(rand.NewPCG(71, 3))
	const reps = 8
	alarms, quality, lat := 0, 0, 0
	for i := range trials {
		pass, level, slot := make([][]float64, 2), make([][]float64, 2), make([][][]float64, 2)
		for g := range 2 {
			pass[g], level[g], slot[g] = make([]float64, 8), make([]float64, 8), make([][]float64, 8)
			for p := range 8 {
				pass[g][p] = []float64{0, 0.02, 0.5, 0.9, 0.98, 1, 1, 1}[r.IntN(8)]
				level[g][p] = 30 * math.Pow(100, r.Float64())
				slot[g][p] = make([]float64, reps)
				for k := range reps {
					slot[g][p][k] = math.Exp(0.1 * r.NormFloat64())
				}
			}
		}
		base := memRun(t, "base", pairedNight(r, pass, level, slot, reps))
		cur := memRun(t, "new", pairedNight(r, pass, level, slot, reps))
		res, err := judge(base, cur, DefaultOptions())
		if err != nil {
			t.Fatal(err)
		}
		if n := statisticalFindings(res); n > 0 {
			alarms++
			for _, f := range res.Findings {
				if f.Scope != "cell" && f.Metric != MetricTier {
					if f.Category == Quality {
						quality++
					} else {
						lat++
					}
					if alarms <= 3 {
						t.Logf("trial %d: %s", i, f.Message)
					}
					break
				}
			}
		}
	}
	rate := float64(alarms) / float64(trials)
	t.Logf("%d compares of unchanged runs (2 groups x 8 prompts x %d repetitions, paired): any statistical finding in %.4f (quality first in %d, latency in %d; alpha 0.05)",
		trials, reps, rate, quality, lat)
	if rate > 0.05+2*math.Sqrt(0.05*0.95/float64(trials)) {
		t.Errorf("false-alarm rate %.4f over %d compares, above alpha", rate, trials)
	}
}
