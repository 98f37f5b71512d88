package rundir

import (
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// Held sees a lock another process holds, and its end, without writing
// anything into the directory; a directory never locked is not held.
func TestHeld(t *testing.T) {
	dir := t.TempDir()
	if held, err := Held(dir); err != nil || held {
		t.Fatalf("no .lock: held %v, %v", held, err)
	}
	// flock(1) holds dir/.lock in another process, as a run does.
	flock, err := exec.LookPath("flock")
	if err != nil {
		t.Skip("no flock(1)")
	}
	lock := filepath.Join(dir, LockFile)
	// -o: flock holds the lock itself, not the sleep it starts.
	cmd := exec.Command(flock, "-o", "-x", lock, "sleep", "30")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// The group: flock and its sleep.
	stop := func() { syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); cmd.Wait() }
	defer stop()
	deadline := time.Now().Add(10 * time.Second)
	for {
		held, err := Held(dir)
		if err != nil {
			t.Fatal(err)
		}
		if held {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("a lock held by flock(1) is not seen")
		}
		time.Sleep(20 * time.Millisecond)
	}
	before, _ := os.ReadFile(lock)
	stop()
	// The lock ends when the last process holding its file ends: flock is
	// reaped by stop, but its child (killed between fork and closing the
	// descriptor) may exit a moment later, on a busy machine later still.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		held, err := Held(dir)
		if err != nil {
			t.Fatal(err)
		}
		if !held {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("after the holder died: still held after 10 s")
		}
	}
	// Our own lock is seen too, and Held wrote nothing.
	d, err := Lock(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if held, err := Held(dir); err != nil || !held {
		t.Errorf("bench's own lock: held %v, %v", held, err)
	}
	if after, _ := os.ReadFile(lock); len(before) != 0 && string(after) == "" {
		t.Error("the lock file was emptied")
	}
}
