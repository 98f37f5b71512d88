package report

import (
	"fmt"
	"hash/maphash"

	"bench/results"
)

// dedupe finds the cells results.jsonl records more than once. A resumed
// run appends a new record for a cell it ran again (one cancelled, or one
// that never reached its model), so the newer record wins: a report counts
// each cell once, by its last line, and warns how many lines it set aside.
//
// Cells are held by a 128-bit hash of their key, not the key's strings, so
// a report over 100,000 lines holds a few MB for this, not tens.
type dedupe struct {
	last  map[cellID]int // line of each cell's last record
	lines int            // records replaced by a later one
	cells int            // cells recorded more than once
	extra map[cellID]bool
}

type cellID [2]uint64

var seeds = [2]maphash.Seed{maphash.MakeSeed(), maphash.MakeSeed()}

func idOf(r *results.Record) cellID {
	k := r.Key()
	return cellID{maphash.Comparable(seeds[0], k), maphash.Comparable(seeds[1], k)}
}

func newDedupe() *dedupe {
	return &dedupe{last: map[cellID]int{}, extra: map[cellID]bool{}}
}

func (d *dedupe) see(line int, r *results.Record) {
	k := idOf(r)
	if _, dup := d.last[k]; dup {
		d.lines++
		if !d.extra[k] {
			d.extra[k] = true
			d.cells++
		}
	}
	d.last[k] = line
}

func (d *dedupe) warning() string {
	return fmt.Sprintf("results.jsonl: %d %s more than once (%d extra lines, e.g. cells a resumed run ran again); each is counted once, by its last record",
		d.cells, plural(d.cells, "cell is recorded", "cells are recorded"), d.lines)
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// aggregate reads a results file into an aggregator, each cell counted by
// its last record, handing records to the func start returns per pass (see
// LoadEach). The common file has no duplicate and is read once; one with
// duplicates is read again, keeping only last records.
func aggregate(path string, start func() func(*results.Record)) (*aggregator, *dedupe, []results.Problem, int, error) {
	a, d := newAggregator(), newDedupe()
	each := pass(start)
	problems, nProblems, err := results.ReadFile(path, true, func(line int, r *results.Record) error {
		d.see(line, r)
		a.Add(r)
		each(r)
		return nil
	})
	if err != nil || d.lines == 0 {
		return a, d, problems, nProblems, err
	}
	a, each = newAggregator(), pass(start)
	_, _, err = results.ReadFile(path, true, func(line int, r *results.Record) error {
		if d.last[idOf(r)] == line {
			a.Add(r)
			each(r)
		}
		return nil
	})
	return a, d, problems, nProblems, err
}

// pass is the func a pass hands records to: start's, or one that drops them.
func pass(start func() func(*results.Record)) func(*results.Record) {
	if start != nil {
		if f := start(); f != nil {
			return f
		}
	}
	return func(*results.Record) {}
}
