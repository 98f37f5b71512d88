package session

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"bench/config"
	"bench/internal/shellword"
	"bench/providers"
	"bench/report/rebuild"
)

// DemoHint points at the command that shows bench working with no model
// server of the user's own.
const DemoHint = "scripts/demo.sh (in a clone of bench) runs the default suite against a scripted model on a real Ollama"

// unreachable returns, when no cell reached a model (every record of this
// run was skipped as unavailable), one line per provider telling the user
// what to start, export, install or pull (each kind words its own advice),
// or nil when any cell did. The run's last line, "no cell reached a
// model", follows them (verdict).
func unreachable(cfg *config.Config, t *tally) []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.recorded == 0 || t.unavailable != t.recorded {
		return nil
	}
	var lines []string
	for i := range cfg.Providers {
		pr := &cfg.Providers[i]
		kind, ok := providers.Lookup(pr.Type)
		if !ok || len(t.skipped[pr.Name]) == 0 {
			continue
		}
		var hints []string
		for typ, models := range t.skipped[pr.Name] {
			models = slices.Compact(slices.Sorted(slices.Values(models)))
			h, _ := kind.Hint(pr, typ, models)
			hints = append(hints, h)
		}
		slices.Sort(hints)
		lines = append(lines, "bench: "+pr.Name+": "+strings.Join(slices.Compact(hints), "; "))
	}
	return lines
}

// noConfig says what to do when the config file does not exist.
func noConfig(o *Options) string {
	if !o.ConfigSet {
		return "bench run: no bench.yaml in this directory: '" + o.prog() + " init' writes one (and finds a running Ollama's models), " +
			"or give one with --config FILE; to try bench first: " + DemoHint
	}
	return fmt.Sprintf("bench run: %s does not exist: '%s init --config %s' writes one", o.Config, o.prog(), shellword.Quote(o.Config))
}

func (o *Options) prog() string {
	if o.Prog == "" {
		return "bench"
	}
	return o.Prog
}

// resumeCommand is the exact command that finishes an interrupted run: the
// arguments it was started with, its run id, and --resume; with maxCost
// (a run the budget stopped), --max-cost maxCost in place of the one it had.
func resumeCommand(prog string, args []string, runID, maxCost string) string {
	parts := []string{prog, "run"}
	for i := 0; i < len(args); i++ {
		name, _, hasValue := strings.Cut(strings.TrimLeft(args[i], "-"), "=")
		if !strings.HasPrefix(args[i], "-") {
			parts = append(parts, shellword.Quote(args[i]))
			continue
		}
		switch {
		case name == "resume":
			continue
		case name == "run-id", name == "max-cost" && maxCost != "":
			if !hasValue {
				i++ // its value is the next argument
			}
			continue
		}
		parts = append(parts, shellword.Quote(args[i]))
	}
	parts = append(parts, "--run-id", shellword.Quote(runID), "--resume")
	if maxCost != "" {
		parts = append(parts, "--max-cost", maxCost)
	}
	return strings.Join(parts, " ")
}

// writeNextSteps ends a finished run: where its reports are and what one
// does next. With a baseline the comparison follows at once, so the
// compare hint is left out.
func writeNextSteps(w io.Writer, prog, dir string, baseline bool) {
	rebuild.WritePaths(w, dir)
	fmt.Fprintln(w, "next:")
	fmt.Fprintf(w, "  %s report %s    rebuild the reports from results.jsonl\n", prog, shellword.Quote(dir))
	if !baseline {
		fmt.Fprintf(w, "  %s compare BASELINE_RUN %s    judge this run against an earlier one (exit 3 on a regression)\n", prog, shellword.Quote(dir))
	}
}
