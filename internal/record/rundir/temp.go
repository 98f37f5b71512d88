package rundir

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// ErrNotEmpty is Place's error for an out that holds something.
var ErrNotEmpty = errors.New("is not empty")

// tempPattern names the temporary directory a command of kind what
// (merge, rescore) writes a run directory out in.
func tempPattern(out, what string) string { return "." + filepath.Base(out) + "." + what + "-*.tmp" }

// CreateTemp creates and locks the directory a command that writes a
// whole run directory out at once (bench merge, bench rescore: what)
// writes in before Place renames it to out, .OUT.WHAT-RANDOM.tmp beside
// out, after removing those a killed command of the same kind into out
// left (removed lists them; a live one holds its own locked, so it is not
// touched). The Dir's ID is out's base name: the run id. A refusal, a
// failure or a kill -9 of the command then never leaves half a run
// directory under out.
func CreateTemp(out, what string) (d *Dir, removed []string, err error) {
	parent := filepath.Dir(out)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return nil, nil, fmt.Errorf("create %s: %w", parent, err)
	}
	stale, _ := filepath.Glob(filepath.Join(parent, tempPattern(out, what)))
	for _, p := range stale {
		if st, err := os.Lstat(p); err != nil || !st.IsDir() {
			continue
		}
		if l, err := Lock(p); err == nil {
			l.Close()
			if os.RemoveAll(p) == nil {
				removed = append(removed, p)
			}
		}
	}
	tmp, err := os.MkdirTemp(parent, tempPattern(out, what))
	if err != nil {
		return nil, removed, fmt.Errorf("create the %s's directory in %s: %w", what, parent, err)
	}
	os.Chmod(tmp, 0o755) // MkdirTemp makes it 0700; a run directory is shared
	d, err = Lock(tmp)
	if err != nil {
		os.RemoveAll(tmp)
		return nil, removed, err
	}
	d.ID = filepath.Base(out)
	return d, removed, nil
}

// Place renames the finished directory tmp (CreateTemp's) to out and
// makes d's Path out: an empty directory there is replaced; anything else
// (another command that finished first) is ErrNotEmpty.
func (d *Dir) Place(out string) error {
	if err := os.Remove(out); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("%s %w", out, ErrNotEmpty)
	}
	if err := os.Rename(d.Path, out); err != nil {
		return fmt.Errorf("place the run directory at %s: %w", out, err)
	}
	d.Path = out
	return nil
}
