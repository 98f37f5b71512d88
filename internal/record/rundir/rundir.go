package rundir

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// ErrExists is returned by Create for a directory that already holds a run.
var ErrExists = errors.New("already holds a run")

// Dir is a run directory this process writes, locked for as long as it is
// open.
type Dir struct {
	// Path is the directory; ID its base name, the run id.
	Path string
	ID   string
	lock *os.File
}

// File returns the path of one of the directory's files.
func (d *Dir) File(name string) string { return Path(d.Path, name) }

// Close releases the lock.
func (d *Dir) Close() error {
	if d.lock == nil {
		return nil
	}
	err := d.lock.Close()
	d.lock = nil
	return err
}

// Abandon closes a new run directory that recorded nothing (a run
// refused after its start wrote config.json and inventory.json) and
// removes what the start wrote, then the directory itself when that
// leaves it empty: a directory that held something else keeps it.
func (d *Dir) Abandon() {
	d.Close()
	for _, name := range []string{ConfigFile, InventoryFile, LockFile} {
		os.Remove(Path(d.Path, name))
	}
	os.Remove(d.Path)
}

// Create makes the run directory parent/id and locks it. When unique is
// set (the id was not chosen by the user, e.g. a timestamp) an existing
// directory makes it try id_2, id_3, ... so two runs started in the same
// second never meet; otherwise an existing directory that already holds
// results is refused with ErrExists.
func Create(parent, id string, unique bool) (*Dir, error) {
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return nil, fmt.Errorf("create %s: %w", parent, err)
	}
	if !unique {
		path := filepath.Join(parent, id)
		if err := os.Mkdir(path, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
			return nil, fmt.Errorf("create run directory: %w", err)
		}
		return claim(path, id, false)
	}
	for n := 1; n < 1000; n++ {
		name := id
		if n > 1 {
			name = id + "_" + strconv.Itoa(n)
		}
		path := filepath.Join(parent, name)
		err := os.Mkdir(path, 0o755)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("create run directory: %w", err)
		}
		return claim(path, name, false)
	}
	return nil, fmt.Errorf("create run directory: %s_2 to %s_999 all exist in %s", id, id, parent)
}

// Resume locks an existing run directory to continue it: results.jsonl is
// cut back to its last whole line (a killed run may have left half of one);
// dropped says how many bytes went. A run killed before its first result
// has config.json and no results.jsonl yet: it resumes too.
func Resume(path string) (d *Dir, dropped int64, err error) {
	_, err = os.Stat(Path(path, ResultsFile))
	if errors.Is(err, fs.ErrNotExist) {
		_, err = os.Stat(Path(path, ConfigFile))
	}
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, 0, fmt.Errorf("%s has no %s to resume; start it without --resume", path, ResultsFile)
		}
		return nil, 0, err
	}
	d, err = claim(path, filepath.Base(path), true)
	if err != nil {
		return nil, 0, err
	}
	dropped, err = TrimPartialLine(d.File(ResultsFile))
	if err != nil {
		d.Close()
		return nil, 0, err
	}
	return d, dropped, nil
}

// claim locks path and removes the temporary files a killed command left
// in it, then (for a new run) refuses it if it holds results.
func claim(path, id string, resume bool) (*Dir, error) {
	f, err := lock(path)
	if err != nil {
		return nil, err
	}
	d := &Dir{Path: path, ID: id, lock: f}
	cleanTemp(path)
	if !resume {
		if st, err := os.Stat(d.File(ResultsFile)); err == nil && st.Size() > 0 {
			d.Close()
			return nil, fmt.Errorf("%s %w; choose another --run-id, or add --resume to run the cells it has no record of", path, ErrExists)
		}
	}
	return d, nil
}

// Check says whether path is a run directory a report can be built from:
// a directory with a results.jsonl. The error names what is missing.
func Check(path string) error {
	st, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("%s: not a run directory: %w", path, errors.Unwrap(err))
	}
	if !st.IsDir() {
		return fmt.Errorf("%s: not a run directory (a file, not a directory)", path)
	}
	if _, err := os.Stat(Path(path, ResultsFile)); err != nil {
		return fmt.Errorf("%s: not a run directory: no %s", path, ResultsFile)
	}
	return nil
}

// RunInfo is run.json: when and why a run ended.
type RunInfo struct {
	RunID        string    `json:"run_id"`
	BenchVersion string    `json:"bench_version"`
	StartedAt    time.Time `json:"started_at"`
	EndedAt      time.Time `json:"ended_at"`
	// EndReason is finished, interrupted, aborted or io_error.
	EndReason     string `json:"end_reason"`
	CellsPlanned  int    `json:"cells_planned"`
	CellsRecorded int    `json:"cells_recorded"`
	// Resumed is how many cells earlier runs into this directory recorded.
	Resumed  int            `json:"resumed_cells,omitempty"`
	ByStatus map[string]int `json:"by_status"`
	// Shard is set when the run is one shard of a sharded run (bench run
	// --shard i/n); bench merge reads it to put the shards together.
	Shard *Shard `json:"shard,omitempty"`
	// Merge is set when bench merge built the directory from shards.
	Merge *Merge `json:"merge,omitempty"`
	// RescoredFrom is set when bench rescore built the directory: the
	// same cells and timings as that run, judged again.
	RescoredFrom *RescoreSource `json:"rescored_from,omitempty"`
	// Baseline is the run directory bench run --baseline judged this run
	// against (its result in CompareDir), as given; "" when not gated.
	Baseline string `json:"baseline,omitempty"`
	// SecretEnv names the environment variables whose values the run
	// scrubbed as secrets (names only, never a value): every later reader
	// of the directory (report, merge, compare, history, rescore) scrubs
	// what it reads with the same variables' values in its own
	// environment (secrets.OfRun).
	SecretEnv []string `json:"secret_env,omitempty"`
	// ProviderSecretEnv names, by provider entry, the variables whose
	// values were secrets of that entry's records only: the credentials
	// a CLI's process inherits from bench's environment.
	ProviderSecretEnv map[string][]string `json:"provider_secret_env,omitempty"`
}

// RescoreSource says which run a rescored run directory was judged again
// from, and how.
type RescoreSource struct {
	// RunID and Dir are the source run's id and directory (as given).
	RunID string `json:"run_id"`
	Dir   string `json:"dir"`
	// OriginRunID is the run whose cells these are: the source's own
	// origin when it was itself rescored, else its id. bench compare
	// treats two runs of one origin as a rescored pair.
	OriginRunID string `json:"origin_run_id"`
	// At is when bench rescore ran; BenchVersion which bench it was.
	At           time.Time `json:"at"`
	BenchVersion string    `json:"bench_version"`
	// Prompts are the files today's prompts were read from (empty: the
	// source run's own prompt set, with today's code).
	Prompts []string `json:"prompts"`
	// NoJudge: the llm_judge checks were not asked again (--no-judge).
	NoJudge bool `json:"no_judge,omitempty"`
	// Records is how many results.jsonl lines were rescored; Moved how
	// many of them changed objective_pass or tool_use_success.
	Records int `json:"records"`
	Moved   int `json:"moved"`
}

// Shard says which part of a sharded run a run directory holds.
type Shard struct {
	// Index is 1-based; Count is how many shards the run was split into.
	Index int `json:"index"`
	Count int `json:"count"`
	// Suites names the suites dealt to the shard (provider/model, plus
	// /thinking level), in plan order.
	Suites []string `json:"suites"`
}

// Merge describes a run directory built by bench merge.
type Merge struct {
	// Count is how many shards the run was split into.
	Count int `json:"count"`
	// Shards are the merged shard directories, by index; Missing the
	// indexes absent (merged with --allow-partial).
	Shards  []MergedShard `json:"shards"`
	Missing []int         `json:"missing,omitempty"`
	// Problems are the shards merged with --allow-partial whose results
	// did not match their plan or run.json (cells lost, lines that do not
	// parse, cells outside the plan), one line each.
	Problems []string `json:"problems,omitempty"`
}

// MergedShard is one shard of a merged run: where it came from and how its
// run went. Its own run.json, config.json and inventory.json are kept in
// the merged directory under Kept.
type MergedShard struct {
	Index         int       `json:"index"`
	Dir           string    `json:"dir"`
	RunID         string    `json:"run_id"`
	StartedAt     time.Time `json:"started_at"`
	EndedAt       time.Time `json:"ended_at"`
	EndReason     string    `json:"end_reason"`
	CellsPlanned  int       `json:"cells_planned"`
	CellsRecorded int       `json:"cells_recorded"`
	// Records is how many results.jsonl lines of the shard were merged.
	Records int    `json:"records"`
	Kept    string `json:"kept"`
}

// WriteRunInfo writes run.json atomically.
func (d *Dir) WriteRunInfo(ri *RunInfo) error { return WriteJSON(d.File(RunFile), ri) }

// ReadRunInfo reads dir/run.json.
func ReadRunInfo(dir string) (*RunInfo, error) {
	var ri RunInfo
	if err := ReadJSON(Path(dir, RunFile), &ri); err != nil {
		return nil, err
	}
	return &ri, nil
}
