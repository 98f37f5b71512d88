package compare

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"

	"bench/internal/record/rundir"
)

// memoryLimit is the soft heap limit of a comparison (unless GOMEMLIMIT is
// set). Comparing two 100,000-line runs holds about 130 MB at its peak
// (the second pass's snapshots and decoding, with answers that changed
// held on a tape, not in the heap); with the default GOGC the garbage
// around that took the peak RSS to 280 MiB when every answer changed,
// held to this limit 185 MiB, at much the same speed.
const memoryLimit = 180 << 20

// Judge is bench compare (and the end of bench run --baseline): it
// compares two run directories, prints the tables to w, writes
// compare.json, compare.md, compare.html and junit.xml into out (by
// default the new run's rundir.CompareDir) and says whether the gate
// fails: a regression, or a metric of RequireJudged judged nowhere. An
// error is an input or I/O failure (or an *OutError: out is a run
// directory): no verdict.
func Judge(baseDir, newDir, out string, opt Options, w io.Writer) (regressed bool, err error) {
	if os.Getenv("GOMEMLIMIT") == "" {
		defer debug.SetMemoryLimit(debug.SetMemoryLimit(memoryLimit))
	}
	if out == "" {
		out = filepath.Join(newDir, rundir.CompareDir)
	}
	// An --out that would overwrite a run is refused before anything is read.
	if err := CheckOut(out, baseDir, newDir); err != nil {
		return false, err
	}
	res, err := Compare(baseDir, newDir, opt)
	if err != nil {
		return false, err
	}
	defer res.Close()
	if err := WriteText(w, res); err != nil {
		return false, err
	}
	if err := WriteFiles(out, res); err != nil {
		return false, err
	}
	fmt.Fprintf(w, "bench compare: %s, %s and %s in %s\n", JSONFile, MDFile, JUnitFile, out)
	fmt.Fprintf(w, "  page:  %s (open it in a browser)\n", filepath.Join(out, HTMLFile))
	return res.Failed(), nil
}
