// Package runner executes a run's plan. Suites that share a server run one
// at a time (a lane per server), each opened by its outputs' SuiteStart and
// one unrecorded warm-up; cells share the run's concurrency and their
// provider's; every cell is timed on one clock around the provider's
// stream (its timeline), an agentic cell loops through its task's scripted
// tools, and each answer is scored (validators, tool detection). Each
// finished record goes to the run's outputs (package output): results.jsonl
// first, then the others (work traces, snapshots, execution traces, the
// progress display) behind their queues. A failing provider is a record;
// only a failure to write results stops the run.
//
// Layer: the run (called by the command; calls plan, providers and the
// scoring packages; feeds the run's outputs).
package runner
