// Package session assembles and runs one `bench run`, as benchstat's main
// hands everything to one function: it loads and checks the config (or a
// resumed run's own), plans (and shards) the cells, opens the run
// directory, builds the run's outputs (outputs.go, the one list), sweeps
// with the runner, writes run.json and says how the run went, with the
// exit code. cmd/bench only reads the flags into Options.
//
// Layer: command (bench run's assembly: cmd/bench reads the flags, session
// does the rest; it imports the layers below and only cmd/bench imports
// it).
package session

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"bench/config"
	"bench/internal/exitcode"
	"bench/internal/format"
	"bench/internal/record/rundir"
	"bench/internal/version"
	"bench/providers"
	"bench/report"
	"bench/report/compare"
	"bench/run/inventory"
	"bench/run/plan"
	"bench/run/progress"
	"bench/run/runner"
	"bench/validators"
)

// session is one bench run from the moment its config is loaded.
type session struct {
	o              *Options
	stdout, stderr io.Writer
	cfg            *config.Config
	provs          map[string]providers.Provider
	// secrets are the run's (providers.NewAll): names for run.json, the
	// scope for the checks' output.
	secrets *built
	// shard is which shard of a sharded run this is, nil when not sharded.
	shard *rundir.Shard
	// providers have cells in this run's plan (exit 4 is decided on them).
	providers []string
	// plan is the run's whole plan (a resumed run's included what is done).
	plan *plan.Plan

	log   *progress.Log
	sig   *signals
	dir   *rundir.Dir
	inv   *inventory.Inventory
	tally *tally
}

// Run is `bench run` with its flags read: it returns the exit code
// (package exitcode) after printing what the user needs on stdout and
// stderr.
func Run(o Options, stdout, stderr io.Writer) int {
	cfg, b, code := load(&o, stderr)
	if cfg == nil {
		return code
	}
	pl, shard, err := shardPlan(cfg, plan.New(cfg), &o, stdout)
	if err != nil {
		fmt.Fprintf(stderr, "bench run: %v\n", err)
		return exitcode.Usage
	}
	if o.Baseline != "" {
		if err := rundir.Check(o.Baseline); err != nil {
			fmt.Fprintf(stderr, "bench run: --baseline: %v\n", err)
			return exitcode.Usage
		}
	}
	// The note is for a run a gate will judge prompt by prompt: planned
	// (--dry-run) or gated (--baseline), not a load profile's stages.
	applies := cfg.Load == nil && (o.DryRun || o.Baseline != "")
	if note := compare.RepetitionsNote(cfg.Run.Repetitions, len(cfg.PromptSet), len(pl.Suites)); note != "" && applies && !o.Quiet {
		fmt.Fprintf(stderr, "bench: note: %s\n", note)
	}
	if o.DryRun {
		if o.Detect > 0 {
			d, err := compare.PlanDetect(o.Detect, len(cfg.PromptSet), len(pl.Suites), o.Baseline, compare.DefaultOptions())
			if err != nil {
				fmt.Fprintf(stderr, "bench run: --detect: %v\n", err)
				return exitcode.Usage
			}
			defer fmt.Fprintf(stdout, "bench: %s; the config has %s\n", d.Text(), format.Plural(cfg.Run.Repetitions, "repetition"))
		}
		return dryRun(stdout, stderr, cfg, pl, &o)
	}
	if why := overBudget(cfg, pl, 0); why != "" && !o.Resume && !o.AllowOverBudget {
		fmt.Fprintf(stderr, "bench run: %s\n", why)
		return exitcode.Usage
	}
	s := &session{o: &o, stdout: stdout, stderr: stderr, cfg: cfg, provs: b.provs, secrets: b, shard: shard, providers: planned(pl), plan: pl}
	return s.run(pl)
}

// load is the config the run runs: bench.yaml with the options over it,
// or, resuming, the run's own as its config.json has it. A nil config
// means the command ends with the returned code.
func load(o *Options, stderr io.Writer) (*config.Config, *built, int) {
	cfg, b, code := setup(o, stderr)
	if cfg == nil || !o.Resume {
		return cfg, b, code
	}
	// A shard's directory resumes only as the same shard.
	if err := checkResumeShard(cfg.RunDir(), o.shard()); err != nil {
		fmt.Fprintf(stderr, "bench run: %v\n", err)
		return nil, nil, exitcode.Usage
	}
	return resumeConfig(cfg, o, stderr)
}

// run opens the run directory, writes what describes the run, and sweeps.
func (s *session) run(pl *plan.Plan) int {
	s.log = progress.NewLog(s.stderr)
	s.sig = catchSignals(s.log)
	defer s.sig.stop()
	dir, t, code := openRunDir(s.cfg, s.o.Resume, spender(s.cfg, pl), s.stderr)
	if dir == nil {
		return code
	}
	defer dir.Close()
	s.dir, s.tally = dir, t
	if err := checkResumeShard(dir.Path, s.shard); s.o.Resume && err != nil {
		fmt.Fprintf(s.stderr, "bench run: %v\n", err)
		return exitcode.Usage
	}
	// Probing ends at the first Ctrl-C, as the sweep does.
	pctx, stop := runner.UntilDrained(s.sig.ctx, s.sig.drain)
	inv, err := prepareRunDir(pctx, dir, s.cfg, s.provs, s.o.Resume, s.stderr)
	stop()
	if err != nil {
		fmt.Fprintf(s.stderr, "bench run: %v\n", err)
		return exitcode.IO
	}
	s.inv = inv
	// The judges' models, found before the sweep: a missing one is a
	// config error, and a new run directory that holds nothing yet goes.
	errs, warnings := checkJudges(s.cfg, inv, s.provs)
	for _, w := range warnings {
		fmt.Fprintf(s.stderr, "bench: warning: %s\n", w)
	}
	if len(errs) > 0 {
		fmt.Fprintf(s.stderr, "bench run: bad config:\n%v\n", errors.Join(errs...))
		if !s.o.Resume {
			dir.Abandon()
		}
		return exitcode.Usage
	}
	full := len(pl.Cells)
	if s.o.Resume {
		pl = pl.Without(t.done)
		if why := overBudget(s.cfg, pl, t.spentUSD()); why != "" && !s.o.AllowOverBudget {
			fmt.Fprintf(s.stderr, "bench run: --resume: %s\n", why)
			return exitcode.Usage
		}
		fmt.Fprintf(s.stdout, "bench: resuming %s: %d of %d cells already recorded\n", s.cfg.Run.ID, full-len(pl.Cells), full)
	}
	return s.sweep(pl, full-len(pl.Cells))
}

// sweep runs the plan into the run directory through the outputs, then
// writes run.json and tells the user how it went.
func (s *session) sweep(pl *plan.Plan, resumed int) int {
	outs, reports, err := s.outputs(pl, resumed)
	if err != nil {
		fmt.Fprintf(s.stderr, "bench run: %v\n", err)
		return exitcode.IO
	}
	if !s.o.Quiet {
		cfg := s.cfg
		fmt.Fprintf(s.stdout, "bench: run %s: %s (%s, %s, %s × %s) → %s\n",
			cfg.Run.ID, format.Plural(len(pl.Cells), "cell"), format.Plural(len(cfg.Providers), "provider"),
			format.Plural(len(pl.Suites), "suite"), format.Plural(len(cfg.PromptSet), "prompt"),
			format.Plural(cfg.Run.Repetitions, "repetition"), s.dir.Path)
	}
	if b := s.cfg.Run.MaxCostUSD; b != nil && !s.o.Quiet {
		fmt.Fprintf(s.stdout, "bench: budget %s (run.max_cost_usd): %s spent, the cells to run projected at %s\n",
			usd(*b), usd(s.tally.spentUSD()), usd(plan.NewProjector(s.cfg).Plan(pl).USD))
	}
	out, runErr := runner.Run(s.sig.ctx, runner.Options{Config: s.cfg, Plan: pl, Providers: s.provs, Secrets: s.secrets.scope,
		Outputs: outs, Drain: s.sig.drain, Log: s.log, Recorded: s.tally.recordedSearch(), Budget: runBudget(s.cfg, s.tally.spentUSD())})
	if out != nil {
		if err := s.writeRunInfo(out, resumed); err != nil && runErr == nil {
			runErr = err
		}
	}
	if runErr != nil {
		fmt.Fprintf(s.stderr, "bench run: %v\nbench: the results written so far are in %s\n", runErr, s.dir.Path)
		return exitcode.IO
	}
	return s.finish(out, reports)
}

// writeRunInfo writes run.json: this invocation's times and end, and
// counts over the whole run (a resumed run's earlier cells included, and
// apart in resumed_cells).
func (s *session) writeRunInfo(out *runner.Outcome, resumed int) error {
	s.tally.mu.Lock()
	cells := s.tally.cells
	s.tally.mu.Unlock()
	all, own := s.secrets.spec.Names()
	return s.dir.WriteRunInfo(&rundir.RunInfo{RunID: s.cfg.Run.ID, BenchVersion: version.String(),
		StartedAt: out.StartedAt.UTC(), EndedAt: out.EndedAt.UTC(), EndReason: out.EndReason,
		CellsPlanned: out.Planned + resumed, CellsRecorded: cells, ByStatus: s.tally.statuses(), Resumed: resumed, Shard: s.shard,
		Baseline: s.o.Baseline, SecretEnv: all, ProviderSecretEnv: own})
}

// finish prints the table (or what to start when nothing was reached) and
// how the run ended, and returns the exit code: an interrupted run's, the
// reach check's, or the baseline gate's.
func (s *session) finish(out *runner.Outcome, reports *reports) int {
	summary, err := reports.summary()
	if err != nil {
		fmt.Fprintf(s.stderr, "bench run: %v\nbench: the results are in %s ('%s report' rebuilds the reports)\n", err, s.dir.Path, s.o.prog())
		return exitcode.IO
	}
	// A group measured mostly while its model loaded: said beside the
	// table (summary.md heads with it too; --quiet leaves it there).
	for _, w := range report.ColdWarnings(summary) {
		if !s.o.Quiet {
			fmt.Fprintf(s.stderr, "bench: warning: %s\n", w)
		}
	}
	stopped := out.EndReason == runner.EndInterrupted || out.EndReason == runner.EndAborted
	// With --quiet only what needs acting on is printed, on stderr.
	w := s.stdout
	if s.o.Quiet {
		w = s.stderr
	}
	// Nothing reached a model: no table of nothing, but what to start, on
	// stderr, before the run's last line says so (verdict).
	lines := unreachable(s.cfg, s.tally)
	for _, l := range lines {
		fmt.Fprintln(s.stderr, l)
	}
	if lines != nil {
		fmt.Fprintf(s.stderr, "bench: to see bench work without a model server: %s\n", DemoHint)
	} else if !s.o.Quiet {
		if err := report.WriteTable(s.stdout, summary); err != nil {
			fmt.Fprintf(s.stderr, "bench run: %v\n", err)
			return exitcode.IO
		}
	}
	if stopped || (!s.o.Quiet && lines == nil) {
		fmt.Fprintf(w, "bench: %s: %d/%d cells recorded in %s\n", out.EndReason, out.Recorded, out.Planned, s.dir.Path)
	}
	if stopped {
		fmt.Fprintf(w, "bench: to run the other %d cells: %s\n", s.tally.left(out.Planned), resumeCommand(s.o.prog(), s.o.Args, s.cfg.Run.ID, ""))
		return exitcode.Interrupted
	}
	if out.EndReason == runner.EndBudget {
		// Said even with --quiet: the run is not complete.
		writeBudgetEnd(s.stderr, s, out)
		return exitcode.Budget
	}
	if lines == nil && !s.o.Quiet {
		writeNextSteps(s.stdout, s.o.prog(), s.dir.Path, s.o.Baseline != "")
	}
	return s.verdict()
}

// verdict is the exit code of a run that ended normally. Nothing measured
// outranks the gate: a run that reached no model cannot vouch for
// anything, and one with a group its external checks gave no verdict on
// cannot vouch for that group's quality (the gate still writes its
// comparison).
func (s *session) verdict() int {
	code, why := s.tally.reachCode(s.providers, s.o.AllowUnavailable)
	if code != exitcode.OK {
		fmt.Fprintf(s.stderr, "bench: %s (exit %d)\n", why, code)
		return code
	}
	unjudged, line := s.tally.unjudgedCode()
	gate := exitcode.OK
	if s.o.Baseline != "" {
		regressed, err := compare.Judge(s.o.Baseline, s.dir.Path, "", s.o.Gate, s.stdout)
		switch {
		case err != nil:
			fmt.Fprintf(s.stderr, "bench compare: %v\n", err)
			return exitcode.IO
		case regressed:
			gate = exitcode.Regression
		}
	}
	if unjudged != exitcode.OK {
		fmt.Fprintf(s.stderr, "bench: %s; the night cannot be a baseline: judge it again when the check works ('%s rescore %s --out DIR') (exit %d)\n",
			line, s.o.prog(), s.dir.Path, unjudged)
		return unjudged
	}
	return gate
}

// dryRun prints the plan and its projected cost; with resume, the cells a
// resume would run. A run the budget would refuse to start is refused here
// too (exit 2), unless --allow-over-budget.
func dryRun(stdout, stderr io.Writer, cfg *config.Config, pl *plan.Plan, o *Options) int {
	spent := 0.0
	if o.Resume {
		full := len(pl.Cells)
		t, err := scan(rundir.Path(cfg.RunDir(), rundir.ResultsFile), spender(cfg, pl))
		if err != nil {
			fmt.Fprintf(stderr, "bench run: %v\n", err)
			return exitcode.IO
		}
		pl, spent = pl.Without(t.done), t.spent
		fmt.Fprintf(stdout, "bench: resuming %s would run %d of its %d cells (%d of them again)\n", cfg.Run.ID, len(pl.Cells), full, len(t.again))
	}
	printPlan(stdout, cfg, pl)
	for _, l := range projectionLines(cfg, pl, spent) {
		fmt.Fprintln(stdout, l)
	}
	if why := overBudget(cfg, pl, spent); why != "" && !o.AllowOverBudget {
		fmt.Fprintf(stderr, "bench run: %s\n", why)
		return exitcode.Usage
	}
	return exitcode.OK
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
	list := strings.Join(ids, ",")
	if len(list) > maxPromptLine {
		list = format.Plural(len(ids), "prompt")
	}
	fmt.Fprintf(w, "  prompts: %s × %s; concurrency %d, timeout %s\n", list,
		format.Plural(cfg.Run.Repetitions, "repetition"), cfg.Run.Concurrency, time.Duration(cfg.Run.Timeout))
	if len(strings.Join(ids, ",")) > maxPromptLine {
		// A long list (the BFCL suite's 200 ids) folded, a line of ids at a time.
		for _, l := range foldList(ids, 76) {
			fmt.Fprintf(w, "    %s\n", l)
		}
	}
	if line := checksLine(cfg); line != "" {
		fmt.Fprintln(w, line)
	}
}

// maxPromptLine is the longest prompt list the plan's summary line holds;
// a longer one is folded below it.
const maxPromptLine = 60

// foldList joins items with commas into lines of at most width bytes (an
// item longer than that on a line of its own).
func foldList(items []string, width int) []string {
	var lines []string
	cur := ""
	for _, it := range items {
		switch {
		case cur == "":
			cur = it
		case len(cur)+1+len(it) > width:
			lines = append(lines, cur+",")
			cur = it
		default:
			cur += "," + it
		}
	}
	if cur != "" {
		lines = append(lines, cur)
	}
	return lines
}

// checksLine says what the external checks will ask after their cells:
// which judge entries and models, how many command validators.
func checksLine(cfg *config.Config) string {
	var judges []string
	commands := 0
	for i := range cfg.PromptSet {
		for _, s := range cfg.PromptSet[i].Checks() {
			switch s.Type {
			case validators.TypeLLMJudge:
				if j := s.Judge + "/" + s.Model; !slices.Contains(judges, j) {
					judges = append(judges, j)
				}
			case validators.TypeCommand:
				commands++
			}
		}
	}
	if len(judges) == 0 && commands == 0 {
		return ""
	}
	var parts []string
	if len(judges) > 0 {
		parts = append(parts, "judged by "+strings.Join(judges, ", "))
	}
	if commands > 0 {
		parts = append(parts, format.Plural(commands, "command validator"))
	}
	return fmt.Sprintf("  after each cell: %s; judge_concurrency %d", strings.Join(parts, ", "), cfg.Run.JudgeConcurrency)
}
