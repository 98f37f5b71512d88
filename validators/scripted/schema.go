package scripted

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Arguments are checked against a tool's declared parameters with a
// maintained JSON Schema validator (santhosh-tekuri/jsonschema, draft
// 2020-12 unless the schema says otherwise) rather than bench's own rules:
// the model was offered that schema, so that schema is what its call must
// meet. Formats are annotations, as the draft has them by default, and
// nothing is ever fetched: a $ref reaches only the schema itself.

// schemaURL names a tool's schema inside its compiler (each has its own).
const schemaURL = "urn:bench:tool-parameters"

// CompileSchema compiles the tool's parameters, so CheckArgs does not
// compile them on every call, and says why they are not a valid JSON
// Schema. A tool without parameters has nothing to compile.
func (t *Tool) CompileSchema() error {
	t.schema = nil
	if t.Parameters == nil {
		return nil
	}
	s, err := compileSchema(t.Parameters)
	if err != nil {
		return err
	}
	t.schema = s
	return nil
}

func compileSchema(params map[string]any) (*jsonschema.Schema, error) {
	raw, err := json.Marshal(params)
	if err != nil {
		return nil, fmt.Errorf("not a JSON Schema: %w", err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("not a JSON Schema: %w", err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.UseLoader(jsonschema.SchemeURLLoader{}) // no file or network access
	if err := c.AddResource(schemaURL, doc); err != nil {
		return nil, fmt.Errorf("not a JSON Schema: %s", oneLine(err))
	}
	s, err := c.Compile(schemaURL)
	if err != nil {
		return nil, fmt.Errorf("not a valid JSON Schema: %s", oneLine(err))
	}
	return s, nil
}

// CheckArgs validates a call's arguments (as recorded: a JSON value, a JSON
// string when the model's text did not parse) against the tool's
// parameters. checked is false when the tool declares none; err says why
// the arguments do not validate, on one line.
func (t *Tool) CheckArgs(args json.RawMessage) (checked bool, err error) {
	if t.Parameters == nil {
		return false, nil
	}
	s := t.schema
	if s == nil {
		if s, err = compileSchema(t.Parameters); err != nil {
			return true, err
		}
	}
	if len(bytes.TrimSpace(args)) == 0 {
		args = json.RawMessage(`{}`)
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(args))
	if err != nil {
		return true, fmt.Errorf("arguments are not JSON: %v", err)
	}
	if err := s.Validate(inst); err != nil {
		return true, fmt.Errorf("%s", oneLine(err))
	}
	return true, nil
}

// maxSchemaError bounds a schema error's text in a record.
const maxSchemaError = 300

// oneLine turns the validator's indented error tree into one line: the
// leaf reasons ("at '/unit': value must be one of 'MB', 'GB'"), joined.
func oneLine(err error) string {
	lines := strings.Split(err.Error(), "\n")
	var out []string
	for i, l := range lines {
		l = strings.TrimSpace(l)
		l = strings.TrimPrefix(l, "- ")
		if i == 0 && len(lines) > 1 && strings.HasPrefix(l, "jsonschema") {
			continue // "jsonschema validation failed with '...'"
		}
		if l != "" {
			out = append(out, l)
		}
	}
	s := strings.Join(out, "; ")
	if len(s) > maxSchemaError {
		cut := maxSchemaError
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	return s
}
