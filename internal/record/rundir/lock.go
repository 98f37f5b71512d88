package rundir

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// ErrLocked is returned when another process holds a run directory.
var ErrLocked = errors.New("in use by another bench process")

// pidWidth is the width the pid is written at, so a later holder
// overwrites it in place: a lock file is never truncated.
const pidWidth = 20

// lock takes an exclusive, non-blocking flock(2) on dir/.lock and writes
// the holder's pid into it. The kernel drops the lock when the process dies
// however it dies, so a kill -9 never leaves a directory locked.
//
// On a shared run volume anyone who can write the directory can plant a
// .lock, so it is opened with O_NOFOLLOW (a symlink is refused, not
// followed), and a file bench did not write is locked but never written:
// the pid goes only into a file this call created, or one that holds
// nothing but a pid already (a lock an earlier bench left), and never by
// truncating it. A regular file with other hard links is refused too, as a
// symlink is: writing it would write the file it shares.
func lock(dir string) (*os.File, error) {
	path := Path(dir, LockFile)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o644)
	created := err == nil
	if errors.Is(err, os.ErrExist) {
		// O_NONBLOCK: a FIFO planted as .lock must not hang the open.
		f, err = os.OpenFile(path, os.O_RDWR|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	}
	if errors.Is(err, syscall.ELOOP) {
		return nil, fmt.Errorf("lock %s: %s is a symbolic link; bench does not follow it (remove it if the directory is yours)", dir, LockFile)
	}
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", dir, err)
	}
	st, err := flockFile(f, dir, syscall.LOCK_EX)
	if err != nil {
		return nil, err
	}
	if _, isPid := readPid(f); created || isPid || st.Size == 0 {
		f.WriteAt([]byte(fmt.Sprintf("%-*d\n", pidWidth, os.Getpid())), 0)
	}
	return f, nil
}

// flockFile takes how (LOCK_EX, LOCK_SH) on f, dir's open lock file,
// without waiting, once f is known to be a plain file of its own (a
// device, a pipe or a hard link is refused: an exclusive holder writes
// it). f is closed when it fails: ErrLocked, with the holder's pid, when
// another process holds the lock.
func flockFile(f *os.File, dir string, how int) (syscall.Stat_t, error) {
	var st syscall.Stat_t
	if err := syscall.Fstat(int(f.Fd()), &st); err != nil {
		f.Close()
		return st, fmt.Errorf("lock %s: %w", dir, err)
	}
	if st.Mode&syscall.S_IFMT != syscall.S_IFREG || st.Nlink != 1 {
		f.Close()
		return st, fmt.Errorf("lock %s: %s is not a plain file of its own (a device, pipe or hard link); remove it if the directory is yours", dir, LockFile)
	}
	if err := syscall.Flock(int(f.Fd()), how|syscall.LOCK_NB); err != nil {
		holder := ""
		if pid, ok := readPid(f); ok {
			holder = fmt.Sprintf(" (pid %d)", pid)
		}
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return st, fmt.Errorf("%s is %w%s; wait for it to finish or stop it", dir, ErrLocked, holder)
		}
		return st, fmt.Errorf("lock %s: %w", dir, err)
	}
	return st, nil
}

// readPid reads a lock file that holds only a pid (as lock writes it, or
// as bench before pidWidth wrote it).
func readPid(f *os.File) (int, bool) {
	b := make([]byte, pidWidth+2)
	n, err := f.ReadAt(b, 0)
	if (err != nil && err != io.EOF) || n > pidWidth+1 {
		return 0, false
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b[:n])))
	return pid, err == nil && pid > 0
}

// Lock locks dir, a directory a command writes into without being a run
// of it (bench report's run directory, bench compare's --out), and removes
// the temporary files a killed command left there. Close releases it. A
// run holding dir makes it fail with ErrLocked.
func Lock(dir string) (*Dir, error) {
	return claim(dir, filepath.Base(dir), true)
}

// IsTemp says whether name is the temporary file of an atomic write
// (".NAME.RANDOM.tmp", as CreateAtomic and every other writer of a run
// directory name them).
func IsTemp(name string) bool {
	return len(name) > len(".tmp")+1 && strings.HasPrefix(name, ".") && strings.HasSuffix(name, ".tmp")
}

// cleanTemp removes the temporary files of atomic writes that a killed
// command left in dir and its folders (a kill -9 between create and
// rename leaves one). It runs only under dir's lock, and every command
// that writes into dir holds it, so no temporary file it finds is still
// being written; a folder with a .lock of its own (compare/) is another
// command's and is left to it. Nothing is followed through a symlink.
// Failures are ignored: a leftover is litter, not an error.
func cleanTemp(dir string) {
	filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() {
			if path != dir {
				if _, err := os.Lstat(filepath.Join(path, LockFile)); err == nil {
					return filepath.SkipDir
				}
			}
			return nil
		}
		if d.Type().IsRegular() && IsTemp(d.Name()) {
			os.Remove(path)
		}
		return nil
	})
}

// Shared is a shared lock on a run directory a command reads whole and
// must not see change under it (bench rescore's source); Close releases
// it.
type Shared struct{ f *os.File }

// Close releases the lock.
func (s *Shared) Close() error {
	if s == nil || s.f == nil {
		return nil
	}
	err := s.f.Close()
	s.f = nil
	return err
}

// Share takes a shared, non-blocking flock(2) on dir/.lock: a run writing
// dir (bench run, its --resume) holds the exclusive one, so Share fails
// with ErrLocked (naming the holder's pid) while one does, and a run
// started while the share is held refuses to start, as two runs do. Any
// number of readers share it. The lock file is opened as lock opens it
// (no symlink, nothing but a plain file, no wait on a FIFO); one that is
// not there is created, empty but for this process's pid. A directory
// this process cannot write and that has no lock file is not locked: no
// bench process writes it either, as every one takes its lock first.
func Share(dir string) (*Shared, error) {
	path := Path(dir, LockFile)
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	created := false
	if errors.Is(err, fs.ErrNotExist) {
		f, err = os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o644)
		switch {
		case errors.Is(err, fs.ErrPermission) || errors.Is(err, syscall.EROFS):
			return &Shared{}, nil
		case errors.Is(err, fs.ErrExist):
			// Another process made it in between: open that one.
			f, err = os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
		default:
			created = err == nil
		}
	}
	if errors.Is(err, syscall.ELOOP) {
		return nil, fmt.Errorf("lock %s: %s is a symbolic link; bench does not follow it (remove it if the directory is yours)", dir, LockFile)
	}
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", dir, err)
	}
	if _, err := flockFile(f, dir, syscall.LOCK_SH); err != nil {
		return nil, err
	}
	if created {
		f.WriteAt([]byte(fmt.Sprintf("%-*d\n", pidWidth, os.Getpid())), 0)
	}
	return &Shared{f: f}, nil
}
