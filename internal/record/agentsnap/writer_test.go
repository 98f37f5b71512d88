package agentsnap

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"bench/internal/record/results"
	"bench/internal/record/rundir"
)

func singleTurn() *results.Record {
	tl := "high"
	return &results.Record{RecordType: results.RecordType, Provider: "ollama", ProviderType: "ollama", Model: "qwen3:4b",
		ThinkingLevel: &tl, PromptID: "P3", Repetition: 2, AvailabilityStatus: results.StatusOK, Success: true,
		RawOutput: "Run `df -h`.", ToolCalls: []string{"df", "get_memory_usage"},
		ToolCallDetails: []results.ToolCall{
			{Name: "df", Arguments: json.RawMessage(`{"command":"df -h"}`), Source: results.SourceText, Match: "`df -h`"},
			{Name: "get_memory_usage", Arguments: json.RawMessage(`{}`), Source: results.SourceNative, ID: "call_1"},
		}}
}

// A single-turn cell: output, the detected calls in order with the hash of
// "" (no result went back), no error, the key in the fingerprint.
func TestFromRecordSingleTurn(t *testing.T) {
	s := FromRecord(singleTurn(), Input("Be brief.", "How much disk is free?"))
	if s.Input != "[system]\nBe brief.\n[user]\nHow much disk is free?" || s.Output != "Run `df -h`." || s.Error != nil || s.Model != "qwen3:4b" {
		t.Errorf("snapshot %+v", s)
	}
	empty := ResultHash("")
	if len(s.Tools) != 2 || s.Tools[0].Name != "df" || string(s.Tools[0].Args) != `{"command":"df -h"}` || s.Tools[0].ResultHash != empty ||
		s.Tools[1].Name != "get_memory_usage" || string(s.Tools[1].Args) != `{}` || s.Tools[1].ResultHash != empty {
		t.Errorf("tools %+v", s.Tools)
	}
	k := KeyOf(s)
	if k != (Key{Provider: "ollama", ProviderType: "ollama", Model: "qwen3:4b", ThinkingLevel: "high", PromptID: "P3", Repetition: 2}) {
		t.Errorf("key %v", k)
	}
	if _, err := Marshal(s); err != nil {
		t.Errorf("not writable: %v", err)
	}
}

// An agentic cell: every turn's calls, each with the hash of the result
// bench answered (the record's hash of the whole result; the stored,
// possibly cut result hashed when the record's hash is malformed).
func TestFromRecordAgentic(t *testing.T) {
	r := singleTurn()
	r.TurnDetails = []results.Turn{
		{Calls: []results.TurnCall{{Name: "get_weather", Arguments: json.RawMessage(`{"city":"Paris"}`), Result: "18 C", ResultHash: ResultHash("18 C (full)")}}},
		{Calls: []results.TurnCall{{Name: "convert", Arguments: json.RawMessage(`"18 to F"`), Result: "64.4", ResultHash: "md5:x"}}},
		{Text: "64.4 F"},
	}
	s := FromRecord(r, "p")
	if len(s.Tools) != 2 || s.Tools[0].ResultHash != ResultHash("18 C (full)") || s.Tools[1].ResultHash != ResultHash("64.4") ||
		string(s.Tools[1].Args) != `{"_raw":"18 to F"}` {
		t.Errorf("tools %+v", s.Tools)
	}
}

// A failed cell records "type: message"; a cell that ran but failed its
// validator has no error; names alone give {} arguments.
func TestFromRecordErrors(t *testing.T) {
	r := singleTurn()
	r.Success, r.AvailabilityStatus = false, results.StatusError
	r.FailureType, r.ErrorMessage = ptrTo(results.FailTimeout), ptrTo("no complete answer within run.timeout")
	r.ToolCallDetails = nil
	s := FromRecord(r, "p")
	if s.Error == nil || *s.Error != "timeout: no complete answer within run.timeout" {
		t.Errorf("error %v", s.Error)
	}
	if len(s.Tools) != 2 || string(s.Tools[0].Args) != "{}" {
		t.Errorf("tools from names %+v", s.Tools)
	}
	ok := singleTurn()
	ok.ObjectivePass, ok.Violation = ptrTo(false), ptrTo("want 4 bullets")
	if s := FromRecord(ok, "p"); s.Error != nil {
		t.Errorf("a validator failure is not an error: %v", *s.Error)
	}
}

func ptrTo[T any](v T) *T { return &v }

// The writer writes one readable file per cell under snapshots/, named by
// FileName, with bench's version, the server version and the model digest
// from the setup, and the prompt as sent.
func TestWriter(t *testing.T) {
	dir := t.TempDir()
	env := Env{Bench: "v9.9.9", Servers: map[string]Server{"ollama": {Version: "0.9.6", Digests: map[string]string{"qwen3:4b": "sha256:abc"}}}}
	w, err := NewWriter(dir, map[string]Prompt{"P3": {System: "Be brief.", Text: "Disk?"}}, env)
	if err != nil {
		t.Fatal(err)
	}
	recs := make([]*results.Record, 50)
	for i := range recs {
		recs[i] = singleTurn()
		recs[i].Repetition = i
		if err := w.AddRecord(recs[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(filepath.Join(dir, rundir.SnapshotsDir))
	if len(entries) != 50 {
		t.Fatalf("%d files, want 50", len(entries))
	}
	for _, r := range recs {
		k := KeyFor(r.Key())
		s, err := Read(filepath.Join(dir, rundir.SnapshotsDir, FileName(k)))
		if err != nil {
			t.Fatal(err)
		}
		fp := s.Fingerprint
		if KeyOf(s) != k || fp.Bench != "v9.9.9" || fp.ServerVersion != "0.9.6" || fp.ModelDigest != "sha256:abc" || s.Input != "[system]\nBe brief.\n[user]\nDisk?" {
			t.Errorf("%s: %+v", FileName(k), s)
		}
	}
}

// A prompt the writer does not know is said once; a write that fails is
// reported by Close with the count, and the run is never stopped.
func TestWriterErrors(t *testing.T) {
	dir := t.TempDir()
	w, err := NewWriter(dir, map[string]Prompt{}, Env{})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.AddRecord(singleTurn()); err == nil || !strings.Contains(err.Error(), `prompt "P3"`) {
		t.Errorf("unknown prompt: %v", err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}

	dir = t.TempDir()
	w, err = NewWriter(dir, map[string]Prompt{"P3": {Text: "x"}}, Env{})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(dir, rundir.SnapshotsDir), 0o500); err != nil {
		t.Fatal(err)
	}
	defer os.Chmod(filepath.Join(dir, rundir.SnapshotsDir), 0o755)
	if os.Geteuid() == 0 {
		// root writes through a read-only directory: block the name instead.
		os.Chmod(filepath.Join(dir, rundir.SnapshotsDir), 0o755)
		os.Mkdir(filepath.Join(dir, rundir.SnapshotsDir, FileName(KeyFor(singleTurn().Key()))), 0o755)
		os.WriteFile(filepath.Join(dir, rundir.SnapshotsDir, FileName(KeyFor(singleTurn().Key())), "x"), nil, 0o644)
	}
	for range 3 {
		w.AddRecord(singleTurn())
	}
	err = w.Close()
	if err == nil || !strings.Contains(err.Error(), "3 could not be written") {
		t.Errorf("Close: %v", err)
	}
	os.WriteFile(filepath.Join(dir, "file"), nil, 0o644)
	if _, err := NewWriter(filepath.Join(dir, "file"), nil, Env{}); err == nil {
		t.Error("NewWriter under a file: no error")
	}
}
