package runner

import (
	"bench/config"
	"bench/internal/record/results"
	"bench/prompts"
	"bench/providers"
	"bench/run/plan"
)

// Rescore judges a recorded cell again with p's checks and today's tool
// detection, exactly as the run scores a cell it has just run (score and
// scoreAgent), from what the record holds: the answer as kept, the native
// tool calls, an agentic cell's turns and calls. Its verdict fields
// (objective_pass, violation, parsed_output, tool_calls, tool_call_count,
// tool_use_success, expected_tools, tool_call_details, turn_details'
// wrong_args) are set afresh; nothing the run measured changes. The
// external checks are not run here (package grader, after): the
// record's judge object is left for Grade, which replaces it. A cell
// that did not succeed is not judged, as in the run.
//
// An agentic cell's calls are the ones its loop answered, kept as
// recorded (detecting them again could find calls the model never got an
// answer to); a single reply's commands in text are detected again.
func Rescore(rec *results.Record, p *prompts.Prompt, cfg *config.Config) {
	rec.ObjectivePass, rec.Violation, rec.ParsedOutput = nil, nil, nil
	rec.ToolCalls, rec.ToolCallCount, rec.ToolUseSuccess = []string{}, 0, nil
	rec.CheckErrors, rec.ExternalChecks = nil, 0
	rec.SchemaCheckedCalls, rec.SchemaInvalidCalls, rec.UnsafeActions = 0, 0, nil
	if p.Agentic() {
		rec.ExpectedTools = agentExpectedTools(p)
		l := &agentLoop{calls: rec.ToolCallDetails, final: rec.RawOutput, end: loopAnswered}
		if n := len(rec.TurnDetails); n > 0 && rec.TurnDetails[n-1].Error == "" && len(rec.TurnDetails[n-1].Calls) > 0 {
			l.end = loopMaxTurns
		}
		scoreAgent(rec, p, l)
	} else {
		rec.ExpectedTools = p.ExpectedTools()
		var native []results.ToolCall
		for _, tc := range rec.ToolCallDetails {
			if tc.Source == results.SourceNative {
				native = append(native, tc)
			}
		}
		score(rec, plan.Cell{Prompt: p}, &providers.Response{Text: rec.RawOutput, ToolCalls: native})
	}
	Bound(rec, cfg)
}

// Bound is the last step of a record whose verdicts were set again: the
// bounds every record the run writes keeps (parsed_output at most
// max_output_bytes, the line at most MaxRecordBytes).
func Bound(rec *results.Record, cfg *config.Config) {
	if len(rec.ParsedOutput) > cfg.Run.MaxOutputBytes {
		rec.ParsedOutput = nil
	}
	fit(rec, MaxRecordBytes)
}
