package report

import (
	"fmt"
	"hash/maphash"
	"slices"
	"strings"

	"bench/internal/record/slo"

	"bench/internal/record/results"
)

// dedupe finds the cells results.jsonl records more than once. A resumed
// run appends a new record for a cell it ran again (one cancelled, or one
// that never reached its model), so the newer record wins: a report counts
// each cell once, by its last line, and warns how many lines it set aside.
//
// The first pass holds 8 bytes a line, a 64-bit hash of its cell's key, in
// chunks that are never copied to grow (a million lines: 8 MB, where a map
// of keys took 50). finish sorts them: a file in which no hash comes twice
// records no cell twice. Otherwise the hashes seen more than once are
// candidates, and resolve reads the file again to group the candidates'
// lines by their real keys, so a hash collision costs a pass, never a
// record.
type dedupe struct {
	chunks  [][]uint64
	maxLine int // the last line of the first pass
	// candidates are the hashes seen more than once; nil when none was.
	candidates map[uint64]bool
	// replaced are the lines a later line of the same cell replaced.
	replaced map[int]bool
	lines    int // records replaced by a later one
	cells    int // cells recorded more than once
}

var chunkLen = 1 << 17 // 1 MiB of hashes

var seed = maphash.MakeSeed()

// hashOf is a var so a test can make every hash collide.
var hashOf = func(r *results.Record) uint64 { return maphash.Comparable(seed, r.Key()) }

func newDedupe() *dedupe { return &dedupe{} }

func (d *dedupe) see(line int, r *results.Record) {
	d.maxLine = line
	if n := len(d.chunks); n == 0 || len(d.chunks[n-1]) == chunkLen {
		d.chunks = append(d.chunks, make([]uint64, 0, chunkLen))
	}
	last := &d.chunks[len(d.chunks)-1]
	*last = append(*last, hashOf(r))
}

// finish finds the hashes seen more than once: it sorts each chunk in
// place and merges them, copying none. It drops the hashes.
func (d *dedupe) finish() {
	for _, c := range d.chunks {
		slices.Sort(c)
	}
	// A k-way merge through a heap of the chunks' next hashes.
	h := make([][]uint64, 0, len(d.chunks))
	for _, c := range d.chunks {
		if len(c) > 0 {
			h = append(h, c)
		}
	}
	d.chunks = nil
	less := func(i, j int) bool { return h[i][0] < h[j][0] }
	down := func(i int) {
		for {
			l := 2*i + 1
			if l >= len(h) {
				return
			}
			if r := l + 1; r < len(h) && less(r, l) {
				l = r
			}
			if !less(l, i) {
				return
			}
			h[i], h[l] = h[l], h[i]
			i = l
		}
	}
	for i := len(h)/2 - 1; i >= 0; i-- {
		down(i)
	}
	prev, first := uint64(0), true
	for len(h) > 0 {
		v := h[0][0]
		if !first && v == prev {
			if d.candidates == nil {
				d.candidates = map[uint64]bool{}
			}
			d.candidates[v] = true
		}
		prev, first = v, false
		if h[0] = h[0][1:]; len(h[0]) == 0 {
			h[0] = h[len(h)-1]
			h = h[:len(h)-1]
		}
		down(0)
	}
}

// resolve reads the file again for the candidates' lines and groups them
// by their keys: all but the last line of a key recorded twice are
// replaced.
func (d *dedupe) resolve(path string) error {
	type seen struct{ last, n int }
	byKey := map[results.Key]*seen{}
	d.replaced = map[int]bool{}
	_, _, err := results.ReadFile(path, true, func(line int, r *results.Record) error {
		if line > d.maxLine || !d.candidates[hashOf(r)] {
			return nil
		}
		k := r.Key()
		sn := byKey[k]
		if sn == nil {
			// The reader reuses the record's strings.
			k = results.Key{Provider: strings.Clone(k.Provider), ProviderType: strings.Clone(k.ProviderType),
				Model: strings.Clone(k.Model), ThinkingLevel: strings.Clone(k.ThinkingLevel),
				PromptID: strings.Clone(k.PromptID), Repetition: k.Repetition, Stage: strings.Clone(k.Stage)}
			byKey[k] = &seen{last: line, n: 1}
			return nil
		}
		d.replaced[sn.last] = true
		sn.last = line
		if sn.n++; sn.n == 2 {
			d.cells++
		}
		d.lines++
		return nil
	})
	return err
}

// last says the record at line is its cell's last (a line the first pass
// did not read, appended since, is not counted).
func (d *dedupe) last(line int) bool { return line <= d.maxLine && !d.replaced[line] }

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
// its last record, handing records (read as o says) to the func start
// returns per pass (see Load). The common file has no duplicate and is
// read once; one with duplicates is read again, keeping only last records.
func aggregate(path string, slo *slo.SLO, o results.ScanOptions, start func() func(int, *results.Record)) (*aggregator, *dedupe, []results.Problem, int, error) {
	a, d := newAggregator(), newDedupe()
	a.slo = slo
	each := pass(start)
	problems, nProblems, err := results.ScanFile(path, o, func(line int, r *results.Record) error {
		d.see(line, r)
		a.Add(r)
		each(line, r)
		return nil
	})
	if err != nil {
		return a, d, problems, nProblems, err
	}
	if d.finish(); d.candidates == nil {
		return a, d, problems, nProblems, nil
	}
	if err := d.resolve(path); err != nil || d.lines == 0 {
		return a, d, problems, nProblems, err
	}
	a.close()
	a, each = newAggregator(), pass(start)
	a.slo = slo
	o.Lines = d.last
	_, _, err = results.ScanFile(path, o, func(line int, r *results.Record) error {
		a.Add(r)
		each(line, r)
		return nil
	})
	return a, d, problems, nProblems, err
}

// pass is the func a pass hands records to: start's, or one that drops them.
func pass(start func() func(int, *results.Record)) func(int, *results.Record) {
	if start != nil {
		if f := start(); f != nil {
			return f
		}
	}
	return func(int, *results.Record) {}
}
