package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"syscall"
	"time"

	"bench/config"
	"bench/inventory"
	"bench/prompts"
	"bench/providers"
	"bench/report"
	"bench/resources"
	"bench/results"
	"bench/runner"
)

// runFlags are the command-line overrides of bench.yaml.
type runFlags struct {
	config      string
	models      string
	prompts     string
	providers   string
	concurrency int
	repetitions int
	timeout     time.Duration
	runID       string
	out         string
	quiet       bool
	dryRun      bool
	resume      bool
}

func parseRunFlags(args []string, stderr io.Writer) (*runFlags, error) {
	f := &runFlags{}
	fs := flag.NewFlagSet("bench run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&f.config, "config", "bench.yaml", "config file")
	fs.StringVar(&f.models, "models", "", "comma-separated models to keep (of those in the config)")
	fs.StringVar(&f.prompts, "prompts", "", "comma-separated prompt ids to keep (overrides prompts.only)")
	fs.StringVar(&f.providers, "providers", "", "comma-separated provider names to keep")
	fs.IntVar(&f.concurrency, "concurrency", 0, "cells in flight across all providers (overrides run.concurrency)")
	fs.IntVar(&f.repetitions, "repetitions", 0, "repetitions of each cell (overrides run.repetitions)")
	fs.DurationVar(&f.timeout, "timeout", 0, "per-request timeout, e.g. 90s (overrides run.timeout)")
	fs.StringVar(&f.runID, "run-id", "", "run id, the run directory's name (default: UTC timestamp)")
	fs.StringVar(&f.out, "out", "", "parent directory of run directories (overrides run.out_dir)")
	fs.BoolVar(&f.quiet, "quiet", false, "no per-cell progress")
	fs.BoolVar(&f.resume, "resume", false, "continue the run in the run directory: run only the cells it has no record of")
	fs.BoolVar(&f.dryRun, "dry-run", false, "check the config and print the plan; send nothing, write nothing")
	fs.Usage = func() {
		fmt.Fprint(stderr, `usage: bench run [--config bench.yaml] [flags]

Sweeps models × prompts × providers as the config says and writes a run
directory: config.json, inventory.json, results.jsonl, summary.json,
summary.md, tiers.json and resource snapshots. Ctrl-C once stops new cells
and keeps what ran; twice aborts the cells in flight.

Flags (each overrides the config):
`)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected argument %q (flags go before, e.g. bench run --config bench.yaml)", fs.Arg(0))
	}
	return f, nil
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// apply puts the flags over the loaded config and checks what they set.
func (f *runFlags) apply(cfg *config.Config) error {
	var errs []error
	bad := func(flag, msg string) { errs = append(errs, fmt.Errorf("--%s: %s", flag, msg)) }
	if f.concurrency < 0 {
		bad("concurrency", "must be at least 1")
	} else if f.concurrency > 0 {
		cfg.Run.Concurrency = f.concurrency
	}
	if f.repetitions < 0 {
		bad("repetitions", "must be at least 1")
	} else if f.repetitions > 0 {
		cfg.Run.Repetitions = f.repetitions
	}
	if f.timeout < 0 {
		bad("timeout", "must be positive")
	} else if f.timeout > 0 {
		cfg.Run.Timeout = config.Duration(f.timeout)
	}
	if f.runID != "" {
		if strings.ContainsAny(f.runID, `/\`) || f.runID == "." || f.runID == ".." {
			bad("run-id", "must be a plain directory name")
		}
		cfg.Run.ID = f.runID
	}
	if f.out != "" {
		cfg.Run.OutDir = f.out
	} else if !filepath.IsAbs(cfg.Run.OutDir) {
		cfg.Run.OutDir = cfg.Resolve(cfg.Run.OutDir)
	}
	if names := splitList(f.providers); len(names) > 0 {
		var kept []config.Provider
		for _, p := range cfg.Providers {
			if slices.Contains(names, p.Name) {
				kept = append(kept, p)
			}
		}
		for _, n := range names {
			if !slices.ContainsFunc(cfg.Providers, func(p config.Provider) bool { return p.Name == n }) {
				bad("providers", fmt.Sprintf("no provider named %q in %s", n, cfg.Path))
			}
		}
		cfg.Providers = kept
	}
	if models := splitList(f.models); len(models) > 0 {
		found := map[string]bool{}
		var kept []config.Provider
		for _, p := range cfg.Providers {
			var ms []string
			for _, m := range p.Models {
				if slices.Contains(models, m) {
					ms = append(ms, m)
					found[m] = true
				}
			}
			if len(ms) > 0 {
				p.Models = ms
				kept = append(kept, p)
			}
		}
		for _, m := range models {
			if !found[m] {
				bad("models", fmt.Sprintf("%q is not in any provider's models in %s", m, cfg.Path))
			}
		}
		cfg.Providers = kept
	}
	if ids := splitList(f.prompts); len(ids) > 0 {
		// Re-filter from the full set so --prompts can widen prompts.only.
		all, err := fullPromptSet(cfg)
		if err != nil {
			errs = append(errs, err)
		} else if kept, err := config.Filter(all, ids); err != nil {
			bad("prompts", err.Error())
		} else {
			cfg.Prompts.Only = ids
			cfg.PromptSet = kept
		}
	}
	return errors.Join(errs...)
}

func fullPromptSet(cfg *config.Config) ([]prompts.Prompt, error) {
	c := *cfg
	c.Prompts.Only = nil
	return config.LoadPromptSet(&c)
}

func version() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		v := bi.Main.Version
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" && len(s.Value) >= 12 {
				return v + " (" + s.Value[:12] + ")"
			}
		}
		return v
	}
	return "(unknown)"
}

func runCmd(args []string, stdout, stderr io.Writer) int {
	f, err := parseRunFlags(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return exitOK
	}
	if err != nil {
		fmt.Fprintf(stderr, "bench run: %v\n", err)
		return exitUsage
	}
	cfg, err := config.Load(f.config)
	if err != nil {
		fmt.Fprintf(stderr, "bench run: bad config:\n%v\n", err)
		return exitUsage
	}
	if err := f.apply(cfg); err != nil {
		fmt.Fprintf(stderr, "bench run: %v\n", err)
		return exitUsage
	}

	provs := map[string]providers.Provider{}
	for _, p := range cfg.Providers {
		pv, err := providers.New(p)
		if err != nil {
			fmt.Fprintf(stderr, "bench run: %s:%d: providers: %s: %v\n", cfg.Path, p.Line, p.Name, err)
			return exitUsage
		}
		provs[p.Name] = pv
	}
	if f.dryRun {
		printPlan(stdout, cfg, runner.NewPlan(cfg))
		return exitOK
	}

	// Signals are ours from here on: a Ctrl-C while the run is set up means
	// no cell starts, and what exists is still written.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	drain := make(chan struct{})
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	go func() {
		n := 0
		for range sigs {
			n++
			if n == 1 {
				close(drain)
				fmt.Fprintln(stderr, "\nbench: stopping: no new cells; waiting for the ones in flight (Ctrl-C again to abort)")
				continue
			}
			fmt.Fprintln(stderr, "\nbench: aborting")
			cancel()
			// Cancelled cells end within moments; do not wait on a stuck one.
			time.AfterFunc(2*time.Second, func() { os.Exit(exitInterrupted) })
		}
	}()

	dir := cfg.RunDir()
	resultsPath := filepath.Join(dir, "results.jsonl")
	done := map[runner.CellKey]bool{}
	if _, err := os.Stat(resultsPath); err == nil {
		if !f.resume {
			fmt.Fprintf(stderr, "bench run: %s already holds a run; choose another --run-id, or add --resume to run the cells it has no record of\n", dir)
			return exitUsage
		}
		if n, err := results.TrimPartialLine(resultsPath); err != nil {
			fmt.Fprintf(stderr, "bench run: %v\n", err)
			return exitIO
		} else if n > 0 {
			fmt.Fprintf(stderr, "bench: dropped a half-written last line (%d bytes) from %s\n", n, resultsPath)
		}
		_, nBad, err := results.ReadFile(resultsPath, true, func(_ int, r *results.Record) error {
			done[runner.RecordKey(r)] = true
			return nil
		})
		if err != nil {
			fmt.Fprintf(stderr, "bench run: %v\n", err)
			return exitIO
		}
		if nBad > 0 {
			fmt.Fprintf(stderr, "bench: warning: %d unusable lines in %s; their cells run again\n", nBad, resultsPath)
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		fmt.Fprintf(stderr, "bench run: %v\n", err)
		return exitIO
	}
	if err := writeJSON(filepath.Join(dir, "config.json"), cfg); err != nil {
		fmt.Fprintf(stderr, "bench run: %v\n", err)
		return exitIO
	}

	// What can be known without prompting, taken before the sweep so probing
	// servers and CLIs does not overlap the measurements.
	ictx, icancel := context.WithTimeout(ctx, 15*time.Second)
	err = inventory.Write(ictx, dir, cfg)
	icancel()
	if err != nil {
		fmt.Fprintf(stderr, "bench run: %v\n", err)
		return exitIO
	}

	sink, err := results.Create(filepath.Join(dir, "results.jsonl"))
	if err != nil {
		fmt.Fprintf(stderr, "bench run: %v\n", err)
		return exitIO
	}

	plan := runner.NewPlan(cfg)
	if len(done) > 0 {
		full := len(plan.Cells)
		plan = plan.Without(done)
		fmt.Fprintf(stdout, "bench: resuming %s: %d of %d cells already recorded\n", cfg.Run.ID, full-len(plan.Cells), full)
	}
	fmt.Fprintf(stdout, "bench: run %s: %d cells (%d providers, %d suites, %d prompts × %d repetitions) → %s\n",
		cfg.Run.ID, len(plan.Cells), len(cfg.Providers), len(plan.Suites), len(cfg.PromptSet), cfg.Run.Repetitions, dir)

	prog := newProgress(stderr, f.quiet)
	recorder := resources.NewRecorder(dir)
	out, runErr := runner.Run(ctx, runner.Options{
		Config: cfg, Plan: plan, Providers: provs, Sink: sink, Hooks: recorder,
		Drain: drain, OnRecord: prog.record, Log: stderr,
	})
	prog.finish()
	if err := recorder.Close(); err != nil {
		// Snapshots are context, not results: a failed one is a warning.
		fmt.Fprintf(stderr, "bench: warning: resource snapshots: %v\n", err)
	}
	if err := sink.Close(); err != nil && runErr == nil {
		runErr = err
	}
	if err := writeRunInfo(dir, cfg, out, len(done)); err != nil && runErr == nil {
		runErr = err
	}
	if runErr != nil {
		fmt.Fprintf(stderr, "bench run: %v\nbench: the results written so far are in %s\n", runErr, dir)
		return exitIO
	}
	summary, err := buildReports(dir, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "bench run: reports: %v\nbench: the results are in %s\n", err, dir)
		return exitIO
	}
	if line := unreachable(cfg, prog); line != "" {
		fmt.Fprintln(stdout, line)
	} else if err := report.WriteTable(stdout, summary); err != nil {
		fmt.Fprintf(stderr, "bench run: %v\n", err)
		return exitIO
	}
	fmt.Fprintf(stdout, "bench: %s: %d/%d cells recorded in %s\n", out.EndReason, out.Recorded, out.Planned, dir)
	if out.EndReason == runner.EndInterrupted || out.EndReason == runner.EndAborted {
		return exitInterrupted
	}
	return exitOK
}

// runInfo is run.json: when and why the run ended.
type runInfo struct {
	RunID         string    `json:"run_id"`
	BenchVersion  string    `json:"bench_version"`
	StartedAt     time.Time `json:"started_at"`
	EndedAt       time.Time `json:"ended_at"`
	EndReason     string    `json:"end_reason"`
	CellsPlanned  int       `json:"cells_planned"`
	CellsRecorded int       `json:"cells_recorded"`
	// Resumed is how many cells earlier runs into this directory recorded.
	Resumed  int            `json:"resumed_cells,omitempty"`
	ByStatus map[string]int `json:"by_status"`
}

func writeRunInfo(dir string, cfg *config.Config, o *runner.Outcome, resumed int) error {
	if o == nil {
		return nil
	}
	return writeJSON(filepath.Join(dir, "run.json"), runInfo{
		RunID: cfg.Run.ID, BenchVersion: version(), StartedAt: o.StartedAt.UTC(), EndedAt: o.EndedAt.UTC(),
		EndReason: o.EndReason, CellsPlanned: o.Planned, CellsRecorded: o.Recorded, ByStatus: o.ByStatus, Resumed: resumed,
	})
}

func writeJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("encode %s: %w", filepath.Base(path), err)
	}
	if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// unreachable returns one line telling the user what to start, export,
// install or pull when no cell reached a model, or "" when any did.
func unreachable(cfg *config.Config, p *progress) string {
	if p.recorded == 0 || p.byStatus[results.StatusSkippedUnavailable] != p.recorded {
		return ""
	}
	absent := true
	var hints []string
	for _, pr := range cfg.Providers {
		ollama := pr.Type == config.TypeOllama || pr.Type == config.TypeOllamaOpenAI
		for typ, models := range p.skipped[pr.Name] {
			models = slices.Compact(slices.Sorted(slices.Values(models)))
			var h string
			switch {
			case (typ == "connection_refused" || typ == "host_unreachable") && ollama:
				h = fmt.Sprintf("start Ollama (`ollama serve`) so %s answers", pr.BaseURL)
			case typ == "connection_refused" || typ == "host_unreachable":
				h = fmt.Sprintf("nothing answers at %s for %s", pr.BaseURL, pr.Name)
			case typ == "missing_api_key":
				h = fmt.Sprintf("export %s for %s", pr.APIKeyEnv, pr.Name)
			case typ == "cli_not_found":
				h = fmt.Sprintf("install the Claude Code CLI (`npm install -g @anthropic-ai/claude-code`) or set command for %s", pr.Name)
			case typ == "model_not_found" && ollama:
				absent = false
				h = "pull the models (`ollama pull " + strings.Join(models, "`, `ollama pull ") + "`)"
			case typ == "model_not_found":
				absent = false
				h = fmt.Sprintf("check the model names of %s (%s)", pr.Name, strings.Join(models, ", "))
			default:
				absent = false
				h = fmt.Sprintf("%s: %s", pr.Name, typ)
			}
			hints = append(hints, h)
		}
	}
	slices.Sort(hints)
	hints = slices.Compact(hints)
	what := "no model answered"
	if absent {
		what = "no provider was reachable"
	}
	return "bench: " + what + ", nothing was measured: " + strings.Join(hints, "; ") + " (or try scripts/demo.sh)"
}

// printPlan shows what a run would do: one line per suite.
func printPlan(w io.Writer, cfg *config.Config, plan *runner.Plan) {
	fmt.Fprintf(w, "bench: dry run of %s: %d cells → %s (nothing sent, nothing written)\n", cfg.Path, len(plan.Cells), cfg.RunDir())
	for _, s := range plan.Suites {
		th := "-"
		if s.ThinkingLevel != nil {
			th = *s.ThinkingLevel
		}
		fmt.Fprintf(w, "  %-16s %-28s %-8s %4d cells  %s\n", s.Provider, s.Model, th, s.Cells, s.BaseURL)
	}
	var ids []string
	for _, p := range cfg.PromptSet {
		ids = append(ids, p.ID)
	}
	fmt.Fprintf(w, "  prompts: %s × %d repetitions; concurrency %d, timeout %s\n", strings.Join(ids, ","), cfg.Run.Repetitions, cfg.Run.Concurrency, time.Duration(cfg.Run.Timeout))
}
