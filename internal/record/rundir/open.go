package rundir

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
)

// MaxFileBytes bounds a run directory's file that is read whole or held
// in memory as it is read (config.json, run.json, inventory.json,
// summary.json, a resource file and its samples, a snapshot, a work
// trace): far past what bench writes (a config.json of 100,000 prompts is
// tens of megabytes), far below what would exhaust a machine. A larger
// file is refused, naming it, before a byte of it is read. results.jsonl
// and the execution traces are streamed one line at a time under a
// bound of their own (results.MaxLineBytes) and take no total bound.
const MaxFileBytes = 256 << 20

// ErrNotRegular is the error of Open for what is not a regular file, and
// ErrTooLarge for a file past its bound: bad input, which a command
// refuses (exit 2), naming the file.
var (
	ErrNotRegular = errors.New("not a regular file")
	ErrTooLarge   = errors.New("too large")
)

// File is a run directory's file open for reading (see Open).
type File struct {
	*os.File
	path  string
	limit int64 // 0: none
	read  int64
	ctx   context.Context
}

// Open opens path, a file of a run directory, for reading, the one way
// every reader of a run directory (bench report, compare, history, merge,
// rescore and a resumed run) opens one: a symlink is not followed (a run
// directory is a shared place; a results.jsonl that points at /dev/zero
// or a device is refused, naming the file, not read forever), only a
// regular file is read (a FIFO, a device, a socket or a directory is
// refused, and the open itself never waits: O_NONBLOCK, so a FIFO with no
// writer cannot hang it), and with limit > 0 a file larger than limit is
// refused before it is read, and one that grows past it while it is read
// fails the read. The directories on the way to path may be symlinks
// (runs/latest): only its last element is held to this. A missing file
// is an error wrapping fs.ErrNotExist, as os.Open's.
func Open(path string, limit int64) (*File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	if errors.Is(err, syscall.ELOOP) {
		return nil, &fs.PathError{Op: "open", Path: path, Err: fmt.Errorf("%w: a symbolic link; bench does not follow links in a run directory (replace it with the file itself)", ErrNotRegular)}
	}
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !st.Mode().IsRegular() {
		f.Close()
		return nil, &fs.PathError{Op: "open", Path: path, Err: fmt.Errorf("%w: %s; bench reads only regular files in a run directory", ErrNotRegular, kindOf(st.Mode()))}
	}
	if limit > 0 && st.Size() > limit {
		f.Close()
		return nil, &fs.PathError{Op: "open", Path: path, Err: fmt.Errorf("%w: %d bytes, more than the %d a run directory's file may hold", ErrTooLarge, st.Size(), limit)}
	}
	// A regular file's reads never block; the descriptor goes back to
	// blocking mode so the runtime's poller is not involved.
	if err := syscall.SetNonblock(int(f.Fd()), false); err != nil {
		f.Close()
		return nil, err
	}
	return &File{File: f, path: path, limit: limit}, nil
}

// kindOf names what a non-regular file is, for the error.
func kindOf(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a device"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m.IsDir():
		return "a directory"
	}
	return "not a regular file (" + m.Type().String() + ")"
}

// WithContext makes the file's reads end with ctx's error once ctx is
// done: a command that handles SIGINT and SIGTERM itself (bench rescore)
// stops reading a large file when told to.
func (f *File) WithContext(ctx context.Context) *File {
	f.ctx = ctx
	return f
}

// Read reads as os.File does, within the file's limit and its context.
func (f *File) Read(p []byte) (int, error) {
	if f.ctx != nil {
		if err := f.ctx.Err(); err != nil {
			return 0, err
		}
	}
	if f.limit > 0 {
		if f.read >= f.limit {
			// One byte more says whether the file grew past its bound.
			var one [1]byte
			if n, _ := f.File.Read(one[:]); n > 0 {
				return 0, fmt.Errorf("%s %w: it grew past %d bytes while it was read", f.path, ErrTooLarge, f.limit)
			}
			return 0, io.EOF
		}
		p = p[:min(int64(len(p)), f.limit-f.read)]
	}
	n, err := f.File.Read(p)
	f.read += int64(n)
	return n, err
}

// ReadFile reads a run directory's file whole, opened as Open opens it,
// at most MaxFileBytes.
func ReadFile(path string) ([]byte, error) {
	f, err := Open(path, MaxFileBytes)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}
