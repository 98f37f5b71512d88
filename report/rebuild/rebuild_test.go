package rebuild

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"bench/rundir"
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
	want := slices.Sorted(slices.Values(rundir.Rebuilt()))
	if !slices.Equal(got, want) {
		t.Errorf("wrote %v, the layout's reports are %v", got, want)
	}
	a, _ := os.ReadFile(rundir.Path(dir, rundir.JUnitFile))
	b, err := os.ReadFile(copyTo)
	if err != nil || string(a) != string(b) {
		t.Errorf("--junit copy: %v", err)
	}
}
