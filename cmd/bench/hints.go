package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"bench/config"
	"bench/providers"
	"bench/report/htmlreport"
	"bench/report/junitxml"
	"bench/results"
	"bench/rundir"
)

// progName is how the user invoked bench, for the commands the hints print
// ("bench", "./bench", a path). main sets it; tests keep "bench".
var progName = "bench"

// setProgName takes the name bench was started as, unless it is a
// throwaway path (`go run`'s build directory) that would not run again.
func setProgName(arg0 string) {
	if arg0 != "" && !strings.Contains(arg0, "go-build") {
		progName = arg0
	}
}

// demoHint points at the command that shows bench working with no model
// server of the user's own.
const demoHint = "scripts/demo.sh (in a clone of bench) runs the default suite against a scripted model on a real Ollama"

// unreachable returns one line telling the user what to start, export,
// install or pull when no cell reached a model, or "" when any did. Each
// provider's kind words its own advice.
func unreachable(cfg *config.Config, p *progress) string {
	if p.recorded == 0 || p.byStatus[results.StatusSkippedUnavailable] != p.recorded {
		return ""
	}
	absent := true
	var hints []string
	for i := range cfg.Providers {
		pr := &cfg.Providers[i]
		kind, ok := providers.Lookup(pr.Type)
		if !ok {
			continue
		}
		for typ, models := range p.skipped[pr.Name] {
			models = slices.Compact(slices.Sorted(slices.Values(models)))
			h, gone := kind.Hint(pr, typ, models)
			absent = absent && gone
			hints = append(hints, h)
		}
	}
	slices.Sort(hints)
	hints = slices.Compact(hints)
	what := "no model answered"
	if absent {
		what = "no provider was reachable"
	}
	return "bench: " + what + ", nothing was measured: " + strings.Join(hints, "; ") + " (or try the demo: " + demoHint + ")"
}

// noConfig says what to do when the config file does not exist.
func noConfig(f *runFlags) string {
	if !f.configSet {
		return "bench run: no bench.yaml in this directory: '" + progName + " init' writes one (and finds a running Ollama's models), " +
			"or give one with --config FILE; to try bench first: " + demoHint
	}
	return fmt.Sprintf("bench run: %s does not exist: '%s init --config %s' writes one", f.config, progName, quote(f.config))
}

// resumeCommand is the exact command that finishes an interrupted run: the
// arguments it was started with, its run id, and --resume.
func resumeCommand(args []string, runID string) string {
	parts := []string{progName, "run"}
	for i := 0; i < len(args); i++ {
		name, _, hasValue := strings.Cut(strings.TrimLeft(args[i], "-"), "=")
		if !strings.HasPrefix(args[i], "-") {
			parts = append(parts, quote(args[i]))
			continue
		}
		switch name {
		case "resume":
			continue
		case "run-id":
			if !hasValue {
				i++ // its value is the next argument
			}
			continue
		}
		parts = append(parts, quote(args[i]))
	}
	return strings.Join(append(parts, "--run-id", quote(runID), "--resume"), " ")
}

// quote makes s one shell word.
func quote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:=,+@%", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// writeReportPaths lists where a run's reports are.
func writeReportPaths(w io.Writer, dir string) {
	fmt.Fprintf(w, "  summary:  %s\n", filepath.Join(dir, rundir.SummaryMD))
	fmt.Fprintf(w, "  report:   %s (open it in a browser)\n", filepath.Join(dir, htmlreport.FileName))
	fmt.Fprintf(w, "  junit:    %s\n", filepath.Join(dir, junitxml.FileName))
}

// writeNextSteps ends a finished run: where its reports are and what one
// does next. With --baseline the comparison follows at once, so the
// compare hint is left out.
func writeNextSteps(w io.Writer, dir string, baseline bool) {
	writeReportPaths(w, dir)
	fmt.Fprintln(w, "next:")
	fmt.Fprintf(w, "  %s report %s    rebuild the reports from results.jsonl\n", progName, quote(dir))
	if !baseline {
		fmt.Fprintf(w, "  %s compare BASELINE_RUN %s    judge this run against an earlier one (exit 3 on a regression)\n", progName, quote(dir))
	}
}

// exists says whether path names anything.
func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
