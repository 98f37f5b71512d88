package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// BENCH_CPUPROFILE makes the real binary write a CPU profile (gzipped
// protobuf, as runtime/pprof writes it) of the whole command; one that
// cannot be created is a warning and the command's own result stands.
func TestCPUProfileEnv(t *testing.T) {
	dir := t.TempDir()
	prof := filepath.Join(dir, "cpu.prof")
	cmd := exec.Command(benchBin, "version")
	cmd.Env = append(os.Environ(), profileEnv+"="+prof)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	b, err := os.ReadFile(prof)
	if err != nil || !bytes.HasPrefix(b, []byte{0x1f, 0x8b}) {
		t.Fatalf("no gzipped profile at %s: %v (%d bytes)", prof, err, len(b))
	}
	cmd = exec.Command(benchBin, "version")
	cmd.Env = append(os.Environ(), profileEnv+"="+filepath.Join(dir, "missing", "cpu.prof"))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil || !strings.Contains(stderr.String(), "BENCH_CPUPROFILE") {
		t.Errorf("exit %v, stderr %q; want exit 0 and a warning naming the variable", err, stderr.String())
	}
}
