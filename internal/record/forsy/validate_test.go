package forsy

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
)

// validTrace is the fail_then_retry trace: it has a failed call, a retry,
// input sources and artifacts, so every invariant has something to break.
func validTrace(t *testing.T) *Trace {
	t.Helper()
	tr, err := Build(buildCases()[2].cell)
	if err != nil {
		t.Fatal(err)
	}
	if err := Validate(tr); err != nil {
		t.Fatalf("the base trace is invalid: %v", err)
	}
	return tr
}

// TestValidateCatches breaks one invariant at a time on a valid trace and
// requires Validate to name it.
func TestValidateCatches(t *testing.T) {
	cases := []struct {
		name   string
		mutate func(tr *Trace)
		want   string
	}{
		{"schema version", func(tr *Trace) { tr.SchemaVersion = "forsy-v1" }, `schema_version "forsy-v1"`},
		{"empty trace id", func(tr *Trace) { tr.TraceID = "" }, "trace_id is empty"},
		{"prior trace is itself", func(tr *Trace) { tr.PriorTraceID = ptr(tr.TraceID) }, "prior_trace_id"},
		{"trace mode", func(tr *Trace) { tr.TraceMode = "realtime" }, `trace_mode "realtime" is not one of`},
		{"validation level", func(tr *Trace) { tr.ValidationLevel = "expert" }, `validation_level "expert" is not one of`},
		{"empty task", func(tr *Trace) { tr.Task = "" }, "task is empty"},
		{"null agent tools", func(tr *Trace) { tr.AgentTools = nil }, "agent_tools is null"},
		{"duplicate agent tool", func(tr *Trace) { tr.AgentTools = append(tr.AgentTools, tr.AgentTools[0]) }, "is listed twice"},
		{"termination reason", func(tr *Trace) { tr.TerminationReason = "done" }, `termination_reason "done"`},
		{"no steps", func(tr *Trace) { tr.Steps = nil; tr.Summary = countSummary(nil); tr.StaticOutput = nil }, "steps is empty"},
		{"step numbers not sequential", func(tr *Trace) { tr.Steps[2].Step = 2 }, "step 3: step is 2, want 3"},
		{"turn below one", func(tr *Trace) { tr.Steps[0].Turn = 0 }, "turn 0 is below 1"},
		{"turn goes back", func(tr *Trace) { tr.Steps[4].Turn = 1 }, "turn 1 goes back from turn 2"},
		{"empty actor", func(tr *Trace) { tr.Steps[1].Actor = "" }, "step 2: actor is empty"},
		{"bad action", func(tr *Trace) { tr.Steps[2].Action = "tool_call" }, `action "tool_call" is not one of`},
		{"bad execution mode", func(tr *Trace) { tr.Steps[2].ExecutionMode = ptr("sequential") }, `execution_mode "sequential"`},
		{"empty operation", func(tr *Trace) { tr.Steps[2].Operation = ptr("") }, "operation is empty"},
		{"eval out of range", func(tr *Trace) { tr.Steps[4].Eval = 2; tr.Summary = countSummary(tr.Steps) }, "step 5: eval 2 is not -1, 0 or 1"},
		{"user eval not zero", func(tr *Trace) { tr.Steps[0].Eval = 1; tr.Summary = countSummary(tr.Steps) }, "user_message eval is 1, want 0"},
		{"user observation", func(tr *Trace) { tr.Steps[0].Observation = ptr("x") }, "user_message must have observation null"},
		{"user tool", func(tr *Trace) { tr.Steps[0].Tool = ptr("Bash") }, "user_message must have tool null"},
		{"user success", func(tr *Trace) { tr.Steps[0].Success = ptr(true) }, "user_message must have success null"},
		{"user directive", func(tr *Trace) { tr.Steps[0].Directive = ptr("x"); tr.Summary = countSummary(tr.Steps) }, "user_message must have directive null"},
		{"user output", func(tr *Trace) { tr.Steps[0].Output = ptr("x") }, "user_message must have output null"},
		{"user actor", func(tr *Trace) { tr.Steps[0].Actor = "agent" }, `user_message actor is "agent"`},
		{"user without words", func(tr *Trace) { tr.Steps[0].Input = nil }, "user_message input is null"},
		{"feedback on agent step", func(tr *Trace) { tr.Steps[1].FeedbackContent = ptr("x") }, "feedback_content is for user_message steps only"},
		{"message role on agent step", func(tr *Trace) { tr.Steps[1].MessageRole = ptr("direct_request") }, "message_role is for user_message steps only"},
		{"bad message role", func(tr *Trace) { tr.Steps[0].MessageRole = ptr("order") }, `message_role "order"`},
		{"bad feedback type", func(tr *Trace) { tr.Steps[0].FeedbackType = ptr("praise") }, `feedback_type "praise"`},
		{"agent success null", func(tr *Trace) { tr.Steps[1].Success = nil }, "step 2: success is null"},
		{"failed but positive", func(tr *Trace) { tr.Steps[2].Eval = 1; tr.Summary = countSummary(tr.Steps) }, "a failed step (success false) has eval 1"},
		{"failed without directive", func(tr *Trace) { tr.Steps[2].Directive = nil; tr.Summary = countSummary(tr.Steps) }, "a failed step (success false) has no directive"},
		{"caused_by itself", func(tr *Trace) { tr.Steps[3].CausedBy = []int{4} }, "step 4: caused_by 4 is not an earlier step"},
		{"caused_by later", func(tr *Trace) { tr.Steps[3].CausedBy = []int{5} }, "step 4: caused_by 5 is not an earlier step"},
		{"caused_by zero", func(tr *Trace) { tr.Steps[3].CausedBy = []int{0} }, "caused_by 0 is not an earlier step"},
		{"caused_by twice", func(tr *Trace) { tr.Steps[4].CausedBy = []int{3, 3} }, "caused_by lists step 3 twice"},
		{"retry_of itself", func(tr *Trace) { tr.Steps[4].RetryOf = ptr(5) }, "step 5: retry_of 5 is not an earlier step"},
		{"retry_of later", func(tr *Trace) { tr.Steps[2].RetryOf = ptr(5) }, "step 3: retry_of 5 is not an earlier step"},
		{"retry_of user message", func(tr *Trace) { tr.Steps[4].RetryOf = ptr(1) }, "retry_of 1 is a user_message"},
		{"input_source later", func(tr *Trace) { tr.Steps[2].InputSource.SourceStep = ptr(4) }, "step 3: input_source.source_step 4 is not an earlier step"},
		{"input_source itself", func(tr *Trace) { tr.Steps[2].InputSource.SourceStep = ptr(3) }, "input_source.source_step 3 is not an earlier step"},
		{"input_source actor", func(tr *Trace) { tr.Steps[2].InputSource.Actor = "model" }, `input_source.actor "model"`},
		{"input_source field", func(tr *Trace) { tr.Steps[2].InputSource.SourceField = "result" }, `input_source.source_field "result"`},
		{"step ends before it starts", func(tr *Trace) { tr.Steps[1].EndedAt = ptr("2026-03-01T10:00:00.000Z") }, "step 2 ends (2026-03-01T10:00:00.000Z) before it starts"},
		{"steps out of order", func(tr *Trace) { tr.Steps[3].StartedAt = ptr("2026-03-01T10:00:00.020Z") }, "step 4 starts (2026-03-01T10:00:00.020Z) before step 3"},
		{"step before the window", func(tr *Trace) { tr.StartedAt = ptr("2026-03-01T10:00:00.005Z") }, "step 1: time 2026-03-01T10:00:00.000Z is before the trace starts"},
		{"step after the window", func(tr *Trace) { tr.EndedAt = ptr("2026-03-01T10:00:00.150Z") }, "step 6: time 2026-03-01T10:00:00.200Z is after the trace ends"},
		{"window reversed", func(tr *Trace) { tr.EndedAt = ptr("2026-03-01T09:00:00Z") }, "the trace ends (2026-03-01T09:00:00.000Z) before it starts"},
		{"bad timestamp", func(tr *Trace) { tr.Steps[2].StartedAt = ptr("yesterday") }, `step 3: started_at "yesterday" is not an ISO 8601`},
		{"total_steps", func(tr *Trace) { tr.Summary.TotalSteps = 5 }, "summary.total_steps is 5 but the steps give 6"},
		{"total_turns", func(tr *Trace) { tr.Summary.TotalTurns = 1 }, "summary.total_turns is 1 but the steps give 3"},
		{"positive_steps", func(tr *Trace) { tr.Summary.PositiveSteps++ }, "summary.positive_steps is 3 but the steps give 2"},
		{"negative_steps", func(tr *Trace) { tr.Summary.NegativeSteps = 0 }, "summary.negative_steps is 0 but the steps give 1"},
		{"neutral_steps", func(tr *Trace) { tr.Summary.NeutralSteps = 4 }, "summary.neutral_steps is 4 but the steps give 3"},
		{"directive_signals", func(tr *Trace) { tr.Summary.DirectiveSignals = 0 }, "summary.directive_signals is 0 but the steps give 1"},
		{"human feedback", func(tr *Trace) { tr.Summary.HumanFeedback.Corrections = 1 }, "summary.human_feedback.corrections is 1 but the steps give 0"},
		{"human feedback from steps", func(tr *Trace) { tr.Steps[0].FeedbackType = ptr("approval") }, "summary.human_feedback.approvals is 0 but the steps give 1"},
		{"agent confidence", func(tr *Trace) { tr.Summary.AgentConfidence = 101 }, "agent_confidence 101 is outside 0-100"},
		{"duplicate artifact path", func(tr *Trace) { tr.StaticOutput.Artifacts[1].Path = tr.StaticOutput.Artifacts[0].Path }, "is used twice"},
		{"artifact type", func(tr *Trace) { tr.StaticOutput.Artifacts[0].Type = "read" }, `type "read" is not one of`},
		{"artifact sensitivity", func(tr *Trace) { tr.StaticOutput.Artifacts[0].ReleaseSensitivity = "secret" }, `release_sensitivity "secret"`},
		{"artifact related step", func(tr *Trace) { tr.StaticOutput.Artifacts[0].RelatedSteps = []int{7} }, "related_steps 7 is not a step"},
		{"artifact hash form", func(tr *Trace) { tr.StaticOutput.Artifacts[0].Hash = ptr("md5:abc") }, `hash "md5:abc" is not sha256:`},
		{"artifact hash mismatch", func(tr *Trace) { tr.StaticOutput.Artifacts[0].Content = ptr("changed") }, "is not the sha256 of its content"},
		{"release tier", func(tr *Trace) { tr.DatasetSummary.ReleaseTier = "public" }, `dataset_summary.release_tier "public"`},
		{"dataset validation level", func(tr *Trace) { tr.DatasetSummary.ValidationLevel = "none" }, `dataset_summary.validation_level "none"`},
		{"dataset title", func(tr *Trace) { tr.DatasetSummary.Title = " " }, "dataset_summary.title is empty"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tr := validTrace(t)
			tc.mutate(tr)
			err := Validate(tr)
			if err == nil {
				t.Fatal("Validate accepted the broken trace")
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error does not say %q:\n%v", tc.want, err)
			}
			// The same break must be caught in the file form too.
			data, merr := Marshal(tr)
			if merr != nil {
				t.Fatal(merr)
			}
			if err := ValidateJSON(data); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("ValidateJSON: %v, want it to say %q", err, tc.want)
			}
		})
	}
}

// TestValidateJSONShape: what only the encoding can show — a missing step
// field or one of the wrong JSON type — is caught and named.
func TestValidateJSONShape(t *testing.T) {
	cases := []struct {
		name   string
		mutate func(m map[string]any)
		want   string
	}{
		{"missing retry_of", func(m map[string]any) { delete(step(m, 2), "retry_of") }, "steps[2]: field retry_of is missing (all 28 step fields must be present)"},
		{"missing input_source", func(m map[string]any) { delete(step(m, 0), "input_source") }, "steps[0]: field input_source is missing"},
		{"eval as string", func(m map[string]any) { step(m, 1)["eval"] = "1" }, "steps[1]: field eval is string, want int"},
		{"eval fractional", func(m map[string]any) { step(m, 1)["eval"] = 0.5 }, "steps[1]: field eval is number, want int"},
		{"caused_by strings", func(m map[string]any) { step(m, 1)["caused_by"] = []any{"1"} }, "steps[1]: field caused_by is array, want ints or null"},
		{"caused_by scalar", func(m map[string]any) { step(m, 1)["caused_by"] = 1 }, "field caused_by is int, want ints or null"},
		{"success as string", func(m map[string]any) { step(m, 1)["success"] = "yes" }, "field success is string, want bool or null"},
		{"step as string", func(m map[string]any) { step(m, 1)["step"] = "2" }, "field step is string, want int"},
		{"tool as object", func(m map[string]any) { step(m, 2)["tool"] = map[string]any{"name": "x"} }, "field tool is object, want string or null"},
		{"input_source as string", func(m map[string]any) { step(m, 2)["input_source"] = "step 2" }, "field input_source is string, want object or null"},
		{"retry_of as list", func(m map[string]any) { step(m, 4)["retry_of"] = []any{3} }, "field retry_of is ints, want int or null"},
		{"step not an object", func(m map[string]any) { m["steps"].([]any)[1] = "step" }, "steps[1] is not an object"},
		{"no summary", func(m map[string]any) { delete(m, "summary") }, "field summary is missing"},
		{"no task", func(m map[string]any) { delete(m, "task") }, "field task is missing"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			data, err := Marshal(validTrace(t))
			if err != nil {
				t.Fatal(err)
			}
			m := decode(t, data)
			tc.mutate(m)
			data, err = json.Marshal(m)
			if err != nil {
				t.Fatal(err)
			}
			err = ValidateJSON(data)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("ValidateJSON: %v\nwant it to say %q", err, tc.want)
			}
		})
	}
	if err := ValidateJSON([]byte(`[1,2]`)); err == nil || !strings.Contains(err.Error(), "not a JSON object") {
		t.Errorf("an array: %v", err)
	}
}

func step(m map[string]any, i int) map[string]any { return m["steps"].([]any)[i].(map[string]any) }

// TestSpecExample: the spec's own example trace passes Validate and the
// upstream schema, so Validate is no stricter than the spec.
func TestSpecExample(t *testing.T) {
	data, err := os.ReadFile("testdata/spec_example_trace.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := ValidateJSON(data); err != nil {
		t.Errorf("ValidateJSON rejects the spec's example: %v", err)
	}
	if err := schemaCheck(t, data); err != nil {
		t.Errorf("upstream schema rejects the spec's example: %v", err)
	}
}

// TestUpstreamSchemaBites: the schema check in these tests is not vacuous.
func TestUpstreamSchemaBites(t *testing.T) {
	data, err := Marshal(validTrace(t))
	if err != nil {
		t.Fatal(err)
	}
	for name, mutate := range map[string]func(m map[string]any){
		"no task":          func(m map[string]any) { delete(m, "task") },
		"no trace id":      func(m map[string]any) { delete(m, "trace_id") },
		"actor is number":  func(m map[string]any) { step(m, 1)["actor"] = 5 },
		"steps not array":  func(m map[string]any) { m["steps"] = "none" },
		"trace_mode wrong": func(m map[string]any) { m["trace_mode"] = "sometimes" },
	} {
		m := decode(t, data)
		mutate(m)
		b, _ := json.Marshal(m)
		if schemaCheck(t, b) == nil {
			t.Errorf("%s: the upstream schema accepted it", name)
		}
	}
}

// TestValidateNil does not panic.
func TestValidateNil(t *testing.T) {
	if err := Validate(nil); err == nil {
		t.Error("nil trace accepted")
	}
}
