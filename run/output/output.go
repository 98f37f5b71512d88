// Package output is everything a run writes or shows, after k6's outputs:
// results.jsonl, resource snapshots, execution traces, agent snapshots,
// work traces, the progress display and the end-of-run reports are each an
// Output, and a run is handed one list of them (runner.Options.Outputs).
//
// Output itself is one method, fed every finished cell's record. What else
// an output does is an optional capability (WithSuites, WithWarmup,
// WithServerReadings, WithTraceParent, WithStart, WithRunEnd, WithStop, Critical) that the
// Manager discovers on each output of the list by type assertion. Nothing
// stands between the list and the outputs: a wrapper that bundled two
// outputs would hide every capability it did not forward, which is how a
// warm-up's load time once vanished from resources_*.json with every unit
// test green.
//
// Layer: the run (the interface between the runner, which feeds the
// outputs, and the outputs beside it; imports only plan and the record's
// results and rundir).
package output

import (
	"time"

	"bench/internal/record/results"
	"bench/internal/record/rundir"
	"bench/run/plan"
)

// Output is one thing a run writes or shows. AddRecord is handed each
// finished cell's record once results.jsonl holds it, in the order the run
// recorded them, one at a time. It must not change r (every output sees
// the same record). An error is a warning (the first of each output is
// printed) unless the output is Critical.
type Output interface {
	AddRecord(r *results.Record) error
}

// Critical marks the output whose failure is the run's: results.jsonl, the
// run's source of truth. The Manager writes each record to the Critical
// outputs first, synchronously and in list order, before any other output
// sees it; a failure to start, write or stop one stops the run. Every
// other output is fed behind a bounded queue on a goroutine of its own, so
// it cannot stall the run, and its errors are warnings.
type Critical interface {
	Critical()
}

// WithStart is an output told that the sweep is about to start: after the
// providers have prepared (pulled, listed models), before the first suite.
type WithStart interface {
	Start() error
}

// WithSuites is an output told when a suite is about to start and when its
// last cell has ended, so resource snapshots and samplers bracket the
// suite. The calls come on the suite's lane, synchronously: suites of one
// server run one at a time (unless run.interleave is set), so on a server
// a suite's SuiteStart comes after the previous suite's SuiteEnd has
// returned; suites of other servers run side by side, so a slow call holds
// only its own server's cells. Errors are the output's to report (at Stop).
type WithSuites interface {
	SuiteStart(s plan.Suite)
	SuiteEnd(s plan.Suite)
}

// WithWarmup is an output told what a suite's warm-up measured, between
// the suite's SuiteStart and its first cell.
type WithWarmup interface {
	SuiteWarmup(s plan.Suite, w Warmup)
}

// WithServerReadings is an output handed what a suite's model server
// said of itself while the suite ran: each reading of the runner's
// watcher of the suite's server (its Prometheus /metrics mapped to common
// names, the models it held), stamped on the run's clock, once for every
// suite running on that server. The calls come on the watcher's own
// goroutine, between the suite's SuiteStart and SuiteEnd, one at a time
// for a server; a slow one delays the next reading, never a cell.
type WithServerReadings interface {
	ServerReading(s plan.Suite, r rundir.ServerSample)
}

// WithTraceParent is an output that names the span of each request: the
// runner sends a cell's requests with TraceParent(cell), its llm_judge
// requests with JudgeTraceParent(cell), and a suite's warm-up with
// SuiteTraceParent(suite) (W3C traceparent values, "" for
// none). The first output of the list that has it is asked.
type WithTraceParent interface {
	TraceParent(c plan.Cell) string
	JudgeTraceParent(c plan.Cell) string
	SuiteTraceParent(s plan.Suite) string
}

// WithRunEnd is an output told how the run ended, once every record has
// been handed to it and before it is stopped.
type WithRunEnd interface {
	RunEnd(e End)
}

// WithStop is an output that closes or flushes when the run has ended.
// Stop is called once, after RunEnd: the Critical outputs first, then the
// others one after another in list order, so an output late in the list
// (the reports) reads what the earlier ones wrote.
type WithStop interface {
	Stop() error
}

// Warmup is what a suite's unrecorded warm-up request measured.
type Warmup struct {
	// Load is the warm-up's duration on the run's clock: the suite's load
	// time.
	Load time.Duration
	// ServerLoad is the load time the server reported, if it did.
	ServerLoad *time.Duration
	// Err is why the warm-up failed (secrets scrubbed), or nil.
	Err error
}

// End is how a run ended, as RunEnd is told.
type End struct {
	// Reason is why: finished, interrupted, aborted or io_error.
	Reason string
	// Planned and Recorded count this invocation's cells (a resumed run's
	// earlier cells are not in them).
	Planned  int
	Recorded int
}
