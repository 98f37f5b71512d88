package prompts

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"bench/internal/yamlerr"
	"bench/validators"
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
	for _, typ := range append([]string{"noop", "exact", "one_of", "regex_fullmatch", "max_words", "max_sentences", "exact_bullets", "json_keys", "tool_invocation"}, validators.TypeMaxToolCalls, validators.TypeNoUnknownTools, validators.TypeToolSequence) {
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

// A prompt file's problems come in one round (issue 31, item 22): each
// bad key of each check, the prompts after a bad one, and the checks of
// the prompts that decoded; none twice, the checks' indexes as written.
func TestParseErrorsInOneRound(t *testing.T) {
	src := "prompts:\n" +
		"  - id: A\n    prompt: hi\n    validators:\n" +
		"      - {type: exact, value: \"\", extra: 1}\n" + // line 5: two problems
		"      - {type: max_words, value: 3}\n" +
		"      - {type: tool_sequence, calls: [{name: ls}]}\n" + // line 7: needs max_turns
		"  - id: B\n    prompt: [not, text]\n    validator: {type: llm_judge, judge: j, model: \"\", rubric: \"\"}\n" +
		"  - id: B\n    prompt: again\n    validator: {type: noop}\n"
	ps, err := Parse("p.yaml", []byte(src))
	if err == nil {
		t.Fatal("parsed")
	}
	var got []string
	for _, e := range yamlerr.Flatten(err) {
		got = append(got, e.Error())
	}
	want := []string{
		"p.yaml:5: validator.extra: unknown key for type exact (allowed: value)",
		"p.yaml:5: validator.value: empty; an empty answer is never a success",
		"p.yaml:7: prompts[0].validators[2]: tool_sequence judges a task's tool calls across turns and needs max_turns on the prompt (max_turns: 1 for a single reply)",
		"p.yaml:9: prompts[1].prompt: wrong type: got a list, want a string",
		"p.yaml:10: validator.rubric: empty (what the answer is graded against)",
		"p.yaml:10: validator.model: empty (the judge's model)",
		`p.yaml:11: prompts[2].id: duplicate prompt id "B" (also prompts[1])`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// What decoded comes back with the error: the config checks the
	// judge it names in the same round.
	if len(ps) != 3 || ps[1].Validator == nil || ps[1].Validator.Judge != "j" || !ps[1].Validator.Invalid() || len(ps[0].Validators) != 3 {
		t.Errorf("prompts back: %+v", ps)
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

// The external checks are checked when the file loads: one llm_judge a
// prompt, and a command's program found (relative to the file, or in
// PATH) and made absolute.
func TestExternalChecks(t *testing.T) {
	dir := writeFiles(t, map[string]string{"check.sh": "#!/bin/sh\nexit 0\n", "plain.txt": "x"})
	if err := os.Chmod(filepath.Join(dir, "check.sh"), 0o755); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "p.yaml")
	ok := "prompts:\n  - id: A\n    prompt: hi\n    validators:\n      - {type: command, argv: [./check.sh, x]}\n      - {type: command, argv: [sh, -c, \"exit 0\"]}\n      - {type: llm_judge, rubric: r, judge: j, model: m}\n"
	ps, err := Parse(file, []byte(ok))
	if err != nil {
		t.Fatal(err)
	}
	c := ps[0].Checks()
	if c[0].Argv[0] != filepath.Join(dir, "check.sh") || !filepath.IsAbs(c[1].Argv[0]) || c[1].Argv[1] != "-c" {
		t.Errorf("argv: %q, %q", c[0].Argv, c[1].Argv)
	}
	cases := []struct{ name, yaml, want string }{
		{"two judges", "prompts:\n  - id: A\n    prompt: hi\n    validators:\n      - {type: llm_judge, rubric: r, judge: j, model: m}\n      - {type: llm_judge, rubric: s, judge: j, model: m}\n",
			"p.yaml:6: prompts[0].validators[1]: a second llm_judge"},
		{"missing program", "prompts:\n  - id: A\n    prompt: hi\n    validator: {type: command, argv: [./nope.sh]}\n",
			"p.yaml:4: prompts[0].validator.argv[0]: program " + filepath.Join(dir, "nope.sh") + " does not exist"},
		{"not in PATH", "prompts:\n  - id: A\n    prompt: hi\n    validator: {type: command, argv: [no-such-program-xyz]}\n",
			`p.yaml:4: prompts[0].validator.argv[0]: program "no-such-program-xyz" not found in PATH`},
		{"not executable", "prompts:\n  - id: A\n    prompt: hi\n    validator: {type: command, argv: [./plain.txt]}\n",
			"is not executable"},
		{"a directory", "prompts:\n  - id: A\n    prompt: hi\n    validator: {type: command, argv: [./]}\n",
			"is a directory"},
	}
	for _, tc := range cases {
		_, err := Parse(file, []byte(tc.yaml))
		if err == nil || !strings.Contains(strings.ReplaceAll(err.Error(), dir+"/p.yaml", "p.yaml"), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.name, err, tc.want)
		}
	}
}
