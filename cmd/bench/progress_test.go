package main

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"bench/internal/testpeer/ptytest"
)

// The real binary on a terminal: the bar is up while the first cells are
// still in flight (the server holds them), and ends with the run.
func TestLiveBarFromTheStart(t *testing.T) {
	h := newHoldServer(t, 0)
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "prompts.yaml"), []byte(promptFile), 0o644)
	cfg := filepath.Join(dir, "bench.yaml")
	os.WriteFile(cfg, []byte("run:\n  concurrency: 2\n  timeout: 60s\n  warmup: false\nproviders:\n  - type: ollama_openai\n    base_url: "+h.URL+"/v1\n    models: [m]\nprompts:\n  files: [prompts.yaml]\n"), 0o644)
	term := ptytest.Open(t)
	cmd := exec.Command(benchBin, "run", "--config", cfg, "--run-id", "tty")
	cmd.Stderr, cmd.Stdout = term.TTY, io.Discard
	cmd.Env = append(os.Environ(), "CI=")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill() })
	h.waitStarted(t, 2)
	term.WaitFor(t, "0/5 cells · ")
	term.WaitFor(t, "running: ollama_openai/m 0/5")
	h.release()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("bench run: %v\n%s", err, term.Text())
	}
	term.WaitFor(t, "[1/1] ollama_openai/m: 5 cells in ")
	term.WaitFor(t, "5/5 cells · ")
}
