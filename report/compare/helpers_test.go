package compare

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"bench/internal/record/agentsnap"
	"bench/internal/record/results"
	"bench/internal/record/rundir"
)

type snapshotChange = agentsnap.Change

func ptr[T any](v T) *T { return &v }

// prompt is one prompt_set entry of a test run's config.json.
type prompt struct {
	ID         string          `json:"id"`
	Name       string          `json:"name"`
	System     string          `json:"system,omitempty"`
	Prompt     string          `json:"prompt"`
	Tools      json.RawMessage `json:"tools,omitempty"`
	Validator  json.RawMessage `json:"validator,omitempty"`
	Validators json.RawMessage `json:"validators,omitempty"`
}

// runSpec describes a test run directory.
type runSpec struct {
	id            string
	prompts       []prompt
	recs          []*results.Record
	bench, host   string
	serverVersion string
	digest        string
	noConfig      bool
	noRunInfo     bool
	noInventory   bool
	// info, when set, is run.json (its run id filled in).
	info *rundir.RunInfo
	// slo is config.json's slo block (none when nil).
	slo any
}

// defaultPrompts: P0 text, P1 a native tool prompt, P2 a text-tool prompt.
func defaultPrompts() []prompt {
	return []prompt{
		{ID: "P0", Name: "text", Prompt: "Say it: alpha", Validator: json.RawMessage(`{"type":"exact","value":"answer P0"}`)},
		{ID: "P1", Name: "tool", System: "Use the tool.", Prompt: "Memory? beta",
			Tools:     json.RawMessage(`[{"name":"get_memory_usage","parameters":{"type":"object"}}]`),
			Validator: json.RawMessage(`{"type":"tool_invocation","expected_tools":["get_memory_usage"]}`)},
		{ID: "P2", Name: "text_tool", Prompt: "Disk? gamma", Validator: json.RawMessage(`{"type":"tool_invocation","expected_tools":["df"]}`)},
	}
}

// rec is a passing ok cell of provider "ollama", model "m".
func rec(promptID string, rep int, mods ...func(*results.Record)) *results.Record {
	r := &results.Record{RecordType: results.RecordType, RunID: "x", Provider: "ollama", ProviderType: "ollama", Model: "m",
		PromptID: promptID, PromptName: promptID, Repetition: rep, AvailabilityStatus: results.StatusOK, Success: true,
		RawOutput: "answer " + promptID, ToolCalls: []string{}, ToolCallDetails: []results.ToolCall{},
		E2EMS: 100, TTFTMS: ptr(int64(20)), TokensPerS: ptr(50.0), ObjectivePass: ptr(true)}
	for _, m := range mods {
		m(r)
	}
	return r
}

func withOutput(s string) func(*results.Record) { return func(r *results.Record) { r.RawOutput = s } }

func failing(violation string) func(*results.Record) {
	return func(r *results.Record) { r.ObjectivePass, r.Violation = ptr(false), ptr(violation) }
}

func withCalls(expected []string, calls ...results.ToolCall) func(*results.Record) {
	return func(r *results.Record) {
		r.ExpectedTools = expected
		r.ToolCalls = []string{}
		r.ToolCallDetails = calls
		for _, c := range calls {
			r.ToolCalls = append(r.ToolCalls, c.Name)
		}
		r.ToolCallCount = len(calls)
		if len(expected) > 0 {
			ok := true
			for _, e := range expected {
				found := false
				for _, c := range calls {
					found = found || c.Name == e
				}
				ok = ok && found
			}
			r.ToolUseSuccess = ptr(ok)
			r.ObjectivePass = ptr(ok)
		}
	}
}

func call(name, args string) results.ToolCall {
	return results.ToolCall{Name: name, Arguments: json.RawMessage(args), Source: results.SourceNative}
}

func status(st, failType, msg string) func(*results.Record) {
	return func(r *results.Record) {
		r.AvailabilityStatus, r.Success, r.FailureType, r.ErrorMessage = st, false, ptr(failType), ptr(msg)
		r.ObjectivePass, r.RawOutput, r.ToolCalls, r.ToolCallDetails, r.TTFTMS, r.TokensPerS = nil, "", []string{}, []results.ToolCall{}, nil, nil
		if len(r.ExpectedTools) > 0 && (st == results.StatusOK || st == results.StatusError) {
			r.ToolUseSuccess = ptr(false)
		} else {
			r.ToolUseSuccess = nil
		}
	}
}

func latency(ttft, e2e int64, tps float64) func(*results.Record) {
	return func(r *results.Record) { r.TTFTMS, r.E2EMS, r.TokensPerS = &ttft, e2e, &tps }
}

// writeRun writes a run directory under parent and returns its path.
func writeRun(t testing.TB, parent string, s runSpec) string {
	t.Helper()
	dir := filepath.Join(parent, s.id)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	w, err := results.Create(filepath.Join(dir, rundir.ResultsFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range s.recs {
		r.RunID = s.id
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if s.bench == "" {
		s.bench = "v1.0.0"
	}
	if s.host == "" {
		s.host = "ci-1"
	}
	if s.serverVersion == "" {
		s.serverVersion = "0.9.6"
	}
	if s.digest == "" {
		s.digest = "sha256:" + hex.EncodeToString(make([]byte, 32))
	}
	if s.prompts == nil {
		s.prompts = defaultPrompts()
	}
	if !s.noConfig {
		cfg := map[string]any{
			"run":        map[string]any{"id": s.id, "concurrency": 2, "repetitions": 1, "timeout": "1m0s", "max_output_bytes": 65536},
			"providers":  []any{map[string]any{"name": "ollama", "type": "ollama", "concurrency": 2, "models": []string{"m"}}},
			"prompt_set": s.prompts,
		}
		if s.slo != nil {
			cfg["slo"] = s.slo
		}
		mustWriteJSON(t, filepath.Join(dir, rundir.ConfigFile), cfg)
	}
	if !s.noRunInfo {
		info := rundir.RunInfo{RunID: s.id, BenchVersion: s.bench, EndReason: "finished",
			CellsPlanned: len(s.recs), CellsRecorded: len(s.recs)}
		if s.info != nil {
			info = *s.info
			info.RunID = s.id
		}
		mustWriteJSON(t, filepath.Join(dir, rundir.RunFile), info)
	}
	if !s.noInventory {
		inv := map[string]any{
			"host":  map[string]any{"hostname": s.host, "os": "linux", "platform": "debian", "platform_version": "12", "arch": "x86_64"},
			"bench": map[string]any{"version": s.bench, "go_version": "go1.26.8"},
			"providers": []any{map[string]any{"name": "ollama", "type": "ollama", "models": []string{"m"}, "server_version": s.serverVersion,
				"server_models": []any{map[string]any{"name": "m:latest", "digest": s.digest}}}},
		}
		mustWriteJSON(t, filepath.Join(dir, rundir.InventoryFile), inv)
	}
	return dir
}

func mustWriteJSON(t testing.TB, path string, v any) {
	t.Helper()
	if err := rundir.WriteJSON(path, v); err != nil {
		t.Fatal(err)
	}
}

// treeHash is a digest of every file (path, mode, content) under dir, to
// show a compare left a directory as it was.
func treeHash(t testing.TB, dir string) string {
	t.Helper()
	var lines []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		line := path + " " + info.Mode().String()
		if !d.IsDir() {
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			sum := sha256.Sum256(data)
			line += " " + hex.EncodeToString(sum[:]) + " " + info.ModTime().String()
		}
		lines = append(lines, line)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(lines)
	sum := sha256.Sum256([]byte(filepath.Join(lines...)))
	return hex.EncodeToString(sum[:])
}

// cellOf finds a cell verdict by prompt and repetition.
func cellOf(t *testing.T, r *Result, promptID string, rep int) *Cell {
	t.Helper()
	for _, c := range r.Cells {
		if c.PromptID == promptID && c.Repetition == rep {
			return c
		}
	}
	t.Fatalf("no cell %s rep %d", promptID, rep)
	return nil
}

func paths(chs []snapshotChange) []string {
	out := []string{}
	for _, c := range chs {
		out = append(out, c.Path)
	}
	return out
}
