// Package tape holds bytes appended in order and read back by where they
// went, in memory up to a bound and past it in an unlinked temporary file.
// The reports keep a large run's bulky texts on one (junit.xml's failure
// texts, compare's long answers) rather than in the heap until they are
// written.
//
// Layer: internal helpers (imports no bench package).
package tape

import (
	"fmt"
	"os"
)

// DefaultMem is how many bytes a Tape keeps in memory before it moves them
// to its file: a run's texts below it never touch the disk.
const DefaultMem = 4 << 20

// Tape is an append-only store. The zero value keeps DefaultMem bytes in
// memory; Close it when done. It is not safe for concurrent use.
type Tape struct {
	// Mem is the in-memory bound (DefaultMem when 0).
	Mem  int
	mem  []byte
	file *os.File
	size int64 // bytes in file; mem holds the bytes from size on
	err  error // the first error moving bytes to the file; every Get returns it
	// win is a window of the file read ahead from winOff, when a Get
	// took up where the one before ended: read back in the order put,
	// the file is read a window at a time, not a pread a Get.
	win     []byte
	winOff  int64
	lastEnd int64
}

// window is how much a sequential Get reads ahead.
const window = 256 << 10

// Ref is where one Put's bytes lie.
type Ref struct {
	off int64
	n   uint32
}

// Len is how many bytes the Put held.
func (r Ref) Len() int { return int(r.n) }

// Put appends p (it keeps no reference to it).
func (t *Tape) Put(p []byte) Ref {
	r := Ref{off: t.size + int64(len(t.mem)), n: uint32(len(p))}
	t.mem = append(t.mem, p...)
	limit := t.Mem
	if limit <= 0 {
		limit = DefaultMem
	}
	if len(t.mem) >= limit {
		t.spill()
	}
	return r
}

func (t *Tape) spill() {
	if t.err != nil {
		t.size += int64(len(t.mem)) // nothing read back will be used
		t.mem = t.mem[:0]
		return
	}
	if t.file == nil {
		f, err := os.CreateTemp("", "bench-*.tape")
		if err != nil {
			t.err = fmt.Errorf("tape: %w", err)
			t.spill()
			return
		}
		os.Remove(f.Name()) // open, it stays readable; gone at Close or exit
		t.file = f
	}
	if _, err := t.file.Write(t.mem); err != nil {
		t.err = fmt.Errorf("tape: write %s: %w", t.file.Name(), err)
	}
	t.size += int64(len(t.mem))
	t.mem = t.mem[:0]
}

// Get reads back the bytes at r into a new slice.
func (t *Tape) Get(r Ref) ([]byte, error) {
	if t.err != nil {
		return nil, t.err
	}
	p := make([]byte, r.n)
	if r.off >= t.size {
		copy(p, t.mem[r.off-t.size:])
		return p, nil
	}
	if t.file == nil {
		return nil, fmt.Errorf("tape: closed")
	}
	end := r.off + int64(r.n)
	sequential := r.off == t.lastEnd
	t.lastEnd = end
	if r.off >= t.winOff && end <= t.winOff+int64(len(t.win)) {
		copy(p, t.win[r.off-t.winOff:])
		return p, nil
	}
	if !sequential || int(r.n) >= window {
		if _, err := t.file.ReadAt(p, r.off); err != nil {
			return nil, fmt.Errorf("tape: read %s: %w", t.file.Name(), err)
		}
		return p, nil
	}
	n := min(int64(window), t.size-r.off)
	if cap(t.win) < int(n) {
		t.win = make([]byte, window)
	}
	t.win, t.winOff = t.win[:n], r.off
	if _, err := t.file.ReadAt(t.win, r.off); err != nil {
		t.win = t.win[:0]
		return nil, fmt.Errorf("tape: read %s: %w", t.file.Name(), err)
	}
	copy(p, t.win)
	return p, nil
}

// Spilled says the tape has moved bytes to its file.
func (t *Tape) Spilled() bool { return t.size > 0 }

// Close drops the bytes and the file.
func (t *Tape) Close() error {
	t.mem, t.win = nil, nil
	if t.file == nil {
		return nil
	}
	err := t.file.Close()
	t.file = nil
	return err
}
