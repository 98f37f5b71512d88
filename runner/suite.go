package runner

import "bench/plan"

// SuiteHooks is told when a suite's first cell is about to start and when its
// last cell has ended, so resource snapshots and samplers bracket the suite.
// Calls for different suites may overlap when they run concurrently. Hooks
// must not block for long; errors are theirs to record.
type SuiteHooks interface {
	SuiteStart(s plan.Suite)
	SuiteEnd(s plan.Suite)
}
