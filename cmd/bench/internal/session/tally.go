package session

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"slices"
	"strings"
	"sync"

	"bench/internal/exitcode"
	"bench/internal/record/results"
	"bench/internal/record/slo"
	"bench/run/plan"
	"bench/run/runner"
)

// rerun says whether a resumed run runs a recorded cell again: one that
// never reached its model for a reason outside it (the provider was
// unavailable, refused the key, rate-limited the call) or that bench
// itself cut short (cancelled by a second Ctrl-C). Every other record is
// a measurement, kept. The newer record wins (reports count a cell by its
// last record).
func rerun(r *results.Record) bool {
	switch r.AvailabilityStatus {
	case results.StatusSkippedUnavailable, results.StatusAuthError, results.StatusRateLimited:
		return true
	}
	return r.FailureType != nil && *r.FailureType == results.FailCancelled
}

// tally is the session's own output: what the end of the run says and
// writes (run.json's counts, exit 4, the hint when nothing answered),
// counted as the records come instead of reading results.jsonl again. A
// resumed run's tally starts from what the earlier runs recorded (scan).
type tally struct {
	mu sync.Mutex
	// done are the cells whose last record is final (a resumed run does
	// not run them again); again maps the recorded cells it runs again to
	// their last record's status.
	done  map[results.Key]bool
	again map[results.Key]string
	// cells counts the cells with a record; byStatus their last records'
	// statuses; reached the providers some record reached a model of.
	cells    int
	byStatus map[string]int
	reached  map[string]bool
	// bad counts unusable lines of the earlier runs' results.
	bad int
	// searched are the earlier runs' last records of SLO-search and
	// auto-sweep stages, which a resumed search reads its progress from
	// (and an auto sweep its measured rates).
	searched map[results.Key]*results.Record

	// This invocation's records: how many, how many were skipped as
	// unavailable, and which models each provider skipped, by failure
	// type (the hint names what to start or pull).
	recorded, unavailable int
	skipped               map[string]map[string][]string
	// final counts this invocation's records that a resume keeps (not
	// cancelled, unavailable, refused or rate-limited: see rerun);
	// notRun those the budget did not start.
	final, notRun int
	// unjudged finds the groups no external check gave a verdict on, over
	// the whole run (a resumed run's earlier cells too).
	unjudged results.Unjudged

	// spend is what a record costs against the budget (nil: no budget);
	// spent sums it over every record, the earlier runs' included.
	spend func(*results.Record) float64
	spent float64
}

func newTally() *tally {
	return &tally{done: map[results.Key]bool{}, again: map[results.Key]string{}, byStatus: map[string]int{},
		reached: map[string]bool{}, skipped: map[string]map[string][]string{}}
}

// scan starts the tally of a resumed run from its results file: each
// cell's last record says whether it is done or runs again. A missing file
// (a run killed before its first result) is an empty tally.
func scan(path string, spend func(*results.Record) float64) (*tally, error) {
	t := newTally()
	t.spend = spend
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return t, nil
	}
	last := map[results.Key]string{}
	final := map[results.Key]bool{}
	_, bad, err := results.ReadFile(path, true, func(_ int, r *results.Record) error {
		k := r.Key()
		last[k], final[k] = r.AvailabilityStatus, !rerun(r)
		if slo.IsSearchStage(r.Stage) || plan.IsAutoStage(r.Stage) {
			if t.searched == nil {
				t.searched = map[results.Key]*results.Record{}
			}
			// The reader reuses its record: keep a copy of its own.
			var c results.Record
			if b, err := json.Marshal(r); err == nil && json.Unmarshal(b, &c) == nil {
				t.searched[k] = &c
			}
		}
		if results.Reached(r) {
			t.reached[r.Provider] = true
		}
		t.unjudged.Add(r) // a cell run again had no answer to check
		if t.spend != nil {
			t.spent += t.spend(r)
		}
		return nil
	})
	t.bad = bad
	for k, status := range last {
		if final[k] {
			t.done[k] = true
		} else {
			t.again[k] = status
		}
		t.byStatus[status]++
	}
	t.cells = len(last)
	return t, err
}

// AddRecord counts a cell this run recorded.
func (t *tally) AddRecord(r *results.Record) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	k := r.Key()
	if old, ok := t.again[k]; ok {
		t.byStatus[old]-- // its earlier record no longer counts
		delete(t.again, k)
	} else {
		t.cells++
	}
	t.byStatus[r.AvailabilityStatus]++
	if results.Reached(r) {
		t.reached[r.Provider] = true
	}
	t.unjudged.Add(r)
	t.recorded++
	if !rerun(r) {
		t.final++
		t.done[k] = true
	}
	if t.spend != nil {
		t.spent += t.spend(r)
	}
	budget := r.FailureType != nil && *r.FailureType == runner.FailBudgetExhausted
	if budget {
		t.notRun++
	}
	// A cell the budget did not start says nothing of its server.
	if r.AvailabilityStatus == results.StatusSkippedUnavailable && !budget {
		t.unavailable++
		if r.FailureType != nil {
			t.skip(r.Provider, *r.FailureType, r.Model)
		}
	}
	return nil
}

func (t *tally) skip(provider, failure, model string) {
	byType := t.skipped[provider]
	if byType == nil {
		byType = map[string][]string{}
		t.skipped[provider] = byType
	}
	if ms := byType[failure]; len(ms) == 0 || ms[len(ms)-1] != model {
		byType[failure] = append(ms, model)
	}
}

// statuses is byStatus without the statuses no cell has any more.
func (t *tally) statuses() map[string]int {
	t.mu.Lock()
	defer t.mu.Unlock()
	m := maps.Clone(t.byStatus)
	maps.DeleteFunc(m, func(_ string, n int) bool { return n == 0 })
	return m
}

// reachCode is exitcode.Unreached, with the reason, when no cell reached a
// model, or when no cell of some provider of the plan did and allow is
// false. providers are the providers with cells in this run's plan (a
// shard's own: a provider the shard has no cell of is not unreachable, and
// a shard with no cell at all has nothing to reach).
func (t *tally) reachCode(providers []string, allow bool) (int, string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	switch {
	case len(providers) == 0:
		return exitcode.OK, ""
	case len(t.reached) == 0:
		return exitcode.Unreached, "no cell reached a model; nothing was measured"
	}
	var none []string
	for _, n := range providers {
		if !t.reached[n] {
			none = append(none, n)
		}
	}
	if len(none) == 0 || allow {
		return exitcode.OK, ""
	}
	slices.Sort(none)
	return exitcode.Unreached, fmt.Sprintf("no cell of %s reached a model (--allow-unavailable accepts that)", strings.Join(none, ", "))
}

// unjudgedCode is exitcode.Unjudged, with the reason, when some group of
// the run got no verdict from its external checks.
func (t *tally) unjudgedCode() (int, string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if line := results.UnjudgedLine(t.unjudged.Groups()); line != "" {
		return exitcode.Unjudged, line
	}
	return exitcode.OK, ""
}

// spentUSD is what the run's records cost against the budget.
func (t *tally) spentUSD() float64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.spent
}

// doneKeys are the cells whose last record is final.
func (t *tally) doneKeys() map[results.Key]bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return maps.Clone(t.done)
}

// left is how many of the planned cells a --resume runs after this
// invocation: those with no record yet, and those whose record it runs
// again (a second Ctrl-C's cancelled cells among them).
func (t *tally) left(planned int) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return planned - t.final
}

// recordedSearch lists the earlier runs' search-stage records whose cells
// are done (a cell run again is the new run's to count).
func (t *tally) recordedSearch() []*results.Record {
	var out []*results.Record
	for k, r := range t.searched {
		if t.done[k] {
			out = append(out, r)
		}
	}
	return out
}
