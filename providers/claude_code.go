package providers

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"bench/config"
	"bench/internal/record/results"
	"bench/internal/record/secrets"
)

// claudeCodeKind is the claude_code_cli type: the Claude Code CLI as a
// subprocess per cell.
type claudeCodeKind struct{}

// claudeCodeOptions are the keys a claude_code_cli entry takes.
type claudeCodeOptions struct {
	// Command is the CLI to run (default claude, found on PATH).
	Command string `yaml:"command" json:"command"`
	// Env is added to the CLI's environment, ${VAR} expanded. Only its keys
	// are written to config.json: the values may be keys.
	Env     map[string]string `yaml:"env" json:"-"`
	EnvKeys []string          `yaml:"-" json:"env_keys,omitempty"`
	// MaxTurns is --max-turns (default 1).
	MaxTurns       int      `yaml:"max_turns" json:"max_turns"`
	PermissionMode string   `yaml:"permission_mode" json:"permission_mode,omitempty"`
	AllowedTools   []string `yaml:"allowed_tools" json:"allowed_tools,omitempty"`
}

func (claudeCodeKind) Name() string { return "claude_code_cli" }

func (claudeCodeKind) GenAIProvider() string { return "anthropic" }

func (claudeCodeKind) ToolProtocol() string {
	return "MCP over stdio: Claude Code's own loop calls bench's server"
}

func (claudeCodeKind) OwnsToolLoop() bool { return true }

func (claudeCodeKind) Options() any { return &claudeCodeOptions{Command: "claude", MaxTurns: 1} }

func (claudeCodeKind) Resolve(p *config.Provider, problem func(key, msg string)) {
	o := options[claudeCodeOptions](p)
	if strings.TrimSpace(o.Command) == "" {
		problem("command", "must name the CLI (e.g. claude)")
	}
	if o.MaxTurns < 1 {
		problem("max_turns", "must be at least 1")
	}
	o.EnvKeys = slices.Sorted(maps.Keys(o.Env))
	for _, k := range o.EnvKeys {
		if !envName.MatchString(k) {
			problem("env", fmt.Sprintf("%q is not an environment variable name", k))
		}
	}
	// The CLI runs here and calls a remote API: no local server to watch.
	p.Server = config.Server{Command: o.Command}
}

func (claudeCodeKind) New(p *config.Provider, s Secrets) (Provider, error) {
	return &ClaudeCode{opts: options[claudeCodeOptions](p), secrets: s}, nil
}

func (claudeCodeKind) Hint(p *config.Provider, failureType string, models []string) (string, bool) {
	switch failureType {
	case results.FailCLINotFound:
		return fmt.Sprintf("install the Claude Code CLI (`npm install -g @anthropic-ai/claude-code`) or set command for %s", p.Name), true
	case results.FailModelNotFound:
		return fmt.Sprintf("check the model names of %s (%s)", p.Name, strings.Join(models, ", ")), false
	}
	return fmt.Sprintf("%s: %s", p.Name, failureType), false
}

// ClaudeCode runs the Claude Code CLI (`claude -p`) as a subprocess per cell
// and reads its stream-json output, so a model is measured the way a user
// will run it as a subagent: CLI start-up, system prompt and tools included.
//
// The prompt goes to the CLI on stdin, so a prompt that starts with "-" is
// never read as a flag. Prompt-defined native tools (Request.Tools) are not
// offered: the CLI brings its own tool set (Bash, Read, ...), which
// allowed_tools and permission_mode configure; its tool_use blocks are the
// native tool calls.
//
// thinking_level maps to the CLI's --effort flag (low, medium, high, xhigh;
// the CLI sends it as output_config.effort with adaptive thinking), checked
// against `claude --help` of 2.1.330 and the request the CLI sends. A null
// level passes no flag, which leaves the CLI's own default (2.1.330 sends
// effort high). MAX_THINKING_TOKENS can still be set through env.
//
// A missing CLI is recorded per cell as skipped_unavailable (cli_not_found),
// so the rest of a sweep still runs.
type ClaudeCode struct {
	opts    *claudeCodeOptions
	secrets Secrets
}

// claudeWaitDelay bounds how long a killed CLI may hold its pipes open (a
// grandchild that left the process group) before Stream stops waiting.
const claudeWaitDelay = 2 * time.Second

// claudeReapGrace is how long a cancelled cell waits for its killed CLI to
// be reaped before it returns and leaves that to the background.
const claudeReapGrace = 20 * time.Millisecond

// claudeStderrTail is how much of the CLI's stderr is kept for messages.
const claudeStderrTail = 4 << 10

// Secrets are the run's secrets and the CLI's own (secretSpec).
func (c *ClaudeCode) Secrets() Secrets { return c.secrets }

// Probe runs `<command> --version` in its own process group, bounded.
func (c *ClaudeCode) Probe(ctx context.Context) *Probe {
	pr := &Probe{Command: c.opts.Command}
	env, secrets := c.environ(), c.Secrets()
	v, err := cliVersion(ctx, c.opts.Command, env)
	if err != nil {
		pr.Errors = append(pr.Errors, secrets.Clean(err.Error(), maxMessage))
	} else {
		// A CLI could print anything, a key included, as its version.
		v = secrets.Clean(v, maxMessage)
		pr.CLIVersion = &v
	}
	return pr
}

// args builds the command line. The prompt itself goes on stdin.
func (c *ClaudeCode) args(req Request) []string {
	a := []string{"-p",
		"--output-format", "stream-json", "--verbose", "--include-partial-messages",
		// A benchmark cell is not a conversation to resume; keep it out of
		// the user's session history.
		"--no-session-persistence",
		"--model", req.Model,
	}
	turns := c.opts.MaxTurns
	if req.MCP != nil {
		turns = req.MCP.MaxTurns
	}
	a = append(a, "--max-turns", strconv.Itoa(turns))
	if req.ThinkingLevel != "" {
		a = append(a, "--effort", req.ThinkingLevel)
	}
	if c.opts.PermissionMode != "" {
		a = append(a, "--permission-mode", c.opts.PermissionMode)
	}
	if req.System != "" {
		a = append(a, "--append-system-prompt", req.System)
	}
	if req.MCP != nil {
		// An agentic task: bench's MCP server is the only tool source
		// (no built-in tools, no other configured server), and its tools
		// are allowed without a prompt. Variadic, so it goes last.
		return append(a, "--mcp-config", req.MCP.Config, "--strict-mcp-config", "--tools", "",
			"--allowedTools", "mcp__"+req.MCP.Server)
	}
	if len(c.opts.AllowedTools) > 0 {
		// Variadic: it takes every argument up to the next flag, so it
		// goes last.
		a = append(a, "--allowedTools")
		a = append(a, c.opts.AllowedTools...)
	}
	return a
}

// OwnsToolLoop says the CLI runs an agentic task's loop itself, calling
// the task's tools over MCP: its kind's fact.
func (c *ClaudeCode) OwnsToolLoop() bool { return claudeCodeKind{}.OwnsToolLoop() }

// environ is the CLI's environment: ours, minus CLAUDECODE (set when bench
// itself runs inside a Claude Code session; each cell is a session of its
// own, not a child of that one), plus the configured env with ${VAR}
// expanded.
func (c *ClaudeCode) environ() (env []string) {
	env = c.opts.inherited()
	for _, k := range slices.Sorted(maps.Keys(c.opts.Env)) {
		env = append(env, k+"="+os.Expand(c.opts.Env[k], os.Getenv))
	}
	return env
}

// inherited is what of bench's environment the CLI's process receives:
// all of it but CLAUDECODE and the variables env sets.
func (o *claudeCodeOptions) inherited() (env []string) {
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if _, set := o.Env[k]; !set && k != "CLAUDECODE" {
			env = append(env, kv)
		}
	}
	return env
}

// secretSpec: the run's secrets are every env value that came from a
// ${VAR} (and the variables it read) or whose name marks it as a
// credential (secretName), and the password of a URL among them
// (ANTHROPIC_BASE_URL: http://user:password@host); the entry's own are
// the credentials its process inherits from bench's environment (an
// ANTHROPIC_API_KEY exported in the shell, which the CLI sends without
// the config naming it: secrets.Inherited). An inherited variable env
// sets (to "" or anything) is not inherited.
func (o *claudeCodeOptions) secretSpec() (all, own secrets.Spec) {
	for _, k := range slices.Sorted(maps.Keys(o.Env)) {
		raw := o.Env[k]
		v := os.Expand(raw, func(name string) string {
			if !slices.Contains(all.Env, name) {
				all.Env = append(all.Env, name)
			}
			return os.Getenv(name)
		})
		if v != raw || secretName(k) {
			all.Values = append(all.Values, v)
		}
		all.Values = append(all.Values, secrets.URLSecrets(v)...)
	}
	own.Env = secrets.Inherited(o.inherited())
	return all, own
}

// secretName says whether an environment variable's name marks its value
// as a credential, so a value written literally in the config is scrubbed
// like one read from ${VAR}.
func secretName(k string) bool {
	k = strings.ToUpper(k)
	for _, w := range []string{"KEY", "TOKEN", "SECRET", "PASSWORD", "AUTH", "CREDENTIAL"} {
		if strings.Contains(k, w) {
			return true
		}
	}
	return false
}

// Stream runs one CLI process in a fresh working directory and reads its
// stream until it exits. Cancelling ctx kills the whole process group.
func (c *ClaudeCode) Stream(ctx context.Context, req Request, emit EmitFunc) (*Response, error) {
	env, secrets := c.environ(), c.Secrets()
	scrub := func(s string) string { return secrets.Clean(s, 0) }
	if req.TraceParent != "" {
		env = append(env, "TRACEPARENT="+req.TraceParent)
	}
	if req.MCP != nil {
		// Tool search defers MCP tools behind a search tool; the task's
		// tools must be offered as they are.
		env = append(env, "ENABLE_TOOL_SEARCH=false")
	}
	bin, err := c.lookPath(env)
	if err != nil {
		return &Response{}, &Failure{Status: results.StatusSkippedUnavailable, Type: "cli_not_found",
			Message: scrub(err.Error()), Err: err}
	}
	dir, err := os.MkdirTemp("", "bench-claude-")
	if err != nil {
		return nil, fmt.Errorf("claude_code_cli: working directory: %w", err)
	}
	defer os.RemoveAll(dir)

	cmd := exec.CommandContext(ctx, bin, c.args(req)...)
	cmd.Dir, cmd.Env = dir, env
	cmd.Stdin = strings.NewReader(req.Prompt)
	// Its own process group, so a kill reaches whatever the CLI started
	// (tool commands, helpers) and not bench.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return claudeKillGroup(cmd.Process.Pid) }
	cmd.WaitDelay = claudeWaitDelay
	pr, pw := io.Pipe()
	cmd.Stdout = pw
	stderr := &claudeTail{max: claudeStderrTail}
	cmd.Stderr = stderr

	s := newClaudeStream(capLimit(req))
	var initAt, firstOut time.Time
	timed := func(e Event) {
		if firstOut.IsZero() && (e.Kind == EventText || e.Kind == EventToolCall) {
			firstOut = req.now()
		}
		emit(e)
	}
	emit(Event{Kind: EventRequestStart})
	start := req.now()
	if err := cmd.Start(); err != nil {
		if errors.Is(err, exec.ErrNotFound) || errors.Is(err, os.ErrNotExist) || errors.Is(err, os.ErrPermission) {
			return &Response{}, &Failure{Status: results.StatusSkippedUnavailable, Type: "cli_not_found", Message: scrub(err.Error()), Err: err}
		}
		return &Response{}, fmt.Errorf("claude_code_cli: start %s: %w", bin, err)
	}
	pid := cmd.Process.Pid
	// The exit code travels with Wait's error: the process may be reaped
	// after Stream returns (see below), so ProcessState is not read here.
	type exit struct {
		err  error
		code int
	}
	waited := make(chan exit, 1)
	go func() {
		err := cmd.Wait()
		pw.Close()
		waited <- exit{err, cmd.ProcessState.ExitCode()}
	}()
	// When the cell ends (timeout, Ctrl-C), its process group is killed;
	// reading stops at once rather than at the pipe's end, which comes only
	// once the kernel has torn the process down (a large Node heap takes a
	// while), so the cell's timeout holds.
	stopReading := context.AfterFunc(ctx, func() { pr.CloseWithError(context.Cause(ctx)) })
	defer stopReading()
	// Lines can be long (the init line lists every tool and skill; the
	// result line repeats the whole answer), so they are read with the
	// project's bounded line reader: a long line's strings are cut to the
	// cell's cap, and a line that is too long even so is counted as
	// malformed and skipped.
	lr := newLineReader(pr, 64<<10, capLimit(req))
	for {
		line, err := lr.next()
		if errors.Is(err, errLineTooLong) {
			s.malformed++
			continue
		}
		if len(line) > 0 {
			s.at = req.now()
			if s.Feed(line, timed) && initAt.IsZero() {
				initAt = s.at
				emit(Event{Kind: EventFirstByte, At: initAt})
			}
		}
		if err != nil {
			break
		}
	}
	ex := exit{code: -1}
	select {
	case ex = <-waited:
	case <-ctx.Done():
		// Killed: reaped in the background if it takes longer to die.
		select {
		case ex = <-waited:
		case <-time.After(claudeReapGrace):
			ex.err = context.Cause(ctx)
		}
	}
	werr := ex.err
	// Sweep anything the CLI left in its group after a normal exit too.
	_ = claudeKillGroup(pid)

	resp := s.Response()
	m := resp.Metrics
	if !initAt.IsZero() {
		m["startup_ms"] = initAt.Sub(start).Milliseconds()
		if !firstOut.IsZero() {
			m["api_ttft_ms"] = firstOut.Sub(initAt).Milliseconds()
		}
	}
	m["exit_code"] = ex.code

	if !s.Finished() {
		if ctx.Err() != nil {
			return resp, fmt.Errorf("claude_code_cli: %w", context.Cause(ctx))
		}
		tail := scrub(stderr.String())
		if werr != nil {
			return resp, &Failure{Status: results.StatusError, Type: "cli_exit",
				Message: fmt.Sprintf("claude exited (%v) without a result line; stderr: %s", werr, tail), Err: werr}
		}
		return resp, &Failure{Status: results.StatusError, Type: "no_result",
			Message: "claude exited without a result line; stderr: " + tail}
	}
	if f := s.Failure(); f != nil {
		f.Message = scrub(f.Message)
		return resp, f
	}
	return resp, nil
}

// lookPath finds the CLI as the child would, using PATH from env, and makes
// the result absolute since the child runs in another directory.
func (c *ClaudeCode) lookPath(env []string) (string, error) {
	name := c.opts.Command
	if strings.ContainsRune(name, filepath.Separator) {
		abs, err := filepath.Abs(name)
		if err != nil {
			return "", fmt.Errorf("command %q: %w", name, err)
		}
		if st, err := os.Stat(abs); err != nil || st.IsDir() || st.Mode()&0o111 == 0 {
			return "", fmt.Errorf("command %q is not an executable file", name)
		}
		return abs, nil
	}
	path := os.Getenv("PATH")
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			path = v
		}
	}
	for _, d := range filepath.SplitList(path) {
		if d == "" || !filepath.IsAbs(d) {
			continue // a relative PATH entry would resolve against the temp dir
		}
		p := filepath.Join(d, name)
		if st, err := os.Stat(p); err == nil && !st.IsDir() && st.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("command %q not found on PATH; install Claude Code or set command: to its path", name)
}

// claudeKillGroup kills a process group; a group already gone is fine.
func claudeKillGroup(pgid int) error {
	if pgid <= 0 {
		return nil
	}
	if err := syscall.Kill(-pgid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("kill process group %d: %w", pgid, err)
	}
	return nil
}

// claudeTail keeps the last max bytes written, cut to whole lines.
type claudeTail struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func (t *claudeTail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - 2*t.max; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	return len(p), nil
}

func (t *claudeTail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	b := bytes.TrimSpace(t.buf)
	if len(b) > t.max {
		b = b[len(b)-t.max:]
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			b = b[i+1:]
		}
	}
	if len(b) == 0 {
		return "(empty)"
	}
	return string(b)
}

// cliVersion runs `<command> --version` and returns its first output line.
// Like every subprocess bench starts, it runs in its own process group with
// a deadline, and the whole group is killed when it passes: a CLI whose
// child keeps stdout open cannot hold the run.
func cliVersion(ctx context.Context, command string, env []string) (string, error) {
	c := &ClaudeCode{opts: &claudeCodeOptions{Command: command}}
	path, err := c.lookPath(env)
	if err != nil {
		return "", fmt.Errorf("%s --version: %w", command, err)
	}
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, path, "--version")
	cmd.Env = env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return claudeKillGroup(cmd.Process.Pid) }
	cmd.WaitDelay = claudeWaitDelay
	var out bytes.Buffer
	cmd.Stdout = &limitedWriter{w: &out, n: 4096}
	err = cmd.Run()
	if cmd.Process != nil {
		_ = claudeKillGroup(cmd.Process.Pid)
	}
	if errors.Is(err, exec.ErrWaitDelay) && out.Len() > 0 {
		// It answered and exited; a child of its held stdout open and was
		// killed with the group.
		err = nil
	}
	if ctx.Err() != nil && out.Len() == 0 {
		if errors.Is(ctx.Err(), context.Canceled) {
			return "", fmt.Errorf("%s --version: stopped before it answered", command)
		}
		return "", fmt.Errorf("%s --version: no answer in time (%s)", command, probeTimeout)
	}
	if err != nil {
		return "", fmt.Errorf("%s --version: %w", command, err)
	}
	line, _, _ := strings.Cut(strings.TrimSpace(out.String()), "\n")
	if line == "" {
		return "", fmt.Errorf("%s --version: no output", command)
	}
	return line, nil
}

// limitedWriter keeps at most n bytes and discards the rest.
type limitedWriter struct {
	w io.Writer
	n int
}

func (l *limitedWriter) Write(p []byte) (int, error) {
	if l.n > 0 {
		k := min(len(p), l.n)
		l.n -= k
		if _, err := l.w.Write(p[:k]); err != nil {
			return 0, err
		}
	}
	return len(p), nil
}
