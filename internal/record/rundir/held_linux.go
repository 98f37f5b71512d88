package rundir

import (
	"bufio"
	"fmt"
	"os"
	"strings"
	"syscall"
)

// Held says whether a live process holds dir's lock (a run being written,
// a report being rebuilt), without taking the lock or writing anything:
// a reader that must not disturb the run (bench view) asks the kernel's
// table of locks, /proc/locks, for the .lock file's device and inode. A
// directory without a .lock is not held.
func Held(dir string) (bool, error) {
	st, err := os.Lstat(Path(dir, LockFile))
	if os.IsNotExist(err) {
		return false, nil
	} else if err != nil {
		return false, err
	}
	sys, ok := st.Sys().(*syscall.Stat_t)
	if !ok || !st.Mode().IsRegular() {
		return false, nil
	}
	// /proc/locks: "1: FLOCK  ADVISORY  WRITE 1234 08:01:5678 0 EOF",
	// the device as major:minor in hex, then the inode.
	dev := uint64(sys.Dev)
	want := fmt.Sprintf("%02x:%02x:%d", (dev>>8)&0xfff|(dev>>32)&^0xfff, dev&0xff|(dev>>12)&^0xff, sys.Ino)
	f, err := os.Open("/proc/locks")
	if err != nil {
		return false, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		// A waiting lock ("->") is not held.
		if len(fields) >= 6 && fields[1] == "FLOCK" && fields[5] == want {
			return true, nil
		}
	}
	return false, sc.Err()
}
