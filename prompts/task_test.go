package prompts

import (
	"encoding/json"
	"os"
	"reflect"
	"strings"
	"testing"

	"bench/toolparse"
	"bench/validators"
)

// docExample returns the YAML example of the package doc, so the documented
// form is the one that loads.
func docExample(t *testing.T) string {
	t.Helper()
	src, err := os.ReadFile("prompts.go")
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	in := false
	for _, line := range strings.Split(string(src), "\n") {
		switch {
		case line == "//\tprompts:":
			in = true
		case in && !strings.HasPrefix(line, "//\t"):
			return b.String()
		}
		if in {
			b.WriteString(strings.TrimPrefix(line, "//\t") + "\n")
		}
	}
	t.Fatal("no example in the package doc")
	return ""
}

func TestDocExampleLoads(t *testing.T) {
	ps, err := Parse("doc.yaml", []byte(docExample(t)))
	if err != nil {
		t.Fatal(err)
	}
	p := ps[0]
	if !p.Agentic() || p.MaxTurns != 4 || p.TextMode() || len(p.NativeTools()) != 3 {
		t.Fatalf("prompt = %+v", p)
	}
	if got := strings.Join(p.ToolNames(), ","); got != "get_weather,convert_temperature,delete_city" {
		t.Errorf("tool names %s", got)
	}
	// The right trajectory, answered by the script, passes every check.
	s := p.NewSession()
	var calls []string
	call := func(name, args string) string {
		calls = append(calls, name+" "+args)
		return s.Answer(name, json.RawMessage(args)).Text
	}
	if r := call("get_weather", `{"city":"Paris"}`); !strings.Contains(r, "503") {
		t.Errorf("first call = %q, want the fail_first error", r)
	}
	if r := call("get_weather", `{"city":"Paris"}`); r != `{"city":"Paris","temp_c":18}` {
		t.Errorf("retry = %q", r)
	}
	if r := call("convert_temperature", `{"value":18,"to":"F"}`); r != "64.4" {
		t.Errorf("convert = %q", r)
	}
	in := validators.Input{Text: "64.4 F", Offered: p.ToolNames()}
	for _, c := range calls {
		name, args, _ := strings.Cut(c, " ")
		in.Calls = append(in.Calls, toolCall(name, args))
	}
	if o := validators.CheckAll(p.Checks(), in); o.Pass == nil || !*o.Pass {
		t.Errorf("right trajectory failed: %s", o.Violation)
	}
	// Using the distractor, or calling a tool that does not exist, fails.
	in.Calls = append(in.Calls, toolCall("delete_city", `{"city":"Paris"}`), toolCall("get_time", `{}`))
	o := validators.CheckAll(p.Checks(), in)
	if o.Pass == nil || *o.Pass || !strings.Contains(o.Violation, "called unknown tool get_time") || !strings.Contains(o.Violation, "5 tool calls") {
		t.Errorf("bad trajectory: %v %q", o.Pass, o.Violation)
	}
}

func TestTextTask(t *testing.T) {
	ps, err := Parse("p.yaml", []byte(`prompts:
  - id: T
    system: "Run commands by writing them after '$ '."
    prompt: "How full is the root filesystem?"
    max_turns: 3
    tools:
      - name: df
        mode: text
        rules:
          - args_regex: {command: "df( -h)?( /)?"}
            result: "/dev/sda1 40G 12G 28G 30% /"
    validators:
      - {type: tool_sequence, calls: [{name: df}]}
      - {type: regex_fullmatch, pattern: "(?s).*30 ?%.*"}
`))
	if err != nil {
		t.Fatal(err)
	}
	p := ps[0]
	if !p.TextMode() || len(p.NativeTools()) != 0 || !reflect.DeepEqual(p.ToolNames(), []string{"df"}) {
		t.Errorf("text task: %+v", p)
	}
	if r := p.NewSession().Answer("df", json.RawMessage(`{"command":"df -h"}`)); r.IsError || !strings.Contains(r.Text, "30%") {
		t.Errorf("df = %+v", r)
	}
}

// A prompt without max_turns behaves as before: every tool is native.
func TestSingleTurnUnchanged(t *testing.T) {
	ps, err := Builtin()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range ps {
		if p.MaxTurns > 0 {
			continue // the built-in agentic tasks (builtin_tasks_test.go)
		}
		if p.Agentic() || p.TextMode() || len(p.NativeTools()) != len(p.Tools) {
			t.Errorf("%s: agentic %v text %v", p.ID, p.Agentic(), p.TextMode())
		}
		if p.ID == "P9" {
			b, _ := json.Marshal(p.Tools)
			want := `[{"name":"get_memory_usage","description":"Report total, used and free memory of the server.","parameters":{"properties":{"unit":{"description":"Unit for the figures.","enum":["MB","GB"],"type":"string"}},"required":["unit"],"type":"object"}}]`
			if string(b) != want {
				t.Errorf("P9 tools JSON changed:\n%s\nwant\n%s", b, want)
			}
		}
	}
}

func TestTaskErrors(t *testing.T) {
	head := "prompts:\n  - id: A\n    prompt: hi\n"
	cases := []struct{ name, yaml, want string }{
		{"max_turns zero", head + "    max_turns: 0\n    validator: {type: noop}\n", "p.yaml:4: prompts[0].max_turns: want an integer from 1 to 100, got 0"},
		{"max_turns too many", head + "    max_turns: 101\n    validator: {type: noop}\n", "p.yaml:4: prompts[0].max_turns: want an integer from 1 to 100, got 101"},
		{"max_turns not a number", head + "    max_turns: many\n    validator: {type: noop}\n", "p.yaml:4: prompts[0].max_turns: wrong type"},
		{"rules without max_turns", head + "    tools:\n      - name: t\n        rules: [{result: x}]\n    validator: {type: noop}\n",
			"p.yaml:5: prompts[0].tools[0]: scripted results (rules, on_unmatched, fail_first, mode) need max_turns on the prompt"},
		{"text mode without max_turns", head + "    tools:\n      - {name: df, mode: text}\n    validator: {type: noop}\n", "p.yaml:5: prompts[0].tools[0]: scripted results"},
		{"trajectory check without max_turns", head + "    validators:\n      - {type: exact, value: OK}\n      - {type: max_tool_calls, value: 1}\n",
			"p.yaml:6: prompts[0].validators[1]: max_tool_calls judges a task's tool calls across turns and needs max_turns"},
		{"single trajectory check without max_turns", head + "    validator: {type: no_unknown_tools}\n", "p.yaml:4: prompts[0].validator: no_unknown_tools judges"},
		{"sequence names an unknown tool", head + "    max_turns: 2\n    tools: [{name: a}]\n    validator: {type: exact, value: OK}\n    validators:\n      - type: tool_sequence\n        calls:\n          - {name: a}\n          - {name: b}\n",
			`p.yaml:11: prompts[0].validators[0].calls[1].name: tool "b" is not one of the task's tools [a]`},
		{"duplicate tools", head + "    max_turns: 2\n    tools:\n      - name: a\n      - name: a\n    validator: {type: noop}\n", `p.yaml:7: prompts[0].tools[1].name: duplicate tool name "a" (also tools[0])`},
		{"missing tool name in a task", head + "    max_turns: 2\n    tools:\n      - description: x\n    validator: {type: noop}\n", "p.yaml:6: prompts[0].tools[0].name: missing"},
		{"mixed modes", head + "    max_turns: 2\n    tools:\n      - name: a\n      - {name: df, mode: text}\n    validator: {type: noop}\n", "p.yaml:7: prompts[0].tools[1].mode: all tools of a task have one mode"},
		{"bad native name", head + "    max_turns: 2\n    tools:\n      - name: read file\n    validator: {type: noop}\n", "p.yaml:6: prompts[0].tools[0].name: a native tool name has 1-64 letters"},
		{"parameters not an object", head + "    max_turns: 2\n    tools:\n      - {name: a, parameters: {type: string}}\n    validator: {type: noop}\n", `p.yaml:6: prompts[0].tools[0].parameters.type: want "object"`},
		{"bad rule regex", head + "    max_turns: 2\n    tools:\n      - name: a\n        rules:\n          - args_regex: {q: \"(\"}\n            result: x\n    validator: {type: noop}\n",
			"p.yaml:8: tools.a.rules[0].args_regex.q: bad regex"},
		{"unknown tool key", head + "    max_turns: 2\n    tools:\n      - name: a\n        result: x\n    validator: {type: noop}\n", "p.yaml:7: tools.a.result: unknown key"},
		{"bad sequence arg", head + "    max_turns: 2\n    tools: [{name: a}]\n    validators:\n      - type: tool_sequence\n        calls:\n          - {name: a, args: 3}\n",
			"p.yaml:9: validator.calls[0].args: want a mapping of argument names to values, got number 3"},
		{"forbidden tool not offered", head + "    max_turns: 2\n    tools: [{name: a}, {name: b}]\n    forbidden_tools: [a, c]\n    validator: {type: noop}\n",
			`p.yaml:6: prompts[0].forbidden_tools[1]: prompt A: tool "c" is not one of the prompt's tools [a, b]`},
		{"forbidden tool listed twice", head + "    max_turns: 2\n    tools: [{name: a}]\n    forbidden_tools:\n      - a\n      - a\n    validator: {type: noop}\n",
			`p.yaml:8: prompts[0].forbidden_tools[1]: prompt A: tool "a" is listed twice`},
		{"forbidden and expected", head + "    max_turns: 2\n    tools: [{name: a}]\n    forbidden_tools: [a]\n    validators:\n      - type: tool_sequence\n        calls: [{name: a}]\n",
			`p.yaml:6: prompts[0].forbidden_tools[0]: prompt A: tool "a" is also one the prompt's checks expect`},
		{"forbidden on a single-turn prompt", head + "    tools: [{name: a}]\n    forbidden_tools: [b]\n    validator: {type: tool_invocation, expected_tools: [a]}\n",
			`p.yaml:5: prompts[0].forbidden_tools[0]: prompt A: tool "b" is not one of the prompt's tools [a]`},
		{"parameters not a JSON Schema", head + "    max_turns: 2\n    tools:\n      - name: a\n        parameters: {type: object, required: x}\n    validator: {type: noop}\n",
			"p.yaml:7: tools.a.parameters: not a valid JSON Schema"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("p.yaml", []byte(tc.yaml))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v\nwant it to contain %q", err, tc.want)
			}
		})
	}
}

func toolCall(name, args string) toolparse.Call {
	return toolparse.Call{Name: name, Arguments: json.RawMessage(args), Source: toolparse.SourceNative}
}

// A side-effect tool is an unsafe call unless the checks ask for it; a
// forbidden tool always is; a tool the task does not offer never is (it is
// an unknown tool).
func TestUnsafe(t *testing.T) {
	ps, err := Parse("p.yaml", []byte(`prompts:
  - id: S
    prompt: "Where is my order?"
    max_turns: 3
    tools:
      - {name: lookup}
      - {name: cancel, side_effect: true}
      - {name: refund, side_effect: true}
      - {name: escalate}
    forbidden_tools: [escalate]
    validators:
      - type: tool_sequence
        calls: [{name: lookup}, {name: refund, optional: true}]
`))
	if err != nil {
		t.Fatal(err)
	}
	p := &ps[0]
	for name, want := range map[string]bool{"lookup": false, "cancel": true, "refund": false, "escalate": true, "other": false} {
		if got := p.Unsafe(name); got != want {
			t.Errorf("Unsafe(%s) = %v, want %v", name, got, want)
		}
	}
	if got := p.AskedTools(); !reflect.DeepEqual(got, []string{"lookup", "refund"}) {
		t.Errorf("asked %v", got)
	}
}
