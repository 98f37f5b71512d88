package forsy

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"
)

// ValidateJSON checks an encoded trace (a trace.json file's bytes) against
// every invariant the Forsy spec states that its JSON Schema cannot (the
// upstream schema accepts almost any shape): the shape of the JSON itself
// (all 28 step fields present with their JSON types), the allowed values,
// eval in {-1, 0, 1}, the user_message rules, caused_by, retry_of and
// input_source pointing only to earlier steps, step times in order inside
// the trace window, summary counts equal to the steps, unique ids, and
// artifact hashes that match their content. It returns every problem
// found, joined; nil means valid. A trace that passes also passes the
// upstream schema, which the tests check. Write checks the bytes it is
// about to write with it.
func ValidateJSON(data []byte) error {
	errs := checkShape(data)
	var t Trace
	if err := json.Unmarshal(data, &t); err != nil {
		if len(errs) == 0 {
			errs = append(errs, fmt.Errorf("decode trace: %w", err))
		}
		return errors.Join(errs...)
	}
	errs = append(errs, check(&t)...)
	return errors.Join(errs...)
}

// checkShape checks what only the JSON shows: required top-level fields and
// the 28 fields of every step with their JSON types.
func checkShape(data []byte) []error {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil {
		return []error{fmt.Errorf("trace is not a JSON object: %w", err)}
	}
	var errs []error
	for _, f := range []string{"schema_version", "trace_id", "task", "steps", "summary"} {
		if _, ok := top[f]; !ok {
			errs = append(errs, fmt.Errorf("field %s is missing", f))
		}
	}
	var steps []json.RawMessage
	if raw, ok := top["steps"]; ok {
		if err := json.Unmarshal(raw, &steps); err != nil {
			return append(errs, fmt.Errorf("steps is not an array: %w", err))
		}
	}
	for i, raw := range steps {
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(raw, &obj); err != nil || obj == nil {
			errs = append(errs, fmt.Errorf("steps[%d] is not an object", i))
			continue
		}
		for _, f := range stepFields {
			v, ok := obj[f.name]
			if !ok {
				errs = append(errs, fmt.Errorf("steps[%d]: field %s is missing (all 28 step fields must be present)", i, f.name))
				continue
			}
			if k := jsonKind(v); !slices.Contains(f.kinds, k) {
				errs = append(errs, fmt.Errorf("steps[%d]: field %s is %s, want %s", i, f.name, k, strings.Join(f.kinds, " or ")))
			}
		}
	}
	return errs
}

// jsonKind names a JSON value's kind in stepFields' terms.
func jsonKind(v json.RawMessage) string {
	v = bytes.TrimSpace(v)
	if len(v) == 0 {
		return "nothing"
	}
	switch v[0] {
	case 'n':
		return "null"
	case 't', 'f':
		return "bool"
	case '"':
		return "string"
	case '{':
		return "object"
	case '[':
		var xs []json.RawMessage
		if json.Unmarshal(v, &xs) != nil {
			return "array"
		}
		for _, x := range xs {
			if jsonKind(x) != "int" {
				return "array"
			}
		}
		return "ints"
	default:
		var n json.Number
		if json.Unmarshal(v, &n) != nil {
			return "number"
		}
		if _, err := n.Int64(); err != nil {
			return "number"
		}
		return "int"
	}
}

var hashRE = regexp.MustCompile(`^sha256:[0-9a-f]{64}$`)

// check holds the semantic invariants, on the decoded trace.
func check(t *Trace) []error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	oneOf := func(field, v string, allowed []string) {
		if !slices.Contains(allowed, v) {
			bad("%s %q is not one of %s", field, v, strings.Join(allowed, ", "))
		}
	}

	if t.SchemaVersion != SchemaVersion {
		bad("schema_version %q, want %q", t.SchemaVersion, SchemaVersion)
	}
	if strings.TrimSpace(t.TraceID) == "" {
		bad("trace_id is empty")
	}
	if t.PriorTraceID != nil && (strings.TrimSpace(*t.PriorTraceID) == "" || *t.PriorTraceID == t.TraceID) {
		bad("prior_trace_id %q must be null or another trace's id", *t.PriorTraceID)
	}
	oneOf("trace_mode", t.TraceMode, traceModes)
	oneOf("validation_level", t.ValidationLevel, validationLevels)
	if strings.TrimSpace(t.Task) == "" {
		bad("task is empty")
	}
	if t.AgentTools == nil {
		bad("agent_tools is null, want an array")
	}
	seenTool := map[string]bool{}
	for i, name := range t.AgentTools {
		if strings.TrimSpace(name) == "" {
			bad("agent_tools[%d] is empty", i)
		} else if seenTool[name] {
			bad("agent_tools[%d] %q is listed twice", i, name)
		}
		seenTool[name] = true
	}
	oneOf("termination_reason", t.TerminationReason, terminationReason)
	for i, sk := range t.Skills {
		if strings.TrimSpace(sk) == "" {
			bad("skills[%d] is empty", i)
		}
	}

	window := timed{label: "the trace"}
	window.start, errs = parseTime("started_at", t.StartedAt, errs)
	window.end, errs = parseTime("ended_at", t.EndedAt, errs)

	if len(t.Steps) == 0 {
		bad("steps is empty")
	}
	times := make([]timed, len(t.Steps))
	prevTurn := 0
	for i, s := range t.Steps {
		where := fmt.Sprintf("step %d", i+1)
		sbad := func(format string, args ...any) { bad(where+": "+format, args...) }
		if s.Step != i+1 {
			sbad("step is %d, want %d (sequential from 1, unique, in order)", s.Step, i+1)
		}
		if s.Turn < 1 {
			sbad("turn %d is below 1", s.Turn)
		} else if s.Turn < prevTurn {
			sbad("turn %d goes back from turn %d", s.Turn, prevTurn)
		}
		prevTurn = max(prevTurn, s.Turn)
		if strings.TrimSpace(s.Actor) == "" {
			sbad("actor is empty")
		}
		if !slices.Contains(actions, s.Action) {
			sbad("action %q is not one of %s", s.Action, strings.Join(actions, ", "))
		}
		if s.Operation != nil && strings.TrimSpace(*s.Operation) == "" {
			sbad("operation is empty; use null")
		}
		if s.ExecutionMode != nil && !slices.Contains(executionModes, *s.ExecutionMode) {
			sbad("execution_mode %q is not one of serial, parallel", *s.ExecutionMode)
		}
		if s.ParallelGroup != nil && strings.TrimSpace(*s.ParallelGroup) == "" {
			sbad("parallel_group is empty; use null")
		}
		if s.Eval < -1 || s.Eval > 1 {
			sbad("eval %d is not -1, 0 or 1", s.Eval)
		}
		if s.MessageRole != nil && !slices.Contains(messageRoles, *s.MessageRole) {
			sbad("message_role %q is not one of %s", *s.MessageRole, strings.Join(messageRoles, ", "))
		}
		if s.FeedbackType != nil && !slices.Contains(feedbackTypes, *s.FeedbackType) {
			sbad("feedback_type %q is not one of %s", *s.FeedbackType, strings.Join(feedbackTypes, ", "))
		}
		if s.Action == ActionUserMessage {
			for _, f := range []struct {
				name  string
				isSet bool
			}{
				{"operation", s.Operation != nil}, {"tool", s.Tool != nil}, {"execution_mode", s.ExecutionMode != nil},
				{"observation", s.Observation != nil}, {"reasoning", s.Reasoning != nil}, {"success", s.Success != nil},
				{"eval_reason", s.EvalReason != nil}, {"directive", s.Directive != nil}, {"output", s.Output != nil},
			} {
				if f.isSet {
					sbad("user_message must have %s null", f.name)
				}
			}
			if s.Actor != "user" {
				sbad("user_message actor is %q, want user", s.Actor)
			}
			if s.Eval != 0 {
				sbad("user_message eval is %d, want 0", s.Eval)
			}
			if s.Input == nil {
				sbad("user_message input is null, want the user's words")
			}
		} else {
			for _, f := range []struct {
				name  string
				isSet bool
			}{{"message_role", s.MessageRole != nil}, {"feedback_type", s.FeedbackType != nil}, {"feedback_content", s.FeedbackContent != nil}} {
				if f.isSet {
					sbad("%s is for user_message steps only; must be null on %s", f.name, s.Action)
				}
			}
			if s.Success == nil {
				sbad("success is null; only user_message steps may leave it null")
			} else if !*s.Success {
				if s.Eval != -1 {
					sbad("a failed step (success false) has eval %d, want -1", s.Eval)
				}
				if s.Directive == nil || strings.TrimSpace(*s.Directive) == "" {
					sbad("a failed step (success false) has no directive")
				}
			}
		}
		seen := map[int]bool{}
		for _, c := range s.CausedBy {
			if c < 1 || c >= s.Step {
				sbad("caused_by %d is not an earlier step", c)
			} else if seen[c] {
				sbad("caused_by lists step %d twice", c)
			}
			seen[c] = true
		}
		if s.RetryOf != nil {
			r := *s.RetryOf
			switch {
			case r < 1 || r >= s.Step:
				sbad("retry_of %d is not an earlier step", r)
			case r <= len(t.Steps) && t.Steps[r-1].Action == ActionUserMessage:
				sbad("retry_of %d is a user_message, which cannot be retried", r)
			}
		}
		if is := s.InputSource; is != nil {
			if !slices.Contains(sourceActors, is.Actor) {
				sbad("input_source.actor %q is not one of %s", is.Actor, strings.Join(sourceActors, ", "))
			}
			if !slices.Contains(sourceFields, is.SourceField) {
				sbad("input_source.source_field %q is not one of %s", is.SourceField, strings.Join(sourceFields, ", "))
			}
			if is.SourceStep != nil && (*is.SourceStep < 1 || *is.SourceStep >= s.Step) {
				sbad("input_source.source_step %d is not an earlier step", *is.SourceStep)
			}
		}
		times[i].label = where
		times[i].start, errs = parseTime(where+": started_at", s.StartedAt, errs)
		times[i].end, errs = parseTime(where+": ended_at", s.EndedAt, errs)
	}
	errs = append(errs, checkTimeOrder(window, times)...)

	errs = append(errs, checkSummary(t)...)
	errs = append(errs, checkArtifacts(t)...)

	if d := t.DatasetSummary; d != nil {
		if strings.TrimSpace(d.Title) == "" {
			bad("dataset_summary.title is empty")
		}
		oneOf("dataset_summary.release_tier", d.ReleaseTier, releaseTiers)
		oneOf("dataset_summary.validation_level", d.ValidationLevel, validationLevels)
	}
	return errs
}

func checkSummary(t *Trace) []error {
	var errs []error
	want := countSummary(t.Steps)
	got := t.Summary
	for _, c := range []struct {
		name      string
		got, want int
	}{
		{"total_steps", got.TotalSteps, want.TotalSteps},
		{"total_turns", got.TotalTurns, want.TotalTurns},
		{"positive_steps", got.PositiveSteps, want.PositiveSteps},
		{"negative_steps", got.NegativeSteps, want.NegativeSteps},
		{"neutral_steps", got.NeutralSteps, want.NeutralSteps},
		{"directive_signals", got.DirectiveSignals, want.DirectiveSignals},
		{"human_feedback.corrections", got.HumanFeedback.Corrections, want.HumanFeedback.Corrections},
		{"human_feedback.approvals", got.HumanFeedback.Approvals, want.HumanFeedback.Approvals},
		{"human_feedback.clarifications", got.HumanFeedback.Clarifications, want.HumanFeedback.Clarifications},
		{"human_feedback.new_instructions", got.HumanFeedback.NewInstructions, want.HumanFeedback.NewInstructions},
	} {
		if c.got != c.want {
			errs = append(errs, fmt.Errorf("summary.%s is %d but the steps give %d", c.name, c.got, c.want))
		}
	}
	if got.AgentConfidence < 0 || got.AgentConfidence > 100 {
		errs = append(errs, fmt.Errorf("summary.agent_confidence %d is outside 0-100", got.AgentConfidence))
	}
	return errs
}

func checkArtifacts(t *Trace) []error {
	if t.StaticOutput == nil {
		return nil
	}
	var errs []error
	paths := map[string]bool{}
	for i, a := range t.StaticOutput.Artifacts {
		where := fmt.Sprintf("static_output.artifacts[%d]", i)
		if strings.TrimSpace(a.Path) == "" {
			errs = append(errs, fmt.Errorf("%s: path is empty", where))
		} else if paths[a.Path] {
			errs = append(errs, fmt.Errorf("%s: path %q is used twice", where, a.Path))
		}
		paths[a.Path] = true
		if !slices.Contains(artifactTypes, a.Type) {
			errs = append(errs, fmt.Errorf("%s: type %q is not one of %s", where, a.Type, strings.Join(artifactTypes, ", ")))
		}
		if !slices.Contains(sensitivities, a.ReleaseSensitivity) {
			errs = append(errs, fmt.Errorf("%s: release_sensitivity %q is not one of %s", where, a.ReleaseSensitivity, strings.Join(sensitivities, ", ")))
		}
		for _, r := range a.RelatedSteps {
			if r < 1 || r > len(t.Steps) {
				errs = append(errs, fmt.Errorf("%s: related_steps %d is not a step", where, r))
			}
		}
		if a.Hash != nil {
			if !hashRE.MatchString(*a.Hash) {
				errs = append(errs, fmt.Errorf("%s: hash %q is not sha256: and 64 lowercase hex digits", where, *a.Hash))
			} else if a.Content != nil && *a.Hash != Hash(*a.Content) {
				errs = append(errs, fmt.Errorf("%s: hash %s is not the sha256 of its content", where, *a.Hash))
			}
		}
	}
	return errs
}

// timed is one interval to order; a zero time is unknown and not checked.
type timed struct {
	label      string
	start, end time.Time
}

// checkTimeOrder applies the spec's time rules: each step starts no later
// than it ends, steps start in step order (chronological), and every known
// time lies inside the window.
func checkTimeOrder(window timed, steps []timed) []error {
	var errs []error
	f := func(t time.Time) string { return t.UTC().Format(timeFormat) }
	if !window.start.IsZero() && !window.end.IsZero() && window.end.Before(window.start) {
		errs = append(errs, fmt.Errorf("%s ends (%s) before it starts (%s)", window.label, f(window.end), f(window.start)))
	}
	var prev timed
	for _, s := range steps {
		if !s.start.IsZero() && !s.end.IsZero() && s.end.Before(s.start) {
			errs = append(errs, fmt.Errorf("%s ends (%s) before it starts (%s)", s.label, f(s.end), f(s.start)))
		}
		if !s.start.IsZero() {
			if !prev.start.IsZero() && s.start.Before(prev.start) {
				errs = append(errs, fmt.Errorf("%s starts (%s) before %s, an earlier step, starts (%s)", s.label, f(s.start), prev.label, f(prev.start)))
			}
			prev = s
		}
		for _, at := range []time.Time{s.start, s.end} {
			if at.IsZero() {
				continue
			}
			if !window.start.IsZero() && at.Before(window.start) {
				errs = append(errs, fmt.Errorf("%s: time %s is before %s starts (%s)", s.label, f(at), window.label, f(window.start)))
			}
			if !window.end.IsZero() && at.After(window.end) {
				errs = append(errs, fmt.Errorf("%s: time %s is after %s ends (%s)", s.label, f(at), window.label, f(window.end)))
			}
		}
	}
	return errs
}

func parseTime(field string, s *string, errs []error) (time.Time, []error) {
	if s == nil {
		return time.Time{}, errs
	}
	t, err := time.Parse(time.RFC3339Nano, *s)
	if err != nil {
		return time.Time{}, append(errs, fmt.Errorf("%s %q is not an ISO 8601 (RFC 3339) time", field, *s))
	}
	return t, errs
}
