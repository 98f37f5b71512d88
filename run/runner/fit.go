package runner

import (
	"encoding/json"

	"bench/internal/record/results"
)

// Bounds of what one record keeps, whatever a server or a CLI sent.
const (
	// MaxRecordBytes is the most a results.jsonl line takes. The providers
	// cap the answer, the reasoning and the tool calls at max_output_bytes
	// while streaming, so a record comes near this only with a large
	// max_output_bytes full of characters JSON escapes; then fit sheds the
	// bulkiest derived fields until it fits (see fit). It is a quarter of
	// what results.Reader reads (results.MaxLineBytes), so every line bench
	// writes is read back.
	MaxRecordBytes = 16 << 20
	// maxShortField bounds a tool call's name and id and a string metric.
	maxShortField = 1 << 10
	// maxErrorMessage bounds error_message.
	maxErrorMessage = 2 << 10
	// maxFailureType bounds failure_type (a provider may take it from what
	// a server said).
	maxFailureType = 64
)

// fit makes the record's JSON line at most limit bytes. A cheap bound on
// its size is checked first (JSON escaping at most sextuples a byte), so a
// record of ordinary size is never encoded twice. Past the limit, fields
// are shed in this order, each only while the line is still too long:
// the matched text of detected tool calls, parsed_output, the text and
// results of agentic turns, reasoning, then raw_output is halved until it
// fits. What was shed is listed in provider_metrics.record_shed.
func fit(rec *results.Record, limit int) {
	if estimate(rec) <= limit {
		return
	}
	var shed []string
	for _, s := range shedders {
		if size(rec) <= limit {
			break
		}
		if s.shed(rec) {
			shed = append(shed, s.name)
		}
	}
	for size(rec) > limit && rec.RawOutput != "" {
		rec.RawOutput, _ = truncate(rec.RawOutput, len(rec.RawOutput)/2)
		rec.RawOutputTruncated = true
		if len(shed) == 0 || shed[len(shed)-1] != "raw_output" {
			shed = append(shed, "raw_output")
		}
	}
	if len(shed) > 0 {
		if rec.ProviderMetrics == nil {
			rec.ProviderMetrics = map[string]any{}
		}
		rec.ProviderMetrics["record_shed"] = shed
	}
}

var shedders = []struct {
	name string
	shed func(*results.Record) bool
}{
	{"tool_call_details.match", func(r *results.Record) bool {
		any := false
		for i := range r.ToolCallDetails {
			if r.ToolCallDetails[i].Match != "" {
				r.ToolCallDetails[i].Match, any = "", true
			}
		}
		return any
	}},
	{"parsed_output", func(r *results.Record) bool {
		had := r.ParsedOutput != nil
		r.ParsedOutput = nil
		return had
	}},
	{"turn_details.text", func(r *results.Record) bool {
		any := false
		for i := range r.TurnDetails {
			t := &r.TurnDetails[i]
			if t.Text != "" {
				t.Text, any = "", true
			}
			for j := range t.Calls {
				if t.Calls[j].Result != "" {
					t.Calls[j].Result, any = "", true
				}
			}
		}
		return any
	}},
	{"reasoning", func(r *results.Record) bool {
		had := r.Reasoning != ""
		r.Reasoning = ""
		return had
	}},
}

// size is the record's encoded length (limit+1 if it does not encode).
func size(rec *results.Record) int {
	b, err := json.Marshal(rec)
	if err != nil {
		return MaxRecordBytes + 1
	}
	return len(b) + 1
}

// estimate is an upper bound of the record's encoded length: every string
// a server controls at six bytes a byte (\u00XX), raw JSON as it is, and a
// generous allowance for the fixed fields.
func estimate(rec *results.Record) int {
	n := len(rec.RawOutput) + len(rec.Reasoning) + len(str(rec.ErrorMessage)) + len(str(rec.Violation)) +
		len(str(rec.FailureType)) + len(rec.FinishReason)
	raw := len(rec.ParsedOutput)
	for _, t := range rec.ToolCalls {
		n += len(t)
	}
	for _, t := range rec.ExpectedTools {
		n += len(t)
	}
	for _, c := range rec.ToolCallDetails {
		n += len(c.Name) + len(c.Match) + len(c.ID) + len(c.Source)
		raw += len(c.Arguments) + 64
	}
	for k, v := range rec.ProviderMetrics {
		n += len(k)
		if s, ok := v.(string); ok {
			n += len(s)
		} else {
			raw += 64 // numbers, booleans, short lists
		}
	}
	for _, e := range rec.Timeline {
		n += len(e.Event) + len(e.Detail)
		raw += 96
	}
	for _, t := range rec.TurnDetails {
		n += len(t.Text) + len(t.Error)
		raw += 128
		for _, c := range t.Calls {
			n += len(c.ID) + len(c.Name) + len(c.Result) + len(c.ResultHash)
			raw += len(c.Arguments) + 128
		}
	}
	return 6*n + raw + 64<<10
}

func str(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
