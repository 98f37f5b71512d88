package rebuild

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"bench/internal/record/results"
	"bench/internal/record/rundir"
	"bench/report"
)

// All writes exactly the files rundir.Layout says bench report rebuilds,
// and the --junit copy: what bench merge leaves to it and what a run's
// last output writes are one list.
func TestAllWritesTheLayoutsReports(t *testing.T) {
	dir := t.TempDir()
	writeRun(t, dir, 50)
	copyTo := filepath.Join(t.TempDir(), "ci.xml")
	s, err := All(dir, Options{JUnitCopy: copyTo})
	if err != nil || s.NRecords != 50 {
		t.Fatalf("All: %v", err)
	}
	entries, _ := os.ReadDir(dir)
	var got []string
	for _, e := range entries {
		if e.Name() != rundir.ResultsFile {
			got = append(got, e.Name())
		}
	}
	want := slices.Sorted(slices.Values(rebuiltNames()))
	if !slices.Equal(got, want) {
		t.Errorf("wrote %v, the layout's reports are %v", got, want)
	}
	a, _ := os.ReadFile(rundir.Path(dir, rundir.JUnitFile))
	b, err := os.ReadFile(copyTo)
	if err != nil || string(a) != string(b) {
		t.Errorf("--junit copy: %v", err)
	}
}

// writeDistinct writes n lines of a model and a prompt each no other line
// has (every third failing its check, every seventh an error), then the
// first dup of them again as a resumed run would: n groups, n prompts.
func writeDistinct(tb testing.TB, dir string, n, dup int) {
	tb.Helper()
	w, err := results.Create(filepath.Join(dir, "results.jsonl"))
	if err != nil {
		tb.Fatal(err)
	}
	for i := range n + dup {
		j := i % n
		pass := j%3 != 0
		r := &results.Record{RecordType: results.RecordType, RunID: "bench", Provider: "prov", ProviderType: "ollama_openai",
			Model: fmt.Sprintf("model-%05d", j), PromptID: fmt.Sprintf("P%05d", j), PromptName: "prompt", AvailabilityStatus: "ok",
			Success: true, ObjectivePass: &pass, E2EMS: int64(100 + j%500 + i/n), StartedAtMS: 1771000000000 + int64(i), EndedAtMS: 1771000000900 + int64(i)}
		if !pass {
			v := "expected 4 bullets, got 3"
			r.Violation = &v
		}
		if j%7 == 0 {
			msg, ft := "no answer in time", "timeout"
			r.AvailabilityStatus, r.Success, r.ObjectivePass, r.ErrorMessage, r.FailureType = "error", false, nil, &msg, &ft
		}
		if err := w.Write(r); err != nil {
			tb.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		tb.Fatal(err)
	}
}

// A run of distinct models and prompts writes reports bounded by what is
// shown, not groups × prompts (issue 21, item 7: 3,000 such lines made a
// 147 MB report.html and a 55 MB summary.md): the matrix and charts of the
// first groups, tables capped with the rest counted. junit.xml, built in a
// pass of its own past onePassGroups groups, is byte for byte the one-pass
// file, resumed duplicates counted once; so is answers.html, though the
// summary then lets go of the groups past the terminal table's before the
// answers are read (DropGroups), and the table says the same.
func TestDistinctRunReportsBounded(t *testing.T) {
	const n = 3000
	dir := t.TempDir()
	writeDistinct(t, dir, n, 40)
	s, err := All(dir, Options{})
	if err != nil || len(s.Groups) != n || s.NDuplicateLines != 40 {
		t.Fatalf("All: %v, %d groups, %d duplicate lines", err, len(s.Groups), s.NDuplicateLines)
	}
	onePass, _ := os.ReadFile(rundir.Path(dir, rundir.JUnitFile))
	onePassAnswers, _ := os.ReadFile(rundir.Path(dir, rundir.AnswersHTML))
	var onePassTable strings.Builder
	if err := report.WriteTable(&onePassTable, s); err != nil {
		t.Fatal(err)
	}
	for name, max := range map[string]int64{rundir.ReportHTML: 2 << 20, rundir.SummaryMD: 512 << 10} {
		st, err := os.Stat(rundir.Path(dir, name))
		if err != nil || st.Size() > max {
			t.Errorf("%s: %v, %d bytes, want at most %d", name, err, st.Size(), max)
		}
	}
	md, _ := os.ReadFile(rundir.Path(dir, rundir.SummaryMD))
	html, _ := os.ReadFile(rundir.Path(dir, rundir.ReportHTML))
	for _, want := range []string{"The matrix shows the first 20 groups of the ranking and the 20 prompts they ran; 2980 groups and 2980 prompts more are left out",
		"… and 2500 more groups; summary.json lists every one."} {
		if !strings.Contains(string(md), want) {
			t.Errorf("summary.md lacks %q", want)
		}
	}
	if want := "show the first 200 groups of the ranking and the 200 prompts they ran; 2800 more groups and 2800 more prompts are left out"; !strings.Contains(string(html), want) {
		t.Errorf("report.html lacks %q", want)
	}
	if c := strings.Count(string(onePass), "<testcase "); c != n {
		t.Errorf("junit.xml has %d testcases, want %d", c, n)
	}

	defer func(n int) { onePassGroups = n }(onePassGroups)
	onePassGroups = 100
	s, err = All(dir, Options{})
	if err != nil || len(s.Groups) != report.MaxTableRows || s.Matrix != nil {
		t.Fatalf("two passes: %v, %d groups kept, matrix kept %v", err, len(s.Groups), s.Matrix != nil)
	}
	twoPass, _ := os.ReadFile(rundir.Path(dir, rundir.JUnitFile))
	if string(twoPass) != string(onePass) {
		t.Error("junit.xml built in its own pass differs from the one-pass file")
	}
	if twoPassAnswers, _ := os.ReadFile(rundir.Path(dir, rundir.AnswersHTML)); len(onePassAnswers) == 0 || string(twoPassAnswers) != string(onePassAnswers) {
		t.Error("answers.html with the groups let go differs from the one-pass page")
	}
	var table strings.Builder
	if err := report.WriteTable(&table, s); err != nil || table.String() != onePassTable.String() || !strings.Contains(table.String(), "… and 2500 more groups") {
		t.Errorf("the table with the groups let go (%v):\n%.300s\nwant\n%.300s", err, table.String(), onePassTable.String())
	}
}

// rebuiltNames are the files rundir.Layout marks as reports, rebuilt from
// results.jsonl.
func rebuiltNames() []string {
	var names []string
	for _, e := range rundir.Layout {
		if e.Report {
			names = append(names, e.Name)
		}
	}
	return names
}
