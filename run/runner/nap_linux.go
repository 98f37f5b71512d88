package runner

import (
	"syscall"
	"time"
)

// nap sleeps the calling thread for d with nanosleep(2), which wakes within
// the thread's timer slack (50 µs by default) of d, where a Go timer may
// wake a millisecond late. The goroutine's processor is handed to other
// goroutines meanwhile as for any blocking system call.
func nap(d time.Duration) {
	ts := syscall.NsecToTimespec(int64(d))
	syscall.Nanosleep(&ts, nil)
}
