// Package rundir is the run directory's business: its layout (every file
// name in one place), creating, refusing, resuming and locking it, run.json,
// the structured resource files, and atomic writes of every JSON file.
//
// A run directory, runs/<run_id>/, holds:
//
//	config.json        the resolved config (no secret values)
//	inventory.json     host, build, and what each provider said of itself
//	results.jsonl      one line per finished cell: the source of truth
//	summary.json/.md   per (provider, model, thinking level) figures
//	tiers.json         tool-use tiers and the routing list
//	run.json           when and why the run ended
//	resources_*.json   each suite's resource snapshots and peaks
//	resources_*_before.txt / _after.txt   the same, for people
//	.lock              held by the bench process writing the directory
//
// Every package that reads or writes these files takes the names from here,
// so report, compare and merge read run directories without importing the
// code that wrote them.
//
// Layer: the run directory (below the run's outputs and the verdicts, which
// read and write run directories through it).
package rundir

import "path/filepath"

// File names of the layout.
const (
	ConfigFile    = "config.json"
	InventoryFile = "inventory.json"
	ResultsFile   = "results.jsonl"
	SummaryJSON   = "summary.json"
	SummaryMD     = "summary.md"
	TiersFile     = "tiers.json"
	RunFile       = "run.json"
	LockFile      = ".lock"
)

// Path joins a run directory and one of its file names.
func Path(dir, name string) string { return filepath.Join(dir, name) }
