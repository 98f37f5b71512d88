package faultserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"bench/internal/testpeer/anthropictest"
)

// cliResult is the CLI's final stream-json line, and all it printed.
type cliResult struct {
	IsError        bool   `json:"is_error"`
	Result         string `json:"result"`
	APIErrorStatus int    `json:"api_error_status"`
	output         string
}

// runClaude runs `claude -p` against the server with a model, in its own
// process group with a throwaway HOME, and returns its result line.
func runClaude(t *testing.T, bin, baseURL, model string, env ...string) cliResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "-p", "--output-format", "stream-json", "--verbose",
		"--no-session-persistence", "--model", model, "--max-turns", "1")
	cmd.Stdin = strings.NewReader("Say hello.")
	cmd.Dir = t.TempDir()
	cmd.Env = append([]string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + t.TempDir(),
		"ANTHROPIC_BASE_URL=" + baseURL,
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
		"CLAUDE_CODE_MAX_RETRIES=0",
	}, env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // anything it left behind
	}
	if ctx.Err() != nil {
		t.Fatalf("claude --model %s did not finish: %s", model, stderr.String())
	}
	var res cliResult
	sc := bufio.NewScanner(&stdout)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var line struct{ Type string }
		if json.Unmarshal(sc.Bytes(), &line) == nil && line.Type == "result" {
			if err := json.Unmarshal(sc.Bytes(), &res); err != nil {
				t.Fatalf("result line: %v", err)
			}
		}
	}
	res.output = stdout.String() + stderr.String()
	if res.Result == "" && !res.IsError {
		t.Fatalf("claude --model %s: no result line (exit %v):\n%s", model, err, res.output)
	}
	return res
}

// The real Claude Code CLI talks to the server: a normal answer from ok,
// an API error from http401, and the echoed key from echo_key, with the
// key sent as a bearer token or as x-api-key.
func TestClaudeCodeCLI(t *testing.T) {
	bin := anthropictest.ClaudeBin(t)
	s := Start(t)
	key := newKey()
	token := "ANTHROPIC_AUTH_TOKEN=" + key

	res := runClaude(t, bin, s.URL(), "ok", token)
	if res.IsError || res.Result != answerText {
		t.Errorf("ok: is_error %v, result %q\n%s", res.IsError, res.Result, res.output)
	}
	reqs := s.Requests()
	if len(reqs) == 0 || reqs[0].Endpoint != EndpointMessages || !reqs[0].Stream || !reqs[0].SentCredential(key) {
		t.Errorf("the CLI's request: %+v", reqs)
	}

	res = runClaude(t, bin, s.URL(), "http401", token)
	if !res.IsError || res.APIErrorStatus != 401 || strings.Contains(res.output, key) {
		t.Errorf("http401: is_error %v, status %d, result %q", res.IsError, res.APIErrorStatus, res.Result)
	}

	for _, env := range []string{token, "ANTHROPIC_API_KEY=" + key} {
		res = runClaude(t, bin, s.URL(), "echo_key", env)
		if !res.IsError || res.APIErrorStatus != 401 || !strings.Contains(res.Result, key) {
			t.Errorf("echo_key with %s: is_error %v, status %d, result %q", strings.SplitN(env, "=", 2)[0], res.IsError, res.APIErrorStatus, res.Result)
		}
	}
	if n := s.Count("echo_key"); n != 2 {
		t.Errorf("echo_key requests: %d, want 2 (no retries)", n)
	}
	if r := s.Requests(); r[len(r)-1].Header.Get("X-Api-Key") != "[redacted]" || !r[len(r)-1].SentCredential(key) {
		t.Errorf("ANTHROPIC_API_KEY should arrive as x-api-key: %v", r[len(r)-1].Header)
	}

	// After a broken stream the CLI asks again without streaming; the
	// second answer is broken the same way, as one JSON body.
	res = runClaude(t, bin, s.URL(), "cut", token)
	var modes []bool
	for _, r := range s.Requests() {
		if r.Model == "cut" {
			modes = append(modes, r.Stream)
		}
	}
	if !res.IsError || len(modes) != 2 || !modes[0] || modes[1] {
		t.Errorf("cut: is_error %v, result %q, stream flags of its requests %v (want true, false)", res.IsError, res.Result, modes)
	}
}
