package compare

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"bench/internal/record/results"
	"bench/internal/record/rundir"
)

// Bad input is an *InputError naming the file and, for a bad line, the
// line; never a panic, and neither run directory is touched.
func TestBadInput(t *testing.T) {
	good := func(t *testing.T, parent string) string {
		return writeRun(t, parent, runSpec{id: "good", recs: []*results.Record{rec("P0", 0), rec("P1", 0)}})
	}
	appendLine := func(line string) func(t *testing.T, dir string) {
		return func(t *testing.T, dir string) {
			f, err := os.OpenFile(filepath.Join(dir, rundir.ResultsFile), os.O_APPEND|os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			f.WriteString(line)
			f.Close()
		}
	}
	replace := func(name, content string) func(t *testing.T, dir string) {
		return func(t *testing.T, dir string) {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	cases := []struct {
		name  string
		spoil func(t *testing.T, dir string)
		file  string // the file the error names, relative to the run dir ("" the dir)
		line  int
		want  string
	}{
		{"not a directory", func(t *testing.T, dir string) { os.RemoveAll(dir) }, "", 0, "not a run directory"},
		{"a file", func(t *testing.T, dir string) { os.RemoveAll(dir); os.WriteFile(dir, []byte("x"), 0o644) }, "", 0, "a file, not a directory"},
		{"no results.jsonl", func(t *testing.T, dir string) { os.Remove(filepath.Join(dir, rundir.ResultsFile)) }, "", 0, "no results.jsonl"},
		{"empty results", replace(rundir.ResultsFile, "\n\n"), rundir.ResultsFile, 0, "no results"},
		{"corrupt line", appendLine("{\"record_type\": \"result\", oops}\n"), rundir.ResultsFile, 3, "not a results record: column 27: invalid character 'o'"},
		{"truncated last line", appendLine(`{"record_type":"result","run_id":"good","provider":"oll`), rundir.ResultsFile, 3, "the last line is cut short, with no newline (was the run killed while writing it?): not a results record: the JSON ends too early"},
		{"not a result record", appendLine(`{"record_type":"summary"}` + "\n"), rundir.ResultsFile, 3, `record_type is "summary"`},
		{"older schema without provider_type", appendLine(`{"record_type":"result","provider":"ollama","model":"m","prompt_id":"P9","repetition":0,"availability_status":"ok"}` + "\n"),
			rundir.ResultsFile, 3, "no provider_type: written by a bench older than results schema 1"},
		{"another schema version", appendLine(`{"record_type":"result","schema_version":2,"provider":"ollama","provider_type":"ollama","model":"m","prompt_id":"P9","repetition":0,"availability_status":"ok"}` + "\n"),
			rundir.ResultsFile, 3, "schema_version is 2"},
		{"no repetition", appendLine(`{"record_type":"result","provider":"ollama","provider_type":"ollama","model":"m","prompt_id":"P9","availability_status":"ok"}` + "\n"),
			rundir.ResultsFile, 3, "repetition is missing"},
		{"wrong type", appendLine(`{"record_type":"result","provider":"ollama","provider_type":"ollama","model":"m","prompt_id":"P9","repetition":"one","availability_status":"ok"}` + "\n"),
			rundir.ResultsFile, 3, "field repetition: a JSON string, want an integer"},
		{"a rate beyond any", appendLine(`{"record_type":"result","provider":"ollama","provider_type":"ollama","model":"m","prompt_id":"P9","repetition":0,"availability_status":"ok","tokens_per_s":1e305}` + "\n"),
			rundir.ResultsFile, 3, "tokens_per_s is 1e+305, beyond any latency or rate"},
		{"a latency not in milliseconds", appendLine(`{"record_type":"result","provider":"ollama","provider_type":"ollama","model":"m","prompt_id":"P9","repetition":0,"availability_status":"ok","ttft_ms":1e305}` + "\n"),
			rundir.ResultsFile, 3, "field ttft_ms: a JSON number 1e305, want an integer"},
		{"bad config.json", replace(rundir.ConfigFile, "{\n  \"run\": {\n    \"id\": 7\n  }\n}\n"), rundir.ConfigFile, 3, "cannot unmarshal number"},
		{"config.json not JSON", replace(rundir.ConfigFile, "{\n\n  oops\n}"), rundir.ConfigFile, 3, "invalid character"},
		{"prompt without id", replace(rundir.ConfigFile, `{"prompt_set":[{"prompt":"x"}]}`), rundir.ConfigFile, 0, "prompt_set[0]: no id"},
		{"bad run.json", replace(rundir.RunFile, "[]"), rundir.RunFile, 1, "cannot unmarshal array"},
		{"bad inventory.json", replace(rundir.InventoryFile, `{"host": 3}`), rundir.InventoryFile, 1, "cannot unmarshal number"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			parent := t.TempDir()
			other := writeRun(t, parent, runSpec{id: "other", recs: []*results.Record{rec("P0", 0)}})
			bad := good(t, parent)
			c.spoil(t, bad)
			before := treeHash(t, parent)
			for _, order := range [][2]string{{bad, other}, {other, bad}} {
				res, err := Compare(order[0], order[1], DefaultOptions())
				var ie *InputError
				if !errors.As(err, &ie) {
					t.Fatalf("want an *InputError, got %v (result %v)", err, res != nil)
				}
				wantFile := bad
				if c.file != "" {
					wantFile = filepath.Join(bad, c.file)
				}
				if ie.File != wantFile || ie.Line != c.line || !strings.Contains(err.Error(), c.want) {
					t.Errorf("error %q (file %s line %d), want file %s line %d and %q", err, ie.File, ie.Line, wantFile, c.line, c.want)
				}
			}
			if treeHash(t, parent) != before {
				t.Error("a failed compare changed a run directory")
			}
		})
	}
}

// Missing side files cost what they hold, with a warning, not the compare.
func TestMissingSideFiles(t *testing.T) {
	dir := t.TempDir()
	base := writeRun(t, dir, runSpec{id: "base", recs: []*results.Record{rec("P0", 0)}, noConfig: true, noRunInfo: true, noInventory: true})
	cur := writeRun(t, dir, runSpec{id: "new", recs: []*results.Record{rec("P0", 0)}})
	res, err := Compare(base, cur, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	w := strings.Join(res.Warnings, "\n")
	if !strings.Contains(w, "has no config.json") || !strings.Contains(w, "has no run.json") || res.Regressed() || res.Counts[Match] != 1 {
		t.Errorf("warnings %q verdict %s counts %v", w, res.Verdict, res.Counts)
	}
}

// A successful compare and its outputs leave both run directories exactly
// as they were; only --out is written.
func TestOnlyOutWritten(t *testing.T) {
	dir := t.TempDir()
	base := writeRun(t, dir, runSpec{id: "base", recs: []*results.Record{rec("P0", 0), rec("P1", 0)}})
	cur := writeRun(t, dir, runSpec{id: "new", recs: []*results.Record{rec("P0", 0, failing("x")), rec("P1", 0, withOutput("y"))}})
	hb, hn := treeHash(t, base), treeHash(t, cur)
	res, err := Compare(base, cur, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "out")
	if err := WriteFiles(out, res); err != nil {
		t.Fatal(err)
	}
	if treeHash(t, base) != hb || treeHash(t, cur) != hn {
		t.Error("a run directory changed")
	}
	for _, f := range []string{JSONFile, MDFile, JUnitFile} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Error(err)
		}
	}
	for _, bad := range []string{base, cur, cur + "/."} {
		if err := WriteFiles(bad, res); err == nil || !strings.Contains(err.Error(), "is the run directory") {
			t.Errorf("--out %s: %v", bad, err)
		}
	}
	if treeHash(t, base) != hb || treeHash(t, cur) != hn {
		t.Error("a refused --out changed a run directory")
	}
}

// A resumed run appends a new record for each cell it ran again: compare
// reads it as bench report does, each cell by its last record, and says in
// a warning how many cells and lines were set aside. Whichever record is
// last decides: a cell that failed, then passed on the re-run, matches; one
// that passed, then failed, regresses.
func TestResumedRunLastRecordWins(t *testing.T) {
	dir := t.TempDir()
	base := writeRun(t, dir, runSpec{id: "base", recs: []*results.Record{rec("P0", 0), rec("P0", 1), rec("P2", 0)}})
	cancelled := status(results.StatusError, results.FailCancelled, "cancelled")
	healed := writeRun(t, dir, runSpec{id: "healed", recs: []*results.Record{
		rec("P0", 0, cancelled), rec("P0", 1), rec("P2", 0, failing("x")), rec("P0", 0), rec("P2", 0, failing("y")), rec("P2", 0),
	}})
	res, err := Compare(base, healed, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	w := strings.Join(res.Warnings, "\n")
	if res.Regressed() || res.Counts[Match] != 3 || len(res.Cells) != 3 {
		t.Errorf("verdict %s, counts %v, %d cells; want 3 matches", res.Verdict, res.Counts, len(res.Cells))
	}
	if !strings.Contains(w, "results.jsonl: 2 cells are recorded more than once (3 extra lines") || !strings.Contains(w, "by its last record") {
		t.Errorf("warnings %q", w)
	}
	broke := writeRun(t, dir, runSpec{id: "broke", recs: []*results.Record{rec("P0", 0), rec("P0", 1), rec("P2", 0), rec("P0", 1, failing("x"))}})
	res, err = Compare(base, broke, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	if !res.Regressed() || res.Counts[Regression] != 1 || !strings.Contains(strings.Join(res.Warnings, "\n"), "1 cell is recorded more than once (1 extra line,") {
		t.Errorf("verdict %s, counts %v, warnings %q", res.Verdict, res.Counts, res.Warnings)
	}
	// As the base of a comparison too.
	res, err = Compare(broke, base, DefaultOptions())
	if err != nil || res.Counts[Match] != 2 || len(res.Cells) != 3 {
		t.Errorf("resumed base: %v, counts %v", err, res.Counts)
	}
}

// A cell the new run planned and never ran (a partial merge, an
// interrupted run: run.json says so) is an availability regression, not a
// cell left unjudged; in a finished run it stays "missing", and so does a
// cell the new run's config.json does not plan (a model dropped).
func TestMissingFromAnUnfinishedRun(t *testing.T) {
	dir := t.TempDir()
	dropped := func(r *results.Record) { r.Model = "dropped" }
	base := writeRun(t, dir, runSpec{id: "base", recs: []*results.Record{rec("P0", 0), rec("P1", 0), rec("P0", 0, dropped)}})
	cur := writeRun(t, dir, runSpec{id: "new", recs: []*results.Record{rec("P0", 0)}})
	res, err := Compare(base, cur, DefaultOptions())
	if err != nil || res.Regressed() || res.Counts[Missing] != 2 {
		t.Fatalf("finished new run: err %v, regressed %v, counts %v", err, res.Regressed(), res.Counts)
	}
	res.Close()
	for _, info := range []*rundir.RunInfo{
		{RunID: "new", EndReason: "interrupted", CellsPlanned: 2, CellsRecorded: 1},
		{RunID: "new", EndReason: "finished", CellsPlanned: 2, CellsRecorded: 1, Merge: &rundir.Merge{Count: 2, Missing: []int{2}}},
	} {
		if err := rundir.WriteJSON(filepath.Join(cur, rundir.RunFile), info); err != nil {
			t.Fatal(err)
		}
		res, err := Compare(base, cur, DefaultOptions())
		if err != nil || !res.Regressed() || res.Counts[Missing] != 1 {
			t.Fatalf("%+v: err %v, regressed %v, counts %v", info, err, res.Regressed(), res.Counts)
		}
		var found bool
		for _, c := range res.Cells {
			if c.PromptID == "P1" && c.Verdict == Regression && c.Category == Availability {
				found = true
			}
		}
		if !found {
			t.Errorf("%+v: P1 is not an availability regression", info)
		}
		var md bytes.Buffer
		if err := WriteMarkdown(&md, res); err != nil || WriteJUnit(&md, res) != nil || WriteText(&md, res) != nil {
			t.Errorf("outputs: %v", err)
		}
		res.Close()
	}
}
