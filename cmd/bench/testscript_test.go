package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// scripts/test.sh runs every step, whatever the one before it did, and
// lists the failures at the end: played with a stand-in go on PATH that
// fails go vet, the serial pass and one fuzz target, every step still
// runs (the parallel pass, the serial pass, all seven fuzz targets), the
// three failures are listed by name, and the exit is 1. The real servers'
// installers run as they do (their binaries cached or named by the
// BENCH_*_BIN variables).
func TestTestScriptRunsEveryStep(t *testing.T) {
	if testing.Short() {
		t.Skip("runs scripts/test.sh with a stand-in go")
	}
	bin := t.TempDir()
	calls := filepath.Join(bin, "calls")
	fake := `#!/bin/sh
echo "$*" >>` + calls + `
case "$*" in
vet*) exit 1 ;;
*"-timeout 15m"*) exit 1 ;;
*FuzzMerge*) echo "--- FAIL: FuzzMerge"; exit 1 ;;
esac
exit 0
`
	if err := os.WriteFile(filepath.Join(bin, "go"), []byte(fake), 0o755); err != nil {
		t.Fatal(err)
	}
	env := []string{"PATH=" + bin + string(os.PathListSeparator) + os.Getenv("PATH")}
	for _, v := range []string{"BENCH_OLLAMA_BIN", "BENCH_CHROMIUM_BIN", "BENCH_XMLLINT_BIN", "HOME"} {
		if s := os.Getenv(v); s != "" {
			env = append(env, v+"="+s)
		}
	}
	cmd := exec.Command("bash", "../../scripts/test.sh")
	cmd.Env = append(env, "BENCH_FUZZTIME=1s")
	out, err := cmd.CombinedOutput()
	ee, ok := err.(*exec.ExitError)
	if !ok || ee.ExitCode() != 1 {
		t.Fatalf("exit %v, want 1\n%s", err, out)
	}
	log, _ := os.ReadFile(calls)
	for _, want := range []string{"vet ./...", "test -race -count=1 -timeout 25m ./...", "-timeout 15m -run ^(TestGate", "FuzzResultsFile", "FuzzConfigFile",
		"FuzzRunFile", "FuzzMerge", "FuzzReport", "FuzzJSONString", "FuzzDecodeChunk"} {
		if !strings.Contains(string(log), want) {
			t.Errorf("step %q never ran; go was called with:\n%s", want, log)
		}
	}
	tail := string(out)
	if i := strings.LastIndex(tail, "scripts/test.sh: 3 step(s) failed:"); i >= 0 {
		tail = tail[i:]
	}
	for _, want := range []string{"scripts/test.sh: 3 step(s) failed:\n  go vet\n  go test (serial pass)\n  fuzz FuzzMerge\n"} {
		if !strings.Contains(tail, want) {
			t.Errorf("the summary lacks %q:\n%s", want, out)
		}
	}
}
