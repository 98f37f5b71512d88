package main

import (
	"fmt"
	"io"
	"os"
	"runtime/pprof"
)

// profileEnv names a file for a CPU profile of the whole command
// (go tool pprof reads it): how the figures of where bench's CPU goes in
// docs/benchmarks.md are taken, from the real binary rather than a test.
const profileEnv = "BENCH_CPUPROFILE"

// startProfile starts the CPU profile profileEnv asks for and returns the
// function that ends it; a profile that cannot start is said on stderr and
// the command runs without it.
func startProfile(stderr io.Writer) func() {
	path := os.Getenv(profileEnv)
	if path == "" {
		return func() {}
	}
	f, err := os.Create(path)
	if err == nil {
		err = pprof.StartCPUProfile(f)
	}
	if err != nil {
		fmt.Fprintf(stderr, "bench: warning: %s: %v (running without a profile)\n", profileEnv, err)
		if f != nil {
			f.Close()
		}
		return func() {}
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}
}
