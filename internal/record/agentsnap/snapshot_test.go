package agentsnap

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func strp(s string) *string { return &s }

// sample is a snapshot of a tool prompt with a system prompt, on a model
// whose name needs escaping.
func sample() *Snapshot {
	return &Snapshot{
		Version: 1,
		Model:   "qwen3:4b",
		Input:   Input("Be brief.", "How much disk is free?"),
		Output:  "Run `df -h` <now> & \"see\".\nÜnïcødé ✓",
		Tools: []Tool{
			NewTool("df", json.RawMessage(`{"command": "df -h", "n": 1.5}`), ""),
			NewTool("free", nil, "Mem: 1G"),
		},
		Fingerprint: Fingerprint{
			Bench:         "v1.2.0",
			Provider:      "ollama_openai",
			ProviderType:  "ollama_openai",
			PromptID:      "P3",
			ThinkingLevel: strp("high"),
			Repetition:    2,
			ServerVersion: "0.9.6",
			ModelDigest:   "sha256:0123",
		},
	}
}

func TestWriteReadRoundTrip(t *testing.T) {
	for name, s := range map[string]*Snapshot{
		"full": sample(),
		"error, no tools, no thinking": {
			Version: 1, Model: "org/model", Input: "hi", Error: ErrorString("timeout", "no first token after 90s"),
			Fingerprint: Fingerprint{Bench: "(devel)", Provider: "p", ProviderType: "ollama", PromptID: "P0"},
		},
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			k := KeyOf(s)
			if err := Write(dir, k, s); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(dir, FileName(k))
			got, err := Read(path)
			if err != nil {
				t.Fatal(err)
			}
			want := *s
			if want.Tools == nil {
				want.Tools = []Tool{} // written as [], read back as empty
			}
			if !reflect.DeepEqual(got, &want) {
				t.Errorf("read back\n%+v\nwant\n%+v", got, &want)
			}
			if d := Diff(s, got); d.Status != StatusMatch || len(d.Ignored) != 0 {
				t.Errorf("Diff(written, read) = %+v, want a match", d)
			}
			entries, _ := os.ReadDir(dir)
			if len(entries) != 1 {
				t.Errorf("dir holds %d entries, want only the snapshot (no temp file left)", len(entries))
			}
		})
	}
}

func TestMarshalFormat(t *testing.T) {
	s := &Snapshot{
		Version: 1, Model: "m", Input: "a<b", Output: "",
		Tools:       []Tool{NewTool("ls", json.RawMessage(`{ "path" : "/" }`), "")},
		Fingerprint: Fingerprint{Bench: "v1", Provider: "p", ProviderType: "t", PromptID: "P1"},
	}
	got, err := Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	want := `{
  "version": 1,
  "model": "m",
  "input": "a<b",
  "output": "",
  "tools": [
    {
      "name": "ls",
      "args": {
        "path": "/"
      },
      "result_hash": "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
    }
  ],
  "error": null,
  "fingerprint": {
    "bench": "v1",
    "provider": "p",
    "provider_type": "t",
    "prompt_id": "P1",
    "thinking_level": null,
    "repetition": 0
  }
}
`
	if string(got) != want {
		t.Errorf("Marshal =\n%s\nwant\n%s", got, want)
	}
	s.Tools = nil
	got, _ = Marshal(s)
	if !strings.Contains(string(got), `"tools": [],`) {
		t.Errorf("no tools must be written as [], got\n%s", got)
	}
}

func TestWriteOverwritesSameCellAtomically(t *testing.T) {
	dir := t.TempDir()
	s := sample()
	k := KeyOf(s)
	if err := Write(dir, k, s); err != nil {
		t.Fatal(err)
	}
	s.Output = "second answer"
	if err := Write(dir, k, s); err != nil {
		t.Fatalf("rewriting the same cell (a resumed run): %v", err)
	}
	got, err := Read(filepath.Join(dir, FileName(k)))
	if err != nil {
		t.Fatal(err)
	}
	if got.Output != "second answer" {
		t.Errorf("output = %q, want the second write", got.Output)
	}
}

func TestWriteRefuses(t *testing.T) {
	dir := t.TempDir()
	s := sample()
	k := KeyOf(s)

	other := k
	other.Repetition++
	if err := Write(dir, other, s); err == nil || !strings.Contains(err.Error(), "records cell") {
		t.Errorf("Write with a key the snapshot does not record: err = %v", err)
	}

	// A file at k's name that holds another cell (what a hash collision
	// would look like) is never overwritten.
	foreign := sample()
	foreign.Model = "another"
	data, _ := Marshal(foreign)
	path := filepath.Join(dir, FileName(k))
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	err := Write(dir, k, s)
	if err == nil || !strings.Contains(err.Error(), "already holds") || !strings.Contains(err.Error(), path) {
		t.Errorf("Write over another cell's file: err = %v", err)
	}
	if after, _ := os.ReadFile(path); string(after) != string(data) {
		t.Error("the other cell's file was changed")
	}

	bad := sample()
	bad.Tools[0].Args = json.RawMessage(`[1]`)
	if err := Write(dir, KeyOf(bad), bad); err == nil || !strings.Contains(err.Error(), "tools[0].args") {
		t.Errorf("Write with array args: err = %v", err)
	}
	if err := Write(filepath.Join(dir, "missing"), k, s); err == nil || !strings.Contains(err.Error(), "missing") {
		t.Errorf("Write into a missing dir: err = %v", err)
	}
}

func TestReadErrors(t *testing.T) {
	good := func(edit func(m map[string]any)) string {
		data, _ := Marshal(sample())
		var m map[string]any
		_ = json.Unmarshal(data, &m)
		edit(m)
		out, _ := json.MarshalIndent(m, "", "  ")
		return string(out)
	}
	tool0 := func(m map[string]any) map[string]any { return m["tools"].([]any)[0].(map[string]any) }
	for _, tc := range []struct {
		name, content, want string
	}{
		{"empty file", "", "unexpected end of JSON input"},
		{"syntax error", "{\n  \"version\": 1,\n  \"model\": oops\n}", "line 3, column 12"},
		{"array", "[1]", "array, want a JSON object"},
		{"null", "null", "not a JSON object"},
		{"version 2", good(func(m map[string]any) { m["version"] = 2 }), "field version: 2, want 1"},
		{"version string", good(func(m map[string]any) { m["version"] = "1" }), "field version: a string, want the number 1"},
		{"missing output", good(func(m map[string]any) { delete(m, "output") }), "field output: missing"},
		{"null model", good(func(m map[string]any) { m["model"] = nil }), "field model: null, want a string"},
		{"error object", good(func(m map[string]any) { m["error"] = map[string]any{"name": "E"} }), "field error: an object, want a string or null"},
		{"tools object", good(func(m map[string]any) { m["tools"] = map[string]any{} }), "field tools: an object, want an array"},
		{"tool not object", good(func(m map[string]any) { m["tools"] = []any{"df"} }), "field tools[0]: a string, want an object"},
		{"tool without name", good(func(m map[string]any) { delete(tool0(m), "name") }), "field tools[0].name: missing"},
		{"tool name number", good(func(m map[string]any) { tool0(m)["name"] = 3 }), "field tools[0].name: a number, want a string"},
		{"args array", good(func(m map[string]any) { tool0(m)["args"] = []any{} }), "field tools[0].args: an array, want a JSON object"},
		{"args missing", good(func(m map[string]any) { delete(tool0(m), "args") }), "field tools[0].args: missing"},
		{"bad hash", good(func(m map[string]any) { tool0(m)["result_hash"] = "abc123" }), `field tools[0].result_hash: "abc123", want sha256:`},
		{"fingerprint repetition", good(func(m map[string]any) {
			m["fingerprint"].(map[string]any)["repetition"] = "two"
		}), "field fingerprint.repetition: string, want int"},
		{"fingerprint array", good(func(m map[string]any) { m["fingerprint"] = []any{} }), "field fingerprint: an array, want an object"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "cell.json")
			if err := os.WriteFile(path, []byte(tc.content), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := Read(path)
			if err == nil {
				t.Fatalf("Read accepted %s", tc.content)
			}
			if !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %q, want the file name and %q", err, tc.want)
			}
		})
	}
	_, err := Read(filepath.Join(t.TempDir(), "nope.json"))
	if err == nil || !strings.Contains(err.Error(), "nope.json") {
		t.Errorf("missing file: err = %v", err)
	}
}

func TestReadAcceptsForeignExtras(t *testing.T) {
	// A trace agentsnap's recorder wrote: null tools and error, extra
	// fingerprint keys, no bench fields.
	s, err := Parse([]byte(`{"version":1,"model":"m","input":"i","output":"o","tools":null,"error":null,
		"fingerprint":{"node":"v22.0.0","agentsnap":"0.1.2"},"extra":true}`))
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Tools) != 0 || s.Error != nil || s.Output != "o" {
		t.Errorf("parsed %+v", s)
	}
}

func TestResultHash(t *testing.T) {
	for in, want := range map[string]string{
		"":    "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
		"abc": "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
	} {
		if got := ResultHash(in); got != want {
			t.Errorf("ResultHash(%q) = %s, want %s", in, got, want)
		}
	}
}

func TestArgsObject(t *testing.T) {
	for in, want := range map[string]string{
		``:                     `{}`,
		`  `:                   `{}`,
		`null`:                 `{}`,
		`{}`:                   `{}`,
		`{ "a" : [1, 2] }`:     `{"a":[1,2]}`,
		`"ls -l"`:              `{"_raw":"ls -l"}`,
		`[1,2]`:                `{"_raw":[1,2]}`,
		`42`:                   `{"_raw":42}`,
		`{"a": `:               `{"_raw":"{\"a\": "}`,
		"not json \xff <b>":    "{\"_raw\":\"not json \\ufffd <b>\"}",
		`{"a":1}{"b":2}`:       `{"_raw":"{\"a\":1}{\"b\":2}"}`,
		"\n{\"x\": true}\n":    `{"x":true}`,
		`{"nested":{"k":"v"}}`: `{"nested":{"k":"v"}}`,
	} {
		got := ArgsObject(json.RawMessage(in))
		if string(got) != want {
			t.Errorf("ArgsObject(%q) = %s, want %s", in, got, want)
		}
		if !json.Valid(got) || got[0] != '{' {
			t.Errorf("ArgsObject(%q) = %s is not a JSON object", in, got)
		}
	}
}

func TestInputAndErrorString(t *testing.T) {
	if got := Input("", "hello"); got != "hello" {
		t.Errorf("Input without system = %q", got)
	}
	if got := Input("Be brief.", "hello"); got != "[system]\nBe brief.\n[user]\nhello" {
		t.Errorf("Input with system = %q", got)
	}
	for _, tc := range []struct {
		typ, msg string
		want     *string
	}{
		{"", "", nil},
		{"timeout", "", strp("timeout")},
		{"", "boom", strp("boom")},
		{"http_error", "500 from server", strp("http_error: 500 from server")},
	} {
		got := ErrorString(tc.typ, tc.msg)
		if (got == nil) != (tc.want == nil) || got != nil && *got != *tc.want {
			t.Errorf("ErrorString(%q, %q) = %v, want %v", tc.typ, tc.msg, got, tc.want)
		}
	}
}

func TestReadKeysAreCaseSensitive(t *testing.T) {
	// agentsnap reads keys exactly; so must bench, though encoding/json
	// would match "MODEL" to Model.
	s, err := Parse([]byte(`{"version":1,"model":"a","MODEL":"b","input":"","output":"","tools":[{"name":"x","Name":"y","args":{},"result_hash":"` + ResultHash("") + `"}],"error":null}`))
	if err != nil {
		t.Fatal(err)
	}
	if s.Model != "a" || s.Tools[0].Name != "x" {
		t.Errorf("model %q, tool %q: a differently cased key was taken", s.Model, s.Tools[0].Name)
	}
	if _, err := Parse([]byte(`{"version":1,"MODEL":"b","input":"","output":"","tools":[],"error":null}`)); err == nil || !strings.Contains(err.Error(), "field model: missing") {
		t.Errorf("MODEL alone: err = %v, want model missing", err)
	}
}

func TestNew(t *testing.T) {
	for _, k := range []Key{
		{Provider: "ollama", ProviderType: "ollama", Model: "qwen3:4b", PromptID: "P0"},
		{Provider: "c", ProviderType: "claude_code_cli", Model: "sonnet", ThinkingLevel: "high", PromptID: "P9", Repetition: 3},
	} {
		s := New(k)
		if got := KeyOf(s); got != k {
			t.Errorf("KeyOf(New(%s)) = %s", k, got)
		}
		if (s.Fingerprint.ThinkingLevel == nil) != (k.ThinkingLevel == "") {
			t.Errorf("New(%s): thinking_level %v", k, s.Fingerprint.ThinkingLevel)
		}
		dir := t.TempDir()
		if err := Write(dir, k, s); err != nil {
			t.Fatalf("Write(New(%s)): %v", k, err)
		}
		fi, err := os.Stat(filepath.Join(dir, FileName(k)))
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != 0o644 {
			t.Errorf("snapshot file mode %v, want 0644", fi.Mode().Perm())
		}
	}
}
