// Package merge puts the run directories of a sharded run (bench run
// --shard i/n on several machines) back together into one run directory, as
// if one machine had run it: results.jsonl, the resource files and any
// other per-cell outputs (snapshots/, traces/, forsy/...), config.json,
// inventory.json, a run.json describing the merge, and the reports rebuilt
// from the merged results.
//
// It reads run directories only (results, rundir, report), never the code
// that ran them, and refuses what would give wrong figures: shards of
// different configs, a cell recorded by two shards, a shard missing (unless
// the caller allows a partial merge).
//
// Layer: verdicts (run directories in, one run directory out; no provider or
// runner code).
package merge

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"bench/internal/record/rundir"
	"bench/internal/record/secrets"
	"bench/report"
	"bench/report/rebuild"
)

// Kind says why a merge was refused.
type Kind int

// Why a merge is refused.
const (
	// Unusable: a directory is not a finished run (no results.jsonl, no
	// run.json) or is itself a merge.
	Unusable Kind = iota + 1
	// Split: the shards do not split one run the same way (different
	// counts, one index twice, one directory twice).
	Split
	// Missing: a shard of the split is absent.
	Missing
	// ConfigMismatch: the shards ran different configs.
	ConfigMismatch
	// Overlap: a cell is recorded by more than one shard.
	Overlap
	// OutExists: the output directory already holds a run, or is (or is
	// inside) a shard.
	OutExists
	// Incomplete: a shard's results do not match its plan and its run.json
	// (cells lost, lines garbled, cells outside the plan).
	Incomplete
)

// Error is a refusal: the inputs cannot be merged as given. Its message
// names the directories involved and what to do.
type Error struct {
	Kind Kind
	Msg  string
}

func (e *Error) Error() string { return e.Msg }

func refuse(k Kind, format string, args ...any) error {
	return &Error{Kind: k, Msg: fmt.Sprintf(format, args...)}
}

// IsRefusal says whether err is a refusal (bad input) rather than an I/O
// failure.
func IsRefusal(err error) bool {
	var e *Error
	return errors.As(err, &e)
}

// Options tune a merge.
type Options struct {
	// AllowPartial merges even when some shards of the split are missing;
	// run.json lists them.
	AllowPartial bool
	// BenchVersion is written into the merged run.json.
	BenchVersion string
	// Warn receives warnings (unusable lines skipped, files kept per shard,
	// report warnings); nil discards them.
	Warn io.Writer
}

// Result is what a merge wrote.
type Result struct {
	// Dir is the merged run directory; RunID its name.
	Dir   string
	RunID string
	// Records is how many results.jsonl lines were merged.
	Records int
	// Info is the merged run.json.
	Info *rundir.RunInfo
	// Summary is the rebuilt summary (for the terminal table).
	Summary *report.Summary
}

// Merge builds the run directory out from the shard run directories
// shardDirs, given in any order. out must not hold anything yet (an empty
// directory will do). The merge is written into a temporary directory
// beside it (.OUT.merge-RANDOM.tmp, locked while written) and renamed to
// out once whole: a refusal, a failure or a kill never leaves half a run
// directory under out, and the next merge into the same parent removes
// what a killed one left.
func Merge(out string, shardDirs []string, o Options) (res *Result, err error) {
	if o.Warn == nil {
		o.Warn = io.Discard
	}
	shards, count, missing, err := readShards(shardDirs, o.AllowPartial)
	if err != nil {
		return nil, err
	}
	if err := sameConfig(shards); err != nil {
		return nil, err
	}
	checkVersions(shards, o.Warn)
	abs, err := checkOut(out, shards)
	if err != nil {
		return nil, err
	}
	dir, _, err := rundir.CreateTemp(abs, "merge")
	if err != nil {
		return nil, err
	}
	defer func() {
		dir.Close()
		if err != nil {
			os.RemoveAll(dir.Path)
		}
	}()
	m := &merger{out: dir.Path, runID: filepath.Base(abs), shards: shards, warn: o.Warn, allowPartial: o.AllowPartial}
	if err := m.results(); err != nil {
		return nil, err
	}
	if err := m.files(); err != nil {
		return nil, err
	}
	info := m.runInfo(count, missing, o.BenchVersion)
	if err := dir.WriteRunInfo(info); err != nil {
		return nil, err
	}
	// Every report a run writes, over the merged results.
	s, err := rebuild.All(dir.Path, rebuild.Options{Warn: o.Warn})
	if err != nil {
		return nil, err
	}
	if err := dir.Place(abs); errors.Is(err, rundir.ErrNotEmpty) {
		return nil, refuse(OutExists, "%s is no longer empty: merge into a new directory", out)
	} else if err != nil {
		return nil, err
	}
	return &Result{Dir: abs, RunID: filepath.Base(abs), Records: m.records, Info: info, Summary: s}, nil
}

// checkOut refuses an output directory that holds anything, or is (or is
// inside) one of the shards, and returns its absolute path.
func checkOut(out string, shards []*shard) (string, error) {
	abs, err := filepath.Abs(out)
	if err != nil {
		return "", err
	}
	for _, s := range shards {
		sa, _ := filepath.Abs(s.dir)
		if sa == abs || sameDir(sa, abs) {
			return "", refuse(OutExists, "%s is shard %d/%d: merge into a new directory", out, s.info.Shard.Index, s.info.Shard.Count)
		}
		if strings.HasPrefix(abs, sa+string(filepath.Separator)) {
			return "", refuse(OutExists, "%s is inside shard %s: merge into a directory outside the shards", out, s.dir)
		}
	}
	if st, err := os.Stat(rundir.Path(abs, rundir.ResultsFile)); err == nil && st.Size() > 0 {
		return "", refuse(OutExists, "%s already holds a run: merge into a new directory", out)
	}
	if entries, err := os.ReadDir(abs); err == nil && len(entries) > 0 {
		return "", refuse(OutExists, "%s is not empty: merge into a new directory", out)
	} else if err != nil && !errors.Is(err, os.ErrNotExist) {
		return "", err
	}
	return abs, nil
}

// merger writes the merged directory.
type merger struct {
	out, runID string
	shards     []*shard
	warn       io.Writer
	records    int
	byStatus   map[string]int
	// allowPartial merges shards that do not match their plan; problems
	// are what was wrong with them (run.json lists them).
	allowPartial bool
	problems     []string
}

// runInfo is the merged run.json: the run spans its shards' runs, planned
// what they planned, and ended the worst way one of them did (a missing
// shard counts as interrupted: its cells were not run).
func (m *merger) runInfo(count int, missing []int, version string) *rundir.RunInfo {
	ri := &rundir.RunInfo{RunID: m.runID, BenchVersion: version, EndReason: "finished",
		CellsRecorded: m.records, ByStatus: m.byStatus,
		Merge: &rundir.Merge{Count: count, Shards: []rundir.MergedShard{}, Missing: missing}}
	// A shard its budget stopped (budget_exhausted: its unstarted cells
	// are recorded) is incomplete as an interrupted one is, and resumable.
	rank := map[string]int{"finished": 0, "budget_exhausted": 1, "interrupted": 2, "aborted": 3, "io_error": 4}
	worst := func(r string) {
		if rank[r] > rank[ri.EndReason] {
			ri.EndReason = r
		}
	}
	if len(missing) > 0 || len(m.problems) > 0 {
		worst("interrupted")
	}
	ri.Merge.Problems = m.problems
	// The merged run names every variable a shard scrubbed with.
	var names secrets.RunSpec
	for _, s := range m.shards {
		names.Add(secrets.SpecOfRun(s.dir))
	}
	ri.SecretEnv, ri.ProviderSecretEnv = names.Names()
	for i, s := range m.shards {
		si := s.info
		if i == 0 || si.StartedAt.Before(ri.StartedAt) {
			ri.StartedAt = si.StartedAt
		}
		if si.EndedAt.After(ri.EndedAt) {
			ri.EndedAt = si.EndedAt
		}
		ri.CellsPlanned += si.CellsPlanned
		ri.Resumed += si.Resumed
		if _, known := rank[si.EndReason]; known {
			worst(si.EndReason)
		} else {
			worst("io_error")
		}
		ri.Merge.Shards = append(ri.Merge.Shards, rundir.MergedShard{Index: si.Shard.Index, Dir: s.dir, RunID: si.RunID,
			StartedAt: si.StartedAt, EndedAt: si.EndedAt, EndReason: si.EndReason, CellsPlanned: si.CellsPlanned,
			CellsRecorded: si.CellsRecorded, Records: s.records, Kept: s.keptDir()})
	}
	ri.StartedAt, ri.EndedAt = ri.StartedAt.UTC(), ri.EndedAt.UTC()
	return ri
}
