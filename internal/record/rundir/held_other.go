//go:build !linux

package rundir

import "errors"

// Held says whether a live process holds dir's lock; only Linux's
// /proc/locks answers that without taking the lock.
func Held(dir string) (bool, error) {
	return false, errors.New("cannot tell whether a run directory is in use on this system")
}
