package grader

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"bench/internal/record/results"
	"bench/prompts"
	"bench/validators"
)

// Bounds of a command validator's run.
const (
	// CommandOutputLimit is the most of its stdout bench reads: a verdict
	// is one short JSON object. A program that prints more is stopped and
	// recorded as a validator_error.
	CommandOutputLimit = 64 << 10
	// StderrTail is how much of the end of its stderr a validator_error
	// quotes.
	StderrTail = 2 << 10
	// killWait bounds the wait for a stopped program's pipes to close (a
	// child it left behind may hold them).
	killWait = 2 * time.Second
)

// command runs a command validator: its program directly (no shell), the
// cell's answer as one JSON object on stdin (validators.CommandInput),
// with only the environment variables the spec names, in bench's working
// directory, for at most its timeout and CommandOutputLimit of stdout. A
// program that cannot start, fails, hangs, floods or prints no usable
// verdict is a validator_error with the tail of its stderr, never a pass.
func (g *Grader) command(ctx context.Context, s *validators.Spec, p *prompts.Prompt, rec *results.Record) validators.External {
	e := validators.External{Type: validators.TypeCommand}
	in := s.NewCommandInput(p.ID, p.System, p.Prompt, rec.RawOutput, rec.ToolCallDetails, rec.ExpectedTools)
	stdin, err := json.Marshal(in)
	if err != nil {
		e.Err = "cannot write the input: " + err.Error()
		return e
	}
	release, ok := g.slot(ctx)
	if !ok {
		e.Err = "cancelled: the run was stopped before the command ran"
		return e
	}
	defer release()
	r := g.run(ctx, s, append(stdin, '\n'))
	tail := g.cleanText(strings.TrimSpace(r.stderr.String()), 0)
	fail := func(what string) validators.External {
		msg := what
		if tail != "" {
			msg += "; stderr: " + tail
		}
		e.Err = msg
		e.Parsed = map[string]any{"exit_code": r.code}
		return e
	}
	switch {
	case r.startErr != nil:
		return fail(fmt.Sprintf("%s did not start: %v", s.Argv[0], r.startErr))
	case r.flooded:
		return fail(fmt.Sprintf("%s printed more than %d bytes on stdout (a verdict is one short JSON object); it was stopped", s.Argv[0], CommandOutputLimit))
	case r.timedOut:
		return fail(fmt.Sprintf("%s did not finish within its timeout (%s); it was stopped", s.Argv[0], s.CommandTimeout()))
	case ctx.Err() != nil:
		return fail("cancelled: the run was stopped while the command ran")
	case r.signal != "":
		return fail(fmt.Sprintf("%s was killed by %s", s.Argv[0], r.signal))
	}
	v, err := validators.ParseCommandVerdict(r.stdout.Bytes(), r.code)
	if err != nil {
		return fail(g.cleanText(err.Error(), 1024))
	}
	v.Reason = g.cleanText(v.Reason, 0)
	e.Parsed = v
	e.Pass = ptr(v.Pass)
	if !v.Pass {
		e.Violation = "command: " + v.Reason
		if v.Reason == "" {
			e.Violation = "command: failed"
		}
	}
	return e
}

// ran is how a command's run went.
type ran struct {
	stdout   *capped
	stderr   *tailBuffer
	code     int
	signal   string
	startErr error
	timedOut bool
	flooded  bool
}

// run runs the program under the reaper (reaper_linux.go): at its end,
// or at a timeout, a flood or a cancelled run, it and every process it
// started are killed, those that left its process group (setsid, a double
// fork) too. Where there is no reaper, it runs in its own process group,
// killed whole.
func (g *Grader) run(ctx context.Context, s *validators.Spec, stdin []byte) *ran {
	tctx, cancel := context.WithTimeout(ctx, s.CommandTimeout())
	defer cancel()
	r := &ran{stderr: &tailBuffer{max: StderrTail}}
	flood := make(chan struct{})
	r.stdout = &capped{max: CommandOutputLimit, over: func() { close(flood) }}
	env := g.env(s.Env)
	cmd := exec.Command(s.Argv[0], s.Argv[1:]...)
	cmd.Env = env
	rp, err := newReaper(s.Argv, env)
	if err == nil {
		cmd = rp.cmd
		defer rp.close()
	}
	cmd.Stdin = bytes.NewReader(stdin)
	cmd.Stdout, cmd.Stderr = r.stdout, r.stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.WaitDelay = killWait
	if err := cmd.Start(); err != nil {
		if rp != nil {
			rp.started()
		}
		r.startErr = err
		r.code = -1
		return r
	}
	if rp != nil {
		rp.started()
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var backstop *time.Timer
	kill := func() {
		if rp == nil {
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			return
		}
		// The reaper kills the program's tree and exits; a reaper that
		// does not is killed itself.
		rp.stop.Close()
		backstop = time.AfterFunc(killWait, func() { syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) })
	}
	select {
	case err = <-done:
	case <-tctx.Done():
		r.timedOut = ctx.Err() == nil
		kill()
		err = <-done
	case <-flood:
		r.flooded = true
		kill()
		err = <-done
	}
	if backstop != nil {
		backstop.Stop()
	}
	if rp == nil {
		// A program that exited on its own may have left children
		// holding the group: they go too. (The reaper has done that.)
		kill()
	}
	r.code = -1
	if cmd.ProcessState != nil {
		r.code = cmd.ProcessState.ExitCode()
		if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			r.signal = ws.Signal().String()
		}
	}
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) && !errors.Is(err, exec.ErrWaitDelay) && r.signal == "" && !r.timedOut && !r.flooded {
		r.startErr = err
	}
	if rp != nil && r.startErr == nil {
		if serr := rp.startErr(); serr != nil {
			r.startErr, r.code, r.signal = serr, -1, ""
		}
	}
	return r
}

// env is the command's environment: the variables the spec names that are
// set in bench's, and nothing else.
func (g *Grader) env(names []string) []string {
	get := g.o.Getenv
	if get == nil {
		get = os.LookupEnv
	}
	env := []string{}
	for _, n := range names {
		if v, ok := get(n); ok {
			env = append(env, n+"="+v)
		}
	}
	return env
}

// capped keeps the first max bytes written and calls over once when more
// come (the rest is dropped).
type capped struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	max  int
	over func()
	done bool
}

func (c *capped) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	room := c.max - c.buf.Len()
	if len(p) <= room {
		c.buf.Write(p)
		return len(p), nil
	}
	c.buf.Write(p[:max(room, 0)])
	if !c.done {
		c.done = true
		c.over()
	}
	return len(p), nil
}

// Bytes is what was kept.
func (c *capped) Bytes() []byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.buf.Bytes()
}

// tailBuffer keeps the last max bytes written.
type tailBuffer struct {
	mu  sync.Mutex
	buf []byte
	max int
	cut bool
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > 2*t.max {
		t.buf = append(t.buf[:0], t.buf[len(t.buf)-t.max:]...)
		t.cut = true
	}
	return len(p), nil
}

// String is the tail, on a rune boundary, marked when cut.
func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	b := t.buf
	cut := t.cut
	if len(b) > t.max {
		b, cut = b[len(b)-t.max:], true
	}
	s := strings.ToValidUTF8(string(b), "")
	if cut {
		s = "…" + s
	}
	return s
}
