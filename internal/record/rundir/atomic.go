package rundir

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// WriteFile writes data to path through a temporary file in the same
// directory, synced and renamed over path: a reader (or a crash, or a full
// disk) sees the old file or the new one, never half of one or an empty one.
func WriteFile(path string, data []byte) error {
	f, err := CreateAtomic(path)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Abort()
		return err
	}
	return f.Commit()
}

// AtomicFile is a file written in full before it appears under its name,
// for files too large to hold in memory for WriteFile (a merged
// results.jsonl). Write to it, then Commit; Abort (or a crash) leaves path
// as it was.
type AtomicFile struct {
	path string
	f    *os.File
}

// CreateAtomic starts writing path through a temporary file in its directory.
func CreateAtomic(path string) (*AtomicFile, error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	f, err := os.CreateTemp(dir, "."+base+".*.tmp")
	if err != nil {
		return nil, writeErr(path, err)
	}
	return &AtomicFile{path: path, f: f}, nil
}

// Write appends p to the temporary file.
func (a *AtomicFile) Write(p []byte) (int, error) {
	n, err := a.f.Write(p)
	if err != nil {
		err = writeErr(a.path, err)
	}
	return n, err
}

// Commit syncs the temporary file and renames it over path.
func (a *AtomicFile) Commit() error {
	tmp := a.f.Name()
	err := a.f.Sync()
	if cerr := a.f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp, 0o644)
	}
	if err == nil {
		err = os.Rename(tmp, a.path)
	}
	if err != nil {
		os.Remove(tmp)
		return writeErr(a.path, err)
	}
	return nil
}

// Abort drops the temporary file; path is left as it was.
func (a *AtomicFile) Abort() {
	a.f.Close()
	os.Remove(a.f.Name())
}

// writeErr names the file once: "write run.json in DIR: no space left on
// device", not the temporary path and the real one.
func writeErr(path string, err error) error {
	var pe *fs.PathError
	var le *os.LinkError
	switch {
	case errors.As(err, &pe):
		err = pe.Err
	case errors.As(err, &le):
		err = le.Err
	}
	return fmt.Errorf("write %s: %w", path, err)
}

// WriteJSON writes v as indented JSON (HTML characters unescaped) with
// WriteFile.
func WriteJSON(path string, v any) error {
	data, err := MarshalJSON(v)
	if err != nil {
		return fmt.Errorf("encode %s: %w", filepath.Base(path), err)
	}
	return WriteFile(path, data)
}

// MarshalJSON is the encoding every JSON file of a run directory uses:
// two-space indent, a final newline, and <, >, & kept as they are.
func MarshalJSON(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// ReadJSON decodes the JSON file at path into v, naming the file in
// errors; the file is read as ReadFile reads it.
func ReadJSON(path string, v any) error {
	data, err := ReadFile(path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}
