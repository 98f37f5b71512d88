package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"bench/internal/exitcode"
	"bench/internal/testpeer/faultserver"
)

// Issue 31, item 18: bench rescore of a run that --resume was writing
// exited 0 with a silent partial copy, and after a kill -9 of a rescore
// the next one refused the leftover directory with a hint naming flags
// rescore does not have (--run-id, --resume). Now a rescore holds a
// shared lock on the run it reads: one started while a --resume writes
// the run refuses (exit 2, saying so), and a --resume started while a
// rescore reads the run refuses too. A rescore writes its new run beside
// --out and renames it into place whole: a kill -9 leaves no --out, and
// the next rescore removes the leftover, says so, and finishes.
func TestRescoreLockAndKill(t *testing.T) {
	// Two servers, so the stalled cell's lane runs beside the ok one's.
	s, stalled := faultserver.Start(t), faultserver.Start(t)
	work := t.TempDir()
	slow := filepath.Join(work, "slow")
	os.WriteFile(filepath.Join(work, "check.sh"), []byte("#!/bin/sh\ncat >/dev/null\nwhile [ -f \"$SLOW_FLAG\" ]; do sleep 0.1; done\necho '{\"pass\": true}'\n"), 0o755)
	os.WriteFile(filepath.Join(work, "prompts.yaml"), []byte(`prompts:
  - id: C
    prompt: "Say the phrase: alpha"
    validator: {type: command, argv: [./check.sh], env: [SLOW_FLAG]}
`), 0o644)
	os.WriteFile(filepath.Join(work, "bench.yaml"), []byte(fmt.Sprintf(`run:
  timeout: 5m
  warmup: false
  concurrency: 2
providers:
  - type: ollama_openai
    base_url: %s/v1
    max_retries: 0
    models: [ok]
  - name: stalled
    type: ollama_openai
    base_url: %s/v1
    max_retries: 0
    models: [stall_headers]
prompts:
  files: [prompts.yaml]
`, s.URL(), stalled.URL())), 0o644)
	env := append(os.Environ(), "SLOW_FLAG="+slow)
	start := func(args ...string) (*exec.Cmd, *bytes.Buffer) {
		cmd := exec.Command(benchBin, args...)
		cmd.Dir, cmd.Env = work, env
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
		return cmd, &out
	}
	waitFor := func(what string, ok func() bool) {
		t.Helper()
		for deadline := time.Now().Add(hangAfter); !ok(); time.Sleep(20 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("never: %s", what)
			}
		}
	}
	results := filepath.Join(work, "runs", "r", "results.jsonl")
	recorded := func() int {
		b, _ := os.ReadFile(results)
		return bytes.Count(b, []byte("\n"))
	}

	// A run records its ok cell and stalls on the other; killed, it is
	// resumed, and the resume stalls on that cell, holding the run.
	run, _ := start("run", "--config", "bench.yaml", "--run-id", "r", "--quiet")
	waitFor("the first cell recorded", func() bool { return recorded() >= 1 })
	run.Process.Signal(syscall.SIGKILL)
	run.Wait()
	resume, _ := start("run", "--config", "bench.yaml", "--run-id", "r", "--resume", "--quiet")
	waitFor("the resume holding the run", func() bool { return holdsOpen(resume.Process.Pid, filepath.Join(work, "runs", "r", ".lock")) })
	code, stdout, stderr := benchIn(t, work, []string{"SLOW_FLAG=" + slow}, "rescore", "runs/r", "--out", "runs/r2")
	if code != exitcode.Usage || !strings.Contains(stderr, "in use by another bench process") || !strings.Contains(stderr, fmt.Sprintf("pid %d", resume.Process.Pid)) ||
		!strings.Contains(stderr, "rescore it after its run or --resume has ended") {
		t.Errorf("rescore of a run being resumed: exit %d\n%s%s", code, stdout, stderr)
	}
	if _, err := os.Stat(filepath.Join(work, "runs", "r2")); err == nil {
		t.Error("the refused rescore left runs/r2")
	}
	resume.Process.Signal(syscall.SIGINT)
	resume.Process.Signal(syscall.SIGINT)
	resume.Wait()

	// A rescore whose check hangs holds the run: a --resume refuses it.
	os.WriteFile(slow, nil, 0o644)
	rescore, rout := start("rescore", "runs/r", "--out", "runs/r2")
	waitFor("the rescore's check running", func() bool {
		tmps, _ := filepath.Glob(filepath.Join(work, "runs", ".r2.rescore-*.tmp", "results.jsonl"))
		return holdsOpen(rescore.Process.Pid, results) || len(tmps) > 0
	})
	code, stdout, stderr = benchIn(t, work, nil, "run", "--config", "bench.yaml", "--run-id", "r", "--resume", "--quiet")
	if code != exitcode.Usage || !strings.Contains(stderr, "in use by another bench process") {
		t.Errorf("a --resume of a run being rescored: exit %d\n%s%s", code, stdout, stderr)
	}
	// kill -9 of the rescore: nothing under --out; the next one removes
	// what it left and finishes.
	rescore.Process.Signal(syscall.SIGKILL)
	rescore.Wait()
	if _, err := os.Stat(filepath.Join(work, "runs", "r2")); err == nil {
		t.Errorf("a killed rescore left runs/r2\n%s", rout.String())
	}
	left, _ := filepath.Glob(filepath.Join(work, "runs", ".r2.rescore-*.tmp"))
	if len(left) != 1 {
		t.Fatalf("the killed rescore left %q", left)
	}
	os.Remove(slow)
	code, stdout, stderr = benchIn(t, work, nil, "rescore", "runs/r", "--out", "runs/r2")
	if code != exitcode.OK || !strings.Contains(stderr, "removed "+left[0]+", left by a bench rescore into runs/r2 that did not finish") {
		t.Errorf("the rescore after a kill -9: exit %d\n%s%s", code, stdout, stderr)
	}
	if left, _ := filepath.Glob(filepath.Join(work, "runs", ".r2.rescore-*.tmp")); len(left) != 0 {
		t.Errorf("left behind: %q", left)
	}
	if b, err := os.ReadFile(filepath.Join(work, "runs", "r2", "results.jsonl")); err != nil || bytes.Count(b, []byte("\n")) != recorded() {
		t.Errorf("runs/r2/results.jsonl: %d lines (%v), the run has %d", bytes.Count(b, []byte("\n")), err, recorded())
	}
	// Into a directory that holds a run, the hint names rescore's flags.
	code, _, stderr = benchIn(t, work, nil, "rescore", "runs/r", "--out", "runs/r2")
	if code != exitcode.Usage || !strings.Contains(stderr, "--out runs/r2 already holds a run; give bench rescore a new directory with --out, or remove runs/r2 first") ||
		strings.Contains(stderr, "--run-id") || strings.Contains(stderr, "--resume") {
		t.Errorf("rescore into a run: exit %d\n%s", code, stderr)
	}
}
