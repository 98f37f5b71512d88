package rundir

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// A .lock planted by someone who can write the run directory (a shared
// volume) must never make bench write the file it points at or shares an
// inode with: a symlink, a hard link, a FIFO are refused, and the target
// keeps every byte.
func TestLockRefusesPlantedFiles(t *testing.T) {
	for _, kind := range []string{"symlink", "hardlink", "fifo"} {
		t.Run(kind, func(t *testing.T) {
			parent := t.TempDir()
			dir := filepath.Join(parent, "run")
			os.Mkdir(dir, 0o755)
			target := filepath.Join(parent, "precious")
			os.WriteFile(target, []byte("precious data\n"), 0o644)
			lockPath := Path(dir, LockFile)
			switch kind {
			case "symlink":
				os.Symlink(target, lockPath)
			case "hardlink":
				os.Link(target, lockPath)
			case "fifo":
				syscall.Mkfifo(lockPath, 0o644)
			}
			for name, open := range map[string]func() error{
				"create": func() error { d, err := Create(parent, "run", false); closeDir(d); return err },
				"resume": func() error {
					os.WriteFile(Path(dir, ResultsFile), nil, 0o644)
					d, _, err := Resume(dir)
					closeDir(d)
					return err
				},
				"lock": func() error { d, err := Lock(dir); closeDir(d); return err },
			} {
				err := open()
				if err == nil || !strings.Contains(err.Error(), LockFile) {
					t.Errorf("%s: err %v, want a refusal naming %s", name, err, LockFile)
				}
			}
			if b, _ := os.ReadFile(target); string(b) != "precious data\n" {
				t.Errorf("the target became %q", b)
			}
		})
	}
}

func closeDir(d *Dir) {
	if d != nil {
		d.Close()
	}
}

// A plain .lock that bench did not write is locked but neither truncated
// nor written; one that holds a pid (an earlier bench's, in either width)
// is taken over in place and names its new holder.
func TestLockWritesOnlyItsOwnFile(t *testing.T) {
	for _, c := range []struct {
		name, before string
		pid          bool
	}{
		{"not a pid", "somebody's notes, not a pid\n", false},
		{"old pid", "123456789\n", true},
		{"padded pid", fmt.Sprintf("%-20d\n", 7), true},
		{"empty", "", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			os.WriteFile(Path(dir, LockFile), []byte(c.before), 0o644)
			d, err := Lock(dir)
			if err != nil {
				t.Fatal(err)
			}
			defer d.Close()
			b, _ := os.ReadFile(Path(dir, LockFile))
			if !c.pid {
				if string(b) != c.before {
					t.Errorf("the file became %q", b)
				}
				return
			}
			if pid, ok := readPid(d.lock); !ok || pid != os.Getpid() {
				t.Errorf("the lock holds %q, want pid %d", b, os.Getpid())
			}
		})
	}
}

// A kill -9 between an atomic write's create and its rename leaves
// .NAME.RANDOM.tmp behind; the next command that locks the directory
// removes it, in the run directory's folders too, but leaves a folder with
// a .lock of its own (compare/) to that folder's command.
func TestLockCleansTemporaryFiles(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	left := []string{
		".run.json.123.tmp",
		"snapshots/.snapshot-99.tmp",
		"forsy/.x.json.5.tmp",
	}
	kept := []string{
		"results.jsonl",
		"notes.tmp",     // not an atomic write's name
		".tmp",          // nor this
		"compare/.lock", // compare/ is its own command's
		"compare/.junit.xml.77.tmp",
	}
	for _, f := range append(append([]string{}, left...), kept...) {
		os.MkdirAll(filepath.Dir(filepath.Join(dir, f)), 0o755)
		os.WriteFile(filepath.Join(dir, f), []byte("x\n"), 0o644)
	}
	outside := filepath.Join(t.TempDir(), ".outside.1.tmp")
	os.WriteFile(outside, nil, 0o644)
	os.Symlink(filepath.Dir(outside), filepath.Join(dir, "link"))

	d, _, err := Resume(dir)
	if err != nil {
		t.Fatal(err)
	}
	d.Close()
	for _, f := range left {
		if _, err := os.Lstat(filepath.Join(dir, f)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s is still there (%v)", f, err)
		}
	}
	for _, f := range kept {
		if _, err := os.Lstat(filepath.Join(dir, f)); err != nil {
			t.Errorf("%s was removed: %v", f, err)
		}
	}
	if _, err := os.Lstat(outside); err != nil {
		t.Errorf("a file behind a symlink was removed: %v", err)
	}
	c, err := Lock(filepath.Join(dir, "compare"))
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
	if _, err := os.Lstat(filepath.Join(dir, "compare/.junit.xml.77.tmp")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the next compare left compare/.junit.xml.77.tmp (%v)", err)
	}
}
