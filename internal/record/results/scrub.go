package results

import (
	"encoding/json"

	"bench/internal/record/secrets"
)

// Scrub passes every string the record holds through c: the one scrub of
// a record, on every path one takes: after the runner has put it together
// and before anything writes, prints or exports it; in bench rescore
// before its checks read the answer and after they ran; in every read of
// results.jsonl (Scan, ReadFile, a Reader given a Scope), so bench report,
// merge and compare never copy a secret a run directory holds into what
// they write. An answer the scrub changes is marked (raw_output_redacted). Only the cell's
// coordinates are left alone (record_type, run_id, provider,
// provider_type, model, thinking_level, prompt_id, stage): they are bench's own
// config, written as they are to config.json, and what resume, compare and
// merge match cells by. A field added to Record, ToolCall, TimelineEvent,
// Turn or TurnCall must be added here; TestScrubCoversRecord walks the
// types by reflection and fails until it is.
//
// The walk is written out rather than reflected: it runs once per cell,
// and a string that holds nothing to clean costs one scan and no copy.
func (r *Record) Scrub(c secrets.Set) {
	if r == nil || c.Empty() {
		return
	}
	scrubAll(c, &r.PromptName, &r.AvailabilityStatus)
	textPtr(c, r.FailureType)
	textPtr(c, r.Violation)
	if out := c.Text(r.RawOutput); out != r.RawOutput {
		r.RawOutput, r.RawOutputRedacted = out, true
	}
	r.ParsedOutput = jsonValue(c, r.ParsedOutput)
	texts(c, r.ToolCalls)
	textPtr(c, r.ErrorMessage)
	scrubAll(c, &r.Reasoning, &r.FinishReason, &r.CostSource, &r.CostMissing)
	texts(c, r.ExpectedTools)
	r.Category = c.Text(r.Category)
	texts(c, r.UnsafeActions)
	scrubAll(c, &r.StageMode, &r.Conversation)
	for i := range r.ToolCallDetails {
		tc := &r.ToolCallDetails[i]
		tc.Name = c.Text(tc.Name)
		tc.Arguments = jsonValue(c, tc.Arguments)
		scrubAll(c, &tc.Source, &tc.Match, &tc.ID, &tc.SchemaError)
	}
	if r.ProviderMetrics != nil {
		r.ProviderMetrics = c.Value(r.ProviderMetrics).(map[string]any)
	}
	for i := range r.Timeline {
		e := &r.Timeline[i]
		scrubAll(c, &e.Event, &e.Detail)
	}
	for i := range r.TurnDetails {
		t := &r.TurnDetails[i]
		scrubAll(c, &t.Text, &t.Reasoning, &t.Error)
		for j := range t.Calls {
			tc := &t.Calls[j]
			scrubAll(c, &tc.ID, &tc.Name)
			tc.Arguments = jsonValue(c, tc.Arguments)
			scrubAll(c, &tc.Result, &tc.ResultHash, &tc.SchemaError)
		}
	}
	if j := r.Judge; j != nil {
		scrubAll(c, &j.Verdict, &j.Reason, &j.Provider, &j.Model, &j.Spec, &j.CostMissing, &j.TokensMissing)
		for i := range j.Samples {
			s := &j.Samples[i]
			scrubAll(c, &s.Verdict, &s.Reason, &s.Error, &s.Reply)
		}
	}
	if in := r.Injection; in != nil {
		scrubAll(c, &in.Role, &in.Twin, &in.Style, &in.Goal, &in.Carrier, &in.Target, &in.Text)
	}
	for i := range r.CheckErrors {
		e := &r.CheckErrors[i]
		scrubAll(c, &e.Type, &e.Check, &e.Message)
	}
}

func textPtr(c secrets.Set, s *string) {
	if s != nil {
		*s = c.Text(*s)
	}
}

func texts(c secrets.Set, list []string) {
	for i, s := range list {
		list[i] = c.Text(s)
	}
}

func jsonValue(c secrets.Set, v json.RawMessage) json.RawMessage {
	if len(v) == 0 {
		return v
	}
	return c.JSON(v)
}

// scrubAll scrubs each of the strings in place.
func scrubAll(c secrets.Set, ps ...*string) {
	for _, p := range ps {
		*p = c.Text(*p)
	}
}
