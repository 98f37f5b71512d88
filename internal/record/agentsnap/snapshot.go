// Package agentsnap writes and reads one agent snapshot per cell, in the
// agent trace format that the agentsnap CLI (github.com/MukundaKatta/agentsnap,
// `agentsnap diff BASE CURRENT`) reads, and diffs two snapshots with
// agentsnap's own rules (see Diff).
//
// A snapshot is one JSON object, written indented with a trailing newline as
// agentsnap writes its own:
//
//	{
//	  "version": 1,
//	  "model": "qwen3:4b",
//	  "input": "[system]\nBe brief.\n[user]\nHow much disk is free?",
//	  "output": "Run `df -h`.",
//	  "tools": [{"name": "df", "args": {"command": "df -h"}, "result_hash": "sha256:e3b0…"}],
//	  "error": null,
//	  "fingerprint": {"bench": "v1.2.0", "provider": "ollama", "provider_type": "ollama",
//	                  "prompt_id": "P3", "thinking_level": null, "repetition": 0,
//	                  "server_version": "0.9.6", "model_digest": "sha256:…"}
//	}
//
// agentsnap ignores the fingerprint when diffing; bench keeps the cell's key
// there (with model) so a snapshot file says which cell it is.
//
// Layer: the record (one snapshot file per cell: the run writes them,
// compare reads them back).
package agentsnap

import (
	"bench/internal/record/rundir"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Version is the trace format version bench writes and the only one it reads.
const Version = 1

// Snapshot is one cell's agent trace.
type Snapshot struct {
	// Version is the format version, always 1.
	Version int `json:"version"`
	// Model is the model name as configured (the cell key's model).
	Model string `json:"model"`
	// Input is the prompt as sent; build it with Input so a system prompt is
	// included the same way everywhere.
	Input string `json:"input"`
	// Output is the answer text, "" when none came.
	Output string `json:"output"`
	// Tools are the tool calls in the order the model made them.
	Tools []Tool `json:"tools"`
	// Error is nil when the cell ran, else the failure type and message
	// (ErrorString). It must never hold a secret.
	Error *string `json:"error"`
	// Fingerprint says which cell and which setup produced the snapshot.
	Fingerprint Fingerprint `json:"fingerprint"`
}

// Tool is one tool call of a snapshot.
type Tool struct {
	// Name is the tool's name.
	Name string `json:"name"`
	// Args is always a JSON object ({} for a call without arguments); build
	// it with ArgsObject.
	Args json.RawMessage `json:"args"`
	// ResultHash is ResultHash of the result the harness returned to the
	// model, or of "" when none was returned.
	ResultHash string `json:"result_hash"`
}

// Fingerprint is the environment of a snapshot. agentsnap ignores it when
// diffing; bench reads the cell key back from it.
type Fingerprint struct {
	// Bench is bench's version.
	Bench        string `json:"bench"`
	Provider     string `json:"provider"`
	ProviderType string `json:"provider_type"`
	PromptID     string `json:"prompt_id"`
	// ThinkingLevel is null when the cell has none, as in results.jsonl.
	ThinkingLevel *string `json:"thinking_level"`
	Repetition    int     `json:"repetition"`
	// Stage is the cell's load stage, absent without a load profile.
	Stage string `json:"stage,omitempty"`
	// ServerVersion and ModelDigest are set when the provider reports them
	// (the CLI version for a CLI provider).
	ServerVersion string `json:"server_version,omitempty"`
	ModelDigest   string `json:"model_digest,omitempty"`
}

// ResultHash is "sha256:" and the lower-case hex SHA-256 of result, the form
// agentsnap's recorder uses for a string result.
func ResultHash(result string) string {
	sum := sha256.Sum256([]byte(result))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// Input is the snapshot input for a prompt sent with an optional system
// prompt. Without one it is the prompt itself; with one it is
//
//	"[system]\n" + system + "\n[user]\n" + prompt
//
// agentsnap's trace has a single input string, and this keeps both parts
// readable while a changed system prompt still changes the input.
func Input(system, prompt string) string {
	if system == "" {
		return prompt
	}
	return "[system]\n" + system + "\n[user]\n" + prompt
}

// ErrorString is the snapshot error for a failed cell: "type: message", or
// whichever of the two is set; nil when both are empty (no failure).
func ErrorString(failureType, message string) *string {
	var s string
	switch {
	case failureType == "" && message == "":
		return nil
	case failureType == "":
		s = message
	case message == "":
		s = failureType
	default:
		s = failureType + ": " + message
	}
	return &s
}

// ArgsObject turns a tool call's arguments as recorded into the JSON object a
// snapshot holds: empty or null is {}; an object is kept (compacted); any
// other JSON value, or text that is not JSON, goes under the one key "_raw"
// ({"_raw": "ls -l"}), so args stay an object as agentsnap expects while an
// argument change still shows.
func ArgsObject(raw json.RawMessage) json.RawMessage {
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) == 0 || string(trimmed) == "null" {
		return json.RawMessage("{}")
	}
	var buf bytes.Buffer
	if json.Compact(&buf, trimmed) != nil {
		return wrapRaw(JSONValue(string(raw)))
	}
	if trimmed[0] == '{' {
		return buf.Bytes()
	}
	return wrapRaw(buf.Bytes())
}

func wrapRaw(v []byte) json.RawMessage {
	return json.RawMessage(`{"_raw":` + string(v) + `}`)
}

// NewTool is a snapshot tool call: name, args as recorded (see ArgsObject),
// and the result the harness returned ("" when none).
func NewTool(name string, args json.RawMessage, result string) Tool {
	return Tool{Name: name, Args: ArgsObject(args), ResultHash: ResultHash(result)}
}

// New is an empty snapshot of cell k: version 1, the model and the
// fingerprint's key fields set (thinking_level null when k has none), so
// Write(dir, k, s) accepts it. The caller fills in the rest.
func New(k Key) *Snapshot {
	s := &Snapshot{Version: Version, Model: k.Model, Tools: []Tool{}, Fingerprint: Fingerprint{
		Provider: k.Provider, ProviderType: k.ProviderType, PromptID: k.PromptID, Repetition: k.Repetition, Stage: k.Stage,
	}}
	if k.ThinkingLevel != "" {
		tl := k.ThinkingLevel
		s.Fingerprint.ThinkingLevel = &tl
	}
	return s
}

// KeyOf is the cell key a snapshot records (its model and fingerprint).
func KeyOf(s *Snapshot) Key {
	k := Key{
		Provider:     s.Fingerprint.Provider,
		ProviderType: s.Fingerprint.ProviderType,
		Model:        s.Model,
		PromptID:     s.Fingerprint.PromptID,
		Repetition:   s.Fingerprint.Repetition,
		Stage:        s.Fingerprint.Stage,
	}
	if s.Fingerprint.ThinkingLevel != nil {
		k.ThinkingLevel = *s.Fingerprint.ThinkingLevel
	}
	return k
}

// Marshal is the file content of s: indented JSON with a trailing newline,
// tools written as [] when there are none, HTML characters unescaped.
func Marshal(s *Snapshot) ([]byte, error) {
	if err := validate(s); err != nil {
		return nil, err
	}
	c := *s
	if c.Tools == nil {
		c.Tools = []Tool{}
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(&c); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// Write writes s as dir/FileName(k), atomically: a temporary file in dir,
// synced, then renamed over the target, so a reader (or a killed run) never
// sees half a snapshot. The snapshot must record the key k; a file already
// at that name that records a different key is refused rather than
// overwritten, so a file-name collision can never lose a cell silently.
func Write(dir string, k Key, s *Snapshot) error {
	if got := KeyOf(s); got != k {
		return fmt.Errorf("snapshot: write %s: the snapshot records cell %s, not %s", k, got, k)
	}
	data, err := Marshal(s)
	if err != nil {
		return fmt.Errorf("snapshot: write %s: %w", k, err)
	}
	path := filepath.Join(dir, FileName(k))
	if old, err := Read(path); err == nil && KeyOf(old) != k {
		return fmt.Errorf("snapshot: %s already holds cell %s; refusing to overwrite it with %s", path, KeyOf(old), k)
	}
	tmp, err := os.CreateTemp(dir, ".snapshot-*.tmp")
	if err != nil {
		return fmt.Errorf("snapshot: write %s: %w", path, err)
	}
	defer os.Remove(tmp.Name())              // a no-op once renamed
	if err := tmp.Chmod(0o644); err != nil { // CreateTemp makes it 0600
		tmp.Close()
		return fmt.Errorf("snapshot: write %s: %w", path, err)
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return fmt.Errorf("snapshot: write %s: %w", path, err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("snapshot: write %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("snapshot: write %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("snapshot: write %s: %w", path, err)
	}
	return nil
}

// Read reads and checks one snapshot file. Errors name the file and, for a
// syntax error, the line and column; for a bad field, its path
// (tools[2].args).
func Read(path string) (*Snapshot, error) {
	data, err := rundir.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("snapshot: %w", err)
	}
	s, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("snapshot %s: %w", path, err)
	}
	return s, nil
}

// Parse decodes and checks a snapshot's bytes (Read without the file).
func Parse(data []byte) (*Snapshot, error) {
	if s, ok := parseFast(data); ok {
		return s, nil
	}
	return parseChecked(data)
}

// wire is the file's shape with every required field a pointer, so one
// Unmarshal can tell a complete snapshot from one with a missing or null
// field.
type wire struct {
	Version     *int         `json:"version"`
	Model       *string      `json:"model"`
	Input       *string      `json:"input"`
	Output      *string      `json:"output"`
	Tools       *[]wireTool  `json:"tools"`
	Error       *string      `json:"error"`
	Fingerprint *Fingerprint `json:"fingerprint"`
}

type wireTool struct {
	Name       *string         `json:"name"`
	Args       json.RawMessage `json:"args"`
	ResultHash *string         `json:"result_hash"`
}

// parseFast decodes a well-formed snapshot in one pass, the common case
// (bench's own files). Anything unusual (a syntax or type error, a missing
// or null field, a bad value) returns !ok, and parseChecked then decodes
// field by field to accept it or say exactly what is wrong.
func parseFast(data []byte) (*Snapshot, bool) {
	if !plainKeys(data) {
		return nil, false
	}
	var w wire
	if json.Unmarshal(data, &w) != nil || w.Version == nil || w.Model == nil ||
		w.Input == nil || w.Output == nil || w.Tools == nil {
		return nil, false
	}
	s := &Snapshot{Version: *w.Version, Model: *w.Model, Input: *w.Input, Output: *w.Output, Error: w.Error,
		Tools: make([]Tool, len(*w.Tools))}
	if w.Fingerprint != nil {
		s.Fingerprint = *w.Fingerprint
	}
	for i, t := range *w.Tools {
		if t.Name == nil || t.ResultHash == nil || len(t.Args) == 0 {
			return nil, false
		}
		var args bytes.Buffer
		if json.Compact(&args, t.Args) != nil {
			return nil, false
		}
		s.Tools[i] = Tool{Name: *t.Name, Args: args.Bytes(), ResultHash: *t.ResultHash}
	}
	if validate(s) != nil {
		return nil, false
	}
	return s, true
}

// plainKeys reports whether every object key in data is made of a-z, 0-9
// and "_" only, with no escapes. Unmarshal into a struct matches keys case
// insensitively ("MODEL" fills Model) while agentsnap and parseChecked do
// not; such keys can only differ from bench's own if they hold another
// byte, so the fast path leaves them to parseChecked.
func plainKeys(data []byte) bool {
	for i := 0; i < len(data); i++ {
		if data[i] != '"' {
			continue
		}
		plain := true
		for i++; i < len(data) && data[i] != '"'; i++ {
			c := data[i]
			if c == '\\' {
				plain = false
				i++ // skip the escaped byte, which may be a quote
				continue
			}
			if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '_') {
				plain = false
			}
		}
		if plain {
			continue
		}
		// A string that is not plain: fine as a value, not as a key.
		j := i + 1
		for j < len(data) && (data[j] == ' ' || data[j] == '\t' || data[j] == '\n' || data[j] == '\r') {
			j++
		}
		if j < len(data) && data[j] == ':' {
			return false
		}
	}
	return true
}

// parseChecked decodes field by field, so a wrong type is reported with the
// field's name and bench's own wording.
func parseChecked(data []byte) (*Snapshot, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil {
		return nil, describeJSONError(data, err)
	}
	if top == nil {
		return nil, errors.New("not a JSON object")
	}
	s := &Snapshot{}
	for _, f := range []struct {
		name     string
		dst      any
		required bool
	}{
		{"version", &s.Version, true},
		{"model", &s.Model, true},
		{"input", &s.Input, true},
		{"output", &s.Output, true},
		{"tools", &s.Tools, true},
		{"error", &s.Error, false}, // missing is no error, as agentsnap reads it
		{"fingerprint", &s.Fingerprint, false},
	} {
		raw, ok := top[f.name]
		if !ok {
			if f.required {
				return nil, fmt.Errorf("field %s: missing", f.name)
			}
			continue
		}
		if err := decodeField(f.name, raw, f.dst); err != nil {
			return nil, err
		}
	}
	if err := validate(s); err != nil {
		return nil, err
	}
	return s, nil
}

// decodeField decodes one top-level field, rejecting null where a value is
// needed (json.Unmarshal would leave the zero value and hide it).
func decodeField(name string, raw json.RawMessage, dst any) error {
	if string(bytes.TrimSpace(raw)) == "null" {
		switch name {
		case "error", "tools", "fingerprint":
			return nil // no error; no tools; an empty fingerprint
		}
		return fmt.Errorf("field %s: null, want %s", name, wantType(name))
	}
	if name == "tools" {
		var items []json.RawMessage
		if err := json.Unmarshal(raw, &items); err != nil {
			return fmt.Errorf("field tools: %s, want an array", jsonKind(raw))
		}
		tools := make([]Tool, len(items))
		for i, it := range items {
			if err := decodeTool(it, &tools[i]); err != nil {
				return fmt.Errorf("field tools[%d]%s", i, err)
			}
		}
		*(dst.(*[]Tool)) = tools
		return nil
	}
	if err := json.Unmarshal(raw, dst); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			return fmt.Errorf("field %s.%s: %s, want %s", name, te.Field, te.Value, te.Type)
		}
		return fmt.Errorf("field %s: %s, want %s", name, jsonKind(raw), wantType(name))
	}
	return nil
}

func decodeTool(raw json.RawMessage, t *Tool) error {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil || m == nil {
		return fmt.Errorf(": %s, want an object", jsonKind(raw))
	}
	for _, f := range []struct {
		name string
		dst  *string
	}{{"name", &t.Name}, {"result_hash", &t.ResultHash}} {
		v, ok := m[f.name]
		if !ok {
			return fmt.Errorf(".%s: missing", f.name)
		}
		if err := json.Unmarshal(v, f.dst); err != nil || string(bytes.TrimSpace(v)) == "null" {
			return fmt.Errorf(".%s: %s, want a string", f.name, jsonKind(v))
		}
	}
	args, ok := m["args"]
	if !ok {
		return errors.New(".args: missing")
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, args); err != nil {
		return fmt.Errorf(".args: %v", err)
	}
	t.Args = buf.Bytes()
	return nil
}

// validate checks what the format promises beyond JSON types.
func validate(s *Snapshot) error {
	if s.Version != Version {
		return fmt.Errorf("field version: %d, want %d", s.Version, Version)
	}
	for i, t := range s.Tools {
		if t.Name == "" {
			return fmt.Errorf("field tools[%d].name: empty", i)
		}
		if a := bytes.TrimSpace(t.Args); len(a) == 0 || a[0] != '{' || !json.Valid(a) {
			return fmt.Errorf("field tools[%d].args: %s, want a JSON object", i, jsonKind(t.Args))
		}
		if !validHash(t.ResultHash) {
			return fmt.Errorf("field tools[%d].result_hash: %q, want sha256: and 64 lower-case hex digits", i, t.ResultHash)
		}
	}
	return nil
}

func validHash(h string) bool {
	hexPart, ok := strings.CutPrefix(h, "sha256:")
	if !ok || len(hexPart) != 64 {
		return false
	}
	for _, c := range hexPart {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

func wantType(field string) string {
	switch field {
	case "version":
		return "the number 1"
	case "error":
		return "a string or null"
	case "fingerprint":
		return "an object"
	}
	return "a string"
}

// jsonKind names the JSON type of raw for an error message.
func jsonKind(raw json.RawMessage) string {
	b := bytes.TrimSpace(raw)
	if len(b) == 0 {
		return "nothing"
	}
	if !json.Valid(b) {
		return "invalid JSON"
	}
	switch b[0] {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number"
}

// describeJSONError turns a syntax error's byte offset into line:column.
func describeJSONError(data []byte, err error) error {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		line, col := lineCol(data, se.Offset)
		return fmt.Errorf("line %d, column %d: %v", line, col, err)
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return fmt.Errorf("%s, want a JSON object", te.Value)
	}
	return err
}

func lineCol(data []byte, offset int64) (line, col int) {
	if offset > int64(len(data)) {
		offset = int64(len(data))
	}
	before := data[:offset]
	line = bytes.Count(before, []byte("\n")) + 1
	col = int(offset) - (bytes.LastIndexByte(before, '\n') + 1)
	if col < 1 {
		col = 1
	}
	return line, col
}
