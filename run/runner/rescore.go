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
//
// The record is scrubbed with secrets first (what it holds was written by
// some bench, perhaps one that let a secret through) and last (Bound), as
// the run scrubs the records it writes.
func Rescore(rec *results.Record, p *prompts.Prompt, cfg *config.Config, secrets providers.Secrets) {
	rec.Scrub(secrets)
	rec.ObjectivePass, rec.Violation, rec.ParsedOutput = nil, nil, nil
	rec.ToolCalls, rec.ToolCallCount, rec.ToolUseSuccess = []string{}, 0, nil
	rec.CheckErrors, rec.ExternalChecks = nil, 0
	rec.SchemaCheckedCalls, rec.SchemaInvalidCalls, rec.UnsafeActions = 0, 0, nil
	rec.Injection, rec.InjectionFollowed, rec.Utility = nil, nil, nil
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
	Bound(rec, cfg, secrets)
}

// Bound is the last step of every record the run writes, and of one
// whose verdicts were set again (bench rescore, after its checks): the
// one scrub every field passes through (results.Record.Scrub with the
// run's secrets for the record's entry: the finish reason, the tool
// calls' names, ids and arguments decoded, the metrics, the turns, what
// the checks brought back...), then the bounds (parsed_output at most
// max_output_bytes, the line at most MaxRecordBytes). Fields cleaned
// earlier (the answer before its cut, error messages) are scanned again,
// which finds nothing and copies nothing.
func Bound(rec *results.Record, cfg *config.Config, secrets providers.Secrets) {
	rec.Scrub(secrets)
	// parsed_output comes from raw_output, so about its size; one that
	// re-encoding grew past max_output_bytes is left out, not cut.
	if len(rec.ParsedOutput) > cfg.Run.MaxOutputBytes {
		rec.ParsedOutput = nil
	}
	fit(rec, MaxRecordBytes)
}
