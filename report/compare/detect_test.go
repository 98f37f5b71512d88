package compare

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"bench/internal/record/results"
	"bench/report/stats"
)

// spreadRun draws a run of prompts x reps cells, each prompt's e2e and
// TTFT lognormal with spread sigma around its own level, prompt slow
// (-1: none; len(levels): all) slower by factor.
func spreadRun(r *rand.Rand, levels []float64, reps int, sigma float64, slow int, factor float64) []*results.Record {
	var recs []*results.Record
	for p, lv := range levels {
		f := 1.0
		if slow == p || slow == len(levels) {
			f = factor
		}
		for rep := range reps {
			v := int64(math.Max(1, math.Round(lv*f*math.Exp(sigma*r.NormFloat64()))))
			recs = append(recs, rec(fmt.Sprintf("P%d", p), rep, latency(v, v, 50)))
		}
	}
	return recs
}

// The repetitions bench run --dry-run --detect and bench init state hold
// their promise on drawn runs: with the repetitions planned for a 25 %
// change of 4 prompts at a 20 % spread, one prompt 25 % slower is flagged
// in at least 80 % of trials, and with the repetitions planned per group
// every prompt 25 % slower fails the group's e2e at least 80 % of the time.
// Run with -v for the figures:
//
//	go test ./report/compare -run TestDetectPlanHolds -v
func TestDetectPlanHolds(t *testing.T) {
	d, err := PlanDetect(0.25, 4, 1, "", DefaultOptions())
	if err != nil || d.PerPrompt == 0 || d.PerGroup == 0 || d.PerGroup >= d.PerPrompt {
		t.Fatalf("plan %+v %v", d, err)
	}
	t.Log(d.Text())
	levels := []float64{80, 300, 900, 2500}
	const trials = 200
	r := rand.New(rand.NewPCG(61, 1))
	prompt, group := 0, 0
	for range trials {
		base := memRun(t, "base", spreadRun(r, levels, d.PerPrompt, 0.2, -1, 1))
		cur := memRun(t, "new", spreadRun(r, levels, d.PerPrompt, 0.2, 1, 1.25))
		res, err := judge(base, cur, DefaultOptions())
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range res.Groups[0].Prompts {
			if p.PromptID == "P1" && p.Latency[MetricE2E].Change == stats.Regression {
				prompt++
			}
		}
		base = memRun(t, "base", spreadRun(r, levels, d.PerGroup, 0.2, -1, 1))
		cur = memRun(t, "new", spreadRun(r, levels, d.PerGroup, 0.2, len(levels), 1.25))
		res, _ = judge(base, cur, DefaultOptions())
		if res.Groups[0].Latency[MetricE2E].Change == stats.Regression {
			group++
		}
	}
	pr, gr := float64(prompt)/trials, float64(group)/trials
	t.Logf("%d repetitions: one prompt 25 %% slower flagged in %.3f; %d repetitions: every prompt 25 %% slower, the group flagged in %.3f", d.PerPrompt, pr, d.PerGroup, gr)
	if pr < 0.8 || gr < 0.8 {
		t.Errorf("the plan's repetitions detect the effect in %.3f (prompt) and %.3f (group) of trials, want >= 0.8", pr, gr)
	}
}

// An effect not beyond the threshold is never a regression: the plan says
// so and gives the repetitions at a threshold of half the effect; a
// baseline's measured spread replaces the assumption.
func TestDetectPlanText(t *testing.T) {
	d, err := PlanDetect(0.10, 16, 2, "", DefaultOptions())
	if err != nil || d.Lower == nil || d.PerPrompt != 0 {
		t.Fatalf("%+v %v", d, err)
	}
	if txt := d.Text(); !strings.Contains(txt, "to detect a 10 % latency change: never at bench compare's 10 % threshold") ||
		!strings.Contains(txt, "with --latency-threshold 5%: at 80 % power (16 prompts × 2 groups, cell-to-cell spread assumed 20 %") {
		t.Errorf("text %q", txt)
	}
	if _, err := PlanDetect(0, 1, 1, "", DefaultOptions()); err == nil {
		t.Error("a zero effect planned")
	}
	dir := t.TempDir()
	r := rand.New(rand.NewPCG(62, 1))
	base := writeRun(t, dir, runSpec{id: "base", recs: spreadRun(r, []float64{100, 400, 1600}, 24, 0.05, -1, 1)})
	d, err = PlanDetect(0.25, 3, 1, base, DefaultOptions())
	if err != nil || d.Spread > 0.08 || d.Spread < 0.03 || !strings.Contains(d.SpreadFrom, "the median over 3 prompts of the baseline") {
		t.Errorf("measured spread: %+v %v", d, err)
	}
	if a, _ := PlanDetect(0.25, 3, 1, "", DefaultOptions()); a.PerPrompt <= d.PerPrompt {
		t.Errorf("a 5 %% spread needs %d repetitions, the assumed 20 %% %d", d.PerPrompt, a.PerPrompt)
	}
}
