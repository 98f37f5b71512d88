package prompts

import (
	"bench/validators"
	"strings"
	"testing"
)

func TestBuiltinSuite(t *testing.T) {
	ps, err := Builtin()
	if err != nil {
		t.Fatal(err)
	}
	if len(ps) < 12 {
		t.Fatalf("%d prompts, want at least 12", len(ps))
	}
	types := map[string]bool{}
	tools, native := 0, 0
	for _, p := range ps {
		if p.Source != BuiltinName || p.Line == 0 || p.Name == "" {
			t.Errorf("%s: source %q line %d name %q", p.ID, p.Source, p.Line, p.Name)
		}
		for _, c := range p.Checks() {
			types[c.Type] = true
		}
		if len(p.ExpectedTools()) > 0 {
			tools++
			if len(p.Tools) > 0 {
				native++
			}
		}
	}
	// Every type of the results schema, and every trajectory check (the
	// agentic tasks).
	for _, typ := range append([]string{"noop", "exact", "one_of", "regex_fullmatch", "max_words", "max_sentences", "exact_bullets", "json_keys", "tool_invocation"}, validators.TrajectoryTypes()...) {
		if !types[typ] {
			t.Errorf("no built-in prompt uses validator %s", typ)
		}
	}
	if tools < 4 || native == 0 || native == tools {
		t.Errorf("%d tool prompts (%d native): want at least 4, some native and some text", tools, native)
	}
}

func TestParseErrors(t *testing.T) {
	cases := []struct{ name, yaml, want string }{
		{"no prompts key", "suite: []\n", `p.yaml:1: suite: unknown field "suite"`},
		{"empty list", "prompts: []\n", "p.yaml:1: prompts: no prompts"},
		{"missing id", "prompts:\n  - prompt: hi\n    validator: {type: noop}\n", "p.yaml:2: prompts[0].id: missing"},
		{"duplicate id", "prompts:\n  - id: A\n    prompt: hi\n    validator: {type: noop}\n  - id: A\n    prompt: again\n    validator: {type: noop}\n",
			`p.yaml:5: prompts[1].id: duplicate prompt id "A"`},
		{"missing prompt", "prompts:\n  - id: A\n    validator: {type: noop}\n", "p.yaml:2: prompts[0].prompt: missing"},
		{"missing validator", "prompts:\n  - id: A\n    prompt: hi\n", "p.yaml:2: prompts[0].validator: missing"},
		{"tool without name", "prompts:\n  - id: A\n    prompt: hi\n    tools: [{description: x}]\n    validator: {type: noop}\n", "p.yaml:2: prompts[0].tools[0].name: missing"},
		{"unknown validator", "prompts:\n  - id: A\n    prompt: hi\n    validator: {type: fuzzy}\n", "p.yaml:4"},
		{"wrong type", "prompts:\n  - id: A\n    prompt: [hi]\n    validator: {type: noop}\n", "p.yaml:3: prompts[0].prompt: wrong type"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("p.yaml", []byte(tc.yaml))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want it to contain %q", err, tc.want)
			}
		})
	}
}

func TestChecksAndExpectedTools(t *testing.T) {
	ps, err := Parse("p.yaml", []byte(`prompts:
  - id: A
    prompt: hi
    validator: {type: tool_invocation, expected_tools: [df, free]}
    validators:
      - {type: tool_invocation, expected_tools: [free, top]}
      - {type: max_words, value: 3}
`))
	if err != nil {
		t.Fatal(err)
	}
	p := ps[0]
	if n := len(p.Checks()); n != 3 {
		t.Errorf("%d checks, want the single one and the two listed", n)
	}
	if got := strings.Join(p.ExpectedTools(), ","); got != "df,free,top" {
		t.Errorf("expected tools %s, want df,free,top", got)
	}
}
