package scripted

import (
	"encoding/json"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// Arguments are validated against the declared parameters by the JSON
// Schema validator: each case's verdict and the start of its reason.
func TestCheckArgs(t *testing.T) {
	var tool Tool
	src := `name: convert
parameters:
  type: object
  properties:
    value: {type: number}
    to: {type: string, enum: [C, F]}
    tags: {type: array, items: {type: string}}
  required: [value, to]
  additionalProperties: false
`
	if err := yaml.Unmarshal([]byte(src), &tool); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		args string
		err  string // "" = valid
	}{
		{`{"value": 18, "to": "F"}`, ""},
		{`{"value": 18.5, "to": "C", "tags": ["a"]}`, ""},
		{`{"value": "18", "to": "F"}`, "at '/value': got string, want number"},
		{`{"value": 18}`, "missing property 'to'"},
		{`{"value": 18, "to": "K"}`, "at '/to': value must be one of 'C', 'F'"},
		{`{"value": 18, "to": "F", "unit": "x"}`, "additional properties 'unit' not allowed"},
		{`{"value": 18, "to": "F", "tags": [1]}`, "at '/tags/0': got number, want string"},
		{`"value=18 to=F"`, "got string, want object"}, // text that did not parse, as recorded
		{``, "missing properties 'value', 'to'"},       // no arguments: {}
	}
	for _, c := range cases {
		checked, err := tool.CheckArgs(json.RawMessage(c.args))
		if !checked {
			t.Errorf("%s: not checked", c.args)
		}
		switch {
		case c.err == "" && err != nil:
			t.Errorf("%s: %v", c.args, err)
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%s: err = %v, want %q", c.args, err, c.err)
		case err != nil && strings.Contains(err.Error(), "\n"):
			t.Errorf("%s: the reason is not one line: %q", c.args, err)
		}
	}
	// A tool built in Go compiles on first use; one without parameters is
	// never checked.
	built := Tool{Name: "b", Parameters: map[string]any{"type": "object", "required": []any{"x"}}}
	if checked, err := built.CheckArgs(json.RawMessage(`{}`)); !checked || err == nil {
		t.Errorf("built tool: %v %v", checked, err)
	}
	if checked, err := (&Tool{Name: "n"}).CheckArgs(json.RawMessage(`{"a":1}`)); checked || err != nil {
		t.Errorf("no parameters: %v %v", checked, err)
	}
}
