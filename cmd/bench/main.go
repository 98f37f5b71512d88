// Command bench benchmarks LLMs the way teams use them: it sweeps models ×
// prompts × providers, streams every response, and records how fast and how
// good each answer was in a run directory.
//
//	bench init                         write a commented bench.yaml
//	bench run --config bench.yaml      run a sweep
//	bench report RUN_DIR               rebuild the reports from results.jsonl
//	bench merge OUT_DIR SHARD_DIR...   put a sharded run's directories together
//	bench compare BASE_DIR NEW_DIR     the regression gate between two runs
//	bench history RUN_DIR...           series and change points over many runs
//	bench rescore RUN_DIR --out NEW    judge recorded answers again with today's checks
//	bench view DIR...                  browse many runs in a local web page
//
// Layer: command (flags and one call per subcommand into the packages below).
package main

import (
	"fmt"
	"io"
	"os"
	"strings"

	"bench/internal/exitcode"
	"bench/internal/printable"
	"bench/internal/suggest"
	"bench/internal/version"
	"bench/run/runner"
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

func main() {
	setProgName(os.Args[0])
	stop := startProfile(os.Stderr)
	code := run(os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

const usage = `bench: benchmark LLMs across models, prompts and providers.

Usage:
  bench init                                write a commented bench.yaml (finds a
                                            running Ollama and its models)
  bench run [--config bench.yaml] [flags]   run a sweep; see 'bench run -h'
  bench report RUN_DIR                      rebuild the reports (summary.md,
                                            report.html, junit.xml, ...) from
                                            RUN_DIR/results.jsonl
  bench compare BASE_RUN_DIR NEW_RUN_DIR    the regression gate: judge a run against a
                                            baseline; see 'bench compare -h'
  bench merge OUT_DIR SHARD_DIR...          put the run directories of a sharded
                                            run (bench run --shard i/n) together
  bench history RUN_DIR...                  series and change points over many runs
                                            (nightly runs); see 'bench history -h'
  bench rescore RUN_DIR --out NEW_DIR       judge a run's recorded answers again with
                                            today's checks; see 'bench rescore -h'
  bench view DIR...                         browse many runs in a local web page: list,
                                            open, filter cells, compare; see 'bench view -h'
  bench version                             print the version

No model server yet? scripts/demo.sh (in a clone of bench) runs the default
suite against a scripted model on a real Ollama.

Exit codes: 0 the command ran (models may still have failed their checks),
1 an I/O failure stopped it, 2 bad config or flags, 3 bench compare (or
bench run --baseline) found a regression, or bench history a change point
of --fail-on-change, 4 no cell reached a model (or none
of some provider's, without --allow-unavailable), 130 interrupted.
`

// commands are the subcommands, for "did you mean".
var commands = []string{"init", "run", "report", "compare", "merge", "history", "rescore", "view", "version", "help"}

// run is the whole program, testable in-process. Everything it prints is
// made printable here, where stdout and stderr enter the program: a
// server's bytes in an error or a warning cannot drive the terminal or
// pass for a CI workflow command (see package printable). The one
// exception is the MCP server's stdout, which is its protocol.
func run(args []string, stdout, stderr io.Writer) int {
	errw := printable.New(stderr)
	defer errw.Flush()
	if len(args) > 0 && args[0] == runner.MCPServeCommand {
		// Hidden: what a claude_code_cli cell runs as its MCP server.
		return mcpServeCmd(args[1:], stdout, errw)
	}
	out := printable.New(stdout)
	defer out.Flush()
	return command(args, out, errw)
}

// command runs the subcommand args name.
func command(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return exitcode.Usage
	}
	switch args[0] {
	case "init":
		return initCmd(args[1:], stdout, stderr)
	case "run":
		return runCmd(args[1:], stdout, stderr)
	case "report":
		return reportCmd(args[1:], stdout, stderr)
	case "merge":
		return mergeCmd(args[1:], stdout, stderr)
	case "compare":
		return compareCmd(args[1:], stdout, stderr)
	case "history":
		return historyCmd(args[1:], stdout, stderr)
	case "rescore":
		return rescoreCmd(args[1:], stdout, stderr)
	case "view":
		return viewCmd(args[1:], stdout, stderr)
	case "version", "--version", "-version":
		return versionCmd(args[1:], stdout, stderr)
	case "help", "-h", "--help", "-help":
		fmt.Fprint(stdout, usage)
		return exitcode.OK
	}
	fmt.Fprintf(stderr, "bench: unknown command %q%s; see 'bench help'\n", args[0], suggest.Hint(args[0], commands))
	return exitcode.Usage
}

const versionUsage = `usage: bench version

Prints bench's version: a release tag, or devel+<commit> for a build from
a checkout (devel+<commit>-checkout when the build was not stamped, as
under GOFLAGS=-buildvcs=false: the commit its checkout is at now);
run.json and inventory.json record the same.
`

// versionCmd is `bench version`; like every command it answers -h with
// its help rather than doing its work.
func versionCmd(args []string, stdout, stderr io.Writer) int {
	switch {
	case len(args) == 1 && (args[0] == "-h" || args[0] == "--help" || args[0] == "-help" || args[0] == "help"):
		fmt.Fprint(stdout, versionUsage)
		return exitcode.OK
	case len(args) > 0:
		fmt.Fprintf(stderr, "bench version: takes no arguments, got %q; see 'bench version --help'\n", args[0])
		return exitcode.Usage
	}
	fmt.Fprintln(stdout, "bench", version.String())
	return exitcode.OK
}
