//go:build unix

package stats

import (
	"syscall"
	"time"
)

// processCPU is the CPU time this process has used, user plus system. The
// benchmarks report it beside wall time because the machine they run on
// is shared: wall time there measures the neighbours too.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
