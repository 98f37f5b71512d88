package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"bench/internal/exitcode"
	"bench/internal/record/rundir"
)

// holdServer speaks the OpenAI-compatible stream (replayed from the recorded
// Ollama stream in testdata) and holds every request after the first `free`
// ones on a gate: it sends the first content chunk, then waits, so a test
// can signal bench while cells are provably in flight.
type holdServer struct {
	*httptest.Server
	started atomic.Int64
	gate    chan struct{}
	once    sync.Once
}

func newHoldServer(t *testing.T, free int64) *holdServer {
	raw, err := os.ReadFile("testdata/v1_chat_stream_text_usage.http")
	if err != nil {
		t.Fatal(err)
	}
	var events []string
	sc := bufio.NewScanner(bytes.NewReader(raw))
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), "data: ") {
			events = append(events, sc.Text()+"\n\n")
		}
	}
	h := &holdServer{gate: make(chan struct{})}
	h.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/chat/completions" {
			// The inventory's probes of /api/version and /api/tags.
			http.NotFound(w, r)
			return
		}
		n := h.started.Add(1)
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, events[0])
		w.(http.Flusher).Flush()
		if n > free {
			select {
			case <-h.gate:
			case <-r.Context().Done():
				return
			}
		}
		for _, e := range events[1:] {
			io.WriteString(w, e)
		}
	}))
	t.Cleanup(func() { h.release(); h.Close() })
	return h
}

func (h *holdServer) release() { h.once.Do(func() { close(h.gate) }) }

func (h *holdServer) waitStarted(t *testing.T, n int64) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for h.started.Load() < n {
		if time.Now().After(deadline) {
			t.Fatalf("only %d requests reached the server, want %d", h.started.Load(), n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// startBench starts the binary on a config for the hold server and returns
// the command, the run directory and a channel closed once stderr shows s.
func startBench(t *testing.T, url string, waitFor string) (*exec.Cmd, string, chan struct{}, *bytes.Buffer) {
	t.Helper()
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "prompts.yaml"), []byte(promptFile), 0o644)
	// No warm-up: these tests count the cells' requests.
	cfg := fmt.Sprintf("run:\n  concurrency: 2\n  repetitions: 2\n  timeout: 60s\n  warmup: false\nproviders:\n  - type: ollama_openai\n    base_url: %s/v1\n    models: [m]\nprompts:\n  files: [prompts.yaml]\n", url)
	os.WriteFile(filepath.Join(dir, "bench.yaml"), []byte(cfg), 0o644)
	cmd := exec.Command(benchBin, "run", "--config", filepath.Join(dir, "bench.yaml"), "--run-id", "sig")
	pr, pw := io.Pipe()
	cmd.Stderr = pw
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	seen := make(chan struct{})
	go func() {
		var once sync.Once
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			if waitFor != "" && strings.Contains(sc.Text(), waitFor) {
				once.Do(func() { close(seen) })
			}
		}
	}()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); pw.Close() })
	return cmd, filepath.Join(dir, "runs", "sig"), seen, &stdout
}

func exitCode(err error) int {
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode()
	}
	if err != nil {
		return -1
	}
	return 0
}

// First Ctrl-C: no new cells start, the two in flight finish and are
// recorded, reports are written, and the run says it was interrupted.
func TestCtrlCDrains(t *testing.T) {
	h := newHoldServer(t, 0)
	cmd, dir, stopping, stdout := startBench(t, h.URL, "stopping")
	h.waitStarted(t, 2)
	cmd.Process.Signal(syscall.SIGINT)
	select {
	case <-stopping:
	case <-time.After(30 * time.Second):
		t.Fatal("bench did not acknowledge Ctrl-C")
	}
	h.release()
	if code := exitCode(cmd.Wait()); code != exitcode.Interrupted {
		t.Fatalf("exit %d, want %d", code, exitcode.Interrupted)
	}
	recs := readRecords(t, filepath.Join(dir, "results.jsonl"))
	if len(recs) != 2 || h.started.Load() != 2 {
		t.Fatalf("%d records, %d requests; want the 2 in flight and no new ones", len(recs), h.started.Load())
	}
	for _, r := range recs {
		if r.AvailabilityStatus != "ok" || r.RawOutput != "I will run `free -h` to check memory." {
			t.Errorf("in-flight cell not completed: %s %q", r.AvailabilityStatus, r.RawOutput)
		}
	}
	var info rundir.RunInfo
	b, _ := os.ReadFile(filepath.Join(dir, "run.json"))
	if err := json.Unmarshal(b, &info); err != nil || info.EndReason != "interrupted" || info.CellsRecorded != 2 || info.CellsPlanned != 10 {
		t.Errorf("run.json %+v (%v)", info, err)
	}
	if !strings.Contains(stdout.String(), "interrupted: 2/10 cells recorded") {
		t.Errorf("stdout:\n%s", stdout.String())
	}
	// The run says how to finish it, and that command does.
	_, resume, ok := strings.Cut(stdout.String(), "bench: to run the other 8 cells: ")
	resume, _, _ = strings.Cut(resume, "\n")
	if !ok || !strings.HasPrefix(resume, benchBin+" run --config ") || !strings.HasSuffix(resume, " --run-id sig --resume") {
		t.Fatalf("no resume command:\n%s", stdout.String())
	}
	out, err := exec.Command("sh", "-c", resume).CombinedOutput()
	if code := exitCode(err); code != 0 || len(readRecords(t, filepath.Join(dir, "results.jsonl"))) != 10 {
		t.Errorf("%s: exit %d, want all 10 cells recorded\n%s", resume, code, out)
	}
}

// Second Ctrl-C: the cells in flight are cancelled and recorded as such, and
// bench exits without waiting for the server; the count of cells it says
// are left is the count a resume runs (the cancelled ones included).
func TestSecondCtrlCAborts(t *testing.T) {
	h := newHoldServer(t, 0)
	cmd, dir, stopping, stdout := startBench(t, h.URL, "stopping")
	h.waitStarted(t, 2)
	cmd.Process.Signal(syscall.SIGINT)
	<-stopping
	cmd.Process.Signal(syscall.SIGINT)
	done := make(chan error)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if code := exitCode(err); code != exitcode.Interrupted {
			t.Fatalf("exit %d, want %d", code, exitcode.Interrupted)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("bench did not exit on the second Ctrl-C")
	}
	recs := readRecords(t, filepath.Join(dir, "results.jsonl"))
	if len(recs) != 2 {
		t.Fatalf("%d records, want the 2 cancelled cells", len(recs))
	}
	for _, r := range recs {
		if r.AvailabilityStatus != "error" || r.FailureType == nil || *r.FailureType != "cancelled" {
			t.Errorf("got %s %v, want error/cancelled", r.AvailabilityStatus, r.FailureType)
		}
	}
	if !strings.Contains(stdout.String(), "bench: to run the other 10 cells: ") {
		t.Errorf("stdout:\n%s", stdout.String())
	}
	out, err := exec.Command(benchBin, "run", "--config", filepath.Join(filepath.Dir(filepath.Dir(dir)), "bench.yaml"), "--run-id", "sig", "--resume", "--dry-run").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "would run 10 of its 10 cells (2 of them again)") {
		t.Errorf("resume --dry-run (%v):\n%s", err, out)
	}
}

// A killed process leaves valid JSONL: every line written is whole.
func TestKilledRunLeavesValidJSONL(t *testing.T) {
	h := newHoldServer(t, 6)
	cmd, dir, _, _ := startBench(t, h.URL, "")
	h.waitStarted(t, 8)
	// The 6 free cells have ended; wait for their lines, then kill.
	deadline := time.Now().Add(30 * time.Second)
	for len(readRecords(t, filepath.Join(dir, "results.jsonl"))) < 6 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	recs := readRecords(t, filepath.Join(dir, "results.jsonl")) // fails the test on any bad line
	if len(recs) != 6 {
		t.Fatalf("%d records after kill, want the 6 finished cells", len(recs))
	}
}

// A killed run is finished with --resume: only the cells without a record
// run, the half-written last line is dropped, nothing recorded is lost.
func TestResumeAfterKill(t *testing.T) {
	h := newHoldServer(t, 6)
	cmd, dir, _, _ := startBench(t, h.URL, "")
	h.waitStarted(t, 8)
	deadline := time.Now().Add(30 * time.Second)
	for len(readRecords(t, filepath.Join(dir, "results.jsonl"))) < 6 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	path := filepath.Join(dir, "results.jsonl")
	before, _ := os.ReadFile(path)
	f, _ := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"record_type":"result","run_id":"sig","prov`) // as if killed mid-write
	f.Close()

	// Without --resume the directory is refused.
	cfgPath := filepath.Join(filepath.Dir(filepath.Dir(dir)), "bench.yaml")
	out, err := exec.Command(benchBin, "run", "--config", cfgPath, "--run-id", "sig").CombinedOutput()
	if exitCode(err) != 2 || !strings.Contains(string(out), "--resume") {
		t.Fatalf("exit %d without --resume:\n%s", exitCode(err), out)
	}

	h.release()
	out, err = exec.Command(benchBin, "run", "--config", cfgPath, "--run-id", "sig", "--resume").CombinedOutput()
	if exitCode(err) != 0 || !strings.Contains(string(out), "6 of 10 cells already recorded") {
		t.Fatalf("exit %d with --resume:\n%s", exitCode(err), out)
	}
	after, _ := os.ReadFile(path)
	if !bytes.HasPrefix(after, before) {
		t.Error("resume changed lines recorded before the kill")
	}
	recs := readRecords(t, path)
	seen := map[string]bool{}
	for _, r := range recs {
		k := fmt.Sprintf("%s/%d", r.PromptID, r.Repetition)
		if seen[k] {
			t.Errorf("cell %s recorded twice", k)
		}
		seen[k] = true
	}
	if len(recs) != 10 {
		t.Errorf("%d records after resume, want all 10 cells once", len(recs))
	}
	var info rundir.RunInfo
	b, _ := os.ReadFile(filepath.Join(dir, "run.json"))
	if json.Unmarshal(b, &info) != nil || info.Resumed != 6 || info.CellsRecorded != 10 || info.EndReason != "finished" {
		t.Errorf("run.json %+v", info)
	}
}
