package compare

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"bench/internal/record/results"
	"bench/report/stats"
)

// mixPrompt is one prompt's latency behaviour: its median TTFT and
// decode time per token, each jittered lognormally.
type mixPrompt struct {
	ttft, perToken, sigma float64
	tokens                int
}

// mixRun draws a run where prompt p has reps[p] repetitions, and the
// prompts listed in noTPS report no tokens/s (a short answer). Nothing
// else differs from run to run but the draw.
func mixRun(t testing.TB, rng *rand.Rand, id string, ps []mixPrompt, reps []int, noTPS map[int]bool, factor float64) *runData {
	var recs []*results.Record
	for p, m := range ps {
		for rep := range reps[p] {
			tt := m.ttft * factor * math.Exp(m.sigma*rng.NormFloat64())
			gen := float64(m.tokens) * m.perToken * factor * math.Exp(m.sigma*rng.NormFloat64())
			r := rec(fmt.Sprintf("Q%d", p), rep)
			ttft := int64(math.Max(1, math.Round(tt)))
			r.TTFTMS, r.E2EMS = &ttft, int64(math.Round(tt+gen))
			r.TokensPerS = nil
			if !noTPS[p] {
				r.TokensPerS = ptr(math.Round(float64(m.tokens-1)/(gen/1000)*100) / 100)
			}
			recs = append(recs, r)
		}
	}
	return memRun(t, id, recs)
}

// randomMix draws prompts from 20 ms to 4 s of TTFT, 5 to 60 ms a token
// (10 to 400 tokens): pooling them mixes speeds a hundredfold apart.
func randomMix(rng *rand.Rand, n int) []mixPrompt {
	ps := make([]mixPrompt, n)
	for i := range ps {
		ps[i] = mixPrompt{ttft: 20 * math.Pow(200, rng.Float64()), perToken: 5 + 55*rng.Float64(), sigma: 0.1 + 0.3*rng.Float64(),
			tokens: 10 + rng.IntN(390)}
	}
	return ps
}

// The false-alarm rate of the latency gate when the prompt mix differs
// between the runs and nothing got slower: 6 prompts of speeds far apart,
// each with 1 to 12 repetitions drawn anew for each run (so one run holds
// more of the slow prompts' samples than the other), and one prompt
// without tokens/s in one of the runs (it enters or leaves that pool).
// Pooled, such runs differ in every group figure; like with like they
// must not. Over 600 comparisons the share raising any latency finding
// must stay at most alpha, with the defaults and with threshold and floor
// off; a 30 % slower server at the same mixes must still be found at the
// group level. The rates are logged (go test -v -run MixChange).
func TestLatencyFalseAlarmRateMixChange(t *testing.T) {
	trials := 600
	if testing.Short() {
		trials = 150
	}
	rng := rand.New(rand.NewPCG(23, 5))
	bare := DefaultOptions()
	bare.LatencyThreshold, bare.LatencyFloorMS, bare.TokensPerSFloor = 0, 0, 0
	var alarms, bareAlarms, groupJudged, found, slowTrials, entered int
	for i := range trials {
		ps := randomMix(rng, 6)
		reps := func() []int {
			r := make([]int, len(ps))
			for p := range r {
				r[p] = 1 + rng.IntN(12)
			}
			return r
		}
		gone := rng.IntN(len(ps))
		baseNoTPS, newNoTPS := map[int]bool{}, map[int]bool{}
		if i%2 == 0 {
			baseNoTPS[gone] = true // the prompt enters the tokens/s pool
		} else {
			newNoTPS[gone] = true // or leaves it
		}
		base := mixRun(t, rng, "base", ps, reps(), baseNoTPS, 1)
		cur := mixRun(t, rng, "new", ps, reps(), newNoTPS, 1)
		for _, c := range []struct {
			opt Options
			n   *int
		}{{DefaultOptions(), &alarms}, {bare, &bareAlarms}} {
			res, err := judge(base, cur, c.opt)
			if err != nil {
				t.Fatal(err)
			}
			if f := latencyFindings(res); len(f) > 0 {
				*c.n++
				if c.n == &alarms && *c.n <= 3 {
					t.Logf("trial %d: %s", i, f[0].Message)
				}
			}
			if c.n == &alarms {
				g := res.Groups[0]
				if g.Latency[MetricTTFT].Judged() {
					groupJudged++
				}
				if pc := g.Pool[MetricTPS]; pc != nil && len(pc.Entered)+len(pc.Left) == 1 {
					entered++
				}
			}
		}
		if i%5 == 0 {
			slowTrials++
			slow := mixRun(t, rng, "new", ps, reps(), newNoTPS, 1.3)
			res, _ := judge(base, slow, DefaultOptions())
			if v := res.Groups[0].Latency[MetricE2E]; v.Change == stats.Regression {
				found++
			}
		}
	}
	rate, bareRate := float64(alarms)/float64(trials), float64(bareAlarms)/float64(trials)
	t.Logf("mix change, nothing slower: %d comparisons of 6 prompts, 1-12 repetitions a prompt drawn per run, one prompt without tokens/s in one run", trials)
	t.Logf("  false-alarm rate (any latency finding): %.4f with the defaults, %.4f with threshold and floor off (alpha 0.05)", rate, bareRate)
	t.Logf("  group TTFT judged in %d of %d; the tokens/s pool change said in %d of %d; a 30%% slower server found at the group level (e2e) in %d of %d",
		groupJudged, trials, entered, trials, found, slowTrials)
	if rate > 0.05 || bareRate > 0.05 {
		t.Errorf("false-alarm rate %.4f (defaults), %.4f (bare) > alpha 0.05", rate, bareRate)
	}
	if entered != trials {
		t.Errorf("the prompt that entered or left the tokens/s pool was said in %d of %d comparisons", entered, trials)
	}
	if groupJudged < trials*9/10 {
		t.Errorf("group TTFT judged in only %d of %d", groupJudged, trials)
	}
	if found < slowTrials*8/10 {
		t.Errorf("a 30%% slower server found in only %d of %d", found, slowTrials)
	}
}

// The case: a long prompt that gained tokens/s samples (base n=8,
// new n=10) at unchanged decoding speed. Pooled, the group's tokens/s fell
// from 95.5 to 25.1; like with like, there is no speed finding, and the
// prompt is said to have entered the pool.
func TestMixChangeNoSpeedFinding(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	short := mixPrompt{ttft: 50, perToken: 10, sigma: 0.05, tokens: 20}  // ~100 tok/s
	long := mixPrompt{ttft: 400, perToken: 40, sigma: 0.05, tokens: 300} // ~25 tok/s
	ps := []mixPrompt{short, short, long}
	base := mixRun(t, rng, "base", ps, []int{8, 8, 8}, map[int]bool{2: true}, 1)
	cur := mixRun(t, rng, "new", ps, []int{8, 8, 10}, nil, 1)
	res, err := judge(base, cur, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	if f := latencyFindings(res); len(f) > 0 || res.Failed() {
		t.Fatalf("a mix change made a speed finding: %s", mustJSON(f))
	}
	g := res.Groups[0]
	v := g.Latency[MetricTPS]
	if !v.Judged() || v.Strata != 2 || v.NBase != 16 || v.NCur != 16 {
		t.Errorf("tokens/s: %s strata %d n %d+%d: %s", v.Change, v.Strata, v.NBase, v.NCur, v.Reason)
	}
	if pc := g.Pool[MetricTPS]; pc == nil || !slices.Equal(pc.Entered, []string{"Q2"}) {
		t.Errorf("pool %+v", g.Pool)
	}
	var text strings.Builder
	WriteText(&text, res)
	if !strings.Contains(text.String(), "entered the pool (samples in the new run only): Q2") {
		t.Errorf("the pool change is not said:\n%s", text.String())
	}
}

// Every metric of every group and prompt ends judged or not judged with
// a reason; the verdict line counts what was not judged; a cold side is
// "all cold"; --require-judged fails the gate when a metric was judged
// nowhere, and not otherwise.
func TestNotJudgedSaidAndRequired(t *testing.T) {
	var base, cur []*results.Record
	for rep := range 6 {
		base = append(base, rec("P0", rep, latency(100, 200, 50)))
		cur = append(cur, rec("P0", rep, latency(160, 300, 50)))
	}
	b := memRun(t, "base", base)
	allCold := memRunCold(t, "new", cur)
	res, err := judge(b, allCold, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	g := res.Groups[0]
	for _, m := range Metrics {
		if v := g.Latency[m]; v.Change != stats.NotJudged || v.NotJudged != WhyAllCold || !strings.Contains(v.Reason, "all 6 successful cells of the new run were cold starts") {
			t.Errorf("group %s: %s %q %q", m, v.Change, v.NotJudged, v.Reason)
		}
		if v := g.Prompts[0].Latency[m]; v.NotJudged != WhyAllCold {
			t.Errorf("prompt %s: %s %q", m, v.Change, v.NotJudged)
		}
	}
	line := verdictLine(res)
	if res.Failed() || !strings.Contains(line, "ok: no regression") || !strings.Contains(line, "not judged: 8 of 9 comparisons (all cold 6, no tool-use cell judged in both runs 1, unclassified (no tool-use cell) in the base run 1)") {
		t.Errorf("verdict %s: %s", res.Verdict, line)
	}
	opt := DefaultOptions()
	opt.RequireJudged = []string{Latency}
	res, _ = judge(b, allCold, opt)
	if res.Verdict != VerdictNotJudged || !res.Failed() || !slices.Equal(res.Unjudged, []string{MetricE2E, MetricTPS, MetricTTFT}) ||
		!strings.HasPrefix(verdictLine(res), "NOT JUDGED: e2e_ms, tokens_per_s, ttft_ms judged nowhere (--require-judged latency)") {
		t.Errorf("--require-judged latency: %s %v %s", res.Verdict, res.Unjudged, verdictLine(res))
	}
	// Warm cells: latency judged (and found slower), the requirement met.
	res, _ = judge(b, memRun(t, "new", cur), opt)
	if len(res.Unjudged) != 0 || res.Verdict != VerdictRegression || res.Judgement[MetricTTFT].Judged != 2 {
		t.Errorf("warm: %s %v %+v", res.Verdict, res.Unjudged, res.Judgement[MetricTTFT])
	}
	var text strings.Builder
	WriteText(&text, res)
	if !strings.Contains(text.String(), "ttft_ms 100 → 160 (+60 %, p=0.0013, n=6+6, 95 % CI +60.0…+60.0 ms) REGRESSION") {
		t.Errorf("no benchstat-style figure:\n%s", text.String())
	}
	opt.RequireJudged = []string{"latncy"}
	if err := opt.Validate(); err == nil || !strings.Contains(err.Error(), "require-judged \"latncy\"") {
		t.Errorf("bad metric: %v", err)
	}
}

// memRunCold is memRun with every record flagged cold_start.
func memRunCold(t testing.TB, id string, recs []*results.Record) *runData {
	t.Helper()
	cold := make([]*results.Record, len(recs))
	for i, r := range recs {
		c := *r
		c.ColdStart = true
		cold[i] = &c
	}
	return memRun(t, id, cold)
}

// The repetitions a prompt's latency needs: with 16 prompts and 2 groups
// Holm's bar is 0.05/2/3/34 (latency's half of alpha, a third a metric);
// 2/C(16,8) = 1.6e-4 passes it, 2/C(14,7) = 5.8e-4 does not. One prompt,
// one group: 2/C(12,6) = 0.0022 <= 0.05/2/3/2, 2/C(10,5) = 0.0079 is not.
func TestRepetitionsNeeded(t *testing.T) {
	opt := DefaultOptions()
	for _, tc := range []struct{ prompts, groups, want int }{{16, 2, 8}, {1, 1, 6}, {6, 2, 7}} {
		if got := RepetitionsNeeded(tc.prompts, tc.groups, opt); got != tc.want {
			t.Errorf("%d prompts, %d groups: %d, want %d", tc.prompts, tc.groups, got, tc.want)
		}
	}
	if RepetitionsNote(8, 16, 2) != "" || !strings.Contains(RepetitionsNote(1, 16, 2), "set run.repetitions: 8") {
		t.Errorf("note %q", RepetitionsNote(1, 16, 2))
	}
}
