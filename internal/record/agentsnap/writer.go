package agentsnap

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"bench/internal/record/results"
	"bench/internal/record/rundir"
)

// Prompt is what a cell's snapshot input is built from.
type Prompt struct {
	// System is the system prompt, "" for none.
	System string
	// Text is the user prompt.
	Text string
}

// writers is how many snapshot files are written at once. Each write ends
// with an fsync (about 1 ms on a local disk); a few in parallel keep the
// writer ahead of a fast run's thousands of cells a second, and the
// runner's bounded queue holds the run back if even that is not enough.
const writers = 4

// Writer writes runDir/snapshots/<FileName(key)> (rundir.SnapshotsDir) for every finished cell. It
// is one of a run's outputs (package output): AddRecord is called once per
// record, from one goroutine, and Stop once the run has ended.
type Writer struct {
	// Skip, when set, says which records get no snapshot (the cells of a
	// load stage, unless load.snapshots asks for them).
	Skip func(*results.Record) bool

	dir     string
	prompts map[string]Prompt
	env     Env

	jobs chan job
	wg   sync.WaitGroup

	mu      sync.Mutex
	err     error // the first write failure
	nFailed int
	closed  bool
}

type job struct {
	key Key
	s   *Snapshot
}

// NewWriter creates runDir/snapshots and returns a writer that builds each
// cell's snapshot from its record (FromRecord), the input from prompts (by
// prompt id) and the fingerprint from env.
func NewWriter(runDir string, prompts map[string]Prompt, env Env) (*Writer, error) {
	dir := filepath.Join(runDir, rundir.SnapshotsDir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("snapshots: %w", err)
	}
	w := &Writer{dir: dir, prompts: prompts, env: env, jobs: make(chan job, writers)}
	for range writers {
		w.wg.Go(w.work)
	}
	return w, nil
}

func (w *Writer) work() {
	for j := range w.jobs {
		if err := Write(w.dir, j.key, j.s); err != nil {
			w.mu.Lock()
			w.nFailed++
			if w.err == nil {
				w.err = err
			}
			w.mu.Unlock()
		}
	}
}

// AddRecord builds r's snapshot and queues it for writing. It returns the
// first write failure seen so far (once), so the run warns early; the run
// goes on either way.
func (w *Writer) AddRecord(r *results.Record) error {
	if w.Skip != nil && w.Skip(r) {
		return w.firstErr()
	}
	p, ok := w.prompts[r.PromptID]
	s := FromRecord(r, Input(p.System, p.Text))
	w.env.Fill(s)
	w.jobs <- job{key: KeyOf(s), s: s}
	if !ok {
		return fmt.Errorf("snapshots: prompt %q of %s is not in the prompt set; its input is empty", r.PromptID, KeyOf(s))
	}
	return w.firstErr()
}

func (w *Writer) firstErr() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

// Stop is Close, once the run has ended (output.WithStop).
func (w *Writer) Stop() error { return w.Close() }

// Close waits for the queued snapshots to be written and reports how many
// could not be.
func (w *Writer) Close() error {
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return nil
	}
	w.closed = true
	w.mu.Unlock()
	close(w.jobs)
	w.wg.Wait()
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err == nil {
		return nil
	}
	return errors.Join(fmt.Errorf("snapshots: %d could not be written in %s", w.nFailed, w.dir), w.err)
}
