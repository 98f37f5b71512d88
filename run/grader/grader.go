// Package grader runs the external checks of a cell once the cell has
// ended: an llm_judge's requests to its judge (one of the config's
// provider entries, through the same Provider.Stream every cell goes
// through: its timeouts, retries and secret scrubbing) and command
// validators (a program run directly, no shell, with the answer as JSON
// on its stdin). bench run calls it after a cell has given back its
// slots, so nothing of the checks is in the cell's timings; bench rescore
// calls it on recorded answers.
//
// Every external check is bounded (the judge by run.timeout a request and
// JudgeReplyLimit of reply, a command by its timeout and
// CommandOutputLimit of stdout) and never fails a run: what goes wrong is
// a check error on the cell (judge_error, validator_error), never a pass
// and never a cell error.
//
// Layer: the run (called by the runner and by bench rescore; calls the
// providers and the scoring packages).
package grader

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"bench/internal/record/results"
	"bench/internal/record/secrets"
	"bench/prompts"
	"bench/providers"
	"bench/validators"
)

// Options are what a Grader needs.
type Options struct {
	// Judges are the providers an llm_judge may name, by entry name.
	Judges map[string]providers.Provider
	// Concurrency bounds the checks in flight (run.judge_concurrency).
	Concurrency int
	// Timeout bounds each judge request (run.timeout).
	Timeout time.Duration
	// Now is the clock of the judge's latency; nil is time.Now.
	Now func() time.Time
	// NoJudge leaves llm_judge checks unjudged (bench rescore
	// --no-judge): a recorded verdict of the same check is kept, and
	// nothing is sent.
	NoJudge bool
	// Getenv reads the variables a command validator is given; nil is
	// os.LookupEnv.
	Getenv func(string) (string, bool)
	// Secrets are the run's (providers.NewAll; bench rescore's the same
	// way): what a check brings back is cleaned with all of them, and
	// every judge's, whatever the run's checks are (a run with command
	// validators and no judge has no judge's secrets to clean with).
	Secrets secrets.Scope
}

// Grader runs external checks; it is safe for concurrent use.
type Grader struct {
	o   Options
	sem chan struct{}
	// clean is every judge's secrets, for what a check brings back.
	clean []providers.Secrets
}

// New returns a Grader.
func New(o Options) *Grader {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Concurrency < 1 {
		o.Concurrency = 1
	}
	g := &Grader{o: o, sem: make(chan struct{}, o.Concurrency)}
	for _, p := range o.Judges {
		g.clean = append(g.clean, p.Secrets())
	}
	return g
}

// Needs says whether a cell has external checks to run: its prompt has
// some, and the cell succeeded (only an answer is judged).
func Needs(p *prompts.Prompt, rec *results.Record) bool {
	if !rec.Success {
		return false
	}
	for _, s := range p.Checks() {
		if s.External() {
			return true
		}
	}
	return false
}

// HasExternal says whether any prompt of the set has an external check.
func HasExternal(set []prompts.Prompt) bool {
	for i := range set {
		for _, s := range set[i].Checks() {
			if s.External() {
				return true
			}
		}
	}
	return false
}

// Grade runs the cell's external checks on its recorded answer and folds
// their verdicts into the record: objective_pass, violation,
// parsed_output, judge and check_errors (validators.Combine's rules). The
// record's other checks must have been scored already (by the runner, or
// by bench rescore). A record that Needs nothing is left as it is.
// traceParent, when not "", is what the judge's requests carry (the
// cell's judge span: see package traces).
func (g *Grader) Grade(ctx context.Context, p *prompts.Prompt, rec *results.Record, traceParent string) {
	if !Needs(p, rec) {
		return
	}
	var ext []validators.External
	prev := rec.Judge
	rec.Judge, rec.CheckErrors = nil, nil
	for i, s := range p.Checks() {
		switch s.Type {
		case validators.TypeLLMJudge:
			e, j := g.judge(ctx, &s, p, rec, prev, traceParent)
			e.Index = i
			ext = append(ext, e)
			rec.Judge = j
		case validators.TypeCommand:
			e := g.command(ctx, &s, p, rec)
			e.Index = i
			ext = append(ext, e)
		}
	}
	base := validators.Outcome{Pass: rec.ObjectivePass}
	if rec.Violation != nil {
		base.Violation = *rec.Violation
	}
	if len(rec.ParsedOutput) > 0 {
		var v any
		if json.Unmarshal(rec.ParsedOutput, &v) == nil {
			base.Parsed = v
		}
	}
	out, errs := validators.Combine(base, ext)
	rec.ObjectivePass, rec.Violation, rec.CheckErrors = out.Pass, nil, errs
	rec.ExternalChecks = len(ext)
	if out.Pass != nil && !*out.Pass {
		v := out.Violation
		rec.Violation = &v
	}
	rec.ParsedOutput = nil
	if out.Parsed != nil {
		if b, err := json.Marshal(out.Parsed); err == nil {
			rec.ParsedOutput = b
		}
	}
}

// slot takes one of the checks' slots, or says the run was cancelled.
func (g *Grader) slot(ctx context.Context) (release func(), ok bool) {
	select {
	case g.sem <- struct{}{}:
		return func() { <-g.sem }, true
	case <-ctx.Done():
		return nil, false
	}
}

// cleanText scrubs what a check brought back with every secret of the
// run and every judge's (the record is scrubbed with its entry's after,
// by the runner and by bench rescore: runner.Bound).
func (g *Grader) cleanText(s string, max int) string {
	s = g.o.Secrets.Any().Text(s)
	for _, c := range g.clean {
		s = c.Clean(s, 0)
	}
	if max > 0 {
		s = providers.Secrets{}.Clean(s, max)
	}
	return s
}

// errText is an error's text, as a check error records it.
func errText(err error) string {
	if f, ok := err.(*providers.Failure); ok {
		if f.Message != "" {
			return fmt.Sprintf("%s: %s", f.Type, f.Message)
		}
		return f.Type
	}
	return err.Error()
}
