package runner

import (
	"time"

	"bench/plan"
)

// SuiteHooks is told when a suite is about to start and when its last cell
// has ended, so resource snapshots and samplers bracket the suite. Suites
// of one server run one at a time (unless run.interleave is set), so on a
// server a suite's SuiteStart comes after the previous suite's SuiteEnd has
// returned: no other suite's cells are in flight on that server in
// between. Suites of different servers run side by side, each on its own
// goroutine, so a hook that takes its time stalls only its own server's
// cells. Errors are the hooks' to record.
type SuiteHooks interface {
	SuiteStart(s plan.Suite)
	SuiteEnd(s plan.Suite)
}

// WarmupHook is an optional capability of SuiteHooks: it is told what the
// suite's warm-up measured, between SuiteStart and the suite's first cell.
type WarmupHook interface {
	SuiteWarmup(s plan.Suite, w Warmup)
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
