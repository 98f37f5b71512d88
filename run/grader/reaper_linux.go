package grader

import (
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// A command validator's program may leave children that escape its
// process group (setsid, a double fork): killing the group at its end
// misses them, and they outlive the check and bench. So bench runs the
// program under a reaper, this same binary started again with reaperEnv
// set: the reaper makes itself a child subreaper (prctl
// PR_SET_CHILD_SUBREAPER), so every orphan of the program's tree is
// reparented to it instead of to init, runs the program, and when the
// program has exited, or bench says stop (its end of a pipe closes: a
// timeout, a flood, a cancelled run, or bench killed), kills every
// process below it and reaps them until it has no child left; then it
// exits as the program did. A cgroup would also find them, but is not
// available to an unprivileged process everywhere; a PID namespace needs
// user namespaces, often disabled; a subreaper needs nothing.

// reaperEnv marks the reaper's environment (and only the reaper's: the
// program's environment is the spec's). The reaper reads its control
// pipe on fd 3 (EOF: stop) and writes why the program did not start, if
// it did not, on fd 4.
const reaperEnv = "BENCH_COMMAND_REAPER"

func init() {
	if os.Getenv(reaperEnv) == "1" {
		os.Exit(reap(os.Args[1:]))
	}
}

// reaper is a program run under the reaper, from bench's side.
type reaper struct {
	cmd *exec.Cmd
	// stop is the control pipe's write end: closing it stops the tree.
	stop *os.File
	// status is where the reaper says why the program did not start.
	status *os.File
	// child are the reaper's ends, closed once it has started.
	child []*os.File
}

// newReaper is the command that runs argv under the reaper, with env the
// program's environment.
func newReaper(argv, env []string) (*reaper, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	ctlR, ctlW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	stR, stW, err := os.Pipe()
	if err != nil {
		ctlR.Close()
		ctlW.Close()
		return nil, err
	}
	cmd := exec.Command(self, argv...)
	cmd.Env = append([]string{reaperEnv + "=1"}, env...)
	cmd.ExtraFiles = []*os.File{ctlR, stW} // fds 3 and 4
	return &reaper{cmd: cmd, stop: ctlW, status: stR, child: []*os.File{ctlR, stW}}, nil
}

// started closes the reaper's ends of the pipes in bench.
func (r *reaper) started() {
	for _, f := range r.child {
		f.Close()
	}
}

// startErr is why the program did not start, once the reaper has
// exited; nil when it started.
func (r *reaper) startErr() error {
	b, _ := io.ReadAll(io.LimitReader(r.status, 4096))
	if len(b) == 0 {
		return nil
	}
	return errors.New(string(b))
}

// close lets go of bench's ends.
func (r *reaper) close() {
	r.stop.Close()
	r.status.Close()
}

// reap is the reaper's whole life: it returns the exit code, or kills
// itself with the signal that killed the program.
func reap(argv []string) int {
	ctl, status := os.NewFile(3, "control"), os.NewFile(4, "status")
	if ctl == nil || status == nil || len(argv) == 0 {
		return 125
	}
	// Neither pipe goes to the program's tree: status must reach EOF
	// when the reaper exits.
	syscall.CloseOnExec(3)
	syscall.CloseOnExec(4)
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		status.WriteString("cannot become a child subreaper: " + err.Error())
		return 125
	}
	// bench stops the reaper by closing its end of the pipe, not with a
	// signal: SIGTERM and SIGINT (a Ctrl-C on the terminal's group) are
	// bench's to act on.
	signal.Ignore(syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.Env = withoutReaperEnv(os.Environ())
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		status.WriteString(err.Error())
		return 127
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	stop := make(chan struct{})
	go func() {
		io.Copy(io.Discard, ctl) // returns at EOF: bench closed its end, or died
		close(stop)
	}()
	select {
	case <-done:
	case <-stop:
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-done
	}
	killTree()
	ws, _ := cmd.ProcessState.Sys().(syscall.WaitStatus)
	if ws.Signaled() {
		signal.Reset(ws.Signal())
		syscall.Kill(os.Getpid(), ws.Signal())
		time.Sleep(time.Second) // the signal is delivered meanwhile
	}
	return cmd.ProcessState.ExitCode()
}

// killTree kills every process below this one (those reparented to it as
// the subreaper, and theirs) and reaps them, until it has no child left.
// A process killed while forking leaves its child to be found the next
// round.
func killTree() {
	self := os.Getpid()
	for round := 0; ; round++ {
		pids := descendants(self)
		for _, p := range pids {
			syscall.Kill(p, syscall.SIGKILL)
		}
		reaped := false
		for {
			pid, err := syscall.Wait4(-1, nil, syscall.WNOHANG, nil)
			if errors.Is(err, syscall.ECHILD) {
				if len(pids) == 0 || round > 1000 {
					return
				}
				break
			}
			if err != nil || pid <= 0 {
				break
			}
			reaped = true
		}
		if !reaped {
			time.Sleep(time.Millisecond) // killed, not yet dead
		}
	}
}

// descendants lists the processes below pid, from /proc's parent links.
func descendants(pid int) []int {
	entries, _ := os.ReadDir("/proc")
	children := map[int][]int{}
	for _, e := range entries {
		p := atoi(e.Name())
		if p <= 0 {
			continue
		}
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue // gone meanwhile
		}
		// pid (comm) state ppid ...; comm may hold spaces and parentheses.
		i := bytes.LastIndexByte(stat, ')')
		if i < 0 {
			continue
		}
		fields := bytes.Fields(stat[i+1:])
		if len(fields) < 2 {
			continue
		}
		pp := atoi(string(fields[1]))
		children[pp] = append(children[pp], p)
	}
	var out []int
	queue := []int{pid}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		for _, c := range children[p] {
			out = append(out, c)
			queue = append(queue, c)
		}
	}
	return out
}

func withoutReaperEnv(env []string) []string {
	out := env[:0:0]
	for _, kv := range env {
		if len(kv) > len(reaperEnv) && kv[:len(reaperEnv)] == reaperEnv && kv[len(reaperEnv)] == '=' {
			continue
		}
		out = append(out, kv)
	}
	return out
}

func atoi(s string) int {
	n, err := strconv.Atoi(s)
	if err != nil {
		return -1
	}
	return n
}
