package merge

import (
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"bench/internal/record/results"
	"bench/internal/record/rundir"
)

// FuzzMerge is bench merge over a shard whose results.jsonl, run.json or
// config.json is anything (an empty input keeps the shard's own file):
// never a panic; a merge either refuses or fails, leaving no output
// directory behind, or writes a run directory whose results.jsonl reads
// back and whose run.json and summary.json are JSON. Seeded with issue 21's
// shards: lines lost or garbled, cells outside the plan or twice, rates
// whose sum is +Inf, a run.json that claims other counts, a run id with a
// newline. A merge that says it finished holds exactly the cells planned.
func FuzzMerge(f *testing.F) {
	cell := func(model, prompt, extra string) string {
		return `{"record_type":"result","run_id":"r","provider":"p","provider_type":"ollama","model":"` + model + `","prompt_id":"` + prompt +
			`","repetition":0,"availability_status":"ok","success":true,"e2e_ms":40` + extra + "}\n"
	}
	f.Add([]byte(cell("m1", "P0", "")), []byte{}, []byte{})
	f.Add([]byte("garbage\n{\"record_type\":\n"), []byte{}, []byte{})
	f.Add([]byte(cell("m1", "P0", "")+cell("m1", "P0", "")+cell("m9", "P7", "")), []byte{}, []byte{})
	f.Add([]byte(cell("m1", "P0", `,"tokens_per_s":1e308`)+cell("m1", "P1", `,"tokens_per_s":1e308`)), []byte{}, []byte{})
	f.Add([]byte{}, []byte(`{"run_id":"a\nb","end_reason":"finished","cells_planned":27000,"cells_recorded":27000,"shard":{"index":2,"count":2,"suites":["p/m1"]}}`), []byte{})
	f.Add([]byte{}, []byte(`{"shard":{"index":0,"count":-1}}`), []byte{})
	f.Add([]byte{}, []byte{}, []byte(`{"run":{"id":"x"},"providers":[]}`))
	f.Add([]byte{}, []byte("null"), []byte("null"))
	f.Fuzz(func(t *testing.T, res, run, cfg []byte) {
		parent := t.TempDir()
		dirs := []string{fakeShard{i: 1, n: 2, suites: 3}.write(t, parent), fakeShard{i: 2, n: 2, suites: 3}.write(t, parent)}
		for name, data := range map[string][]byte{rundir.ResultsFile: res, rundir.RunFile: run, rundir.ConfigFile: cfg} {
			if len(data) > 0 {
				if err := os.WriteFile(rundir.Path(dirs[1], name), data, 0o644); err != nil {
					t.Fatal(err)
				}
			}
		}
		out := filepath.Join(parent, "merged")
		r, err := Merge(out, dirs, Options{Warn: io.Discard})
		if err != nil {
			if _, serr := os.Stat(out); !errors.Is(serr, os.ErrNotExist) {
				t.Fatalf("a failed merge (%v) left %s behind", err, out)
			}
			return
		}
		n, cells := 0, map[results.Key]bool{}
		if _, _, err := results.ReadFile(rundir.Path(out, rundir.ResultsFile), true, func(_ int, rec *results.Record) error {
			n++
			cells[rec.Key()] = true
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if n != r.Records {
			t.Fatalf("merged results.jsonl reads %d records, the merge says %d", n, r.Records)
		}
		// A merge cannot lie: one that says finished holds every planned
		// cell, and no other.
		if r.Info.EndReason == "finished" && len(cells) != r.Info.CellsPlanned {
			t.Fatalf("merged as finished with %d cells of %d planned", len(cells), r.Info.CellsPlanned)
		}
		for _, name := range []string{rundir.RunFile, rundir.SummaryJSON} {
			b, err := os.ReadFile(rundir.Path(out, name))
			if err != nil || !json.Valid(b) {
				t.Fatalf("%s: %v", name, err)
			}
		}
	})
}
