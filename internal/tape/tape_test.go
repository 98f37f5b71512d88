package tape

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Bytes put on a tape read back the same, from memory and, past its bound,
// from a temporary file that no directory names; after Close it is gone.
func TestPutGet(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	tp := &Tape{Mem: 100}
	var want [][]byte
	var refs []Ref
	for i := range 50 {
		p := []byte(strings.Repeat(fmt.Sprint(i%10), i))
		want = append(want, p)
		refs = append(refs, tp.Put(p))
	}
	if !tp.Spilled() {
		t.Fatal("nothing moved to the file past 100 bytes")
	}
	if left, _ := os.ReadDir(tmp); len(left) != 0 {
		t.Errorf("the tape's file is named in %s: %v", tmp, left)
	}
	for range 2 { // reading does not consume
		for i, r := range refs {
			got, err := tp.Get(r)
			if err != nil || !bytes.Equal(got, want[i]) || r.Len() != len(want[i]) {
				t.Fatalf("put %d: got %q, %v; want %q", i, got, err, want[i])
			}
		}
	}
	if err := tp.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := tp.Get(refs[0]); err == nil {
		t.Error("a closed tape read back its file")
	}
}

// A tape that cannot make its file says why on every read, rather than
// giving back bytes it does not have.
func TestNoFile(t *testing.T) {
	t.Setenv("TMPDIR", filepath.Join(t.TempDir(), "missing"))
	tp := &Tape{Mem: 8}
	r := tp.Put([]byte("0123456789"))
	last := tp.Put([]byte("x"))
	for _, ref := range []Ref{r, last} {
		if _, err := tp.Get(ref); err == nil || !strings.Contains(err.Error(), "missing") {
			t.Errorf("get: %v", err)
		}
	}
	tp.Close()
}

// Reads in the order written go through the read-ahead window, across its
// ends; reads in any other order, and a put larger than the window, read
// back the same bytes.
func TestReadAhead(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	tp := &Tape{Mem: 1000}
	defer tp.Close()
	var want [][]byte
	var refs []Ref
	for i := range 4000 {
		p := []byte(fmt.Sprintf("%d:%s", i, strings.Repeat("x", i%300)))
		want = append(want, p)
		refs = append(refs, tp.Put(p))
	}
	big := bytes.Repeat([]byte("big"), window)
	want, refs = append(want, big), append(refs, tp.Put(big))
	want, refs = append(want, []byte("last")), append(refs, tp.Put([]byte("last")))
	check := func(order []int) {
		t.Helper()
		for _, i := range order {
			got, err := tp.Get(refs[i])
			if err != nil || !bytes.Equal(got, want[i]) {
				t.Fatalf("put %d: got %.40q, %v; want %.40q", i, got, err, want[i])
			}
		}
	}
	var forward, backward, strided []int
	for i := range refs {
		forward = append(forward, i)
		backward = append(backward, len(refs)-1-i)
		strided = append(strided, (i*997)%len(refs))
	}
	check(forward)
	check(backward)
	check(strided)
	check(forward)
}
