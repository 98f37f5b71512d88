package answers

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"bench/internal/record/results"
	"bench/internal/record/rundir"
	"bench/report"
)

// answers.html as Build writes it (each counted line read once, the page
// streamed to its file) is byte for byte the page Write renders whole from
// the same cells, and shows the cells the old way showed (every line
// read, a later record of a cell replacing the earlier through an index
// of the cells): the same cells with the same texts, the re-run's. The
// old way's page also kept the replaced records' texts in its strings
// and the first record's place in the list; the cells' order does not
// matter to the page (it finds them by group, prompt and repetition).
// The run has resumed cells, agentic turns, and texts that need escaping
// in a script (</script>, U+2028, invalid UTF-8, HTML).
func TestBuildStreamsWhatWriteRenders(t *testing.T) {
	dir, _ := writeScaleRun(t, 4, 12, 2)
	f, err := os.OpenFile(filepath.Join(dir, rundir.ResultsFile), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	no := false
	for p := range 5 {
		// The resume re-ran these cells: the later record is the cell.
		rec := &results.Record{RecordType: results.RecordType, RunID: "scale", Provider: "ollama", ProviderType: "ollama",
			Model: "model-000", PromptID: []string{"P0", "P1", "P2", "P3", "P9"}[p], PromptName: "again", Repetition: 1,
			AvailabilityStatus: "ok", Success: true, E2EMS: 7, ObjectivePass: &no,
			RawOutput: "re-run </script><script>alert(1)</script> \u2028 & <b>" + string([]byte{0xff, 'x'}), Violation: ptr("<i>bad</i>")}
		rec.RawOutputBytes = len(rec.RawOutput)
		line, err := json.Marshal(rec)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.Write(append(line, '\n')); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	s, err := report.LoadEach(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if s.NDuplicateLines != 5 {
		t.Fatalf("%d duplicate lines, want 5", s.NDuplicateLines)
	}
	if err := Start(dir, s).Finish(); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(dir, rundir.AnswersHTML))
	if err != nil {
		t.Fatal(err)
	}

	streamed := NewBuilder(s, s.NRecords-s.NDuplicateLines)
	streamed.cells = nil
	streamed.Questions(dir)
	if err := s.EachCountedLine(false, streamed.Add); err != nil {
		t.Fatal(err)
	}
	var whole bytes.Buffer
	if err := Write(&whole, streamed.Page()); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, whole.Bytes()) {
		i := 0
		for i < min(len(got), whole.Len()) && got[i] == whole.Bytes()[i] {
			i++
		}
		t.Fatalf("answers.html differs from the page rendered whole at byte %d of %d/%d:\n got %q\nwant %q", i, len(got), whole.Len(),
			got[max(0, i-80):min(len(got), i+80)], whole.Bytes()[max(0, i-80):min(whole.Len(), i+80)])
	}
	if !strings.Contains(string(got), `re-run \u003c/script\u003e`) || strings.Contains(string(got), "re-run </script>") {
		t.Error("the re-run's answer is not in the page, escaped")
	}

	old := NewBuilder(s, s.NRecords-s.NDuplicateLines)
	old.Questions(dir)
	if _, _, err := results.ReadFile(filepath.Join(dir, rundir.ResultsFile), false, func(line int, r *results.Record) error {
		old.Add(line, r)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	var oldPage bytes.Buffer
	if err := Write(&oldPage, old.Page()); err != nil {
		t.Fatal(err)
	}
	gotCells, wantCells := resolvedCells(t, got), resolvedCells(t, oldPage.Bytes())
	if len(gotCells) != 4*12*2 || strings.Join(gotCells, "\n") != strings.Join(wantCells, "\n") {
		t.Errorf("cells differ from the old way's:\n%s\nwant\n%s", strings.Join(gotCells, "\n"), strings.Join(wantCells, "\n"))
	}
}

// resolvedCells are a page's cells with their texts in place of the
// strings' indexes, sorted.
func resolvedCells(t *testing.T, page []byte) []string {
	t.Helper()
	_, data, _ := bytes.Cut(page, []byte(`<script type="application/json" id="answers-data">`))
	data, _, _ = bytes.Cut(data, []byte("</script>"))
	var p struct {
		Strings []string `json:"strings"`
		Cells   [][]any  `json:"cells"`
	}
	if err := json.Unmarshal(data, &p); err != nil {
		t.Fatalf("page data: %v", err)
	}
	var out []string
	for _, c := range p.Cells {
		text := func(v []any, at ...int) {
			for _, i := range at {
				if n := int(v[i].(float64)); n >= 0 {
					v[i] = p.Strings[n]
				}
			}
		}
		text(c, 4, 6, 9, 10, 11)
		calls, _ := c[16].([]any)
		for _, call := range calls {
			text(call.([]any), 0, 1)
		}
		turns, _ := c[17].([]any)
		for _, turn := range turns {
			if turn, ok := turn.([]any); ok {
				text(turn, 0, 1)
				for _, call := range turn[2].([]any) {
					text(call.([]any), 0, 1, 2)
				}
			}
		}
		b, _ := json.Marshal(c)
		out = append(out, string(b))
	}
	slices.Sort(out)
	return out
}
