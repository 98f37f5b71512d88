package main

import (
	"fmt"
	"slices"
	"strings"

	"bench/results"
	"bench/rundir"
)

// exitUnreached is the exit code of a run that measured nothing a nightly
// job can trust: no cell reached a model, or every cell of some provider
// did not (unless --allow-unavailable). Code 3 is bench compare's
// "regression found".
const exitUnreached = 4

// reached says whether a cell got an answer started by a model: not when
// the provider was unavailable, refused the key or rate-limited the call,
// nor when it failed before any answer (cancelled by bench, a wrong
// base_url, a connection reset before the first output).
func reached(r *results.Record) bool {
	switch r.AvailabilityStatus {
	case results.StatusSkippedUnavailable, results.StatusAuthError, results.StatusRateLimited:
		return false
	}
	if r.AvailabilityStatus != results.StatusError || r.FailureType == nil {
		return true
	}
	switch *r.FailureType {
	case results.FailCancelled, results.FailEndpointNotFound:
		return false
	case results.FailConnectionReset:
		return r.TTFOMS != nil
	}
	return true
}

// rerun says whether a resumed run runs a recorded cell again: one that
// never reached its model for a reason outside it (the provider was
// unavailable, refused the key, rate-limited the call) or that bench
// itself cut short (cancelled by a second Ctrl-C). Every other record is
// a measurement, kept. The newer record wins (reports count a cell by its
// last record).
func rerun(r *results.Record) bool {
	switch r.AvailabilityStatus {
	case results.StatusSkippedUnavailable, results.StatusAuthError, results.StatusRateLimited:
		return true
	}
	return r.FailureType != nil && *r.FailureType == results.FailCancelled
}

// reachCheck reads the run's records (all of them: a resumed run's too)
// and returns exitUnreached with the reason when no cell reached a model,
// or when every cell of a provider did not and allow is false.
func reachCheck(dir string, names []string, allow bool) (int, string, error) {
	any := map[string]bool{}
	_, _, err := results.ReadFile(rundir.Path(dir, rundir.ResultsFile), true, func(_ int, r *results.Record) error {
		if reached(r) {
			any[r.Provider] = true
		}
		return nil
	})
	if err != nil {
		return exitIO, "", err
	}
	if len(any) == 0 {
		return exitUnreached, "no cell reached a model", nil
	}
	var none []string
	for _, n := range names {
		if !any[n] {
			none = append(none, n)
		}
	}
	if len(none) == 0 || allow {
		return exitOK, "", nil
	}
	slices.Sort(none)
	return exitUnreached, fmt.Sprintf("no cell of %s reached a model (--allow-unavailable accepts that)", strings.Join(none, ", ")), nil
}

// reachCode is the exit code of a run that ended normally: exitUnreached
// when it measured nothing a nightly job can trust (see reachCheck).
func (s *session) reachCode() int {
	var names []string
	for _, p := range s.cfg.Providers {
		names = append(names, p.Name)
	}
	code, why, err := reachCheck(s.dir.Path, names, s.flags.allowUnavailable)
	if err != nil {
		fmt.Fprintf(s.stderr, "bench run: %v\n", err)
		return exitIO
	}
	if code == exitUnreached {
		fmt.Fprintf(s.stderr, "bench: %s (exit %d)\n", why, exitUnreached)
	}
	return code
}
