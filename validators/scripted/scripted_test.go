package scripted

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"bench/internal/yamlerr"
)

// tools decodes a YAML list of tools the way prompt files do.
func tools(t testing.TB, src string) []Tool {
	t.Helper()
	var ts []Tool
	if err := yaml.Unmarshal([]byte(src), &ts); err != nil {
		t.Fatalf("decode: %v\n%s", err, src)
	}
	return ts
}

const weather = `
- name: get_weather
  description: Current weather of a city.
  parameters:
    type: object
    properties:
      city: {type: string}
      unit: {type: string, enum: [C, F]}
    required: [city]
  rules:
    - args: {city: Paris, unit: C}
      result: "18 C, light rain"
    - args_subset: {city: Paris}
      result: {temp: 64, unit: F, sky: "light rain"}
    - args_regex: {city: "(?i)l[iy]on"}
      result: "21 C, sunny"
    - args_subset: {city: Oslo}
      args_regex: {unit: "[CF]"}
      result: "3 C"
    - args_subset: {opts: {deep: {x: 1}}}
      result: nested
    - args_regex: {days: "[1-7]"}
      result: forecast
    - args: {}
      result: "which city?"
      is_error: true
  on_unmatched: "error: unknown city"
- name: flaky
  fail_first: "error: 503 service unavailable, try again"
  rules:
    - result: recovered
- name: bare
`

func TestAnswer(t *testing.T) {
	ts := tools(t, weather)
	cases := []struct {
		name, tool, args string
		want             Result
	}{
		{"exact", "get_weather", `{"city":"Paris","unit":"C"}`, Result{Text: "18 C, light rain", Rule: 0}},
		{"exact with key order and spaces", "get_weather", "{ \"unit\": \"C\",\n \"city\": \"Paris\" }", Result{Text: "18 C, light rain", Rule: 0}},
		{"exact fails on an extra key, subset takes it", "get_weather", `{"city":"Paris","unit":"C","x":1}`, Result{Text: `{"temp":64,"unit":"F","sky":"light rain"}`, Rule: 1}},
		{"subset", "get_weather", `{"city":"Paris","unit":"F"}`, Result{Text: `{"temp":64,"unit":"F","sky":"light rain"}`, Rule: 1}},
		{"subset is case-sensitive", "get_weather", `{"city":"paris"}`, Result{Text: "error: unknown city", IsError: true, Rule: -1, Unmatched: true}},
		{"regex", "get_weather", `{"city":"LYON"}`, Result{Text: "21 C, sunny", Rule: 2}},
		{"regex is anchored", "get_weather", `{"city":"Lyon!"}`, Result{Text: "error: unknown city", IsError: true, Rule: -1, Unmatched: true}},
		{"subset and regex", "get_weather", `{"city":"Oslo","unit":"F"}`, Result{Text: "3 C", Rule: 3}},
		{"subset and regex, regex fails", "get_weather", `{"city":"Oslo","unit":"K"}`, Result{Text: "error: unknown city", IsError: true, Rule: -1, Unmatched: true}},
		{"nested subset", "get_weather", `{"opts":{"deep":{"x":1.0,"y":2},"z":3}}`, Result{Text: "nested", Rule: 4}},
		{"nested subset wrong type", "get_weather", `{"opts":{"deep":[1]}}`, Result{Text: "error: unknown city", IsError: true, Rule: -1, Unmatched: true}},
		{"regex on a number", "get_weather", `{"days":3}`, Result{Text: "forecast", Rule: 5}},
		{"regex on a float", "get_weather", `{"days":3.5}`, Result{Text: "error: unknown city", IsError: true, Rule: -1, Unmatched: true}},
		{"empty args is {}", "get_weather", ``, Result{Text: "which city?", IsError: true, Rule: 6}},
		{"null args is {}", "get_weather", `null`, Result{Text: "which city?", IsError: true, Rule: 6}},
		{"array args", "get_weather", `["Paris"]`, Result{Text: "error: unknown city", IsError: true, Rule: -1, Unmatched: true}},
		{"broken args", "get_weather", `{"city":`, Result{Text: "error: unknown city", IsError: true, Rule: -1, Unmatched: true}},
		{"unknown tool", "get_wether", `{}`, Result{Text: `error: unknown tool "get_wether"; available tools: bare, flaky, get_weather`, IsError: true, Unknown: true, Rule: -1}},
		{"default unmatched", "bare", `{"a": [1, 2]}`, Result{Text: `error: bare has no result for arguments {"a":[1,2]}`, IsError: true, Rule: -1, Unmatched: true}},
		{"default unmatched, no args", "bare", ``, Result{Text: `error: bare has no result for arguments {}`, IsError: true, Rule: -1, Unmatched: true}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := NewSession(ts).Answer(tc.tool, json.RawMessage(tc.args))
			if got != tc.want {
				t.Errorf("Answer(%s, %s)\n got %+v\nwant %+v", tc.tool, tc.args, got, tc.want)
			}
		})
	}
}

// fail_first fails the tool's first call whatever its arguments, once per
// session; the retry goes through the rules. Other tools do not count.
func TestFailFirst(t *testing.T) {
	ts := tools(t, weather)
	s := NewSession(ts)
	s.Answer("get_weather", json.RawMessage(`{"city":"Paris"}`))
	first := s.Answer("flaky", json.RawMessage(`{"x":1}`))
	if !first.IsError || !first.FailFirst || first.Rule != -1 || !strings.Contains(first.Text, "503") {
		t.Errorf("first call = %+v", first)
	}
	for i := 0; i < 2; i++ {
		if r := s.Answer("flaky", json.RawMessage(`{"x":1}`)); r.IsError || r.Text != "recovered" || r.FailFirst {
			t.Errorf("call %d = %+v", i+2, r)
		}
	}
	if s.Calls("flaky") != 3 || s.Calls("get_weather") != 1 || s.Total() != 4 {
		t.Errorf("counts %d %d %d", s.Calls("flaky"), s.Calls("get_weather"), s.Total())
	}
	s.Answer("nope", nil)
	if s.Total() != 5 || s.Calls("nope") != 0 {
		t.Errorf("unknown calls: total %d, nope %d", s.Total(), s.Calls("nope"))
	}
	// A new session (a new cell) fails again.
	if r := NewSession(ts).Answer("flaky", nil); !r.FailFirst {
		t.Errorf("new session first call = %+v", r)
	}
}

func TestTextMode(t *testing.T) {
	ts := tools(t, `
- name: df
  mode: text
  rules:
    - args_regex: {command: "df( -[hT]+)*( /)?"}
      result: "Filesystem Size Used Avail Use% Mounted on\n/dev/sda1 40G 12G 28G 30% /"
- name: cat
  mode: text
`)
	s := NewSession(ts)
	if r := s.Answer("df", json.RawMessage(`{"command":"df -h /"}`)); r.IsError || !strings.HasPrefix(r.Text, "Filesystem") {
		t.Errorf("df = %+v", r)
	}
	if r := s.Answer("df", json.RawMessage(`{"command":"df -x"}`)); !r.Unmatched || r.Text != "error: df -x: not supported here" {
		t.Errorf("df -x = %+v", r)
	}
	if r := s.Answer("free", json.RawMessage(`{"command":"free -h"}`)); !r.Unknown || r.Text != "free: command not found" {
		t.Errorf("free = %+v", r)
	}
}

func TestNoTools(t *testing.T) {
	r := NewSession(nil).Answer("x", nil)
	if !r.Unknown || r.Text != `error: unknown tool "x"; no tools are available` {
		t.Errorf("answer = %+v", r)
	}
}

// A task file written with encoding/json decodes back to the same tools.
func TestJSONRoundTrip(t *testing.T) {
	ts := tools(t, weather)
	b, err := json.Marshal(ts)
	if err != nil {
		t.Fatal(err)
	}
	back := tools(t, string(b))
	for i := range ts {
		ts[i].Line, back[i].Line = 0, 0
		for j := range ts[i].Rules {
			ts[i].Rules[j].Line, back[i].Rules[j].Line = 0, 0
		}
	}
	if !reflect.DeepEqual(ts, back) {
		t.Errorf("round trip differs:\n%+v\n%+v", ts, back)
	}
	if !strings.Contains(string(b), `"args":{}`) {
		t.Errorf("an exact match on no arguments must survive: %s", b)
	}
}

func TestDecodeErrors(t *testing.T) {
	cases := []struct {
		yaml  string
		line  int
		field string
		msg   string
	}{
		{"[x]", 1, "tool", "want a mapping"},
		{"name: [x]", 1, "tool.name", "want a string, got a list"},
		{"name: t\nrule: []", 2, "tools.t.rule", "unknown key (allowed: name, description, parameters, mode, rules, on_unmatched, fail_first, side_effect)"},
		{"name: t\nmode: shell", 2, "tools.t.mode", `unknown mode "shell"`},
		{"name: t\nmode: text\nparameters: {type: object}", 3, "tools.t.parameters", "takes no parameters"},
		{"name: Df\nmode: text", 1, "tools.Df.name", "command word"},
		{"name: t\nparameters: [a]", 2, "tools.t.parameters", "want a JSON schema mapping"},
		{"name: t\nparameters: {x: .inf}", 2, "tools.t.parameters.x", "no JSON form"},
		{"name: t\nrules: []", 2, "tools.t.rules", "non-empty list"},
		{"name: t\nrules:\n  - args: {a: 1}", 3, "tools.t.rules[0].result", "missing"},
		{"name: t\nrules:\n  - result: \"\"", 3, "tools.t.rules[0].result", "empty"},
		{"name: t\nrules:\n  - result: ~", 3, "tools.t.rules[0].result", "empty"},
		{"name: t\nrules:\n  - {result: x, when: {a: 1}}", 3, "tools.t.rules[0].when", "unknown key (allowed: args, args_subset, args_regex, result, is_error)"},
		{"name: t\nrules:\n  - {result: x, args: [1]}", 3, "tools.t.rules[0].args", "want a mapping of argument names"},
		{"name: t\nrules:\n  - result: x\n    args: {a: 1}\n    args_subset: {a: 1}", 5, "tools.t.rules[0].args_subset", "give args alone"},
		{"name: t\nrules:\n  - {result: x, args_regex: {a: \"(\"}}", 3, "tools.t.rules[0].args_regex.a", "bad regex"},
		{"name: t\nrules:\n  - {result: x, args_regex: {a: 1}}", 3, "tools.t.rules[0].args_regex.a", "want a string, got number 1"},
		{"name: t\nrules:\n  - {result: x, args_regex: {}}", 3, "tools.t.rules[0].args_regex", "empty"},
		{"name: t\nrules:\n  - {result: x, is_error: yes}", 3, "tools.t.rules[0].is_error", "want true or false"},
		{"name: t\non_unmatched: \"  \"", 2, "tools.t.on_unmatched", "empty"},
		{"name: t\nparameters: {type: object, properties: {a: {type: dict}}}", 2, "tools.t.parameters", "not a valid JSON Schema"},
		{"name: t\nside_effect: maybe", 2, "tools.t.side_effect", "want true or false"},
		{"name: t\nside_effect: true", 0, "", ""},
		{"name: t\nfail_first: {}", 0, "", ""}, // a JSON object is a valid result
	}
	for _, tc := range cases {
		var tool Tool
		err := yaml.Unmarshal([]byte(tc.yaml), &tool)
		if tc.msg == "" {
			if err != nil {
				t.Errorf("%q: %v", tc.yaml, err)
			}
			continue
		}
		var ye *yamlerr.Error
		if !errors.As(err, &ye) {
			t.Errorf("%q: err = %v, want *yamlerr.Error", tc.yaml, err)
			continue
		}
		if ye.Line != tc.line || ye.Field != tc.field || !strings.Contains(ye.Msg, tc.msg) {
			t.Errorf("%q:\n got line %d field %q msg %q\nwant line %d field %q msg containing %q", tc.yaml, ye.Line, ye.Field, ye.Msg, tc.line, tc.field, tc.msg)
		}
	}
}

func TestCheckTask(t *testing.T) {
	ts := tools(t, `
- name: a
- name: a
- name: "b.c"
- name: d
  parameters: {type: array}
- name: ls
  mode: text
- name: ""
`)
	var got []string
	for _, e := range CheckTask(ts) {
		got = append(got, e.Error())
	}
	want := []string{
		`:3: tools[1].name: duplicate tool name "a" (also tools[0])`,
		`:4: tools[2].name: a native tool name has 1-64 letters, digits, _ or -`,
		`:5: tools[3].parameters.type: want "object" (tool arguments are a JSON object), got array`,
		`:7: tools[4].mode: all tools of a task have one mode; mixing native and text tools is not supported`,
		`:9: tools[5].name: missing`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("CheckTask:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if errs := CheckTask(tools(t, weather)); len(errs) != 0 {
		t.Errorf("weather tools: %v", errs)
	}
}

func TestMatchString(t *testing.T) {
	ts := tools(t, weather)
	got := []string{ts[0].Rules[0].Match.String(), ts[0].Rules[3].Match.String(), ts[1].Rules[0].Match.String()}
	want := []string{`args={"city":"Paris","unit":"C"}`, `args_subset={"city":"Oslo"} args_regex={"unit":"[CF]"}`, "any arguments"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("String() = %q, want %q", got, want)
	}
}

// A Match built in Go (not decoded) compiles its patterns on use.
func TestMatchFromGo(t *testing.T) {
	m := Match{Regex: map[string]string{"q": "a+"}}
	if !m.Matches(json.RawMessage(`{"q":"aaa"}`)) || m.Matches(json.RawMessage(`{"q":"ab"}`)) {
		t.Error("regex match built in Go")
	}
	bad := Match{Regex: map[string]string{"q": "("}}
	if bad.Matches(json.RawMessage(`{"q":"("}`)) {
		t.Error("a bad pattern matched")
	}
}

// FuzzMatch checks properties of argument matching on any arguments: no
// panic, determinism, an exact match implies the subset match with the same
// object, and a call is answered by the first rule that matches.
func FuzzMatch(f *testing.F) {
	for _, seed := range []string{
		`{"city":"Paris","unit":"C"}`, `{"city":"Paris"}`, `{"city":"lyon"}`, `{}`, ``, `null`, `[1]`, `"x"`,
		`{"opts":{"deep":{"x":1}}}`, `{"days":3}`, `{"days":1e400}`, `{"city":"\xff"}`, `{"a":{"b":{"c":{"d":[]}}}}`, `{"city":`,
	} {
		f.Add(seed)
	}
	ts := tools(f, weather)
	rules := ts[0].Rules
	f.Fuzz(func(t *testing.T, args string) {
		raw := json.RawMessage(args)
		r1 := NewSession(ts).Answer("get_weather", raw)
		r2 := NewSession(ts).Answer("get_weather", raw)
		if r1 != r2 {
			t.Fatalf("not deterministic: %+v vs %+v", r1, r2)
		}
		first := -1
		for i := range rules {
			if rules[i].Match.Matches(raw) {
				first = i
				break
			}
		}
		if r1.Rule != first {
			t.Fatalf("answered by rule %d, first matching rule is %d", r1.Rule, first)
		}
		if (r1.Rule == -1) != r1.Unmatched {
			t.Fatalf("unmatched flag wrong: %+v", r1)
		}
		parsed, err := ParseArgs(raw)
		if err != nil {
			return
		}
		exact := Match{Args: parsed}
		sub := Match{Subset: parsed}
		if !exact.MatchesArgs(parsed) || !sub.MatchesArgs(parsed) {
			t.Fatalf("arguments do not match themselves: %s", args)
		}
		for i := range rules {
			if a := rules[i].Match.Args; a != nil && rules[i].Match.MatchesArgs(parsed) {
				if s := (Match{Subset: a}); !s.MatchesArgs(parsed) {
					t.Fatalf("exact match without subset match: %s", args)
				}
			}
		}
	})
}

func BenchmarkAnswer(b *testing.B) {
	ts := tools(b, weather)
	s := NewSession(ts)
	args := json.RawMessage(`{"city":"Oslo","unit":"F"}`)
	for b.Loop() {
		s.Answer("get_weather", args)
	}
}

// FuzzDecodeTool: any YAML decodes to a tool or a positioned error, never a
// panic; a decoded tool answers any call and round-trips through JSON.
func FuzzDecodeTool(f *testing.F) {
	for _, seed := range []string{
		weather,
		"name: t\nrules:\n  - {args_regex: {q: \"(?i)a+\"}, result: x}\n",
		"name: t\nmode: text\nfail_first: boom\n",
		"name: t\nrules:\n  - result: &a {x: [1, 2, {y: *a}]}\n",
		"name: t\nparameters: {type: object, properties: {a: {type: integer}}}\non_unmatched: {error: 1}\n",
		"name: t\nrules:\n  - {args: {a: 2021-07-04, b: 0x1F, c: 1_000}, result: ok}\n",
		"name: [\n", "- - -", "name: t\nrules: [{result: .nan}]\n", "",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, src string) {
		var tool Tool
		err := yaml.Unmarshal([]byte(src), &tool)
		if err != nil {
			return
		}
		s := NewSession([]Tool{tool})
		for _, args := range []string{`{}`, `{"a":2,"q":"aaa"}`, `[`, ``} {
			r := s.Answer(tool.Name, json.RawMessage(args))
			if r.Text == "" {
				t.Fatalf("empty answer for %s", args)
			}
		}
		b, err := json.Marshal(tool)
		if err != nil {
			t.Fatalf("marshal: %v", err)
		}
		var back Tool
		if err := yaml.Unmarshal(b, &back); err != nil {
			t.Fatalf("%s does not load back: %v", b, err)
		}
	})
}
