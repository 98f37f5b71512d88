package grader

import (
	"cmp"
	"context"
	"fmt"
	"time"

	"bench/internal/record/pricing"
	"bench/internal/record/results"
	"bench/prompts"
	"bench/providers"
	"bench/validators"
)

// judge asks an llm_judge's judge about the cell's answer, judge_samples
// times, and returns the check's outcome and the record's judge object.
// The judge sees the question and the answer, never which provider or
// model gave it. Each request takes a slot of the checks' own, so a slow
// judge holds no cell back, and is bounded by the run's timeout. prev is
// the record's judge before, kept under NoJudge when it is this check's.
func (g *Grader) judge(ctx context.Context, s *validators.Spec, p *prompts.Prompt, rec *results.Record, prev *results.Judge, traceParent string) (validators.External, *results.Judge) {
	e := validators.External{Type: validators.TypeLLMJudge}
	j := &results.Judge{Provider: s.Judge, Model: s.Model, Spec: s.Fingerprint(), Samples: []results.JudgeSample{}}
	if g.o.NoJudge {
		if prev != nil && prev.Spec == j.Spec && prev.Verdict != results.VerdictError {
			return verdictOf(e, prev), prev
		}
		j.Verdict, j.Reason = results.VerdictError, "not judged: --no-judge, and the record holds no verdict of this check (its judge, model, rubric, threshold or samples changed)"
		e.Err = j.Reason
		return e, j
	}
	prov, ok := g.o.Judges[s.Judge]
	if !ok {
		j.Verdict, j.Reason = results.VerdictError, fmt.Sprintf("no provider entry %q to judge with", s.Judge)
		e.Err = j.Reason
		return e, j
	}
	start := g.o.Now()
	j.StartedAtMS = start.UnixMilli()
	// The samples' costs and counts, summed safe from overflow: a figure
	// no sum takes (1e308 three times, a negative cost or count) leaves
	// the total null and says why, never an infinity the record cannot
	// encode.
	var cost pricing.USD
	var in, out pricing.Count
	costSaid := false
	for range s.Samples() {
		// Each sample's request has a fence of its own (random tags).
		req := s.NewJudgeRequest(p.System, p.Prompt, rec.RawOutput)
		j.AnswerCut = req.AnswerCut
		sm, c := g.sample(ctx, prov, s, req, traceParent)
		j.Samples = append(j.Samples, sm)
		if c != nil {
			cost.Add(*c)
			costSaid = true
		}
		in.AddPtr(sm.InputTokens)
		out.AddPtr(sm.OutputTokens)
	}
	j.LatencyMS = g.o.Now().Sub(start).Round(time.Millisecond).Milliseconds()
	if costSaid {
		j.CostUSD, j.CostMissing = cost.Whole(), cost.Problem()
	}
	j.InputTokens, j.OutputTokens = in.WholeInt(), out.WholeInt()
	j.TokensMissing = cmp.Or(in.Problem(), out.Problem())
	j.Verdict, j.Score, j.Reason = validators.Majority(j.Samples)
	return verdictOf(e, j), j
}

// verdictOf is the check's outcome from its judge object.
func verdictOf(e validators.External, j *results.Judge) validators.External {
	switch j.Verdict {
	case results.VerdictPass:
		e.Pass = ptr(true)
	case results.VerdictFail:
		e.Pass, e.Violation = ptr(false), "judge: "+j.Reason
	default:
		e.Err = j.Reason
	}
	return e
}

// sample is one judge request: sent through the judge provider's stream
// like any cell's, its reply read strictly (validators.ParseVerdict).
func (g *Grader) sample(ctx context.Context, prov providers.Provider, s *validators.Spec, req validators.JudgeRequest, traceParent string) (results.JudgeSample, *float64) {
	release, ok := g.slot(ctx)
	if !ok {
		return validators.JudgeFailure("cancelled: the run was stopped before the judge was asked", ""), nil
	}
	defer release()
	sctx, cancel := context.WithTimeout(ctx, g.o.Timeout)
	defer cancel()
	start := g.o.Now()
	resp, err := prov.Stream(sctx, providers.Request{Model: s.Model, System: req.System, Prompt: req.Prompt,
		Now: g.o.Now, MaxOutputBytes: validators.JudgeReplyLimit, TraceParent: traceParent}, func(providers.Event) {})
	latency := g.o.Now().Sub(start).Round(time.Millisecond).Milliseconds()
	if resp == nil {
		resp = &providers.Response{}
	}
	var sm results.JudgeSample
	text := g.cleanText(resp.Text, 0)
	switch {
	case err != nil && sctx.Err() == context.DeadlineExceeded && ctx.Err() == nil:
		sm = validators.JudgeFailure(fmt.Sprintf("timeout: no complete reply within run.timeout (%s)", g.o.Timeout), text)
	case err != nil:
		sm = validators.JudgeFailure(g.cleanText(errText(err), 1024), text)
	case resp.TextBytes > len(resp.Text):
		sm = validators.JudgeFailure(fmt.Sprintf("the reply is longer than %d bytes: a verdict is one short JSON object", validators.JudgeReplyLimit), text)
	default:
		v, perr := validators.ParseVerdict(text, s.PassThreshold)
		if perr != nil {
			sm = validators.JudgeFailure("not a verdict: "+g.cleanText(perr.Error(), 512), text)
		} else {
			sm = results.JudgeSample{Verdict: results.VerdictFail, Score: v.Score, Reason: v.Reason}
			if v.Pass {
				sm.Verdict = results.VerdictPass
			}
		}
	}
	sm.LatencyMS = latency
	sm.InputTokens, sm.OutputTokens = resp.Usage.InputTokens, resp.Usage.OutputTokens
	var cost *float64
	if c, ok := resp.Metrics[costMetric].(float64); ok {
		cost = &c
	}
	return sm, cost
}

// costMetric is the provider metric that holds a request's cost in USD
// (the Claude Code CLI reports it).
const costMetric = "total_cost_usd"

func ptr[T any](v T) *T { return &v }
