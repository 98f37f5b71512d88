package validators_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"bench/internal/yamlerr"
	"bench/prompts"
	"bench/validators"
)

// The built-in suite must load through the strict decoder, with typed rules.
func TestBuiltinSuiteLoads(t *testing.T) {
	ps, err := prompts.Builtin()
	if err != nil {
		t.Fatalf("builtin suite: %v", err)
	}
	types := map[string]bool{}
	byID := map[string]prompts.Prompt{}
	for _, p := range ps {
		byID[p.ID] = p
		for _, c := range p.Checks() {
			types[c.Type] = true
			if c.Line == 0 {
				t.Errorf("%s: spec line not set", p.ID)
			}
		}
	}
	for _, typ := range validators.Types() {
		if !types[typ] {
			t.Errorf("built-in suite does not use %s", typ)
		}
	}
	p7 := byID["P7"]
	rules := p7.Validator.KeyRules
	if r := rules["moons"]; r.Type != "integer" || len(r.Enum) != 1 {
		t.Errorf("P7 moons rule = %+v", r)
	}
	if r := rules["name"]; r.Type != "" || len(r.Enum) != 1 || r.Enum[0] != "Mars" {
		t.Errorf("P7 name rule = %+v", r)
	}
	if r := byID["P8"].Validator.KeyRules["items"]; r.Type != "array" || !r.NonEmpty {
		t.Errorf("P8 items rule = %+v", r)
	}
	p14 := byID["P14"]
	if n := len(p14.Checks()); n != 2 {
		t.Errorf("P14 has %d checks, want 2", n)
	}
	// config.json shows specs as JSON: they must encode readably.
	b, err := json.Marshal(p7.Validator)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"type":"json_keys","required_keys":["name","moons","has_rings"],"key_rules":{"has_rings":{"type":"boolean","enum":[false]},"moons":{"type":"integer","enum":[2]},"name":{"enum":["Mars"]}}}`
	if string(b) != want {
		t.Errorf("P7 json = %s\nwant %s", b, want)
	}
}

// The built-in suite's checks accept a model answer that is right and reject
// one that is wrong.
func TestBuiltinSuiteAnswers(t *testing.T) {
	ps, err := prompts.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	good := map[string]string{
		"P0":  "OK",
		"P1":  "Canberra",
		"P2":  "391",
		"P3":  "2021-07-04\n",
		"P4":  "A load balancer spreads incoming requests across several servers so no single one is overloaded.",
		"P5":  "Sunlight scatters off air molecules, and blue light scatters most. So we see blue everywhere.",
		"P6":  "- Catch regressions\n- Document behaviour\n- Enable refactoring\n- Faster reviews\n- Confidence to ship",
		"P7":  "```json\n{\"name\": \"Mars\", \"moons\": 2, \"has_rings\": false}\n```",
		"P8":  `{"customer": "Dana", "items": ["lamp", "rug"], "total": 149.50}`,
		"P14": "2h 35m",
	}
	bad := map[string]string{
		"P0":  "OK.",
		"P1":  "Sydney",
		"P2":  "17 * 23 = 391",
		"P3":  "04/07/2021",
		"P4":  strings.Repeat("word ", 26),
		"P5":  "One. Two. Three.",
		"P6":  "- a\n- b\n- c",
		"P7":  `{"name": "Mars", "moons": "two", "has_rings": false}`,
		"P8":  `{"customer": "Dana", "items": [], "total": 149.5}`,
		"P14": "The journey takes 2h 35m",
	}
	for _, p := range ps {
		g, ok := good[p.ID]
		if !ok {
			continue
		}
		if o := validators.CheckAll(p.Checks(), validators.Input{Text: g}); o.Pass == nil || !*o.Pass {
			t.Errorf("%s good answer failed: %q", p.ID, o.Violation)
		}
		if o := validators.CheckAll(p.Checks(), validators.Input{Text: bad[p.ID]}); o.Pass == nil || *o.Pass {
			t.Errorf("%s bad answer passed", p.ID)
		}
	}
}

func TestSpecErrors(t *testing.T) {
	cases := []struct {
		yaml  string
		line  int
		field string
		msg   string
	}{
		{"[exact]", 1, "validator", "want a mapping"},
		{"{value: OK}", 1, "validator.type", "missing; one of: bfcl_ast, command, exact, "},
		{"type: exakt", 1, "validator.type", `unknown validator type "exakt"`},
		{"type: [exact]", 1, "validator.type", "want a string, got a list"},
		{"type: exact", 1, "validator.value", "missing (required by type exact)"},
		{"type: exact\nvalue: 42", 2, "validator.value", `want a string, got number 42 (quote it: "42")`},
		{"type: exact\nvalue: \"\"", 2, "validator.value", "empty"},
		{"type: exact\nvalue: \"OK \"", 2, "validator.value", "surrounding whitespace"},
		{"type: exact\nvalue: OK\nvalues: [OK]", 3, "validator.values", "unknown key for type exact (allowed: value)"},
		{"type: noop\nvalue: 1", 2, "validator.value", "unknown key for type noop"},
		{"type: one_of\nvalues: OK", 2, "validator.values", "want a non-empty list of strings"},
		{"type: one_of\nvalues: []", 2, "validator.values", "want a non-empty list of strings"},
		{"type: one_of\nvalues:\n  - a\n  - 3", 4, "validator.values[1]", "want a string"},
		{"type: regex_fullmatch\npattern: \"(\"", 2, "validator.pattern", "bad regex"},
		{"type: regex_fullmatch\npattern: \"(?<=a)b\"", 2, "validator.pattern", "bad regex"},
		{"type: max_words\nvalue: \"25\"", 2, "validator.value", "want a positive integer"},
		{"type: max_words\nvalue: 0", 2, "validator.value", "want a positive integer"},
		{"type: max_sentences\nvalue: 2.5", 2, "validator.value", "want a positive integer"},
		{"type: exact_bullets\nvalue: -5", 2, "validator.value", "want a positive integer"},
		{"type: json_keys\nkey_rules: {a: string}", 1, "validator.required_keys", "missing"},
		{"type: json_keys\nrequired_keys: a", 2, "validator.required_keys", "want a non-empty list"},
		{"type: json_keys\nrequired_keys: [a]\nkey_rules: [a]", 3, "validator.key_rules", "want a mapping"},
		{"type: json_keys\nrequired_keys: [a]\nkey_rules:\n  a: integr", 4, "validator.key_rules.a.type", `unknown type "integr"`},
		{"type: json_keys\nrequired_keys: [a]\nkey_rules:\n  a: {type: integer, enum: [\"2\"]}", 4, "validator.key_rules.a.enum", `enum value "2" is not of type integer`},
		{"type: json_keys\nrequired_keys: [a]\nkey_rules:\n  a: {type: integer, enum: [2.5]}", 4, "validator.key_rules.a.enum", "not of type integer"},
		{"type: json_keys\nrequired_keys: [a]\nkey_rules:\n  a: {type: number, non_empty: true}", 4, "validator.key_rules.a.non_empty", "applies to string, array or object"},
		{"type: json_keys\nrequired_keys: [a]\nkey_rules:\n  a: {non_empty: yes}", 4, "validator.key_rules.a.non_empty", "want true or false"},
		{"type: json_keys\nrequired_keys: [a]\nkey_rules:\n  a: {typ: string}", 4, "validator.key_rules.a.typ", "unknown key"},
		{"type: json_keys\nrequired_keys: [a]\nkey_rules:\n  a: {}", 4, "validator.key_rules.a", "empty rule"},
		{"type: json_keys\nrequired_keys: [a]\nkey_rules:\n  a: {enum: []}", 4, "validator.key_rules.a.enum", "non-empty list"},
		{"type: json_keys\nrequired_keys: [a]\nkey_rules:\n  a: {enum: [[1]]}", 4, "validator.key_rules.a.enum[0]", "want a string, number"},
		{"type: tool_invocation", 1, "validator.expected_tools", "missing"},
		{"type: tool_invocation\nexpected_tools: []", 2, "validator.expected_tools", "non-empty list"},
		{"type: tool_invocation\nexpected_tools: [\"\"]", 2, "validator.expected_tools[0]", "empty"},
	}
	for _, tc := range cases {
		var s validators.Spec
		err := yamlerr.Wrap("", nil, yaml.Unmarshal([]byte(tc.yaml), &s))
		var ye *yamlerr.Error
		if !errors.As(err, &ye) {
			t.Errorf("%q: err = %v, want *yamlerr.Error", tc.yaml, err)
			continue
		}
		if ye.Line != tc.line || ye.Field != tc.field || !strings.Contains(ye.Msg, tc.msg) {
			t.Errorf("%q: got line %d field %q msg %q; want line %d field %q msg containing %q", tc.yaml, ye.Line, ye.Field, ye.Msg, tc.line, tc.field, tc.msg)
		}
	}
}

// A bad spec in a prompt file reads file:line: field: msg.
func TestPromptFileError(t *testing.T) {
	src := "prompts:\n  - id: P0\n    prompt: hi\n    validator: {type: exact, value: OK}\n  - id: P1\n    prompt: hi\n    validators:\n      - {type: noop}\n      - {type: max_words, value: ten}\n"
	_, err := prompts.Parse("suite.yaml", []byte(src))
	if err == nil {
		t.Fatal("bad spec loaded")
	}
	want := "suite.yaml:9: validator.value: want a positive integer, got \"ten\""
	if err.Error() != want {
		t.Errorf("err = %q, want %q", err, want)
	}
}

func TestAliasesAndLine(t *testing.T) {
	src := "a: &v OK\nspec:\n  type: exact\n  value: *v\n"
	var doc struct {
		A    string          `yaml:"a"`
		Spec validators.Spec `yaml:"spec"`
	}
	if err := yaml.Unmarshal([]byte(src), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Spec.Value != "OK" || doc.Spec.Line != 3 {
		t.Errorf("spec = %+v", doc.Spec)
	}
}
