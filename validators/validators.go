// Package validators implements the validator types of the results schema.
// Checks are pure functions of (spec, response).
package validators

import (
	"bench/toolparse"
)

// Spec is one validator as written in a prompt file. It is validated when it
// is decoded, so a bad spec is a config error with a line number, never a
// runtime failure.
type Spec struct {
	Type          string         `yaml:"type" json:"type"`
	Value         any            `yaml:"value" json:"value,omitempty"`
	Values        []string       `yaml:"values" json:"values,omitempty"`
	Pattern       string         `yaml:"pattern" json:"pattern,omitempty"`
	RequiredKeys  []string       `yaml:"required_keys" json:"required_keys,omitempty"`
	KeyRules      map[string]any `yaml:"key_rules" json:"key_rules,omitempty"`
	ExpectedTools []string       `yaml:"expected_tools" json:"expected_tools,omitempty"`
	Line          int            `yaml:"-" json:"-"`
}

// Input is what a check looks at: the answer text and the tool calls found.
type Input struct {
	Text      string
	ToolCalls []toolparse.Call
}

// Outcome is a check's verdict. Pass is nil when the check does not judge
// (noop).
type Outcome struct {
	Pass      *bool
	Violation string
	Parsed    any
}

// CheckAll runs every spec; all must pass. TODO(issue 3): implement.
func CheckAll(specs []Spec, in Input) Outcome {
	return Outcome{}
}
