package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"bench/internal/exitcode"
	"bench/internal/record/results"
	"bench/internal/record/rundir"
)

// shardDir writes a minimal shard i/n run directory holding one cell of
// model m<i>.
func shardDir(t *testing.T, parent string, i, n int) string {
	t.Helper()
	dir := filepath.Join(parent, fmt.Sprintf("s%d", i))
	os.MkdirAll(dir, 0o755)
	w, err := results.Create(rundir.Path(dir, rundir.ResultsFile))
	if err != nil {
		t.Fatal(err)
	}
	w.Write(&results.Record{RecordType: results.RecordType, RunID: "s", Provider: "p", ProviderType: "ollama",
		Model: fmt.Sprintf("m%d", i), PromptID: "P0", AvailabilityStatus: "ok", Success: true, E2EMS: 10})
	w.Close()
	rundir.WriteJSON(rundir.Path(dir, rundir.ConfigFile), map[string]any{"run": map[string]any{"id": "s", "concurrency": 1}})
	rundir.WriteJSON(rundir.Path(dir, rundir.RunFile), &rundir.RunInfo{RunID: "s", EndReason: "finished", CellsPlanned: 1, CellsRecorded: 1, Shard: &rundir.Shard{Index: i, Count: n}})
	return dir
}

func TestMergeCLI(t *testing.T) {
	parent := t.TempDir()
	a, b := shardDir(t, parent, 1, 2), shardDir(t, parent, 2, 2)

	if code, _, stderr := runCLI("merge"); code != exitcode.Usage || !strings.Contains(stderr, "usage: bench merge") {
		t.Errorf("no arguments: exit %d\n%s", code, stderr)
	}
	if code, _, _ := runCLI("merge", "-h"); code != exitcode.OK {
		t.Errorf("-h: exit %d", code)
	}
	// A refusal is bad input: exit 2, the reason on stderr.
	code, _, stderr := runCLI("merge", filepath.Join(parent, "m1"), a)
	if code != exitcode.Usage || !strings.Contains(stderr, "bench merge: shard 2/2 missing") {
		t.Errorf("missing shard: exit %d\n%s", code, stderr)
	}
	// A flag after the directories is read as a flag.
	code, stdout, stderr := runCLI("merge", filepath.Join(parent, "m2"), a, "--allow-partial")
	if code != exitcode.OK || !strings.Contains(stdout, "merged 1 of 2 shards, 1 records (partial: shards [2] of 2 missing)") {
		t.Errorf("partial: exit %d\n%s%s", code, stdout, stderr)
	}
	code, stdout, stderr = runCLI("merge", filepath.Join(parent, "m3"), b, a)
	if code != exitcode.OK || !strings.Contains(stdout, "merged 2 of 2 shards, 2 records into "+filepath.Join(parent, "m3")) ||
		!strings.Contains(stdout, " m1 ") || !strings.Contains(stdout, " m2 ") {
		t.Errorf("merge: exit %d\n%s%s", code, stdout, stderr)
	}
	// An output directory that cannot be made is an I/O failure: exit 1.
	os.WriteFile(filepath.Join(parent, "file"), nil, 0o644)
	code, _, stderr = runCLI("merge", filepath.Join(parent, "file", "out"), a, b)
	if code != exitcode.IO || !strings.Contains(stderr, "bench merge:") {
		t.Errorf("unwritable output: exit %d\n%s", code, stderr)
	}
}

func TestParseInterleaved(t *testing.T) {
	for _, tt := range []struct {
		args []string
		pos  string
		flag bool
	}{
		{[]string{"out", "a", "b"}, "out a b", false},
		{[]string{"--allow-partial", "out", "a"}, "out a", true},
		{[]string{"out", "--allow-partial", "a"}, "out a", true},
		{[]string{"out", "a", "-allow-partial"}, "out a", true},
		{[]string{"out", "--", "-a", "--allow-partial"}, "out -a --allow-partial", false},
	} {
		var f mergeFlags
		fs := newMergeFlags(&f)
		pos, err := parseInterleaved(fs, tt.args)
		if err != nil || strings.Join(pos, " ") != tt.pos || f.allowPartial != tt.flag {
			t.Errorf("%q: %q, flag %v, %v", tt.args, pos, f, err)
		}
	}
}
