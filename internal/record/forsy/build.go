package forsy

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"
)

// excerptRunes bounds the quotes of tool results and errors repeated in
// observations and directives; the full text stays in the step's output.
const excerptRunes = 200

// Build maps one agentic cell to a trace. It returns an error, naming the
// turn or call, when the cell is not one a loop can produce (a failed turn
// that is not the last, an answered loop whose last reply has calls, times
// out of order...), so a trace is never made up to fit.
//
// agent_config holds: framework ("bench"), harness_version, run_id, task_id,
// task_name, provider, provider_type, model, reasoning_effort (the thinking
// level), repetition, max_turns, function_calling_protocol and
// tool_definitions; an unknown value is null.
func Build(c Cell) (*Trace, error) {
	c = sanitize(c)
	if err := checkCell(c); err != nil {
		return nil, err
	}
	b := &builder{c: c, offered: map[string]bool{}, callOf: map[int]Call{}}
	for _, tl := range c.Task.Tools {
		b.offered[tl.Name] = true
	}
	b.userStep()
	for k := range c.Turns {
		b.turn(k)
	}
	b.finishDirectives()
	if err := b.checkTimes(); err != nil {
		return nil, err
	}
	return b.trace(), nil
}

type builder struct {
	c       Cell
	offered map[string]bool

	steps []Step
	times []timed // per step, for the order check with input-named labels

	// prevCalls are the steps of the calls answered in the previous turn.
	prevCalls []callStep
	// pending maps a tool name to its latest failed call from an earlier
	// turn that no later call has retried yet.
	pending map[string]int
	// failed lists failed call steps; retriedBy maps one to its retry.
	failed    []int
	retriedBy map[int]int

	callOf map[int]Call // call behind each call step

	artifacts   []Artifact
	answerStep  int // 0 when there is no final answer
	answerText  string
	calledTotal int // answered calls
	unknownStep []int
}

type callStep struct {
	step  int
	name  string
	label string
	call  Call
}

// sanitize makes every text valid UTF-8, so the hash of an artifact's
// content is the hash of the text the trace file holds.
func sanitize(c Cell) Cell {
	v := func(s string) string { return strings.ToValidUTF8(s, "\uFFFD") }
	t := &c.Task
	t.RunID, t.ID, t.Name, t.Prompt, t.System = v(t.RunID), v(t.ID), v(t.Name), v(t.Prompt), v(t.System)
	t.Provider, t.ProviderType, t.Model, t.ThinkingLevel = v(t.Provider), v(t.ProviderType), v(t.Model), v(t.ThinkingLevel)
	t.Protocol, t.HarnessVersion = v(t.Protocol), v(t.HarnessVersion)
	tools := make([]Tool, len(t.Tools))
	for i, tl := range t.Tools {
		tl.Name, tl.Description = v(tl.Name), v(tl.Description)
		tools[i] = tl
	}
	t.Tools = tools
	verdicts := func(vs []Verdict) []Verdict {
		out := make([]Verdict, len(vs))
		for i, x := range vs {
			x.Name, x.Reason = v(x.Name), v(x.Reason)
			out[i] = x
		}
		return out
	}
	turns := make([]Turn, len(c.Turns))
	for i, tn := range c.Turns {
		tn.Text, tn.Reasoning, tn.Err = v(tn.Text), v(tn.Reasoning), v(tn.Err)
		calls := make([]Call, len(tn.Calls))
		for j, cl := range tn.Calls {
			cl.ID, cl.Name, cl.Arguments, cl.Result = v(cl.ID), v(cl.Name), v(cl.Arguments), v(cl.Result)
			if cl.Check != nil {
				ck := *cl.Check
				ck.Name, ck.Reason = v(ck.Name), v(ck.Reason)
				cl.Check = &ck
			}
			calls[j] = cl
		}
		tn.Calls = calls
		turns[i] = tn
	}
	c.Turns = turns
	c.Outcome.Note = v(c.Outcome.Note)
	c.Outcome.AnswerChecks = verdicts(c.Outcome.AnswerChecks)
	c.Outcome.TrajectoryChecks = verdicts(c.Outcome.TrajectoryChecks)
	return c
}

// checkCell rejects cells no loop can produce; times are checked later, on
// the steps, by the same rule Validate applies.
func checkCell(c Cell) error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf("forsy: "+format, args...)) }
	t := c.Task
	for _, f := range []struct{ name, v string }{{"task id", t.ID}, {"task prompt", t.Prompt}, {"provider", t.Provider}, {"model", t.Model}} {
		if strings.TrimSpace(f.v) == "" {
			bad("%s is empty", f.name)
		}
	}
	seen := map[string]bool{}
	for i, tl := range t.Tools {
		switch {
		case strings.TrimSpace(tl.Name) == "":
			bad("tool %d: name is empty", i+1)
		case seen[tl.Name]:
			bad("tool %d: name %q offered twice", i+1, tl.Name)
		}
		seen[tl.Name] = true
		if _, err := json.Marshal(tl.Parameters); err != nil {
			bad("tool %q: parameters are not JSON: %v", tl.Name, err)
		}
	}
	if t.MaxTurns < 0 {
		bad("max_turns %d is negative", t.MaxTurns)
	}
	if t.MaxTurns > 0 && len(c.Turns) > t.MaxTurns {
		bad("%d turns exceed max_turns %d", len(c.Turns), t.MaxTurns)
	}
	o := c.Outcome
	switch o.End {
	case EndAnswered, EndMaxTurns, EndError, EndTimeout, EndCancelled:
	default:
		bad("outcome end %q is not one of answered, max_turns, error, timeout, cancelled", o.End)
	}
	if o.Completed && o.End != EndAnswered {
		bad("outcome is completed but the loop ended by %q, not with an answer", o.End)
	}
	for i, v := range append(slices.Clone(o.AnswerChecks), o.TrajectoryChecks...) {
		if strings.TrimSpace(v.Name) == "" {
			bad("check %d has no name", i+1)
		}
	}
	n := len(c.Turns)
	if n == 0 && (o.End == EndAnswered || o.End == EndMaxTurns) {
		bad("the loop ended by %q but no turn was made", o.End)
	}
	for k, tn := range c.Turns {
		last := k == n-1
		where := fmt.Sprintf("turn %d", k+1)
		if tn.Err != "" && !last {
			bad("%s failed (%s) but the loop went on", where, excerpt(tn.Err))
		}
		if !last && tn.Err == "" && len(tn.Calls) == 0 {
			bad("%s has no tool call but the loop went on, so it was not the final reply", where)
		}
		for j, cl := range tn.Calls {
			if cl.Unanswered && !last {
				bad("%s call %d (%s) was not answered but the loop went on", where, j+1, cl.Name)
			}
			if tn.Err != "" && !cl.Unanswered {
				bad("%s failed, so its call %d (%s) cannot have been answered", where, j+1, cl.Name)
			}
			if cl.Unknown == seen[cl.Name] {
				if cl.Unknown {
					bad("%s call %d: %q is marked unknown but is an offered tool", where, j+1, cl.Name)
				} else {
					bad("%s call %d: %q is not an offered tool but is not marked unknown", where, j+1, cl.Name)
				}
			}
			if cl.Check != nil && strings.TrimSpace(cl.Check.Name) == "" {
				bad("%s call %d (%s): check has no name", where, j+1, cl.Name)
			}
		}
		if !last {
			continue
		}
		final := tn.Err == "" && len(tn.Calls) == 0
		switch {
		case o.End == EndAnswered && !final:
			bad("the loop ended answered but %s (the last) has tool calls or failed", where)
		case o.End != EndAnswered && final:
			bad("%s (the last) is a final reply without calls, so the loop ended answered, not %q", where, o.End)
		case o.End == EndMaxTurns && tn.Err != "":
			bad("the loop ended at max_turns but %s (the last) failed", where)
		case o.End == EndMaxTurns && t.MaxTurns > 0 && n != t.MaxTurns:
			bad("the loop ended at max_turns %d after %d turns", t.MaxTurns, n)
		}
	}
	return errors.Join(errs...)
}

func (b *builder) add(s Step, label string, start, end time.Time) int {
	s.Step = len(b.steps) + 1
	s.StartedAt, s.EndedAt = stamp(start), stamp(end)
	b.steps = append(b.steps, s)
	b.times = append(b.times, timed{label: label, start: start.Round(0), end: end.Round(0)})
	return s.Step
}

func (b *builder) userStep() {
	at := b.c.Start
	if at.IsZero() && len(b.c.Turns) > 0 {
		at = b.c.Turns[0].Start
	}
	b.add(Step{
		Turn:        1,
		Actor:       "user",
		Action:      ActionUserMessage,
		Input:       ptr(b.c.Task.Prompt),
		MessageRole: ptr("direct_request"),
		Eval:        0,
	}, "the user message (cell start)", at, at)
}

// turn adds the steps of turn k: its reply, then the calls bench answered.
func (b *builder) turn(k int) {
	tn := b.c.Turns[k]
	no := k + 1
	last := k == len(b.c.Turns)-1
	s := Step{
		Turn:          no,
		Actor:         "agent",
		ExecutionMode: ptr(ExecSerial),
		Observation:   ptr(b.observation(no)),
		Reasoning:     nonEmpty(tn.Reasoning),
	}
	b.cause(&s, no)
	label := fmt.Sprintf("turn %d reply", no)
	switch {
	case tn.Err != "":
		out := tn.Err
		if tn.Text != "" || len(tn.Calls) > 0 {
			out += "\n\nPartial reply before the failure: " + replyJSON(tn)
		}
		s.Action = ActionError
		s.Output = ptr(out)
		s.StateChange = ptr("No reply came back: the request failed, so the loop ended here.")
		s.Success = ptr(false)
		s.Eval = -1
		s.EvalReason = ptr("The model request failed: " + sentence(excerpt(tn.Err)))
		s.Directive = ptr(fmt.Sprintf("The request of turn %d failed (%s), so the task ended without an answer.", no, excerpt(tn.Err)))
		b.add(s, label, tn.Start, tn.End)
		return
	case len(tn.Calls) == 0:
		b.answer(s, tn, label)
		return
	}
	s.Action = ActionAgentStep
	s.Operation = ptr("plan")
	s.Output = ptr(replyJSON(tn))
	s.Success = ptr(true)
	s.Eval = 0
	s.EvalReason = ptr("The reply requested tool calls; each call is judged on its own step.")
	if last && b.c.Outcome.End == EndMaxTurns {
		s.Eval = -1
		s.EvalReason = ptr(fmt.Sprintf("This reply still requested tools at max_turns (%d), so the task ended without an answer.", len(b.c.Turns)))
		s.Directive = ptr(fmt.Sprintf("The loop hit max_turns (%d) without a final answer: answer once the results suffice instead of calling more tools.", len(b.c.Turns)))
	}
	plan := b.add(s, label, tn.Start, tn.End)

	// Calls: those bench answered get steps, in the order they started.
	var answered []int
	for j, cl := range tn.Calls {
		if !cl.Unanswered {
			answered = append(answered, j)
		}
	}
	allTimed := true
	for _, j := range answered {
		if tn.Calls[j].Start.IsZero() {
			allTimed = false
		}
	}
	if allTimed {
		sort.SliceStable(answered, func(a, z int) bool {
			return tn.Calls[answered[a]].Start.Round(0).Before(tn.Calls[answered[z]].Start.Round(0))
		})
	}
	mode, group := ExecSerial, (*string)(nil)
	if len(tn.Calls) > 1 {
		mode, group = ExecParallel, ptr(fmt.Sprintf("pg_turn_%d", no))
	}
	var made []callStep
	var ran []string
	for _, j := range answered {
		cs := b.callStep(no, j, tn.Calls[j], plan, mode, group, last)
		made = append(made, cs)
		ran = append(ran, fmt.Sprintf("%s (step %d)", cs.name, cs.step))
	}
	// The state change of the reply is known only now that its calls ran.
	sc := fmt.Sprintf("The reply requested %d tool call(s): %s.", len(tn.Calls), callList(no, tn.Calls))
	if len(ran) > 0 {
		sc += " bench ran " + strings.Join(ran, ", ") + "."
	}
	if n := len(tn.Calls) - len(answered); n > 0 {
		sc += fmt.Sprintf(" %d call(s) never ran because the loop ended (%s).", n, b.c.Outcome.End)
	}
	b.steps[plan-1].StateChange = ptr(sc)
	// Failures of this turn become retry candidates for later turns only:
	// the model had not seen them while making this turn's other calls.
	for _, cs := range made {
		if failedCall(cs.call) {
			if b.pending == nil {
				b.pending = map[string]int{}
			}
			b.pending[cs.name] = cs.step
		}
	}
	b.prevCalls = made
}

func (b *builder) callStep(turn, j int, cl Call, plan int, mode string, group *string, lastTurn bool) callStep {
	label := callLabel(turn, j, cl)
	b.calledTotal++
	s := Step{
		Turn:          turn,
		Actor:         "agent",
		Operation:     ptr("execute"),
		Tool:          ptr(cl.Name),
		ExecutionMode: ptr(mode),
		ParallelGroup: group,
		Input:         ptr(cl.Arguments),
		InputSource: &InputSource{
			Actor:       "agent",
			SourceStep:  ptr(plan),
			SourceField: "output",
			Note:        fmt.Sprintf("The arguments of %s in the model's reply of turn %d.", label, turn),
		},
		Output:     ptr(cl.Result),
		CausedBy:   []int{plan},
		CausalType: ptr("execution_of_plan"),
		CausalNote: ptr(fmt.Sprintf("Run because the model requested %s in its reply of turn %d (step %d).", label, turn, plan)),
	}
	obs := b.toolAvailability(cl.Name)
	retryOf, isRetry := b.pending[cl.Name]
	if isRetry {
		delete(b.pending, cl.Name)
		failedOut := ""
		if o := b.steps[retryOf-1].Output; o != nil {
			failedOut = *o
		}
		obs += fmt.Sprintf(" Step %d's call of %s had failed with: %s.", retryOf, cl.Name, quote(failedOut))
		s.RetryOf = ptr(retryOf)
		s.CausedBy = []int{retryOf, plan}
		s.CausalType = ptr("retry_after_failure")
		s.CausalNote = ptr(fmt.Sprintf("Retry of step %d, whose call of %s failed; the model saw that error and requested %s in its reply of turn %d (step %d).", retryOf, cl.Name, label, turn, plan))
	}
	s.Observation = ptr(obs)

	seen := "The result was returned to the model for its next turn."
	if lastTurn {
		seen = "The loop ended before another model turn, so the model never saw this result."
	}
	if failedCall(cl) {
		s.Action = ActionError
		s.Success = ptr(false)
		s.Eval = -1
		s.StateChange = ptr("The call failed. " + strings.Replace(seen, "The result was", "The error was", 1))
		if cl.Unknown {
			s.EvalReason = ptr(fmt.Sprintf("The model called %s, which is not an offered tool; bench answered with an error.", quoteName(cl.Name)))
		} else {
			s.EvalReason = ptr("The call returned an error result.")
		}
	} else {
		s.Action = ActionAgentStep
		s.Success = ptr(true)
		s.StateChange = ptr(seen)
		switch {
		case cl.Check == nil:
			s.Eval = 0
			s.EvalReason = ptr("The call returned a result; no check judged whether it was the right call.")
		case cl.Check.Pass:
			s.Eval = 1
			s.EvalReason = ptr(fmt.Sprintf("The call returned a result and the %s check matched it to an expected call.", cl.Check.Name))
		default:
			s.Eval = -1
			s.EvalReason = ptr(fmt.Sprintf("The %s check did not match this call: %s", cl.Check.Name, sentence(orDash(cl.Check.Reason))))
			s.Directive = ptr(fmt.Sprintf("%s did not match this call (%s): call only what the task needs, with the expected arguments.", cl.Check.Name, orDash(cl.Check.Reason)))
		}
	}
	step := b.add(s, label, cl.Start, cl.End)
	b.callOf[step] = cl
	if failedCall(cl) {
		b.failed = append(b.failed, step)
		if cl.Unknown {
			b.unknownStep = append(b.unknownStep, step)
		}
	}
	if isRetry {
		if b.retriedBy == nil {
			b.retriedBy = map[int]int{}
		}
		b.retriedBy[retryOf] = step
	}
	kind, role, desc := "observed", "evidence", fmt.Sprintf("The result bench returned for %s (%s).", label, quoteName(cl.Name))
	if failedCall(cl) {
		desc = fmt.Sprintf("The error result bench returned for %s (%s).", label, quoteName(cl.Name))
	}
	state := "Returned to the model as the tool result."
	if lastTurn {
		state = "Produced, but the loop ended before the model saw it."
	}
	b.artifacts = append(b.artifacts, Artifact{
		Path:               fmt.Sprintf("tool_result/step_%d", step),
		Type:               kind,
		Role:               role,
		RelatedSteps:       []int{step},
		Description:        desc,
		State:              state,
		Hash:               ptr(Hash(cl.Result)),
		Content:            ptr(cl.Result),
		ReleaseSensitivity: "private",
	})
	return callStep{step: step, name: cl.Name, label: label, call: cl}
}

// answer adds the final reply's step and its artifact.
func (b *builder) answer(s Step, tn Turn, label string) {
	o := b.c.Outcome
	s.Action = ActionOutput
	s.Operation = ptr("answer")
	s.Input = ptr(tn.Text)
	s.Output = ptr(tn.Text)
	s.StateChange = ptr("The final answer was returned and the loop ended.")
	failed := failedChecks(o.AnswerChecks)
	switch {
	case strings.TrimSpace(tn.Text) == "":
		s.Success, s.Eval = ptr(false), -1
		s.EvalReason = ptr("The model ended the loop with an empty reply: no answer.")
		s.Directive = ptr("The reply ended the loop without an answer: answer the user's request from the results before stopping.")
	case len(failed) > 0:
		s.Success, s.Eval = ptr(false), -1
		s.EvalReason = ptr("The answer failed " + verdictList(failed) + ".")
		s.Directive = ptr("The answer failed " + verdictList(failed) + ": the answer must meet what these checks require.")
	case len(o.AnswerChecks) > 0:
		s.Success, s.Eval = ptr(true), 1
		s.EvalReason = ptr("The answer passed " + verdictList(o.AnswerChecks) + ".")
	default:
		s.Success, s.Eval = ptr(true), 0
		s.EvalReason = ptr("An answer was given; no check judged it.")
	}
	step := b.add(s, label, tn.Start, tn.End)
	b.answerStep, b.answerText = step, tn.Text
	state := "Returned as the cell's answer; no check judged it."
	if len(o.AnswerChecks) > 0 {
		state = "Returned as the cell's answer; checks: " + verdictList(o.AnswerChecks) + "."
	}
	b.artifacts = append(b.artifacts, Artifact{
		Path:               "final_answer",
		Type:               "generated",
		Role:               "deliverable",
		RelatedSteps:       []int{step},
		Description:        "The model's final answer to the task.",
		State:              state,
		Hash:               ptr(Hash(tn.Text)),
		Content:            ptr(tn.Text),
		ReleaseSensitivity: "private",
	})
}

// cause links a turn's step to what triggered it: the user message in turn
// 1, the previous turn's calls later.
func (b *builder) cause(s *Step, turn int) {
	if turn == 1 || len(b.prevCalls) == 0 {
		s.CausedBy = []int{1}
		s.CausalType = ptr("user_request")
		s.CausalNote = ptr("The model's reply to the user's request (step 1).")
		return
	}
	var ids []string
	for _, cs := range b.prevCalls {
		s.CausedBy = append(s.CausedBy, cs.step)
		ids = append(ids, fmt.Sprint(cs.step))
	}
	sort.Ints(s.CausedBy)
	s.CausalType = ptr("dependency_on_tool_result")
	if len(b.prevCalls) > 1 {
		s.CausalType = ptr("dependency_on_multiple_prior_steps")
	}
	s.CausalNote = ptr(fmt.Sprintf("Made after the results of turn %d's calls (step %s) were returned to the model.", turn-1, strings.Join(ids, ", ")))
}

// observation says what the model had just received when it made turn.
func (b *builder) observation(turn int) string {
	if turn == 1 || len(b.prevCalls) == 0 {
		o := "The model has the user's request (step 1)"
		if b.c.Task.System != "" {
			o += " and the system prompt"
		}
		if len(b.c.Task.Tools) == 0 {
			return o + "; no tool is offered."
		}
		return o + fmt.Sprintf("; offered tools (%d): %s.", len(b.c.Task.Tools), strings.Join(b.toolNames(), ", "))
	}
	parts := make([]string, 0, len(b.prevCalls))
	for _, cs := range b.prevCalls {
		verb := "returned"
		if failedCall(cs.call) {
			verb = "failed with"
		}
		parts = append(parts, fmt.Sprintf("step %d %s %s: %s", cs.step, quoteName(cs.name), verb, quote(cs.call.Result)))
	}
	return fmt.Sprintf("The results of turn %d's %d call(s) were returned to the model: %s.", turn-1, len(b.prevCalls), strings.Join(parts, "; "))
}

func (b *builder) toolAvailability(name string) string {
	if b.offered[name] {
		return fmt.Sprintf("%s is an offered tool (offered: %s).", quoteName(name), strings.Join(b.toolNames(), ", "))
	}
	if len(b.c.Task.Tools) == 0 {
		return fmt.Sprintf("%s is not offered: the task offers no tool.", quoteName(name))
	}
	return fmt.Sprintf("%s is not among the offered tools (%s).", quoteName(name), strings.Join(b.toolNames(), ", "))
}

// finishDirectives puts hindsight on each failed call once later turns have
// shown whether it was retried.
func (b *builder) finishDirectives() {
	for _, st := range b.failed {
		s := &b.steps[st-1]
		name := ""
		if s.Tool != nil {
			name = *s.Tool
		}
		var d string
		if b.callOf[st].Unknown {
			d = fmt.Sprintf("%s is not an offered tool; call only the offered tools", quoteName(name))
			if len(b.c.Task.Tools) > 0 {
				d += " (" + strings.Join(b.toolNames(), ", ") + ")"
			}
			d += "."
		} else {
			d = fmt.Sprintf("This call of %s failed with: %s. The next step must react to that error (retry, corrected where the error names a problem) rather than ignore it.", quoteName(name), quote(deref(s.Output)))
		}
		if r, ok := b.retriedBy[st]; ok {
			outcome := "succeeded"
			if !*b.steps[r-1].Success {
				outcome = "failed again"
			}
			d += fmt.Sprintf(" It was retried at step %d, which %s.", r, outcome)
		} else {
			d += " It was not retried."
		}
		if chk := b.callOf[st].Check; chk != nil && !chk.Pass {
			d += fmt.Sprintf(" %s did not match this call either: %s", chk.Name, sentence(orDash(chk.Reason)))
		}
		s.Directive = ptr(d)
	}
}

func (b *builder) toolNames() []string {
	names := make([]string, len(b.c.Task.Tools))
	for i, tl := range b.c.Task.Tools {
		names[i] = tl.Name
	}
	return names
}

func (b *builder) checkTimes() error {
	window := timed{label: "the cell", start: b.c.Start.Round(0), end: b.c.End.Round(0)}
	for _, t := range append([]timed{window}, b.times...) {
		for _, at := range []time.Time{t.start, t.end} {
			if !at.IsZero() && (at.Year() < 1 || at.Year() > 9999) {
				return fmt.Errorf("forsy: %s: time %v is outside years 1-9999", t.label, at)
			}
		}
	}
	errs := checkTimeOrder(window, b.times)
	for i := range errs {
		errs[i] = fmt.Errorf("forsy: %w", errs[i])
	}
	return errors.Join(errs...)
}

func (b *builder) trace() *Trace {
	c, task, o := b.c, b.c.Task, b.c.Outcome
	tools := b.toolNames()
	defs := make([]map[string]any, len(task.Tools))
	for i, tl := range task.Tools {
		defs[i] = map[string]any{"name": tl.Name, "description": nonEmpty(tl.Description), "parameters": tl.Parameters}
	}
	cfg := map[string]any{
		"framework":                 "bench",
		"harness_version":           nonEmpty(task.HarnessVersion),
		"run_id":                    nonEmpty(task.RunID),
		"task_id":                   task.ID,
		"task_name":                 nonEmpty(task.Name),
		"provider":                  task.Provider,
		"provider_type":             nonEmpty(task.ProviderType),
		"model":                     task.Model,
		"reasoning_effort":          nonEmpty(task.ThinkingLevel),
		"repetition":                task.Repetition,
		"max_turns":                 nil,
		"function_calling_protocol": nonEmpty(task.Protocol),
		"tool_definitions":          defs,
	}
	if task.MaxTurns > 0 {
		cfg["max_turns"] = task.MaxTurns
	}
	t := &Trace{
		SchemaVersion:     SchemaVersion,
		TraceID:           TraceID(task),
		TraceMode:         TraceModeLive,
		ValidationLevel:   ValidationSelfTraced,
		Task:              task.Prompt,
		AgentTools:        tools,
		StartedAt:         stamp(c.Start),
		EndedAt:           stamp(c.End),
		SystemPrompt:      nonEmpty(task.System),
		AgentConfig:       cfg,
		TerminationReason: termination(o),
		Steps:             b.steps,
		StaticOutput:      &StaticOutput{Artifacts: b.artifacts},
	}
	if t.StaticOutput.Artifacts == nil {
		t.StaticOutput.Artifacts = []Artifact{}
	}
	if b.answerStep > 0 {
		t.FinalOutput = ptr(b.answerText)
	}
	t.Summary = countSummary(t.Steps)
	t.Summary.AgentConfidence = 100
	for _, s := range t.Steps {
		if s.StartedAt == nil || s.EndedAt == nil {
			// A step bench did not time is a gap in the record.
			t.Summary.AgentConfidence = 75
		}
	}
	t.Summary.GoalAchieved = o.Completed
	t.Summary.GoalNotes = ptr(b.goalNotes())
	t.DatasetSummary = b.datasetSummary(t)
	return t
}

func termination(o Outcome) string {
	switch o.End {
	case EndAnswered:
		if o.Completed {
			return "task_complete"
		}
		return "other"
	case EndMaxTurns:
		return "partial_then_stopped"
	case EndError:
		return "error_unrecoverable"
	case EndTimeout:
		return "timeout"
	default:
		return "user_abandoned"
	}
}

func (b *builder) goalNotes() string {
	o := b.c.Outcome
	var parts []string
	switch o.End {
	case EndAnswered:
		parts = append(parts, fmt.Sprintf("The model gave its final answer in turn %d (step %d).", len(b.c.Turns), b.answerStep))
	case EndMaxTurns:
		parts = append(parts, fmt.Sprintf("The loop stopped at max_turns (%d) without a final answer.", len(b.c.Turns)))
	case EndError:
		parts = append(parts, "The cell ended with an error before a final answer.")
	case EndTimeout:
		parts = append(parts, "The cell's time limit ran out before a final answer.")
	case EndCancelled:
		parts = append(parts, "The run was interrupted before a final answer.")
	}
	if o.Note != "" {
		parts = append(parts, "Note: "+sentence(o.Note))
	}
	calls := fmt.Sprintf("bench ran %d tool call(s)", b.calledTotal)
	if len(b.failed) > 0 {
		calls += fmt.Sprintf("; %d failed (step %s)", len(b.failed), joinInts(b.failed))
	}
	if len(b.unknownStep) > 0 {
		calls += fmt.Sprintf("; %d named a tool that was not offered (step %s)", len(b.unknownStep), joinInts(b.unknownStep))
	}
	if len(b.retriedBy) > 0 {
		var retries []int
		for _, r := range b.retriedBy {
			retries = append(retries, r)
		}
		sort.Ints(retries)
		calls += fmt.Sprintf("; %d retried a failed call (step %s)", len(retries), joinInts(retries))
	}
	parts = append(parts, calls+".")
	if len(o.AnswerChecks) > 0 {
		parts = append(parts, "Answer checks: "+verdictDetails(o.AnswerChecks)+".")
	}
	if len(o.TrajectoryChecks) > 0 {
		parts = append(parts, "Trajectory checks: "+verdictDetails(o.TrajectoryChecks)+".")
	}
	if o.Completed {
		parts = append(parts, "The task counts as completed.")
	} else {
		parts = append(parts, "The task does not count as completed.")
	}
	return strings.Join(parts, " ")
}

func (b *builder) datasetSummary(t *Trace) *DatasetSummary {
	task := b.c.Task
	name := task.ID
	if task.Name != "" && task.Name != task.ID {
		name += " (" + task.Name + ")"
	}
	who := fmt.Sprintf("%s on provider %s", task.Model, task.Provider)
	if task.ThinkingLevel != "" {
		who += ", thinking " + task.ThinkingLevel
	}
	achieved := "no"
	if t.Summary.GoalAchieved {
		achieved = "yes"
	}
	desc := fmt.Sprintf("Live trace, recorded by bench's agentic loop, of %s on task %s, repetition %d: %d model turn(s), %d tool call(s) run (%d failed), ended: %s; goal achieved: %s. Tool results are the task's scripted results; step evals are bench's mechanical labels from call results and validator verdicts, not a review.",
		who, name, task.Repetition, len(b.c.Turns), b.calledTotal, len(b.failed), b.c.Outcome.End, achieved)
	tags := []string{"agent-work-trace", "tool-use", "benchmark", "live"}
	if len(b.retriedBy) > 0 {
		tags = append(tags, "failure-recovery")
	}
	return &DatasetSummary{
		Title:           fmt.Sprintf("bench agentic task %s: %s on %s", task.ID, task.Model, task.Provider),
		Description:     desc,
		Tags:            tags,
		ReleaseTier:     "private",
		ValidationLevel: ValidationSelfTraced,
	}
}

// countSummary derives the counts the spec says must equal the steps.
func countSummary(steps []Step) Summary {
	var s Summary
	turns := map[int]bool{}
	for _, st := range steps {
		s.TotalSteps++
		turns[st.Turn] = true
		switch st.Eval {
		case 1:
			s.PositiveSteps++
		case -1:
			s.NegativeSteps++
		case 0:
			s.NeutralSteps++
		}
		if st.Directive != nil && strings.TrimSpace(*st.Directive) != "" {
			s.DirectiveSignals++
		}
		if st.Action == ActionUserMessage && st.FeedbackType != nil {
			switch *st.FeedbackType {
			case "correction":
				s.HumanFeedback.Corrections++
			case "approval":
				s.HumanFeedback.Approvals++
			case "clarification":
				s.HumanFeedback.Clarifications++
			case "new_instruction":
				s.HumanFeedback.NewInstructions++
			}
		}
	}
	s.TotalTurns = len(turns)
	return s
}

func failedCall(c Call) bool { return c.IsError || c.Unknown }

// replyJSON renders a reply as the model produced it: its text and calls.
// Arguments that are JSON stay JSON; anything else (a text-mode command, a
// cut stream) is kept as a string.
func replyJSON(tn Turn) string {
	type call struct {
		ID        string          `json:"id,omitempty"`
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	}
	r := struct {
		Text      string `json:"text"`
		ToolCalls []call `json:"tool_calls"`
	}{Text: tn.Text, ToolCalls: []call{}}
	for _, c := range tn.Calls {
		args := json.RawMessage(c.Arguments)
		if !json.Valid(args) {
			args, _ = json.Marshal(c.Arguments)
		}
		r.ToolCalls = append(r.ToolCalls, call{ID: c.ID, Name: c.Name, Arguments: args})
	}
	out, err := marshalCompact(r)
	if err != nil {
		// Cannot happen: every part is a string or valid JSON.
		return tn.Text
	}
	return out
}

func callLabel(turn, j int, c Call) string {
	if c.ID != "" {
		return fmt.Sprintf("call %s", c.ID)
	}
	return fmt.Sprintf("call %d of turn %d", j+1, turn)
}

func callList(turn int, calls []Call) string {
	parts := make([]string, len(calls))
	for j, c := range calls {
		parts[j] = fmt.Sprintf("%s (%s)", quoteName(c.Name), callLabel(turn, j, c))
	}
	return strings.Join(parts, ", ")
}

func failedChecks(vs []Verdict) []Verdict {
	var out []Verdict
	for _, v := range vs {
		if !v.Pass {
			out = append(out, v)
		}
	}
	return out
}

func verdictList(vs []Verdict) string {
	names := make([]string, len(vs))
	for i, v := range vs {
		names[i] = v.Name
		if !v.Pass && v.Reason != "" {
			names[i] += " (" + excerpt(v.Reason) + ")"
		}
	}
	return strings.Join(names, ", ")
}

func verdictDetails(vs []Verdict) string {
	parts := make([]string, len(vs))
	for i, v := range vs {
		parts[i] = v.Name + ": pass"
		if !v.Pass {
			parts[i] = v.Name + ": fail"
			if v.Reason != "" {
				parts[i] += " (" + excerpt(v.Reason) + ")"
			}
		}
	}
	return strings.Join(parts, "; ")
}

func joinInts(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = fmt.Sprint(x)
	}
	return strings.Join(s, ", ")
}

// excerpt cuts s to excerptRunes runes, saying how much was left out.
func excerpt(s string) string {
	r := []rune(s)
	if len(r) <= excerptRunes {
		return s
	}
	return string(r[:excerptRunes]) + fmt.Sprintf("… (%d more characters)", len(r)-excerptRunes)
}

// sentence ends s with a full stop unless it already ends a sentence.
func sentence(s string) string {
	s = strings.TrimRight(s, " \n\t")
	if s == "" || strings.HasSuffix(s, ".") || strings.HasSuffix(s, "!") || strings.HasSuffix(s, "?") {
		return s
	}
	return s + "."
}

func quote(s string) string { return "«" + excerpt(s) + "»" }

func quoteName(s string) string {
	if s == "" {
		return `""`
	}
	return s
}

func orDash(s string) string {
	if s == "" {
		return "no reason given"
	}
	return s
}

func stamp(t time.Time) *string {
	if t.IsZero() {
		return nil
	}
	return ptr(t.UTC().Format(timeFormat))
}

// timeFormat is ISO 8601 in UTC with milliseconds, as the spec's examples.
const timeFormat = "2006-01-02T15:04:05.000Z07:00"

func nonEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func ptr[T any](v T) *T { return &v }
