package rebuild

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"bench/internal/record/results"
	"bench/internal/record/results/resultstest"
	"bench/internal/record/rundir"
	"bench/report"
	"bench/report/answers"
)

// answers.html made in the summary's pass (its entries on a tape, each
// cut at the cap of the cells read so far, then cut again at the page's
// once the count is known) is byte for byte the page a pass of its own
// makes, reading results.jsonl again with the page's cap known from the
// start (issue 31). The run has more cells than the page shows whole
// texts for (its cap under MaxTextBytes, so the first cells' texts are cut
// twice), multi-byte runes across the cuts, agentic turns, calls and
// judges (resultstest.Rich); and, resumed, duplicate cells whose later
// record counts, where the summary's pass has cut the entries tighter than
// the page and answers.html is read again.
func TestOnePassAnswersAreTheReadingPassPage(t *testing.T) {
	const n = 7000 // TextCap(7000) is 1797 B, under MaxTextBytes
	if answers.TextCap(n) >= answers.MaxTextBytes {
		t.Fatalf("TextCap(%d) = %d: the run's texts would not be cut", n, answers.TextCap(n))
	}
	rec := func(i int) *results.Record {
		r := resultstest.Rich(i)
		if i%7 == 0 {
			r.RawOutput = strings.Repeat("é€ ", 700) + r.RawOutput
			r.RawOutputBytes = len(r.RawOutput)
		}
		return r
	}
	for _, dup := range []int{0, 40} {
		t.Run(fmt.Sprintf("duplicates=%d", dup), func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, rundir.ResultsFile)
			resultstest.Write(t, path, n, rec)
			if dup > 0 {
				f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
				if err != nil {
					t.Fatal(err)
				}
				for i := range dup {
					r := rec(i)
					r.RawOutput = fmt.Sprintf("re-run %d: ", i) + strings.Repeat("ü", 1500)
					r.RawOutputBytes = len(r.RawOutput)
					line, err := json.Marshal(r)
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
			}
			s, err := All(dir, Options{})
			if err != nil || s.NRecords != n || s.NDuplicateLines != dup {
				t.Fatalf("All: %v, %d records, %d duplicate lines", err, s.NRecords, s.NDuplicateLines)
			}
			onePass, err := os.ReadFile(rundir.Path(dir, rundir.AnswersHTML))
			if err != nil {
				t.Fatal(err)
			}
			var cut int
			if _, at, ok := bytes.Cut(onePass, []byte(`"cap":`)); !ok {
				t.Error("answers.html has no cap")
			} else if fmt.Sscan(string(at[:bytes.IndexByte(at, ',')]), &cut); cut <= 0 || cut >= answers.MaxTextBytes {
				t.Errorf("answers.html's cap is %d: its texts are not cut under MaxTextBytes", cut)
			}
			if dup > 0 && !bytes.Contains(onePass, []byte("re-run 3: üü")) {
				t.Error("answers.html lacks a re-run cell's answer")
			}

			if err := os.Remove(rundir.Path(dir, rundir.AnswersHTML)); err != nil {
				t.Fatal(err)
			}
			s, err = report.LoadEach(dir, nil)
			if err != nil {
				t.Fatal(err)
			}
			if err := answers.Start(dir, s).Finish(); err != nil {
				t.Fatal(err)
			}
			reading, err := os.ReadFile(rundir.Path(dir, rundir.AnswersHTML))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(onePass, reading) {
				i := 0
				for i < min(len(onePass), len(reading)) && onePass[i] == reading[i] {
					i++
				}
				t.Fatalf("the one-pass answers.html differs from its own pass's at byte %d of %d/%d:\n got %q\nwant %q", i, len(onePass), len(reading),
					onePass[max(0, i-80):min(len(onePass), i+80)], reading[max(0, i-80):min(len(reading), i+80)])
			}
		})
	}
}
