package merge

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"bench/internal/record/results"
	"bench/internal/record/rundir"
)

// keepLines rewrites a shard's results.jsonl with only the lines keep
// returns true for (1-based), and extra lines appended.
func keepLines(t *testing.T, dir string, keep func(int) bool, extra ...string) {
	t.Helper()
	p := rundir.Path(dir, rundir.ResultsFile)
	var out []string
	for i, l := range strings.Split(strings.TrimSuffix(readFile(t, p), "\n"), "\n") {
		if keep(i + 1) {
			out = append(out, l)
		}
	}
	out = append(out, extra...)
	if err := os.WriteFile(p, []byte(strings.Join(out, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

// A merge cannot lie: a shard that lost lines, whose lines do not parse,
// or that holds cells outside its plan is refused (exit 2 in the CLI),
// naming the shard and the cells, and nothing is left under the output;
// with --allow-partial it is merged as an unfinished run, its problems
// listed in run.json.
func TestMergeChecksShardsAgainstTheirPlan(t *testing.T) {
	outside := func(dir string, n int) []string {
		var lines []string
		for i := range n {
			r := record("x", 9, 0)
			r.PromptID = fmt.Sprintf("Q%d", i)
			b, _ := jsonLine(r)
			lines = append(lines, b)
		}
		return lines
	}
	tests := []struct {
		name string
		edit func(t *testing.T, dir string)
		want []string
	}{
		{"lost two of three lines", func(t *testing.T, dir string) { keepLines(t, dir, func(i int) bool { return i == 1 }) },
			[]string{"SHARD2 (shard 2/2): its results.jsonl holds 1 cells where its run.json says 3 were recorded",
				"2 of its 3 planned cells have no record (p/m1 P1 repetition 0; p/m1 P2 repetition 0)"}},
		{"all garbage", func(t *testing.T, dir string) {
			os.WriteFile(rundir.Path(dir, rundir.ResultsFile), []byte("garbage\n{\"record_type\": 1}\nnot json either\n"), 0o644)
		}, []string{"3 lines of its results.jsonl do not parse (line 1, 2, 3)", "holds 0 cells where its run.json says 3", "3 of its 3 planned cells have no record"}},
		{"cells outside the plan", func(t *testing.T, dir string) { keepLines(t, dir, func(int) bool { return true }, outside(dir, 27)...) },
			[]string{"27 cells outside its plan (p/m9 Q0 repetition 0;", "and 22 more"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			parent := t.TempDir()
			dirs := shards(t, parent, 2, 2) // shard 2 has suite p/m1
			tt.edit(t, dirs[1])
			out := filepath.Join(parent, "merged")
			_, err := Merge(out, dirs, Options{})
			var me *Error
			if !errors.As(err, &me) || me.Kind != Incomplete || !IsRefusal(err) {
				t.Fatalf("err %v, want a refusal of kind Incomplete", err)
			}
			msg := strings.ReplaceAll(err.Error(), dirs[1], "SHARD2")
			for _, w := range tt.want {
				if !strings.Contains(msg, w) {
					t.Errorf("refusal lacks %q:\n%s", w, msg)
				}
			}
			if strings.Contains(msg, dirs[0]) {
				t.Errorf("the whole shard 1 is named:\n%s", msg)
			}
			if entries, _ := os.ReadDir(parent); len(entries) != 2 {
				t.Errorf("left behind: %v", entries)
			}
			res, err := Merge(out, dirs, Options{AllowPartial: true})
			if err != nil {
				t.Fatal(err)
			}
			if res.Info.EndReason == "finished" || len(res.Info.Merge.Problems) != 1 || !strings.Contains(res.Info.Merge.Problems[0], dirs[1]) {
				t.Errorf("partial merge: end %s, problems %q", res.Info.EndReason, res.Info.Merge.Problems)
			}
			n := 0
			results.ReadFile(rundir.Path(out, rundir.ResultsFile), true, func(_ int, r *results.Record) error {
				if r.Model == "m9" {
					t.Errorf("a cell outside the plan was merged")
				}
				n++
				return nil
			})
			if n != res.Records {
				t.Errorf("%d records read back, %d merged", n, res.Records)
			}
		})
	}
}

// A merge killed (-9) leaves only its temporary directory beside the
// output, never a half-made one under the output's name; the next merge
// into the same place removes it and succeeds.
func TestMergeAfterAKilledMerge(t *testing.T) {
	parent := t.TempDir()
	dirs := shards(t, parent, 2, 2)
	out := filepath.Join(parent, "merged")
	stale := filepath.Join(parent, ".merged.merge-1234.tmp")
	os.MkdirAll(filepath.Join(stale, "snapshots"), 0o755)
	os.WriteFile(rundir.Path(stale, rundir.ResultsFile), []byte(`{"record_type":"result","run_id":"mer`), 0o644)
	os.WriteFile(rundir.Path(stale, rundir.LockFile), nil, 0o644)
	res, err := Merge(out, dirs, Options{})
	if err != nil || res.Records != 6 || res.Dir != out || res.Info.EndReason != "finished" {
		t.Fatalf("%+v, %v", res, err)
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("the killed merge's directory is still there (%v)", err)
	}
	if entries, _ := os.ReadDir(parent); len(entries) != 3 {
		t.Errorf("parent holds %v, want the two shards and the merge", entries)
	}
	// What the reports say of the run names it, not the temporary directory.
	for _, f := range []string{rundir.SummaryJSON, rundir.RunFile, rundir.ReportHTML, rundir.JUnitFile} {
		if b := readFile(t, rundir.Path(out, f)); strings.Contains(b, ".merge-") {
			t.Errorf("%s names the temporary directory", f)
		}
	}
	// An empty directory may be the output; one with anything in it not.
	empty := filepath.Join(parent, "empty")
	os.Mkdir(empty, 0o755)
	if _, err := Merge(empty, dirs, Options{}); err != nil {
		t.Errorf("into an empty directory: %v", err)
	}
	junk := filepath.Join(parent, "junk")
	os.MkdirAll(junk, 0o755)
	os.WriteFile(filepath.Join(junk, "notes.txt"), nil, 0o644)
	if _, err := Merge(junk, dirs, Options{}); !IsRefusal(err) || !strings.Contains(err.Error(), "not empty") {
		t.Errorf("into a directory with a file: %v", err)
	}
}

func jsonLine(r *results.Record) (string, error) {
	b, err := json.Marshal(r)
	return string(b), err
}
