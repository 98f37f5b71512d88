// Package toolparse finds tool calls: native ones the provider returned, and
// commands a model wrote in text when it has no native tools.
package toolparse

import "encoding/json"

// Call is one detected tool invocation.
type Call struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
	// Source is "native" or "text".
	Source string `json:"source"`
	// Match is the text that was matched (text detections only).
	Match string `json:"match,omitempty"`
	ID    string `json:"id,omitempty"`
}

// Detect returns the tool calls to record for a response: the native calls
// first, then text detections. TODO(issue 3): implement text detection.
func Detect(native []Call, text string) []Call {
	return native
}

// Names returns the calls' names in order.
func Names(calls []Call) []string {
	var out []string
	for _, c := range calls {
		out = append(out, c.Name)
	}
	return out
}

// UseSuccess reports whether at least one expected tool was called; nil
// when nothing is expected.
func UseSuccess(calls []Call, expected []string) *bool {
	if len(expected) == 0 {
		return nil
	}
	ok := false
	for _, c := range calls {
		for _, e := range expected {
			ok = ok || c.Name == e
		}
	}
	return &ok
}
