package forsy

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

func TestWrite(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "run", "forsy", "trace.json") // folders made on demand
	tr := validTrace(t)
	if err := Write(path, tr); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := Marshal(tr)
	if !bytes.Equal(got, want) {
		t.Error("the file is not Marshal's output")
	}
	if err := ValidateJSON(got); err != nil {
		t.Errorf("the written file does not validate: %v", err)
	}
	if err := schemaCheck(t, got); err != nil {
		t.Errorf("the written file fails the upstream schema: %v", err)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o644 {
		t.Errorf("mode %v, want 0644", fi.Mode().Perm())
	}
	if !bytes.Contains(got, []byte(`"input": "{\"sku\":\"A1\"}"`)) {
		t.Error("the file is not indented JSON as documented")
	}

	// Overwriting replaces the file whole and leaves no temporary file.
	tr2, err := Build(buildCases()[3].cell)
	if err != nil {
		t.Fatal(err)
	}
	if err := Write(path, tr2); err != nil {
		t.Fatal(err)
	}
	got, _ = os.ReadFile(path)
	want, _ = Marshal(tr2)
	if !bytes.Equal(got, want) {
		t.Error("overwrite did not replace the file")
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	if len(entries) != 1 {
		t.Errorf("folder holds %d entries, want only the trace", len(entries))
	}
}

// TestWriteRefusesInvalid: an invalid trace is never written, and an
// existing good file stays as it was.
func TestWriteRefusesInvalid(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "trace.json")
	good := validTrace(t)
	if err := Write(path, good); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(path)
	bad := validTrace(t)
	bad.Steps[2].CausedBy = []int{9}
	err := Write(path, bad)
	if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "caused_by 9") {
		t.Fatalf("Write: %v, want an error naming the file and the problem", err)
	}
	after, _ := os.ReadFile(path)
	if !bytes.Equal(before, after) {
		t.Error("a refused write changed the file")
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("folder holds %d entries after a refused write", len(entries))
	}
}

// TestWriteFailsCleanly: a folder that cannot be written gives an error
// naming the path, and no temporary file is left.
func TestWriteFailsCleanly(t *testing.T) {
	dir := t.TempDir()
	blocker := filepath.Join(dir, "file")
	if err := os.WriteFile(blocker, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(blocker, "trace.json") // parent is a file
	if err := Write(path, validTrace(t)); err == nil || !strings.Contains(err.Error(), path) {
		t.Errorf("Write: %v, want an error naming %s", err, path)
	}
	// Renaming onto a directory fails after the temporary file was written.
	target := filepath.Join(dir, "target.json")
	if err := os.Mkdir(target, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(target, "keep"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Write(target, validTrace(t)); err == nil {
		t.Error("Write over a non-empty directory succeeded")
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".tmp") {
			t.Errorf("temporary file %s left behind", e.Name())
		}
	}
}

func TestTraceID(t *testing.T) {
	base := buildCases()[0].cell.Task
	id := TraceID(base)
	if id != TraceID(base) {
		t.Error("TraceID is not stable")
	}
	if !regexp.MustCompile(`^[A-Za-z0-9._-]+$`).MatchString(id) {
		t.Errorf("TraceID %q is not file-name safe", id)
	}
	if FileName(base) != id+".json" {
		t.Errorf("FileName %q", FileName(base))
	}
	seen := map[string]string{id: "base"}
	for name, mutate := range map[string]func(*Task){
		"model with colon vs dash": func(t *Task) { t.Model = "scripted-agent" },
		"repetition":               func(t *Task) { t.Repetition = 2 },
		"thinking":                 func(t *Task) { t.ThinkingLevel = "low" },
		"provider":                 func(t *Task) { t.Provider = "ollama_openai" },
		"run":                      func(t *Task) { t.RunID = "other" },
		"task":                     func(t *Task) { t.ID = "other" },
	} {
		tk := base
		mutate(&tk)
		got := TraceID(tk)
		if prev, dup := seen[got]; dup {
			t.Errorf("%s and %s share trace id %s", name, prev, got)
		}
		seen[got] = name
	}
	long := base
	long.Model = strings.Repeat("m/", 200)
	if got := TraceID(long); len(got) > 200 {
		t.Errorf("TraceID of a long model name is %d bytes", len(got))
	}
}

func TestHash(t *testing.T) {
	if got := Hash(""); got != "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855" {
		t.Errorf("Hash(\"\") = %s", got)
	}
}
