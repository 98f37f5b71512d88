package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"bench/internal/exitcode"
	"bench/internal/testpeer/faultserver"
)

// Every wait outside a cell ends at the first Ctrl-C: the inventory's
// probes, the model listing, a warm-up, a CLI's --version. These run the
// real binary against a server that accepts and never answers, and a CLI
// whose child holds stdout; that nothing else was asked of the server
// shows bench stopped there rather than waiting out the probe's bound.

// stopAtStall starts bench, waits until the fault server holds a request
// at endpoint, sends one SIGINT, and returns the exit code and stdout.
func stopAtStall(t *testing.T, s *faultserver.Server, dir, endpoint string) (int, string) {
	t.Helper()
	cmd, stdout, stderr := startIn(t, dir, "run", "--config", "bench.yaml", "--run-id", "w")
	for st := range s.Stalled() {
		if st.Endpoint == endpoint {
			break
		}
	}
	sent := time.Now()
	cmd.Process.Signal(syscall.SIGINT)
	code := exitCode(cmd.Wait())
	// The figure issue 21 asks for (2-4 s before): logged, not asserted.
	t.Logf("exit %.3f s after Ctrl-C at %s", time.Since(sent).Seconds(), endpoint)
	if !strings.Contains(stderr.String(), "stopping") {
		t.Errorf("no acknowledgement of Ctrl-C:\n%s", stderr)
	}
	return code, stdout.String()
}

func countEndpoint(s *faultserver.Server, endpoint string) int {
	n := 0
	for _, r := range s.Requests() {
		if r.Endpoint == endpoint {
			n++
		}
	}
	return n
}

func TestFirstCtrlCStopsTheInventory(t *testing.T) {
	s := faultserver.Start(t)
	s.Override("/api/tags", faultserver.StallHeaders)
	dir := benchDir(t, "run:\n  timeout: 60s\n", fmt.Sprintf("providers:\n  - type: ollama\n    base_url: %s\n    models: [ok]\n", s.URL()), "T0")
	code, stdout := stopAtStall(t, s, dir, faultserver.EndpointTags)
	if code != exitcode.Interrupted {
		t.Errorf("exit %d\n%s", code, stdout)
	}
	// The listing was asked once (the probe); not again by the sweep's
	// preparation, and no cell ran.
	if tags, chats := countEndpoint(s, faultserver.EndpointTags), countEndpoint(s, faultserver.EndpointOllamaChat); tags != 1 || chats != 0 {
		t.Errorf("%d listings, %d chats after the first Ctrl-C", tags, chats)
	}
	if info := runInfo(t, filepath.Join(dir, "runs", "w")); info.EndReason != "interrupted" || info.CellsRecorded != 0 {
		t.Errorf("run.json %+v", info)
	}
	// The probe was stopped, not timed out.
	if inv := inventoryOf(t, dir); !strings.Contains(inv, "context canceled") || strings.Contains(inv, "no complete answer") {
		t.Errorf("inventory.json:\n%s", inv)
	}
}

func inventoryOf(t *testing.T, dir string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "runs", "w", "inventory.json"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestFirstCtrlCStopsPreparing(t *testing.T) {
	s := faultserver.Start(t)
	provs := fmt.Sprintf("providers:\n  - type: ollama\n    base_url: %s\n    warmup: true\n    models: [stall_headers]\n", s.URL())
	dir := benchDir(t, "run:\n  timeout: 60s\n", provs, "T0")
	code, stdout := stopAtStall(t, s, dir, faultserver.EndpointOllamaChat)
	if code != exitcode.Interrupted {
		t.Errorf("exit %d\n%s", code, stdout)
	}
	// The warm-up was the only chat: no cell started after the Ctrl-C.
	if chats := countEndpoint(s, faultserver.EndpointOllamaChat); chats != 1 {
		t.Errorf("%d chats, want the warm-up only", chats)
	}
	if recs := readRecords(t, filepath.Join(dir, "runs", "w", "results.jsonl")); len(recs) != 0 {
		t.Errorf("%d records", len(recs))
	}
}

// hangingCLI answers --version only if told to, and otherwise (and for a
// cell) starts a child that holds stdout, notes its pid, and hangs.
const hangingCLI = `#!/bin/sh
if [ "$1" = "--version" ] && [ -n "$ANSWER_VERSION" ]; then echo "9.9.9 (Fake)"; exit 0; fi
sleep 600 &
echo $! > "$MARKER.$1"
wait
`

// gone waits for the pid in marker to be gone (or a zombie).
func gone(t *testing.T, marker string) {
	t.Helper()
	b, err := os.ReadFile(marker)
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	waitFor(t, fmt.Sprintf("child %d to be killed", pid), func() bool {
		st, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		return err != nil || strings.Contains(string(st), ") Z ")
	})
}

func TestHangingCLI(t *testing.T) {
	tmp := t.TempDir()
	cli := filepath.Join(tmp, "claude")
	os.WriteFile(cli, []byte(hangingCLI), 0o755)
	marker := filepath.Join(tmp, "child")
	provs := fmt.Sprintf("providers:\n  - type: claude_code_cli\n    command: %s\n    env: {MARKER: %s}\n    models: [m]\n", cli, marker)

	// Its --version hangs: the first Ctrl-C ends the probe, and its child.
	dir := benchDir(t, "run:\n  timeout: 60s\n", provs, "T0")
	cmd, stdout, _ := startIn(t, dir, "run", "--config", "bench.yaml", "--run-id", "w")
	waitFor(t, "the probe", func() bool { _, err := os.Stat(marker + ".--version"); return err == nil })
	cmd.Process.Signal(syscall.SIGINT)
	if code := exitCode(cmd.Wait()); code != exitcode.Interrupted {
		t.Errorf("exit %d\n%s", code, stdout)
	}
	gone(t, marker+".--version")
	if inv := inventoryOf(t, dir); !strings.Contains(inv, "stopped before it answered") {
		t.Errorf("inventory.json:\n%s", inv)
	}
	if _, err := os.Stat(marker + ".-p"); err == nil {
		t.Error("a cell started after the first Ctrl-C")
	}

	// A cell that hangs: its timeout kills the whole group, the child
	// holding stdout included.
	t.Setenv("ANSWER_VERSION", "1")
	dir = benchDir(t, "run:\n  timeout: 1s\n", provs, "T0")
	code, out, stderr := runIn(t, dir, "run", "--config", "bench.yaml", "--run-id", "w")
	recs := readRecords(t, filepath.Join(dir, "runs", "w", "results.jsonl"))
	if code != exitcode.OK || len(recs) != 1 || class(recs[0]) != "error/timeout" {
		t.Fatalf("exit %d, %d records\n%s%s", code, len(recs), out, stderr)
	}
	gone(t, marker+".-p")
}

// A server that accepts and never answers costs a run with timeout: 2s
// no wait longer than that before its first cell: the inventory asks its
// version once and, getting no answer, lists nothing; the sweep does not
// list again; the warm-up waits the cell timeout. Each wait's bound is
// the one the messages name (no wall time is asserted).
func TestSilentServerWaitsTheCellTimeout(t *testing.T) {
	s := faultserver.Start(t)
	for _, p := range []string{"/api/version", "/api/tags", "/api/ps", "/api/chat"} {
		s.Override(p, faultserver.StallHeaders)
	}
	dir := benchDir(t, "run:\n  timeout: 2s\n", fmt.Sprintf("providers:\n  - type: ollama\n    base_url: %s\n    models: [ok]\n", s.URL()), "T0")
	code, stdout, stderr := runIn(t, dir, "run", "--config", "bench.yaml", "--run-id", "w")
	recs := readRecords(t, filepath.Join(dir, "runs", "w", "results.jsonl"))
	if len(recs) != 1 || class(recs[0]) != "error/timeout" {
		t.Fatalf("exit %d, %d records\n%s%s", code, len(recs), stdout, stderr)
	}
	if inv := inventoryOf(t, dir); !strings.Contains(inv, "/api/version: no complete answer within 2s") {
		t.Errorf("inventory.json:\n%s", inv)
	}
	for _, want := range []string{"list models at " + s.URL() + ": GET " + s.URL() + "/api/version: no complete answer within 2s",
		"warm-up of ollama/ok failed (its cells run anyway): no answer within 2s"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	if v, tags := countEndpoint(s, faultserver.EndpointVersion), countEndpoint(s, faultserver.EndpointTags); v != 1 || tags != 0 {
		t.Errorf("asked the version %d times and the list %d times; want once and never", v, tags)
	}
}

// The same silent server behind an ollama_openai entry, whose warm-up
// loads the model through Ollama's native API first: the load reaches the
// cell timeout, so the second warm-up request is not made, and the first
// cell follows. The test logs the wait from launch to the first cell's
// request (issue 21 asks for the figure; no wall time is asserted).
func TestSilentServerOpenAIEntry(t *testing.T) {
	s := faultserver.Start(t)
	for _, p := range []string{"/api/version", "/api/tags", "/api/ps", "/api/chat", "/v1/chat/completions", "/v1/models"} {
		s.Override(p, faultserver.StallHeaders)
	}
	dir := benchDir(t, "run:\n  timeout: 2s\n", fmt.Sprintf("providers:\n  - type: ollama_openai\n    base_url: %s/v1\n    models: [ok]\n", s.URL()), "T0")
	start := time.Now()
	cmd, stdout, stderr := startIn(t, dir, "run", "--config", "bench.yaml", "--run-id", "w")
	for st := range s.Stalled() {
		if st.Endpoint == faultserver.EndpointChat {
			t.Logf("first cell's request %.2f s after launch", time.Since(start).Seconds())
			break
		}
	}
	code := exitCode(cmd.Wait())
	recs := readRecords(t, filepath.Join(dir, "runs", "w", "results.jsonl"))
	if len(recs) != 1 || class(recs[0]) != "error/timeout" {
		t.Fatalf("exit %d, %d records\n%s%s", code, len(recs), stdout, stderr)
	}
	if !strings.Contains(stderr.String(), "warm-up of ollama_openai/ok failed (its cells run anyway): no answer within 2s") {
		t.Errorf("stderr:\n%s", stderr)
	}
	if n := countEndpoint(s, faultserver.EndpointChat); n != 1 {
		t.Errorf("%d requests to /v1/chat/completions; want the one cell's (the warm-up stops at its timed-out load)", n)
	}
}
