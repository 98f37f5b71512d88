//go:build !linux

package grader

import (
	"errors"
	"os"
	"os/exec"
)

// reaper is the Linux subreaper (reaper_linux.go); elsewhere a command
// validator runs in its own process group alone, and a child that leaves
// the group (setsid) is not found.
type reaper struct {
	cmd  *exec.Cmd
	stop *os.File
}

func newReaper(argv, env []string) (*reaper, error) {
	return nil, errors.New("no child subreaper on this system")
}

func (r *reaper) started()        {}
func (r *reaper) startErr() error { return nil }
func (r *reaper) close()          {}
