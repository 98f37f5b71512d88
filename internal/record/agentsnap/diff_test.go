package agentsnap

import (
	"bytes"
	"encoding/json"
	"slices"
	"testing"

	"bench/internal/jsonvalue"
)

// pair is a baseline and a current snapshot with the diff agentsnap's rules
// give them. The same pairs are fed to the real agentsnap CLI
// (agentsnap_test.go), so each expectation here is checked against it too.
type pair struct {
	name      string
	base, cur *Snapshot
	kind      string
	changes   string   // JSON array, compared as JSON values
	ignored   []string // paths of Result.Ignored
}

// basePair is a tool prompt's snapshot: two calls, a system prompt.
func basePair() *Snapshot {
	return &Snapshot{
		Version: 1,
		Model:   "qwen3:4b",
		Input:   Input("You are a sysadmin.", "How much disk and memory is free?"),
		Output:  "Run `df -h` and `free -m`.",
		Tools: []Tool{
			NewTool("df", json.RawMessage(`{"command":"df -h","n":1}`), ""),
			NewTool("free", json.RawMessage(`{"command":"free -m"}`), ""),
		},
		Fingerprint: Fingerprint{
			Bench: "v1.0.0", Provider: "ollama", ProviderType: "ollama", PromptID: "P3",
			Repetition: 0, ServerVersion: "0.9.6", ModelDigest: "sha256:aaaa",
		},
	}
}

// edit is a deep copy of basePair changed by fn.
func edit(fn func(s *Snapshot)) *Snapshot {
	s := basePair()
	fn(s)
	return s
}

func tool(name, args, result string) Tool { return NewTool(name, json.RawMessage(args), result) }

func pairs() []pair {
	b := basePair
	h := ResultHash
	return []pair{
		{name: "identical", base: b(), cur: b(), kind: AgentsnapPassed, changes: `[]`},
		{name: "fingerprint only", base: b(), cur: edit(func(s *Snapshot) {
			s.Fingerprint.Bench, s.Fingerprint.ServerVersion, s.Fingerprint.ModelDigest = "v2.0.0", "0.10.0", "sha256:bbbb"
		}), kind: AgentsnapPassed, changes: `[]`},
		{name: "output changed", base: b(), cur: edit(func(s *Snapshot) { s.Output = "Use `df -h`, then <b>free</b> & \"top\".\n✓" }),
			kind: AgentsnapOutputDrift, changes: `[{"path":"output","from":"Run ` + "`df -h` and `free -m`" + `.","to":"Use ` + "`df -h`" + `, then <b>free</b> & \"top\".\n✓"}]`},
		{name: "result hash changed", base: b(), cur: edit(func(s *Snapshot) { s.Tools[1].ResultHash = h("Mem: 1G") }),
			kind: AgentsnapOutputDrift, changes: `[{"path":"tools[1].result_hash","from":"` + h("") + `","to":"` + h("Mem: 1G") + `"}]`},
		{name: "hash and output changed", base: b(), cur: edit(func(s *Snapshot) { s.Tools[0].ResultHash = h("x"); s.Output = "" }),
			kind: AgentsnapOutputDrift, changes: `[{"path":"tools[0].result_hash","from":"` + h("") + `","to":"` + h("x") + `"},
				{"path":"output","from":"Run ` + "`df -h` and `free -m`" + `.","to":""}]`},
		{name: "model changed", base: b(), cur: edit(func(s *Snapshot) { s.Model = "qwen3:8b" }),
			kind: AgentsnapOutputDrift, changes: `[{"path":"model","from":"qwen3:4b","to":"qwen3:8b"}]`},
		{name: "new error", base: b(), cur: edit(func(s *Snapshot) {
			s.Error, s.Output, s.Tools = ErrorString("timeout", "no first token after 90s"), "", nil
		}), kind: AgentsnapRegression, changes: `[{"path":"error","from":null,"to":"timeout: no first token after 90s"}]`},
		{name: "new error with same tools", base: b(), cur: edit(func(s *Snapshot) { s.Error = ErrorString("http_error", "500") }),
			kind: AgentsnapRegression, changes: `[{"path":"error","from":null,"to":"http_error: 500"}]`},
		{name: "error went away", base: edit(func(s *Snapshot) { s.Error = ErrorString("timeout", "") }), cur: b(),
			kind: AgentsnapPassed, changes: `[]`, ignored: []string{"error"}},
		{name: "error text changed", base: edit(func(s *Snapshot) { s.Error = ErrorString("timeout", "a") }),
			cur:  edit(func(s *Snapshot) { s.Error = ErrorString("auth_error", "401") }),
			kind: AgentsnapPassed, changes: `[]`, ignored: []string{"error"}},
		{name: "same error, output changed", base: edit(func(s *Snapshot) { s.Error = ErrorString("timeout", "a"); s.Output = "par" }),
			cur:  edit(func(s *Snapshot) { s.Error = ErrorString("timeout", "a"); s.Output = "partial" }),
			kind: AgentsnapOutputDrift, changes: `[{"path":"output","from":"par","to":"partial"}]`},
		{name: "input changed", base: b(), cur: edit(func(s *Snapshot) { s.Input = Input("", "How much disk is free?") }),
			kind: AgentsnapPassed, changes: `[]`, ignored: []string{"input"}},
		{name: "tool dropped", base: b(), cur: edit(func(s *Snapshot) { s.Tools = s.Tools[:1] }),
			kind: AgentsnapToolsChanged, changes: `[{"path":"tools[].name","from":["df","free"],"to":["df"]}]`},
		{name: "all tools dropped", base: b(), cur: edit(func(s *Snapshot) { s.Tools = nil }),
			kind: AgentsnapToolsChanged, changes: `[{"path":"tools[].name","from":["df","free"],"to":[]}]`},
		{name: "tool added", base: b(), cur: edit(func(s *Snapshot) { s.Tools = append(s.Tools, tool("top", `{}`, "")) }),
			kind: AgentsnapToolsChanged, changes: `[{"path":"tools[].name","from":["df","free"],"to":["df","free","top"]}]`},
		{name: "tool renamed, output changed too", base: b(), cur: edit(func(s *Snapshot) { s.Tools[1].Name = "vmstat"; s.Output = "x" }),
			kind: AgentsnapToolsChanged, changes: `[{"path":"tools[].name","from":["df","free"],"to":["df","vmstat"]}]`},
		{name: "same names as a multiset", base: edit(func(s *Snapshot) { s.Tools = []Tool{tool("a", `{}`, ""), tool("a", `{}`, ""), tool("b", `{}`, "")} }),
			cur:  edit(func(s *Snapshot) { s.Tools = []Tool{tool("a", `{}`, ""), tool("b", `{}`, ""), tool("b", `{}`, "")} }),
			kind: AgentsnapToolsChanged, changes: `[{"path":"tools[].name","from":["a","a","b"],"to":["a","b","b"]}]`},
		{name: "reordered", base: b(), cur: edit(func(s *Snapshot) { s.Tools[0], s.Tools[1] = s.Tools[1], s.Tools[0] }),
			kind: AgentsnapToolsReordered, changes: `[{"path":"tools[].order","from":["df","free"],"to":["free","df"]}]`},
		{name: "reordered with new error wins error", base: b(), cur: edit(func(s *Snapshot) {
			s.Tools[0], s.Tools[1] = s.Tools[1], s.Tools[0]
			s.Error = ErrorString("error", "stream cut")
		}), kind: AgentsnapRegression, changes: `[{"path":"error","from":null,"to":"error: stream cut"}]`},
		{name: "args changed", base: b(), cur: edit(func(s *Snapshot) { s.Tools[0].Args = json.RawMessage(`{"command":"df -k","n":1}`) }),
			kind: AgentsnapToolsChanged, changes: `[{"path":"tools[0].args","from":{"command":"df -h","n":1},"to":{"command":"df -k","n":1}}]`},
		{name: "args changed on both calls, output too", base: b(), cur: edit(func(s *Snapshot) {
			s.Tools[0].Args = json.RawMessage(`{}`)
			s.Tools[1].Args = json.RawMessage(`{"command":"free -m","extra":[1,{"b":null}]}`)
			s.Output = "changed"
		}), kind: AgentsnapToolsChanged, changes: `[{"path":"tools[0].args","from":{"command":"df -h","n":1},"to":{}},
			{"path":"tools[1].args","from":{"command":"free -m"},"to":{"command":"free -m","extra":[1,{"b":null}]}}]`},
		{name: "args key order and number spelling", base: b(), cur: edit(func(s *Snapshot) { s.Tools[0].Args = json.RawMessage(`{"n":1.0e0,"command":"df -h"}`) }),
			kind: AgentsnapPassed, changes: `[]`},
		{name: "args beyond double precision", base: edit(func(s *Snapshot) { s.Tools[0].Args = json.RawMessage(`{"n":9007199254740993}`) }),
			cur:  edit(func(s *Snapshot) { s.Tools[0].Args = json.RawMessage(`{"n":9007199254740992}`) }),
			kind: AgentsnapPassed, changes: `[]`},
		{name: "args negative zero", base: edit(func(s *Snapshot) { s.Tools[0].Args = json.RawMessage(`{"n":-0}`) }),
			cur:  edit(func(s *Snapshot) { s.Tools[0].Args = json.RawMessage(`{"n":0}`) }),
			kind: AgentsnapPassed, changes: `[]`},
		{name: "args overflow is null", base: edit(func(s *Snapshot) { s.Tools[0].Args = json.RawMessage(`{"n":1e400}`) }),
			cur:  edit(func(s *Snapshot) { s.Tools[0].Args = json.RawMessage(`{"n":null}`) }),
			kind: AgentsnapPassed, changes: `[]`},
		{name: "args array order matters", base: edit(func(s *Snapshot) { s.Tools[0].Args = json.RawMessage(`{"a":[1,2]}`) }),
			cur:  edit(func(s *Snapshot) { s.Tools[0].Args = json.RawMessage(`{"a":[2,1]}`) }),
			kind: AgentsnapToolsChanged, changes: `[{"path":"tools[0].args","from":{"a":[1,2]},"to":{"a":[2,1]}}]`},
		{name: "raw text args", base: edit(func(s *Snapshot) { s.Tools[0].Args = ArgsObject(json.RawMessage(`"df -h"`)) }),
			cur:  edit(func(s *Snapshot) { s.Tools[0].Args = ArgsObject(json.RawMessage(`df -h | sort`)) }),
			kind: AgentsnapToolsChanged, changes: `[{"path":"tools[0].args","from":{"_raw":"df -h"},"to":{"_raw":"df -h | sort"}}]`},
		{name: "no tools, unicode output", base: edit(func(s *Snapshot) { s.Tools = nil; s.Output = "naïve 🤖" }),
			cur:  edit(func(s *Snapshot) { s.Tools = nil; s.Output = "naïve 🤖\u2028" }),
			kind: AgentsnapOutputDrift, changes: `[{"path":"output","from":"naïve 🤖","to":"naïve 🤖\u2028"}]`},
		{name: "input and output changed", base: b(), cur: edit(func(s *Snapshot) { s.Input = "other"; s.Output = "other" }),
			kind: AgentsnapOutputDrift, changes: `[{"path":"output","from":"Run ` + "`df -h` and `free -m`" + `.","to":"other"}]`, ignored: []string{"input"}},
	}
}

func TestDiff(t *testing.T) {
	for _, p := range pairs() {
		t.Run(p.name, func(t *testing.T) {
			got := Diff(p.base, p.cur)
			if got.Agentsnap != p.kind {
				t.Errorf("agentsnap status %s, want %s (changes %s)", got.Agentsnap, p.kind, mustJSON(got.Changes))
			}
			if want := statusOf(p.kind); got.Status != want {
				t.Errorf("status %s, want %s", got.Status, want)
			}
			if !sameJSONText(t, mustJSON(got.Changes), []byte(p.changes)) {
				t.Errorf("changes\n%s\nwant\n%s", mustJSON(got.Changes), p.changes)
			}
			var paths []string
			for _, c := range got.Ignored {
				paths = append(paths, c.Path)
			}
			if !slices.Equal(paths, p.ignored) {
				t.Errorf("ignored %v, want %v", paths, p.ignored)
			}
		})
	}
}

func TestStatusOf(t *testing.T) {
	for kind, want := range map[string]string{
		AgentsnapPassed:         StatusMatch,
		AgentsnapOutputDrift:    StatusDrift,
		AgentsnapToolsReordered: StatusRegression,
		AgentsnapToolsChanged:   StatusRegression,
		AgentsnapRegression:     StatusRegression,
	} {
		if got := statusOf(kind); got != want {
			t.Errorf("statusOf(%s) = %s, want %s", kind, got, want)
		}
	}
}

func TestDiffChangesNeverNull(t *testing.T) {
	r := Diff(basePair(), basePair())
	if b := mustJSON(r); !bytes.Contains(b, []byte(`"changes":[]`)) {
		t.Errorf("a match must encode changes as [], got %s", b)
	}
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// sameJSONText compares two JSON texts as values, numbers as JavaScript
// reads them; both must be JSON.
func sameJSONText(t *testing.T, a, b []byte) bool {
	t.Helper()
	for _, x := range [][]byte{a, b} {
		if !json.Valid(x) {
			t.Fatalf("bad JSON %s", x)
		}
	}
	return jsonvalue.EqualText(a, b)
}
