package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"strings"
	"time"

	"bench/config"
	"bench/plan"
	"bench/providers"
	"bench/results"
	"bench/rundir"
)

// resumeConfig replaces the config built from bench.yaml and the flags by
// the run's own, read back from its config.json: a resumed run runs the
// plan it was started with, whatever bench.yaml says today. A flag that
// would change that plan (or how its cells are measured) is refused; only
// --concurrency, --quiet and --allow-unavailable may differ. bench.yaml is
// still read, to find the run directory and for the values config.json
// never holds (a CLI's env).
func resumeConfig(cur *config.Config, f *runFlags, stderr io.Writer) (*config.Config, map[string]providers.Provider, int) {
	if !cur.Run.IDChosen {
		fmt.Fprintln(stderr, "bench run: --resume needs the run to continue: give its --run-id")
		return nil, nil, exitUsage
	}
	path := rundir.Path(cur.RunDir(), rundir.ConfigFile)
	saved, err := config.LoadResolved(path, providers.Kinds)
	if errors.Is(err, fs.ErrNotExist) {
		fmt.Fprintf(stderr, "bench run: %s has no %s: nothing bench can resume there\n", cur.RunDir(), rundir.ConfigFile)
		return nil, nil, exitUsage
	}
	if err != nil {
		fmt.Fprintf(stderr, "bench run: the run's saved config:\n%v\n", err)
		return nil, nil, exitUsage
	}
	if err := errors.Join(f.samePlan(saved), saved.Restore(cur)); err != nil {
		fmt.Fprintf(stderr, "bench run: --resume:\n%v\n", err)
		return nil, nil, exitUsage
	}
	saved.Run.OutDir, saved.Run.ID, saved.Run.IDChosen = cur.Run.OutDir, cur.Run.ID, true
	if f.concurrency > 0 {
		saved.Run.Concurrency = f.concurrency
	}
	provs := map[string]providers.Provider{}
	for i := range saved.Providers {
		p := &saved.Providers[i]
		pv, err := providers.New(p)
		if err != nil {
			fmt.Fprintf(stderr, "bench run: %s: providers: %s: %v\n", path, p.Name, err)
			return nil, nil, exitUsage
		}
		provs[p.Name] = pv
	}
	return saved, provs, exitOK
}

// samePlan refuses the flags that would give a resumed run another plan
// than the one it was started with, each with what the run has. A flag
// equal to the run's setting (the same command line again) is fine.
func (f *runFlags) samePlan(saved *config.Config) error {
	var errs []error
	refuse := func(flag, given, has string) {
		errs = append(errs, fmt.Errorf("%s %s: the run was started with %s; a resumed run keeps its plan (start a new run for another)", flag, given, has))
	}
	if f.repetitions > 0 && f.repetitions != saved.Run.Repetitions {
		refuse("--repetitions", fmt.Sprint(f.repetitions), fmt.Sprint(saved.Run.Repetitions))
	}
	if f.timeout > 0 && f.timeout != time.Duration(saved.Run.Timeout) {
		refuse("--timeout", f.timeout.String(), time.Duration(saved.Run.Timeout).String())
	}
	var names, models, ids []string
	for _, p := range saved.Providers {
		names = append(names, p.Name)
		models = append(models, p.Models...)
	}
	for _, p := range saved.PromptSet {
		ids = append(ids, p.ID)
	}
	for _, c := range []struct{ flag, value string }{{"--providers", f.providers}, {"--models", f.models}, {"--prompts", f.prompts}} {
		have := map[string][]string{"--providers": names, "--models": models, "--prompts": ids}[c.flag]
		if c.value != "" && !sameSet(splitList(c.value), have) {
			refuse(c.flag, c.value, strings.Join(uniq(have), ","))
		}
	}
	return errors.Join(errs...)
}

func uniq(s []string) []string { return slices.Compact(slices.Sorted(slices.Values(s))) }

func sameSet(a, b []string) bool { return slices.Equal(uniq(a), uniq(b)) }

// doneCells reads a run's results and returns the cells a resumed run
// need not run again: those whose last record is a measurement (see
// rerun). again counts the recorded cells it will run again.
func doneCells(path string) (done map[results.Key]bool, again, bad int, err error) {
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return map[results.Key]bool{}, 0, 0, nil // killed before its first result
	}
	last := map[results.Key]bool{} // key -> its last record is final
	_, bad, err = results.ReadFile(path, true, func(_ int, r *results.Record) error {
		last[r.Key()] = !rerun(r)
		return nil
	})
	done = map[results.Key]bool{}
	for k, final := range last {
		if final {
			done[k] = true
		} else {
			again++
		}
	}
	return done, again, bad, err
}

// dryRun prints the plan; with --resume, the cells a resume would run.
func dryRun(stdout, stderr io.Writer, cfg *config.Config, pl *plan.Plan, resume bool) int {
	if resume {
		full := len(pl.Cells)
		done, again, _, err := doneCells(rundir.Path(cfg.RunDir(), rundir.ResultsFile))
		if err != nil {
			fmt.Fprintf(stderr, "bench run: %v\n", err)
			return exitIO
		}
		pl = pl.Without(done)
		fmt.Fprintf(stdout, "bench: resuming %s would run %d of its %d cells (%d of them again)\n", cfg.Run.ID, len(pl.Cells), full, again)
	}
	printPlan(stdout, cfg, pl)
	return exitOK
}
