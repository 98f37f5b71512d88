package compare

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"bench/internal/record/results"
	"bench/internal/record/rundir"
)

// seedLines are results lines of every shape compare reads.
func seedLines(t testing.TB) [][]byte {
	memCall := call("get_memory_usage", `{"unit":"MB"}`)
	recs := []*results.Record{
		rec("P0", 0),
		rec("P0", 1, failing("want x")),
		rec("P1", 0, withCalls([]string{"get_memory_usage"}, memCall)),
		rec("P0", 2, status(results.StatusSkippedUnavailable, results.FailConnectionRefused, "refused")),
		rec("P1", 1, func(r *results.Record) { r.TurnDetails = []results.Turn{resultsTurn(0, "18 C")} }),
	}
	var out [][]byte
	for _, r := range recs {
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, b)
	}
	out = append(out, []byte(`{"record_type":"result","provider":"p","provider_type":"t","model":"m","prompt_id":"x","repetition":0,"availability_status":"ok","cold_start":true,"schema_version":1}`))
	return out
}

// FuzzDecodeLine: any line is read as compare reads it (strictly, its
// answers and calls decoded) or refused with a line error; never a panic,
// and an accepted line has a key and a digest.
func FuzzDecodeLine(f *testing.F) {
	for _, l := range seedLines(f) {
		f.Add(l)
	}
	f.Add([]byte(`{"record_type":"result","repetition":null}`))
	f.Add([]byte(`{"raw_output":1e999,"tool_call_details":[{"arguments":`))
	f.Fuzz(func(t *testing.T, line []byte) {
		err := results.NewReader(bytes.NewReader(line)).Scan(scanOptions, func(_ int, r *results.Record) error {
			_ = r.Key()
			snapshotDigest(r)
			return nil
		})
		var le *results.LineError
		if err != nil && !errors.As(err, &le) {
			t.Errorf("not a line error: %v", err)
		}
	})
}

// FuzzResultsFile: any results.jsonl content, as base and as new against
// a good run, gives a result or an *InputError; never a panic.
func FuzzResultsFile(f *testing.F) {
	lines := seedLines(f)
	f.Add(bytes.Join(lines, []byte("\n")))
	f.Add(append(bytes.Join(lines[:2], []byte("\n")), []byte("\n{\"record_type\":\"res")...))
	f.Add([]byte("\n\n"))
	f.Add([]byte("{}\n[]\nnull\n"))
	// Issue 21's cases: rates whose sum is +Inf, a resumed run's repeated
	// cell, a 250-character model, a run id with a newline.
	huge := `{"record_type":"result","provider":"p","provider_type":"t","model":"m","prompt_id":"P0","repetition":0,"availability_status":"ok","success":true,"tokens_per_s":1e308}`
	f.Add([]byte(huge + "\n" + strings.Replace(huge, `"P0"`, `"P1"`, 1) + "\n"))
	f.Add(append(append(bytes.Clone(lines[0]), '\n'), lines[0]...))
	f.Add([]byte(`{"record_type":"result","run_id":"a\nb","provider":"p","provider_type":"t","model":"` + strings.Repeat("m", 250) + `","prompt_id":"P0","repetition":0,"availability_status":"ok"}`))
	dir := f.TempDir()
	good := writeRun(f, dir, runSpec{id: "good", recs: []*results.Record{rec("P0", 0), rec("P1", 0, failing("x")), rec("P0", 2)}})
	f.Fuzz(func(t *testing.T, data []byte) {
		run := filepath.Join(t.TempDir(), "fuzzed")
		if err := os.MkdirAll(run, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(run, rundir.ResultsFile), data, 0o644); err != nil {
			t.Fatal(err)
		}
		for _, pair := range [][2]string{{good, run}, {run, good}, {run, run}} {
			res, err := Compare(pair[0], pair[1], DefaultOptions())
			var ie *InputError
			if err != nil && !errors.As(err, &ie) {
				t.Fatalf("not an InputError: %v", err)
			}
			if err == nil {
				if _, err := json.Marshal(res); err != nil {
					t.Fatalf("result does not encode: %v", err)
				}
				var md, xml bytes.Buffer
				if err := WriteMarkdown(&md, res); err != nil {
					t.Fatal(err)
				}
				if err := WriteJUnit(&xml, res); err != nil {
					t.Fatal(err)
				}
				if err := WriteText(&md, res); err != nil {
					t.Fatal(err)
				}
			}
		}
	})
}

// FuzzConfigFile: any config.json gives prompts or an *InputError naming
// it.
func FuzzConfigFile(f *testing.F) {
	f.Add([]byte(`{"run":{"id":"x","timeout":"1m0s"},"prompt_set":[{"id":"P0","prompt":"x","tools":[{"name":"t"}],"validator":{"type":"noop"}}]}`))
	f.Add([]byte(`{"prompt_set":[null]}`))
	f.Add([]byte(`{"prompt_set":[{"id":""}]}`))
	dir := f.TempDir()
	good := writeRun(f, dir, runSpec{id: "good", recs: []*results.Record{rec("P0", 0), rec("P1", 0)}})
	f.Fuzz(func(t *testing.T, data []byte) {
		run := writeRun(t, t.TempDir(), runSpec{id: "fuzzed", recs: []*results.Record{rec("P0", 0, withOutput("x")), rec("P1", 0)}})
		if err := os.WriteFile(filepath.Join(run, rundir.ConfigFile), data, 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := Compare(good, run, DefaultOptions())
		var ie *InputError
		if err != nil && (!errors.As(err, &ie) || ie.File != filepath.Join(run, rundir.ConfigFile)) {
			t.Fatalf("error %v does not name config.json", err)
		}
	})
}

// FuzzRunFile: any run.json (a resumed, merged or hand-edited run's) gives
// a result or an *InputError; never a panic. Seeded with the run.json
// shapes of issue 21: a merge's, a shard's, an id with a newline.
func FuzzRunFile(f *testing.F) {
	f.Add([]byte(`{"run_id":"x","end_reason":"finished","cells_planned":3,"cells_recorded":3,"by_status":{"ok":3}}`))
	f.Add([]byte(`{"run_id":"a\nbench: finished","end_reason":"interrupted","cells_planned":-1,"cells_recorded":27000}`))
	f.Add([]byte(`{"merge":{"count":2,"shards":[{"index":1}],"missing":[2]},"shard":{"index":0,"count":0}}`))
	f.Add([]byte(`{"cells_planned":1e308}`))
	f.Add([]byte("null"))
	dir := f.TempDir()
	good := writeRun(f, dir, runSpec{id: "good", recs: []*results.Record{rec("P0", 0), rec("P1", 0)}})
	f.Fuzz(func(t *testing.T, data []byte) {
		run := writeRun(t, t.TempDir(), runSpec{id: "fuzzed", recs: []*results.Record{rec("P0", 0, withOutput("x")), rec("P1", 0)}})
		if err := os.WriteFile(filepath.Join(run, rundir.RunFile), data, 0o644); err != nil {
			t.Fatal(err)
		}
		for _, pair := range [][2]string{{good, run}, {run, good}} {
			res, err := Compare(pair[0], pair[1], DefaultOptions())
			var ie *InputError
			if err != nil && !errors.As(err, &ie) {
				t.Fatalf("not an InputError: %v", err)
			}
			if err == nil {
				if _, err := json.Marshal(res); err != nil {
					t.Fatalf("result does not encode: %v", err)
				}
				res.Close()
			}
		}
	})
}
