package history

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"
)

// Judge is bench history: it finds the runs of args (run directories, or
// directories of them), builds the history, prints it to w, writes
// history.json and history.html into out (default DIR/history for one
// directory of runs, else ./history) and returns the gate's verdict:
// VerdictChange (a regression change point of FailOnChange in the last
// Since runs), VerdictNotJudged (no series of those metrics long enough
// for a change point) or VerdictOK. An
// error is a bad argument, an I/O failure, or no run read at all; a run
// that cannot be read is a warning.
func Judge(args []string, out string, opt Options, w io.Writer) (verdict string, err error) {
	dirs, warnings, err := FindRuns(args)
	if err != nil {
		return "", err
	}
	h, err := Build(dirs, opt, time.Now())
	if err != nil {
		return "", err
	}
	h.Warnings = append(warnings, h.Warnings...)
	if out == "" {
		out = DirName
		if len(args) == 1 && !(len(dirs) == 1 && dirs[0] == args[0]) {
			out = filepath.Join(args[0], DirName)
		}
	}
	if err := WriteText(w, h); err != nil {
		return "", err
	}
	if err := WriteFiles(out, h); err != nil {
		return "", err
	}
	fmt.Fprintf(w, "bench history: %s and %s in %s\n", JSONFile, HTMLFile, out)
	if len(h.Runs) == 0 {
		// A history of nothing vouches for nothing: a gate over it must
		// not pass (history.json's warnings say why each was not read).
		return "", fmt.Errorf("no run could be read in %s: nothing to judge", strings.Join(args, ", "))
	}
	return h.Verdict, nil
}
