package forsy

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Write validates t and writes it to path as indented JSON, atomically: a
// temporary file in the same folder, synced, then renamed over path, so a
// reader never sees half a trace. It creates path's folder if needed and
// refuses to write an invalid trace.
func Write(path string, t *Trace) error {
	if t == nil {
		return fmt.Errorf("write %s: trace is nil", path)
	}
	data, err := Marshal(t)
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := ValidateJSON(data); err != nil {
		return fmt.Errorf("write %s: invalid trace: %w", path, err)
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	tmp := f.Name()
	fail := func(err error) error {
		f.Close()
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", path, err)
	}
	if _, err := f.Write(data); err != nil {
		return fail(err)
	}
	// CreateTemp makes the file 0600; traces are shared like the rest of the
	// run directory.
	if err := f.Chmod(0o644); err != nil {
		return fail(err)
	}
	if err := f.Sync(); err != nil {
		return fail(err)
	}
	if err := f.Close(); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// Marshal encodes t as Write does: two-space indent, no HTML escaping (so
// "<" in a tool result stays readable), a final newline.
func Marshal(t *Trace) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(t); err != nil {
		return nil, fmt.Errorf("encode trace: %w", err)
	}
	return b.Bytes(), nil
}

func marshalCompact(v any) (string, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return "", err
	}
	return strings.TrimSuffix(b.String(), "\n"), nil
}

// Hash returns "sha256:" and the lowercase hex SHA-256 of s's bytes: the form
// the spec wants for artifact hashes, and the one a cell snapshot can use for
// a tool result's result_hash.
func Hash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// TraceID is a stable id for the cell's trace: its coordinates, made safe
// for a file name, and a short hash of them unaltered so two cells whose
// names differ only in unsafe characters still get different ids.
func TraceID(t Task) string {
	parts := []string{t.RunID, t.Provider, t.Model, t.ID, t.ThinkingLevel, strconv.Itoa(t.Repetition)}
	sum := sha256.Sum256([]byte(strings.Join(parts, "\x00")))
	var b strings.Builder
	b.WriteString("bench")
	for _, p := range []string{t.RunID, t.Provider, t.Model, t.ID, t.ThinkingLevel} {
		if p != "" {
			b.WriteString("_" + safeName(p))
		}
	}
	fmt.Fprintf(&b, "_r%d_%s", t.Repetition, hex.EncodeToString(sum[:4]))
	return b.String()
}

// FileName is the trace's file name inside the run directory's forsy/
// folder: TraceID and ".json".
func FileName(t Task) string { return TraceID(t) + ".json" }

// safeName keeps letters, digits, '.', '_', '-'; anything else becomes '-'. It
// caps the length so ids stay usable as file names.
func safeName(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '_', r == '-':
			b.WriteRune(r)
		default:
			b.WriteRune('-')
		}
		if b.Len() >= 48 {
			break
		}
	}
	return b.String()
}
