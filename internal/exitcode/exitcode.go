// Package exitcode is bench's exit codes, one table for every command (the
// README's): the packages that run a command (session, and the commands'
// own packages) return them, and cmd/bench hands them to os.Exit.
//
// Layer: internal helpers (imports no bench package).
package exitcode

const (
	// OK: the command ran (models may still have failed their checks).
	OK = 0
	// IO: an I/O failure stopped it.
	IO = 1
	// Usage: bad config, flags or arguments.
	Usage = 2
	// Regression: bench compare (or bench run --baseline) found a
	// regression of a --fail-on category.
	Regression = 3
	// Unreached: a run measured nothing a nightly job can trust: no cell
	// reached a model, or no cell of some provider did (unless
	// --allow-unavailable).
	Unreached = 4
	// Unjudged: the cells reached their models, but some group got no
	// verdict from its external checks (a judge or command validator
	// that never answered, results.Unjudged): its quality is unknown, so
	// the night cannot be a baseline; bench rescore judges it again once
	// the check works. (Not 4: the models were reached and measured, the
	// cure is another, and --allow-unavailable does not accept it.)
	Unjudged = 5
	// Budget: run.max_cost_usd stopped the run before its last cell (the
	// cells it did not start are recorded; --resume with a larger
	// --max-cost finishes it).
	Budget = 6
	// HistoryNotJudged: bench history --fail-on-change could not judge:
	// no series of those metrics has the runs a change point needs. (Not
	// 5, a night whose checks gave no verdict, nor 6, a budget: this is a
	// history too short, cured by more nights.)
	HistoryNotJudged = 7
	// Interrupted: Ctrl-C (or SIGTERM) stopped the run.
	Interrupted = 130
)
