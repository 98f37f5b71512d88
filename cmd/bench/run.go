package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"bench/config"
	"bench/internal/version"
	"bench/inventory"
	"bench/plan"
	"bench/providers"
	"bench/report"
	"bench/resources"
	"bench/results"
	"bench/rundir"
	"bench/runner"
)

// runCmd is `bench run`: load and check the config, open the run
// directory, sweep, and report.
func runCmd(args []string, stdout, stderr io.Writer) int {
	f, code, ok := parseRunFlags(args, stdout, stderr)
	if !ok {
		return code
	}
	cfg, provs, code := setup(f, stderr)
	if cfg != nil && f.resume {
		// A shard's directory resumes only as the same shard.
		if err := checkResumeShard(cfg.RunDir(), flagShard(f)); err != nil {
			fmt.Fprintf(stderr, "bench run: %v\n", err)
			return exitUsage
		}
		cfg, provs, code = resumeConfig(cfg, f, stderr) // the run's own plan
	}
	if cfg == nil {
		return code
	}
	pl, shard, err := shardPlan(cfg, plan.New(cfg), f, stdout)
	if err != nil {
		fmt.Fprintf(stderr, "bench run: %v\n", err)
		return exitUsage
	}
	gate, ok := baselineGate(f, stderr)
	if !ok {
		return exitUsage
	}
	if f.dryRun {
		return dryRun(stdout, stderr, cfg, pl, f.resume)
	}
	prog := newProgress(stderr, f.quiet)
	sig := catchSignals(prog.log())
	defer sig.stop()

	dir, done, code := openRunDir(cfg, f, stdout, stderr)
	if dir == nil {
		return code
	}
	defer dir.Close()
	if err := checkResumeShard(dir.Path, shard); f.resume && err != nil {
		fmt.Fprintf(stderr, "bench run: %v\n", err)
		return exitUsage
	}
	// Probing ends at the first Ctrl-C, as the sweep does.
	pctx, stop := runner.UntilDrained(sig.ctx, sig.drain)
	inv, err := prepareRunDir(pctx, dir, cfg, provs, f.resume, stderr)
	stop()
	if err != nil {
		fmt.Fprintf(stderr, "bench run: %v\n", err)
		return exitIO
	}
	full := len(pl.Cells)
	if f.resume {
		pl = pl.Without(done)
		fmt.Fprintf(stdout, "bench: resuming %s: %d of %d cells already recorded\n", cfg.Run.ID, full-len(pl.Cells), full)
	}
	s := &session{cfg: cfg, provs: provs, dir: dir, sig: sig, flags: f, prog: prog, stdout: stdout, stderr: stderr,
		shard: shard, inv: inv, gate: gate}
	return s.sweep(pl, full-len(pl.Cells))
}

// session is one bench run from the moment its directory is open.
type session struct {
	cfg            *config.Config
	provs          map[string]providers.Provider
	dir            *rundir.Dir
	sig            *signals
	flags          *runFlags
	prog           *progress
	stdout, stderr io.Writer
	// shard is which shard of a sharded run this is, nil when not sharded.
	shard *rundir.Shard
	// inv is what the providers' probes found (snapshot fingerprints).
	inv *inventory.Inventory
	// gate is the comparison against --baseline at the end, if any.
	gate *baseline
}

// setup loads the config, applies the flags and builds the providers. A nil
// config means the command ends with the returned code.
func setup(f *runFlags, stderr io.Writer) (*config.Config, map[string]providers.Provider, int) {
	cfg, err := config.Load(f.config, providers.Kinds)
	if errors.Is(err, fs.ErrNotExist) {
		fmt.Fprintln(stderr, noConfig(f))
		return nil, nil, exitUsage
	}
	if err != nil {
		fmt.Fprintf(stderr, "bench run: bad config:\n%v\n", err)
		return nil, nil, exitUsage
	}
	if err := f.apply(cfg); err != nil {
		fmt.Fprintf(stderr, "bench run: %v\n", err)
		return nil, nil, exitUsage
	}
	provs := map[string]providers.Provider{}
	for i := range cfg.Providers {
		p := &cfg.Providers[i]
		pv, err := providers.New(p)
		if err != nil {
			fmt.Fprintf(stderr, "bench run: %s:%d: providers: %s: %v\n", cfg.Path, p.Line, p.Name, err)
			return nil, nil, exitUsage
		}
		provs[p.Name] = pv
	}
	return cfg, provs, exitOK
}

// signals is how Ctrl-C reaches the run: the first closes drain (no new
// cells), the second cancels ctx (cells in flight are aborted).
type signals struct {
	ctx   context.Context
	drain chan struct{}
	stop  func()
}

func catchSignals(stderr io.Writer) *signals {
	ctx, cancel := context.WithCancel(context.Background())
	s := &signals{ctx: ctx, drain: make(chan struct{})}
	ch := make(chan os.Signal, 2)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	s.stop = func() { signal.Stop(ch); cancel() }
	go func() {
		n := 0
		for range ch {
			n++
			if n == 1 {
				close(s.drain)
				fmt.Fprintln(stderr, "\nbench: stopping: no new cells; waiting for the ones in flight (Ctrl-C again to abort)")
				continue
			}
			fmt.Fprintln(stderr, "\nbench: aborting")
			cancel()
			// Cancelled cells end within moments; do not wait on a stuck one.
			time.AfterFunc(2*time.Second, func() { os.Exit(exitInterrupted) })
		}
	}()
	return s
}

// openRunDir creates (or, with --resume, reopens) the run directory and
// returns the keys of the cells already recorded there.
func openRunDir(cfg *config.Config, f *runFlags, stdout, stderr io.Writer) (*rundir.Dir, map[results.Key]bool, int) {
	if !f.resume {
		dir, err := rundir.Create(cfg.Run.OutDir, cfg.Run.ID, !cfg.Run.IDChosen)
		if err != nil {
			fmt.Fprintf(stderr, "bench run: %v\n", err)
			if errors.Is(err, rundir.ErrExists) || errors.Is(err, rundir.ErrLocked) {
				return nil, nil, exitUsage
			}
			return nil, nil, exitIO
		}
		cfg.Run.ID = dir.ID
		return dir, nil, exitOK
	}
	if !cfg.Run.IDChosen {
		fmt.Fprintln(stderr, "bench run: --resume needs the run to continue: give its --run-id")
		return nil, nil, exitUsage
	}
	dir, dropped, err := rundir.Resume(cfg.RunDir())
	if err != nil {
		fmt.Fprintf(stderr, "bench run: %v\n", err)
		if errors.Is(err, rundir.ErrLocked) {
			return nil, nil, exitUsage
		}
		return nil, nil, exitIO
	}
	if dropped > 0 {
		fmt.Fprintf(stderr, "bench: dropped a half-written last line (%d bytes) from %s\n", dropped, dir.File(rundir.ResultsFile))
	}
	done, again, nBad, err := doneCells(dir.File(rundir.ResultsFile))
	if err != nil {
		dir.Close()
		fmt.Fprintf(stderr, "bench run: %v\n", err)
		return nil, nil, exitIO
	}
	if nBad > 0 {
		fmt.Fprintf(stderr, "bench: warning: %d unusable lines in %s; their cells run again\n", nBad, dir.File(rundir.ResultsFile))
	}
	if again > 0 {
		fmt.Fprintf(stderr, "bench: %d recorded cells run again (cancelled, or their provider was unavailable); the new record replaces the old in the reports\n", again)
	}
	return dir, done, exitOK
}

// prepareRunDir writes config.json and inventory.json. The inventory is
// taken before the sweep so probing servers and CLIs does not overlap the
// measurements. A resumed run keeps both as the run's start wrote them
// (its plan is config.json's) and reads its inventory back.
func prepareRunDir(ctx context.Context, dir *rundir.Dir, cfg *config.Config, provs map[string]providers.Provider, resume bool, stderr io.Writer) (*inventory.Inventory, error) {
	if !resume {
		if err := rundir.WriteJSON(dir.File(rundir.ConfigFile), cfg); err != nil {
			return nil, err
		}
	} else if inv, err := inventory.Read(dir.Path); err == nil {
		return inv, nil
	}
	return writeInventory(ctx, dir.Path, cfg, provs, stderr)
}

// sweep runs the plan into the run directory, then writes run.json and the
// reports and tells the user how it went.
func (s *session) sweep(pl *plan.Plan, resumed int) int {
	cfg, dir, stdout, stderr := s.cfg, s.dir, s.stdout, s.stderr
	sink, err := results.Create(dir.File(rundir.ResultsFile))
	if err != nil {
		fmt.Fprintf(stderr, "bench run: %v\n", err)
		return exitIO
	}
	if !s.flags.quiet {
		fmt.Fprintf(stdout, "bench: run %s: %s (%s, %s, %s × %s) → %s\n",
			cfg.Run.ID, report.Plural(len(pl.Cells), "cell"), report.Plural(len(cfg.Providers), "provider"),
			report.Plural(len(pl.Suites), "suite"), report.Plural(len(cfg.PromptSet), "prompt"),
			report.Plural(cfg.Run.Repetitions, "repetition"), dir.Path)
	}
	prog := s.prog
	prog.begin(pl)
	recorder := resources.NewRecorder(dir.Path)
	observers := []runner.Observer{runner.NewWorkTraces(dir.File(runner.WorkTraceDir), cfg.PromptSet, version.String())}
	if snaps, err := newSnapshotWriter(dir.Path, cfg, s.inv); err != nil {
		fmt.Fprintf(prog.log(), "bench: warning: no snapshots: %v\n", err)
	} else {
		observers = append(observers, snaps)
	}
	opts := runner.Options{
		Config: cfg, Plan: pl, Providers: s.provs, Sink: sink, Hooks: hooks{recorder, prog},
		Drain: s.sig.drain, OnRecord: prog.record, Log: prog.log(), Observers: observers,
	}
	tr := s.startTraces(resumed)
	traceRun(tr, &opts)
	out, runErr := runner.Run(s.sig.ctx, opts)
	prog.finish()
	s.finishTraces(tr, out)
	if err := recorder.Close(); err != nil {
		// Snapshots are context, not results: a failed one is a warning.
		fmt.Fprintf(stderr, "bench: warning: resource snapshots: %v\n", err)
	}
	if err := sink.Close(); err != nil && runErr == nil {
		runErr = err
	}
	if out != nil {
		// Planned counts the whole plan; a resumed run's earlier cells are
		// in Resumed. finished means every planned cell has a final record.
		err := dir.WriteRunInfo(&rundir.RunInfo{RunID: cfg.Run.ID, BenchVersion: version.String(),
			StartedAt: out.StartedAt.UTC(), EndedAt: out.EndedAt.UTC(), EndReason: out.EndReason,
			CellsPlanned: out.Planned + resumed, CellsRecorded: out.Recorded, ByStatus: out.ByStatus, Resumed: resumed, Shard: s.shard})
		if err != nil && runErr == nil {
			runErr = err
		}
	}
	if runErr != nil {
		fmt.Fprintf(stderr, "bench run: %v\nbench: the results written so far are in %s\n", runErr, dir.Path)
		return exitIO
	}
	return s.finish(out, prog)
}

// finish builds the reports and prints the table (or what to start when
// nothing was reached) and how the run ended.
func (s *session) finish(out *runner.Outcome, prog *progress) int {
	cfg, dir, stdout, stderr := s.cfg, s.dir, s.stdout, s.stderr
	summary, err := buildReports(dir.Path, s.flags.junit, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "bench run: reports: %v\nbench: the results are in %s\n", err, dir.Path)
		return exitIO
	}
	stopped := out.EndReason == runner.EndInterrupted || out.EndReason == runner.EndAborted
	// With --quiet only what needs acting on is printed, on stderr.
	w := stdout
	if s.flags.quiet {
		w = stderr
	}
	line := unreachable(cfg, prog)
	switch {
	case line != "":
		fmt.Fprintln(w, line)
	case !s.flags.quiet:
		if err := report.WriteTable(stdout, summary); err != nil {
			fmt.Fprintf(stderr, "bench run: %v\n", err)
			return exitIO
		}
	}
	if stopped || !s.flags.quiet {
		fmt.Fprintf(w, "bench: %s: %d/%d cells recorded in %s\n", out.EndReason, out.Recorded, out.Planned, dir.Path)
	}
	if stopped {
		fmt.Fprintf(w, "bench: to run the other %d cells: %s\n", out.Planned-out.Recorded, resumeCommand(s.flags.args, cfg.Run.ID))
		return exitInterrupted
	}
	if line == "" && !s.flags.quiet {
		writeNextSteps(stdout, dir.Path, s.gate != nil)
	}
	// Nothing measured outranks the gate: a run that reached no model
	// cannot vouch for anything.
	if code := s.reachCode(); code != exitOK {
		return code
	}
	if s.gate != nil {
		return runCompare(s.gate.dir, dir.Path, "", s.gate.opt, stdout, stderr)
	}
	return exitOK
}

// printPlan shows what a run would do: one line per suite.
func printPlan(w io.Writer, cfg *config.Config, pl *plan.Plan) {
	fmt.Fprintf(w, "bench: dry run of %s: %d cells → %s (nothing sent, nothing written)\n", cfg.Path, len(pl.Cells), cfg.RunDir())
	for _, s := range pl.Suites {
		th := "-"
		if s.ThinkingLevel != nil {
			th = *s.ThinkingLevel
		}
		where := s.Server.Endpoint
		if where == "" {
			where = "(local CLI)"
		}
		fmt.Fprintf(w, "  %-16s %-28s %-8s %4d cells  %s\n", s.Provider, s.Model, th, s.Cells, where)
	}
	var ids []string
	for _, p := range cfg.PromptSet {
		ids = append(ids, p.ID)
	}
	fmt.Fprintf(w, "  prompts: %s × %s; concurrency %d, timeout %s\n", strings.Join(ids, ","),
		report.Plural(cfg.Run.Repetitions, "repetition"), cfg.Run.Concurrency, time.Duration(cfg.Run.Timeout))
}
