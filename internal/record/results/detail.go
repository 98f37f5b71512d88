package results

// Detail says which of a record's fields a read decodes. The others are
// read past (their JSON checked, not decoded into the Record): a reader
// that does not use them is spared most of the cost of a line, and the
// record is the same type whatever the detail.
type Detail uint8

const (
	// Full decodes every field.
	Full Detail = iota
	// Aggregates leaves out the texts and details that aggregates do not
	// use: raw_output, reasoning, parsed_output, tool_call_details and
	// provider_metrics (how bench report and merge read).
	Aggregates
	// Answers leaves out what a comparison of answers does not use:
	// timeline, reasoning, parsed_output and provider_metrics. The answer,
	// the tool calls and the turns are decoded (how bench compare reads:
	// a cell's agent snapshot is built from them).
	Answers
	// Reports leaves out only parsed_output and provider_metrics, which no
	// report shows: how bench report reads, once, for every page
	// (answers.html's texts and calls included).
	Reports
	nDetails
)

// skipped lists, per Detail, the JSON names it reads past. Each has a
// target type below that encoding/json decodes into to the same effect.
var skipped = [nDetails]map[string]bool{
	Aggregates: {"raw_output": true, "reasoning": true, "parsed_output": true, "tool_call_details": true, "provider_metrics": true},
	Answers:    {"timeline": true, "reasoning": true, "parsed_output": true, "provider_metrics": true},
	Reports:    {"parsed_output": true, "provider_metrics": true},
}

// skip is a JSON value that is read past and dropped.
type skip struct{}

// UnmarshalJSON drops the value.
func (*skip) UnmarshalJSON([]byte) error { return nil }

// The targets of the slow path: the outer fields shadow the embedded
// Record's fields of the same JSON name, so encoding/json reads them past.
type (
	aggregatesOnly struct {
		*Record
		RawOutput       skip `json:"raw_output"`
		Reasoning       skip `json:"reasoning"`
		ParsedOutput    skip `json:"parsed_output"`
		ToolCallDetails skip `json:"tool_call_details"`
		ProviderMetrics skip `json:"provider_metrics"`
	}
	answersOnly struct {
		*Record
		Timeline        skip `json:"timeline"`
		Reasoning       skip `json:"reasoning"`
		ParsedOutput    skip `json:"parsed_output"`
		ProviderMetrics skip `json:"provider_metrics"`
	}
	reportsOnly struct {
		*Record
		ParsedOutput    skip `json:"parsed_output"`
		ProviderMetrics skip `json:"provider_metrics"`
	}
)

// target is what encoding/json decodes a line into for detail d.
func target(d Detail, rec *Record) any {
	switch d {
	case Aggregates:
		return &aggregatesOnly{Record: rec}
	case Answers:
		return &answersOnly{Record: rec}
	case Reports:
		return &reportsOnly{Record: rec}
	}
	return rec
}
