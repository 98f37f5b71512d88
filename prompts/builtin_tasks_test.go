package prompts

import (
	"encoding/json"
	"strings"
	"testing"

	"bench/toolparse"
	"bench/validators"
)

// rightRun is a task's one right trajectory: the calls, turn by turn, the
// results the script must give them, and the final answer.
type rightRun struct {
	turns  [][]toolparse.Call
	result []string // the scripted result of each call, in order (a prefix is enough)
	isErr  []bool
	answer string
	// wrong is a plausible wrong run whose checks must fail, and why.
	wrong     [][]toolparse.Call
	wrongText string
	why       string
}

func call(name, args string) toolparse.Call {
	return toolparse.Call{Name: name, Arguments: json.RawMessage(args), Source: toolparse.SourceNative}
}

func command(cmd string) toolparse.Call {
	b, _ := json.Marshal(map[string]string{"command": cmd})
	return toolparse.Call{Name: strings.Fields(cmd)[0], Arguments: b, Source: toolparse.SourceText}
}

// builtinRuns are the right (and one wrong) runs of the built-in tasks:
// two dependent calls, find then read, a failure to retry, no tool, two
// independent calls, a distractor, and a text-mode command.
var builtinRuns = map[string]rightRun{
	"A1": {
		turns:  [][]toolparse.Call{{call("get_weather", `{"city":"Paris"}`)}, {call("convert_temperature", `{"value":18,"from":"C","to":"F"}`)}},
		result: []string{`{"city": "Paris", "temp_c": 18`, "18 C = 64.4 F"}, isErr: []bool{false, false},
		answer: "64.4 °F",
		wrong:  [][]toolparse.Call{{call("get_weather", `{"city":"Paris"}`)}}, wrongText: "18 °C", why: "missing call 2 of 2: convert_temperature",
	},
	"A2": {
		turns:  [][]toolparse.Call{{call("find_files", `{"directory":"/srv","pattern":"*.yaml"}`)}, {call("read_file", `{"path":"/srv/web/config.yaml"}`)}},
		result: []string{"1 file found: /srv/web/config.yaml", "server:\n  host: 0.0.0.0\n  port: 8443"}, isErr: []bool{false, false},
		answer: "8443",
		wrong:  [][]toolparse.Call{{call("read_file", `{"path":"/srv/config.yaml"}`)}}, wrongText: "8080", why: "missing call 1 of 2: find_files",
	},
	"A3": {
		turns:  [][]toolparse.Call{{call("convert_currency", `{"amount":250,"from":"EUR","to":"USD"}`)}, {call("convert_currency", `{"amount":250,"from":"EUR","to":"USD"}`)}},
		result: []string{"error: 503", `{"amount": 271.05`}, isErr: []bool{true, false},
		answer: "271.05 USD",
		wrong:  [][]toolparse.Call{{call("convert_currency", `{"amount":250,"from":"EUR","to":"USD"}`)}}, wrongText: "The service is down.", why: "missing call 2 of 2",
	},
	"A4": {
		answer: "144",
		wrong:  [][]toolparse.Call{{call("web_search", `{"query":"12*12"}`)}}, wrongText: "144", why: "1 tool calls, expected at most 0",
	},
	"A5": {
		turns:  [][]toolparse.Call{{call("get_weather", `{"city":"Oslo"}`), call("get_weather", `{"city":"Madrid"}`)}},
		result: []string{`{"city": "Oslo", "temp_c": 4`, `{"city": "Madrid", "temp_c": 21`}, isErr: []bool{false, false},
		answer: "Madrid",
		wrong:  [][]toolparse.Call{{call("get_weather", `{"city":"Madrid"}`)}}, wrongText: "Madrid", why: "missing call 1 of 1: get_weather",
	},
	"A6": {
		turns:  [][]toolparse.Call{{call("get_order_status", `{"order_id":"A-1042"}`)}},
		result: []string{`{"order_id": "A-1042", "status": "shipped"`}, isErr: []bool{false},
		answer: "shipped, 2025-03-14",
		wrong:  [][]toolparse.Call{{call("get_order_status", `{"order_id":"A-1042"}`)}, {call("cancel_order", `{"order_id":"A-1042"}`)}}, wrongText: "shipped, 2025-03-14", why: "unexpected call 2: cancel_order",
	},
	"A7": {
		turns:  [][]toolparse.Call{{command("df -h /")}},
		result: []string{"Filesystem      Size  Used Avail Use% Mounted on\n/dev/sda1        98G   61G   33G"}, isErr: []bool{false},
		answer: "33G",
		wrong:  [][]toolparse.Call{{command("diskinfo --free /")}}, wrongText: "33G", why: "called unknown tool diskinfo",
	},
}

// Every built-in task has one right trajectory, which its script answers
// and its checks pass, and a wrong one its checks fail for the right
// reason.
func TestBuiltinTasks(t *testing.T) {
	ps, err := Builtin()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for i := range ps {
		p := &ps[i]
		if !p.Agentic() {
			continue
		}
		n++
		run, ok := builtinRuns[p.ID]
		if !ok {
			t.Errorf("%s: no right run in the test", p.ID)
			continue
		}
		t.Run(p.ID, func(t *testing.T) {
			sess := p.NewSession()
			var calls []toolparse.Call
			k := 0
			for _, turn := range run.turns {
				for _, c := range turn {
					r := sess.Answer(c.Name, c.Arguments)
					if !strings.HasPrefix(r.Text, run.result[k]) || r.IsError != run.isErr[k] || r.Unknown {
						t.Errorf("call %d %s %s: got %+v, want a result starting %q (error %v)", k+1, c.Name, c.Arguments, r, run.result[k], run.isErr[k])
					}
					k++
					calls = append(calls, c)
				}
			}
			if len(run.turns)+1 > p.MaxTurns {
				t.Errorf("the right run takes %d turns, max_turns is %d", len(run.turns)+1, p.MaxTurns)
			}
			in := validators.Input{Text: run.answer, ToolCalls: calls, Calls: calls, Offered: p.ToolNames()}
			if out := validators.CheckAll(p.Checks(), in); out.Pass == nil || !*out.Pass {
				t.Errorf("right run fails: %s", out.Violation)
			}
			var wrong []toolparse.Call
			for _, turn := range run.wrong {
				wrong = append(wrong, turn...)
			}
			in = validators.Input{Text: run.wrongText, ToolCalls: wrong, Calls: wrong, Offered: p.ToolNames()}
			if out := validators.CheckAll(p.Checks(), in); out.Pass == nil || *out.Pass || !strings.Contains(out.Violation, run.why) {
				t.Errorf("wrong run: pass %v violation %q, want it to fail with %q", out.Pass, out.Violation, run.why)
			}
		})
	}
	if n < 6 {
		t.Errorf("%d built-in agentic tasks, want at least 6", n)
	}
}
