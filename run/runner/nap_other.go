//go:build !linux

package runner

import "time"

// nap is time.Sleep where nanosleep(2) is not wrapped for bench.
func nap(d time.Duration) { time.Sleep(d) }
