package rundir

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// Open reads regular files only, never through a symlink, never waiting
// on a FIFO, and holds to its bound; each refusal names the file.
func TestOpenRefusesWhatIsNoRegularFile(t *testing.T) {
	dir := t.TempDir()
	regular := filepath.Join(dir, "config.json")
	os.WriteFile(regular, []byte(`{"a":1}`), 0o644)
	fifo := filepath.Join(dir, "results.jsonl")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	zero := filepath.Join(dir, "run.json")
	os.Symlink("/dev/zero", zero)
	link := filepath.Join(dir, "inventory.json")
	os.Symlink(regular, link)
	sub := filepath.Join(dir, "summary.json")
	os.Mkdir(sub, 0o755)
	big := filepath.Join(dir, "tiers.json")
	f, _ := os.Create(big)
	f.Truncate(MaxFileBytes + 1)
	f.Close()
	for path, want := range map[string]string{
		fifo: "a named pipe (FIFO)", zero: "a symbolic link", link: "a symbolic link", sub: "a directory", big: "more than the 268435456",
	} {
		_, err := ReadFile(path)
		if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), want) {
			t.Errorf("ReadFile(%s) = %v, want an error naming it and saying %q", filepath.Base(path), err, want)
		}
		if want != "more than the 268435456" && !errors.Is(err, ErrNotRegular) {
			t.Errorf("%s: %v is not ErrNotRegular", filepath.Base(path), err)
		}
	}
	if b, err := ReadFile(regular); err != nil || string(b) != `{"a":1}` {
		t.Errorf("ReadFile of a regular file: %q %v", b, err)
	}
	if _, err := ReadFile(filepath.Join(dir, "none")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a missing file: %v", err)
	}
	// The directories on the way may be links.
	latest := filepath.Join(t.TempDir(), "latest")
	os.Symlink(dir, latest)
	if b, err := ReadFile(filepath.Join(latest, "config.json")); err != nil || len(b) == 0 {
		t.Errorf("through a linked directory: %v", err)
	}
}

// A file that grows past its bound while it is read fails the read; a
// cancelled context ends it.
func TestOpenBoundsTheRead(t *testing.T) {
	path := filepath.Join(t.TempDir(), "samples.jsonl")
	os.WriteFile(path, []byte("0123456789"), 0o644)
	f, err := Open(path, 10)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(path, []byte("0123456789 and more"), 0o644)
	_, err = io.ReadAll(f)
	f.Close()
	if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), path) {
		t.Errorf("a file that grew: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	f, _ = Open(path, 0)
	f.WithContext(ctx)
	cancel()
	if _, err := f.Read(make([]byte, 4)); !errors.Is(err, context.Canceled) {
		t.Errorf("a cancelled read: %v", err)
	}
	f.Close()
}

// A shared lock keeps a writer out and lets readers in; a writer keeps
// the shared lock out, naming its pid.
func TestShare(t *testing.T) {
	dir := t.TempDir()
	a, err := Share(dir)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Share(dir)
	if err != nil {
		t.Fatalf("a second reader: %v", err)
	}
	if _, err := lock(dir); !errors.Is(err, ErrLocked) {
		t.Errorf("a writer while readers share: %v", err)
	}
	a.Close()
	b.Close()
	w, err := lock(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Share(dir); !errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), "pid ") {
		t.Errorf("a reader while a writer holds it: %v", err)
	}
	w.Close()
	// A directory no one can write, without a lock file, is read as it is.
	ro := t.TempDir()
	os.Chmod(ro, 0o555)
	defer os.Chmod(ro, 0o755)
	if s, err := Share(ro); err != nil {
		if os.Geteuid() != 0 {
			t.Errorf("a read-only directory: %v", err)
		}
	} else {
		s.Close()
	}
	// A FIFO or a link planted as .lock is refused, not waited on.
	fifo := t.TempDir()
	syscall.Mkfifo(filepath.Join(fifo, LockFile), 0o644)
	if _, err := Share(fifo); err == nil || !strings.Contains(err.Error(), "not a plain file") {
		t.Errorf("a FIFO .lock: %v", err)
	}
}
