package runner

// Suite is one model's suite: every cell of a (provider, model, thinking
// level). Resource snapshots and the summary are per suite.
type Suite struct {
	Provider      string
	ProviderType  string
	BaseURL       string
	Model         string
	ThinkingLevel *string
	// Cells is how many cells the suite has in this run.
	Cells int
}

// SuiteHooks is told when a suite's first cell is about to start and when its
// last cell has ended, so resource snapshots and samplers bracket the suite.
// Calls for different suites may overlap when they run concurrently. Hooks
// must not block for long; errors are theirs to record.
type SuiteHooks interface {
	SuiteStart(s Suite)
	SuiteEnd(s Suite)
}
