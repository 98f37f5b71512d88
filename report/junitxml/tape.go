package junitxml

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
)

// tapeMem is how many bytes a tape keeps in memory before it moves them to
// its file: a run's texts below it never touch the disk.
var tapeMem = 4 << 20

// tape holds the failure, skip and error texts of a run's cells, appended
// in order and read back by offset, so a million failed cells do not hold
// a million texts in memory until Write: past tapeMem bytes they go to an
// unlinked temporary file (the kernel drops it however the process ends).
type tape struct {
	mem  []byte
	file *os.File
	size int64 // bytes in file; mem holds the bytes from size on
	err  error // the first write error; every later read returns it
	buf  []byte
}

// ref is where one text lies on the tape.
type ref struct {
	off int64
	n   uint32
}

// put appends the result's three texts.
func (t *tape) put(r *result) ref {
	start := len(t.mem)
	t.mem = binary.AppendUvarint(t.mem, uint64(len(r.Message)))
	t.mem = append(t.mem, r.Message...)
	t.mem = binary.AppendUvarint(t.mem, uint64(len(r.Type)))
	t.mem = append(t.mem, r.Type...)
	t.mem = append(t.mem, r.Data...)
	rf := ref{off: t.size + int64(start), n: uint32(len(t.mem) - start)}
	if len(t.mem) >= tapeMem {
		t.spill()
	}
	return rf
}

func (t *tape) spill() {
	if t.err != nil {
		t.mem = t.mem[:0] // nothing read back will be used
		return
	}
	if t.file == nil {
		f, err := os.CreateTemp("", "bench-junit-*.tape")
		if err != nil {
			t.err = fmt.Errorf("junit texts: %w", err)
			return
		}
		os.Remove(f.Name()) // open, it stays readable; gone at Close or exit
		t.file = f
	}
	if _, err := t.file.Write(t.mem); err != nil {
		t.err = fmt.Errorf("junit texts: write %s: %w", t.file.Name(), err)
		return
	}
	t.size += int64(len(t.mem))
	t.mem = t.mem[:0]
}

// get reads back the result at rf. Its strings are its own.
func (t *tape) get(rf ref) (result, error) {
	if t.err != nil {
		return result{}, t.err
	}
	var p []byte
	if rf.off >= t.size {
		p = t.mem[rf.off-t.size : rf.off-t.size+int64(rf.n)]
	} else {
		if cap(t.buf) < int(rf.n) {
			t.buf = make([]byte, rf.n)
		}
		p = t.buf[:rf.n]
		if _, err := t.file.ReadAt(p, rf.off); err != nil {
			return result{}, fmt.Errorf("junit texts: read %s: %w", t.file.Name(), err)
		}
	}
	var r result
	var ok bool
	if r.Message, p, ok = field(p); !ok {
		return result{}, errCorrupt
	}
	if r.Type, p, ok = field(p); !ok {
		return result{}, errCorrupt
	}
	r.Data = string(p)
	return r, nil
}

var errCorrupt = errors.New("junit texts: corrupt tape")

func field(p []byte) (string, []byte, bool) {
	n, k := binary.Uvarint(p)
	if k <= 0 || n > uint64(len(p)-k) {
		return "", nil, false
	}
	return string(p[k : k+int(n)]), p[k+int(n):], true
}

// close drops the file.
func (t *tape) close() error {
	t.mem = nil
	if t.file == nil {
		return nil
	}
	err := t.file.Close()
	t.file = nil
	return err
}
