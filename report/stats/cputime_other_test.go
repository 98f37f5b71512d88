//go:build !unix

package stats

import "time"

// processCPU is unknown here; the benchmarks then report 0 CPU time.
func processCPU() time.Duration { return 0 }
