package validators

import (
	"encoding/json"
	"errors"
	"math/rand"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"bench/internal/yamlerr"
	"bench/toolparse"
)

// calls builds a trajectory from "name {json}" strings.
func calls(specs ...string) []toolparse.Call {
	out := []toolparse.Call{}
	for _, s := range specs {
		name, args, _ := strings.Cut(s, " ")
		out = append(out, toolparse.Call{Name: name, Arguments: json.RawMessage(args), Source: toolparse.SourceNative})
	}
	return out
}

const lookupConvert = `
type: tool_sequence
calls:
  - {name: lookup, args_subset: {city: Paris}}
  - {name: log, optional: true}
  - {name: convert, args: {value: 18, from: C, to: F}}
`

func TestToolSequence(t *testing.T) {
	cases := []struct {
		name      string
		spec      string
		calls     []toolparse.Call
		pass      bool
		violation string
		parsed    string
	}{
		{"in order", lookupConvert, calls(`lookup {"city":"Paris","unit":"C"}`, `convert {"from":"C","to":"F","value":18.0}`), true, "",
			`{"matched":[0,-1,1],"tool_calls":["lookup","convert"],"wrong_args":0}`},
		{"optional present", lookupConvert, calls(`lookup {"city":"Paris"}`, `log {}`, `convert {"from":"C","to":"F","value":18}`), true, "",
			`{"matched":[0,1,2],"tool_calls":["lookup","log","convert"],"wrong_args":0}`},
		{"extra calls between and after", lookupConvert, calls(`search {}`, `lookup {"city":"Paris"}`, `search {}`, `convert {"from":"C","to":"F","value":18}`, `done {}`), true, "", ""},
		{"retry of a failed call is an extra", lookupConvert, calls(`lookup {"city":"Paris"}`, `lookup {"city":"Paris"}`, `convert {"from":"C","to":"F","value":18}`), true, "",
			`{"matched":[0,-1,2],"tool_calls":["lookup","lookup","convert"],"wrong_args":0}`},
		{"wrong order", lookupConvert, calls(`convert {"from":"C","to":"F","value":18}`, `lookup {"city":"Paris"}`), false,
			`missing call 3 of 3: convert args={"from":"C","to":"F","value":18}; calls were [convert, lookup]`, ""},
		{"wrong arguments", lookupConvert, calls(`lookup {"city":"Pariss"}`, `convert {"from":"C","to":"F","value":18}`), false,
			`missing call 1 of 3: lookup args_subset={"city":"Paris"}; got lookup {"city":"Pariss"}`,
			`{"matched":[-1,-1,-1],"tool_calls":["lookup","convert"],"wrong_args":1}`},
		{"exact means no extra key", lookupConvert, calls(`lookup {"city":"Paris"}`, `convert {"from":"C","to":"F","value":18,"round":true}`), false,
			`missing call 3 of 3: convert args={"from":"C","to":"F","value":18}; got convert {"from":"C","to":"F","value":18,"round":true}`, ""},
		{"no calls", lookupConvert, calls(), false, `missing call 1 of 3: lookup args_subset={"city":"Paris"}; no tool call was made`,
			`{"matched":[-1,-1,-1],"tool_calls":[],"wrong_args":0}`},
		{"nil calls", lookupConvert, nil, false, `missing call 1 of 3: lookup args_subset={"city":"Paris"}; no tool call was made`, ""},
		{"args not an object", lookupConvert, calls(`lookup "Paris"`), false, `missing call 1 of 3: lookup args_subset={"city":"Paris"}; got lookup "Paris"`, ""},

		// An optional call must not take the call a later expected call needs.
		{"optional does not steal", `{type: tool_sequence, calls: [{name: a}, {name: b, optional: true}, {name: b, args: {x: 1}}]}`,
			calls(`a {}`, `b {"x":1}`), true, "", `{"matched":[0,-1,1],"tool_calls":["a","b"],"wrong_args":0}`},

		{"strict exact trajectory", `{type: tool_sequence, allow_extra: false, calls: [{name: a}, {name: b}]}`, calls(`a {}`, `b {}`), true, "", ""},
		{"strict rejects a call between", `{type: tool_sequence, allow_extra: false, calls: [{name: a}, {name: b}]}`, calls(`a {}`, `x {"q":1}`, `b {}`), false,
			`missing call 2 of 2: b; got x {"q":1}`, ""},
		{"strict rejects a call after", `{type: tool_sequence, allow_extra: false, calls: [{name: a}, {name: b}]}`, calls(`a {}`, `b {}`, `b {}`), false,
			`unexpected call 3: b {} (allow_extra is false)`, ""},
		{"strict retry must be listed", `{type: tool_sequence, allow_extra: false, calls: [{name: flaky}, {name: flaky}]}`, calls(`flaky {}`, `flaky {}`), true, "", ""},
		{"strict retry missing", `{type: tool_sequence, allow_extra: false, calls: [{name: flaky}, {name: flaky}]}`, calls(`flaky {}`), false,
			`missing call 2 of 2: flaky; calls were [flaky]`, ""},
		{"strict all optional, none made", `{type: tool_sequence, allow_extra: false, calls: [{name: a, optional: true}]}`, calls(), true, "", `{"matched":[-1],"tool_calls":[],"wrong_args":0}`},
		{"strict all optional, distractor made", `{type: tool_sequence, allow_extra: false, calls: [{name: a, optional: true}]}`, calls(`delete_all {}`), false,
			`unexpected call 1: delete_all {} (allow_extra is false)`, ""},

		{"regex on a text-mode command", `{type: tool_sequence, calls: [{name: df, args_regex: {command: "df -h( /)?"}}]}`,
			toolparse.Detect(nil, "Let me check.\n\n$ df -h /\n"), true, "", ""},
		{"regex on a text-mode command fails", `{type: tool_sequence, calls: [{name: df, args_regex: {command: "df -h( /)?"}}]}`,
			toolparse.Detect(nil, "$ df -i\n"), false, `missing call 1 of 1: df args_regex={"command":"df -h( /)?"}; got df {"command":"df -i"}`, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := spec(t, tc.spec)
			o := s.Check(Input{Calls: tc.calls})
			if o.Pass == nil || *o.Pass != tc.pass {
				t.Fatalf("pass = %v, want %v (violation %q)", o.Pass, tc.pass, o.Violation)
			}
			if tc.pass && o.Violation != "" {
				t.Errorf("passing check has violation %q", o.Violation)
			}
			if tc.violation != "" && o.Violation != tc.violation {
				t.Errorf("violation\n got %s\nwant %s", o.Violation, tc.violation)
			}
			if tc.parsed != "" {
				if b, _ := json.Marshal(o.Parsed); string(b) != tc.parsed {
					t.Errorf("parsed = %s, want %s", b, tc.parsed)
				}
			}
		})
	}
}

// Trajectory checks read Calls only: the final answer's detections
// (ToolCalls) are not the trajectory.
func TestTrajectoryReadsCallsOnly(t *testing.T) {
	in := Input{Text: "run `df -h`", ToolCalls: toolparse.Detect(nil, "run `df -h`")}
	for _, src := range []string{`{type: tool_sequence, calls: [{name: df}]}`} {
		s := spec(t, src)
		if o := s.Check(in); o.Pass == nil || *o.Pass {
			t.Errorf("%s passed on ToolCalls alone", src)
		}
	}
	mx := spec(t, `{type: max_tool_calls, value: 0}`)
	if o := mx.Check(in); o.Pass == nil || !*o.Pass {
		t.Errorf("max_tool_calls counted ToolCalls: %+v", o)
	}
	// And the answer checks do not read Calls.
	ti := spec(t, `{type: tool_invocation, expected_tools: [df]}`)
	if o := ti.Check(Input{Calls: calls(`df {}`)}); o.Pass == nil || *o.Pass {
		t.Errorf("tool_invocation read Calls")
	}
}

func TestNoUnknownTools(t *testing.T) {
	s := spec(t, `{type: no_unknown_tools}`)
	cases := []struct {
		calls     []toolparse.Call
		offered   []string
		pass      bool
		violation string
		parsed    string
	}{
		{calls(`a {}`, `b {}`, `a {}`), []string{"a", "b"}, true, "", `{"tool_calls":["a","b","a"],"unknown_tools":[]}`},
		{nil, nil, true, "", `{"tool_calls":[],"unknown_tools":[]}`},
		{calls(`a {}`, `rm {}`, `A {}`, `rm {}`), []string{"a", "b"}, false, "called unknown tool rm, A, offered [a, b]", `{"tool_calls":["a","rm","A","rm"],"unknown_tools":["rm","A"]}`},
		{calls(`a {}`), nil, false, "called unknown tool a, offered []", ""},
	}
	for i, tc := range cases {
		o := s.Check(Input{Calls: tc.calls, Offered: tc.offered})
		if o.Pass == nil || *o.Pass != tc.pass || o.Violation != tc.violation {
			t.Errorf("case %d: pass %v violation %q, want %v %q", i, o.Pass, o.Violation, tc.pass, tc.violation)
		}
		if tc.parsed != "" {
			if b, _ := json.Marshal(o.Parsed); string(b) != tc.parsed {
				t.Errorf("case %d: parsed = %s, want %s", i, b, tc.parsed)
			}
		}
	}
}

func TestMaxToolCalls(t *testing.T) {
	cases := []struct {
		spec      string
		calls     []toolparse.Call
		pass      bool
		violation string
	}{
		{`{type: max_tool_calls, value: 0}`, nil, true, ""},
		{`{type: max_tool_calls, value: 0}`, calls(`a {}`), false, "1 tool calls, expected at most 0"},
		{`{type: max_tool_calls, value: 2}`, calls(`a {}`, `b {}`), true, ""},
		{`{type: max_tool_calls, value: 2}`, calls(`a {}`, `b {}`, `a {}`), false, "3 tool calls, expected at most 2"},
	}
	for _, tc := range cases {
		s := spec(t, tc.spec)
		o := s.Check(Input{Calls: tc.calls})
		if o.Pass == nil || *o.Pass != tc.pass || o.Violation != tc.violation {
			t.Errorf("%s with %d calls: %v %q, want %v %q", tc.spec, len(tc.calls), o.Pass, o.Violation, tc.pass, tc.violation)
		}
	}
}

// Trajectory checks sit next to answer checks in one all-must-pass list.
func TestCheckAllWithTrajectory(t *testing.T) {
	specs := []Spec{
		spec(t, lookupConvert),
		spec(t, `{type: no_unknown_tools}`),
		spec(t, `{type: max_tool_calls, value: 3}`),
		spec(t, `{type: regex_fullmatch, pattern: "64(\\.4)? ?F"}`),
	}
	good := Input{Text: "64.4 F", Calls: calls(`lookup {"city":"Paris"}`, `convert {"from":"C","to":"F","value":18}`), Offered: []string{"lookup", "convert", "log"}}
	o := CheckAll(specs, good)
	if o.Pass == nil || !*o.Pass {
		t.Fatalf("good trajectory failed: %s", o.Violation)
	}
	b, _ := json.Marshal(o.Parsed)
	if want := `{"matched":[0,-1,1],"text":"64.4 F","tool_call_count":2,"tool_calls":["lookup","convert"],"unknown_tools":[],"wrong_args":0}`; string(b) != want {
		t.Errorf("parsed = %s\nwant %s", b, want)
	}
	bad := good
	bad.Text = "about 64"
	bad.Calls = append(calls(`weather {}`), good.Calls...)
	o = CheckAll(specs, bad)
	want := `called unknown tool weather, offered [lookup, convert, log]; "about 64" does not fully match /64(\.4)? ?F/`
	if o.Pass == nil || *o.Pass || o.Violation != want {
		t.Errorf("bad: %v %q\nwant %q", o.Pass, o.Violation, want)
	}
}

func TestTrajectorySpecJSON(t *testing.T) {
	s := spec(t, `{type: tool_sequence, allow_extra: false, calls: [{name: a, args_regex: {q: "x+"}, args_subset: {n: 1}, optional: true}, {name: b, args: {}}]}`)
	b, err := json.Marshal(&s)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"type":"tool_sequence","calls":[{"args_regex":{"q":"x+"},"args_subset":{"n":1},"name":"a","optional":true},{"args":{},"name":"b"}],"allow_extra":false}`
	if string(b) != want {
		t.Errorf("json = %s\nwant %s", b, want)
	}
	noop := spec(t, `{type: noop}`)
	if !s.Trajectory() || noop.Trajectory() {
		t.Error("Trajectory()")
	}
}

func TestTrajectorySpecErrors(t *testing.T) {
	cases := []struct {
		yaml  string
		line  int
		field string
		msg   string
	}{
		{"type: tool_sequence", 1, "validator.calls", "missing (required by type tool_sequence)"},
		{"type: tool_sequence\ncalls: []", 2, "validator.calls", "want a non-empty list of calls"},
		{"type: tool_sequence\ncalls: [a]", 2, "validator.calls[0]", "want a mapping"},
		{"type: tool_sequence\ncalls:\n  - {args: {a: 1}}", 3, "validator.calls[0].name", "missing"},
		{"type: tool_sequence\ncalls:\n  - {name: \"\"}", 3, "validator.calls[0].name", "empty"},
		{"type: tool_sequence\ncalls:\n  - {name: 3}", 3, "validator.calls[0].name", "want a string"},
		{"type: tool_sequence\ncalls:\n  - name: a\n    argz: {}", 4, "validator.calls[0].argz", "unknown key (allowed: name, args, args_subset, args_regex, optional)"},
		{"type: tool_sequence\ncalls:\n  - name: a\n    args_regex: {q: \"[\"}", 4, "validator.calls[0].args_regex.q", "bad regex"},
		{"type: tool_sequence\ncalls:\n  - name: a\n    args: {q: 1}\n    args_regex: {q: \"1\"}", 5, "validator.calls[0].args_regex", "give args alone"},
		{"type: tool_sequence\ncalls:\n  - {name: a, optional: 1}", 3, "validator.calls[0].optional", "want true or false"},
		{"type: tool_sequence\ncalls:\n  - {name: a, optional: true}", 3, "validator.calls", "every call is optional"},
		{"type: tool_sequence\nallow_extra: no\ncalls: [{name: a}]", 2, "validator.allow_extra", "want true or false"},
		{"type: tool_sequence\nvalue: 1\ncalls: [{name: a}]", 2, "validator.value", "unknown key for type tool_sequence (allowed: calls, allow_extra)"},
		{"type: no_unknown_tools\nvalue: 1", 2, "validator.value", "unknown key for type no_unknown_tools"},
		{"type: max_tool_calls", 1, "validator.value", "missing"},
		{"type: max_tool_calls\nvalue: -1", 2, "validator.value", "want an integer >= 0, got number -1"},
		{"type: max_tool_calls\nvalue: \"3\"", 2, "validator.value", "want an integer >= 0"},
		{"type: tool_seq", 1, "validator.type", "one of: bfcl_ast, command, exact, exact_bullets, json_keys, llm_judge, max_sentences, max_tool_calls, max_words, no_unknown_tools, noop, one_of, regex_fullmatch, tool_invocation, tool_sequence"},
	}
	for _, tc := range cases {
		var s Spec
		err := yamlerr.Wrap("", nil, yaml.Unmarshal([]byte(tc.yaml), &s))
		var ye *yamlerr.Error
		if !errors.As(err, &ye) {
			t.Errorf("%q: err = %v, want *yamlerr.Error", tc.yaml, err)
			continue
		}
		if ye.Line != tc.line || ye.Field != tc.field || !strings.Contains(ye.Msg, tc.msg) {
			t.Errorf("%q:\n got line %d field %q msg %q\nwant line %d field %q msg containing %q", tc.yaml, ye.Line, ye.Field, ye.Msg, tc.line, tc.field, tc.msg)
		}
	}
	// allow_extra: false makes an all-optional list meaningful.
	spec(t, "type: tool_sequence\nallow_extra: false\ncalls: [{name: a, optional: true}]")
}

// Specs built in Go without their keys fail as invalid instead of panicking.
func TestInvalidTrajectorySpecs(t *testing.T) {
	for _, s := range []Spec{{Type: TypeToolSequence}, {Type: TypeMaxToolCalls}, {Type: TypeMaxToolCalls, Value: -1}} {
		o := s.Check(Input{Calls: calls(`a {}`)})
		if o.Pass == nil || *o.Pass || !strings.HasPrefix(o.Violation, "invalid validator") {
			t.Errorf("%+v: %+v", s, o)
		}
	}
}

// randomCalls builds a trajectory of n calls over a few names with random,
// sometimes broken, arguments.
func randomCalls(r *rand.Rand, n int) []toolparse.Call {
	names := []string{"lookup", "convert", "log", "x", ""}
	args := []string{`{"city":"Paris"}`, `{"from":"C","to":"F","value":18}`, `{}`, ``, `[`, `"s"`, `{"city":"\xff"}`, `{"value":1e308}`, `null`}
	out := make([]toolparse.Call, n)
	for i := range out {
		out[i] = toolparse.Call{Name: names[r.Intn(len(names))], Arguments: json.RawMessage(args[r.Intn(len(args))])}
	}
	return out
}

func TestTrajectoryNoPanicOnNoise(t *testing.T) {
	specs := []Spec{
		spec(t, lookupConvert),
		spec(t, `{type: tool_sequence, allow_extra: false, calls: [{name: lookup, optional: true}, {name: convert, args_regex: {value: "1.*"}}]}`),
		spec(t, `{type: no_unknown_tools}`),
		spec(t, `{type: max_tool_calls, value: 5}`),
	}
	r := rand.New(rand.NewSource(1))
	for i := 0; i < 200; i++ {
		in := Input{Calls: randomCalls(r, r.Intn(12)), Offered: []string{"lookup", "convert"}}
		for _, s := range specs {
			o := s.Check(in)
			if o.Pass == nil || (!*o.Pass && o.Violation == "") {
				t.Fatalf("%s: %+v", s.Type, o)
			}
			if _, err := json.Marshal(o.Parsed); err != nil {
				t.Fatal(err)
			}
		}
	}
	// A runaway trajectory stays bounded.
	long := Input{Calls: randomCalls(r, 5000)}
	if o := specs[1].Check(long); o.Pass == nil || len(o.Violation) > 500 {
		t.Errorf("long trajectory: %+v", o.Pass)
	}
}

// FuzzToolSequence: any trajectory gives a verdict without panicking; a
// pass names, for each expected call, an increasing call index whose call
// has that name and matching arguments (or -1 for a skipped optional call).
func FuzzToolSequence(f *testing.F) {
	for _, seed := range [][2]string{
		{"lookup\nconvert", `{"city":"Paris"}` + "\n" + `{"from":"C","to":"F","value":18}`},
		{"convert\nlookup", `{"from":"C","to":"F","value":18}` + "\n" + `{"city":"Paris"}`},
		{"lookup\nlog\nconvert", `{"city":"Paris","x":[1]}` + "\n\n" + `{"value":18,"to":"F","from":"C"}`},
		{"", ""},
		{"lookup", `{"city":`},
		{"x\ny\nz", "[]\nnull\n\"\xff\""},
	} {
		f.Add(seed[0], seed[1])
	}
	strict := spec(f, `{type: tool_sequence, allow_extra: false, calls: [{name: lookup, args_regex: {city: "P.*"}}, {name: log, optional: true}, {name: convert}]}`)
	loose := spec(f, lookupConvert)
	f.Fuzz(func(t *testing.T, names, args string) {
		ns := strings.Split(names, "\n")
		as := strings.Split(args, "\n")
		var cs []toolparse.Call
		for i, n := range ns {
			a := ""
			if i < len(as) {
				a = as[i]
			}
			cs = append(cs, toolparse.Call{Name: n, Arguments: json.RawMessage(a)})
		}
		for _, s := range []Spec{strict, loose} {
			o := s.Check(Input{Calls: cs})
			if o.Pass == nil || (!*o.Pass && o.Violation == "") {
				t.Fatalf("no verdict: %+v", o)
			}
			if !*o.Pass {
				continue
			}
			matched := o.Parsed.(map[string]any)["matched"].([]int)
			last := -1
			for i, j := range matched {
				if j == -1 {
					if !s.Calls[i].Optional {
						t.Fatalf("required call %d skipped", i)
					}
					continue
				}
				if j <= last || cs[j].Name != s.Calls[i].Name || !s.Calls[i].Match.Matches(cs[j].Arguments) {
					t.Fatalf("bad match %v for %q", matched, names)
				}
				last = j
			}
		}
	})
}

func BenchmarkToolSequence(b *testing.B) {
	s := spec(b, lookupConvert)
	in := Input{Calls: randomCalls(rand.New(rand.NewSource(2)), 30)}
	for b.Loop() {
		s.Check(in)
	}
}

// FuzzDecodeTrajectorySpec: any YAML gives a spec or a positioned error,
// never a panic, and a decoded spec judges any trajectory.
func FuzzDecodeTrajectorySpec(f *testing.F) {
	for _, seed := range []string{
		lookupConvert,
		`{type: tool_sequence, allow_extra: false, calls: [{name: a, optional: true}]}`,
		`{type: tool_sequence, calls: [{name: a, args_regex: {q: "(?s).*"}, args_subset: {n: {m: [1]}}}]}`,
		`{type: tool_sequence, calls: [{name: a, args: {}}, {name: b, args: &x {k: 1}}, {name: c, args: *x}]}`,
		`{type: no_unknown_tools}`,
		`{type: max_tool_calls, value: 0}`,
		`{type: max_tool_calls, value: 99999999999999999999}`,
		`{type: tool_sequence, calls: [{name: a, args_regex: {q: "\\"}}]}`,
		"type: tool_sequence\ncalls:\n  - name: a\n    args_subset: {x: .inf}\n",
	} {
		f.Add(seed)
	}
	traj := calls(`a {"q":"x","n":{"m":[1]}}`, `b {"k":1}`, `c`, `lookup {"city":"Paris"}`)
	f.Fuzz(func(t *testing.T, src string) {
		var s Spec
		err := yaml.Unmarshal([]byte(src), &s)
		if err != nil {
			return
		}
		o := s.Check(Input{Calls: traj, Offered: []string{"a", "b"}})
		if o.Pass != nil && !*o.Pass && o.Violation == "" {
			t.Fatalf("failure without violation: %s", src)
		}
		if _, err := json.Marshal(&s); err != nil {
			t.Fatalf("spec does not encode: %v", err)
		}
	})
}
