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
	r.PromptName = c.Text(r.PromptName)
	r.AvailabilityStatus = c.Text(r.AvailabilityStatus)
	textPtr(c, r.FailureType)
	textPtr(c, r.Violation)
	if out := c.Text(r.RawOutput); out != r.RawOutput {
		r.RawOutput, r.RawOutputRedacted = out, true
	}
	r.ParsedOutput = jsonValue(c, r.ParsedOutput)
	texts(c, r.ToolCalls)
	textPtr(c, r.ErrorMessage)
	r.Reasoning = c.Text(r.Reasoning)
	r.FinishReason = c.Text(r.FinishReason)
	r.CostSource = c.Text(r.CostSource)
	r.CostMissing = c.Text(r.CostMissing)
	texts(c, r.ExpectedTools)
	r.Category = c.Text(r.Category)
	texts(c, r.UnsafeActions)
	r.StageMode = c.Text(r.StageMode)
	r.Conversation = c.Text(r.Conversation)
	for i := range r.ToolCallDetails {
		tc := &r.ToolCallDetails[i]
		tc.Name = c.Text(tc.Name)
		tc.Arguments = jsonValue(c, tc.Arguments)
		tc.Source = c.Text(tc.Source)
		tc.Match = c.Text(tc.Match)
		tc.ID = c.Text(tc.ID)
		tc.SchemaError = c.Text(tc.SchemaError)
	}
	if r.ProviderMetrics != nil {
		r.ProviderMetrics = c.Value(r.ProviderMetrics).(map[string]any)
	}
	for i := range r.Timeline {
		e := &r.Timeline[i]
		e.Event = c.Text(e.Event)
		e.Detail = c.Text(e.Detail)
	}
	for i := range r.TurnDetails {
		t := &r.TurnDetails[i]
		t.Text = c.Text(t.Text)
		t.Reasoning = c.Text(t.Reasoning)
		t.Error = c.Text(t.Error)
		for j := range t.Calls {
			tc := &t.Calls[j]
			tc.ID = c.Text(tc.ID)
			tc.Name = c.Text(tc.Name)
			tc.Arguments = jsonValue(c, tc.Arguments)
			tc.Result = c.Text(tc.Result)
			tc.ResultHash = c.Text(tc.ResultHash)
			tc.SchemaError = c.Text(tc.SchemaError)
		}
	}
	if j := r.Judge; j != nil {
		j.Verdict = c.Text(j.Verdict)
		j.Reason = c.Text(j.Reason)
		j.Provider = c.Text(j.Provider)
		j.Model = c.Text(j.Model)
		j.Spec = c.Text(j.Spec)
		j.CostMissing = c.Text(j.CostMissing)
		j.TokensMissing = c.Text(j.TokensMissing)
		for i := range j.Samples {
			s := &j.Samples[i]
			s.Verdict = c.Text(s.Verdict)
			s.Reason = c.Text(s.Reason)
			s.Error = c.Text(s.Error)
			s.Reply = c.Text(s.Reply)
		}
	}
	if in := r.Injection; in != nil {
		in.Role = c.Text(in.Role)
		in.Twin = c.Text(in.Twin)
		in.Style = c.Text(in.Style)
		in.Goal = c.Text(in.Goal)
		in.Carrier = c.Text(in.Carrier)
		in.Target = c.Text(in.Target)
		in.Text = c.Text(in.Text)
	}
	for i := range r.CheckErrors {
		e := &r.CheckErrors[i]
		e.Type = c.Text(e.Type)
		e.Check = c.Text(e.Check)
		e.Message = c.Text(e.Message)
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
