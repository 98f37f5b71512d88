package view

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"time"
	"unsafe"

	"bench/internal/record/results"
	"bench/internal/record/rundir"
	"bench/report"
)

// The verdicts a cell is filtered by.
const (
	VerdictPass       = "pass"
	VerdictFail       = "fail"
	VerdictNoCheck    = "no check"
	VerdictError      = "error"
	VerdictNotRun     = "not run"
	VerdictCheckError = "check error"
)

// Caps of the index (see Index).
const (
	// SnippetBytes is how much of a cell's answer the index keeps for
	// text search and the table: its first and its last SnippetBytes
	// (where a final answer usually is); of its violation and error, the
	// first SnippetBytes/2 each.
	SnippetBytes = 192
	// TextBudget bounds the kept text of one run's index; past it cells
	// are indexed without text and counted (Index.NoText).
	TextBudget = 48 << 20
	// MaxRows is the most rows one query returns; the rest are counted.
	MaxRows = 200
	// MaxIndexes is how many runs' indexes the server keeps at once.
	MaxIndexes = 4
)

// Index is a run's cells for filtering: per cell a few small numbers
// (group, prompt, repetition, verdict, failure type, line, times) and,
// within TextBudget, a lowercased snippet of its answer, violation and
// error for text search. It holds no record and no whole answer: 100,000
// cells are a few megabytes. Each cell is its last record (a resumed run's
// re-run cells replace the earlier).
type Index struct {
	Groups, Prompts, Failures []string
	cells                     []cell
	text                      []byte
	// NoText counts the cells indexed without their text (past
	// TextBudget); NSkipped the results.jsonl lines that were unusable.
	NoText, NSkipped int
	// BuiltMS is how long the index took to build.
	BuiltMS float64

	stamp string
}

type cell struct {
	line             int32
	group, prompt    int32
	rep              int32
	failure          int32 // in Failures, -1 none
	verdict          uint8
	e2e              int64
	ttft             int64 // -1 none
	textOff, textEnd uint32
	// answer, violation and error end (within text) at these offsets.
	ansEnd, violEnd uint32
}

var verdicts = []string{VerdictPass, VerdictFail, VerdictNoCheck, VerdictError, VerdictNotRun, VerdictCheckError}

func verdictOf(r *results.Record) uint8 {
	switch {
	case r.AvailabilityStatus == "skipped_unavailable" || r.AvailabilityStatus == "rate_limited" || r.AvailabilityStatus == "auth_error":
		return 4
	case r.AvailabilityStatus != results.StatusOK || !r.Success:
		return 3
	case r.ObjectivePass == nil && len(r.CheckErrors) > 0:
		return 5
	case r.ObjectivePass == nil:
		return 2
	case *r.ObjectivePass:
		return 0
	}
	return 1
}

// BuildIndex reads dir's results.jsonl once into an Index.
func BuildIndex(dir string) (*Index, error) {
	start := time.Now()
	ix := &Index{}
	groups, prompts, failures := map[string]int32{}, map[string]int32{}, map[string]int32{}
	intern := func(m map[string]int32, list *[]string, s string) int32 {
		if i, ok := m[s]; ok {
			return i
		}
		m[s] = int32(len(*list))
		*list = append(*list, s)
		return m[s]
	}
	byKey := map[results.Key]int{}
	// Sized once from the file: an answer's line is a few times its
	// text, and growing a buffer of tens of megabytes by doubling costs
	// more than reading the file.
	path := filepath.Join(dir, rundir.ResultsFile)
	if st, err := os.Stat(path); err == nil {
		ix.text = make([]byte, 0, min(TextBudget, st.Size()*3/4))
		ix.cells = make([]cell, 0, min(st.Size()/256, 1<<22))
	}
	_, nSkipped, err := results.Scan(path, results.ScanOptions{Detail: results.Answers}, func(line int, r *results.Record) error {
		g := report.Group{Provider: r.Provider, Model: r.Model, ThinkingLevel: r.ThinkingLevel}
		c := cell{line: int32(line), group: intern(groups, &ix.Groups, g.Label()), prompt: intern(prompts, &ix.Prompts, r.PromptID),
			rep: int32(r.Repetition), failure: -1, verdict: verdictOf(r), e2e: r.E2EMS, ttft: -1}
		if r.TTFTMS != nil {
			c.ttft = *r.TTFTMS
		}
		ft := ""
		switch {
		case c.verdict == 1:
			ft = "violation"
		case r.FailureType != nil:
			ft = *r.FailureType
		case c.verdict == 5:
			ft = "check error"
		}
		if ft != "" {
			c.failure = intern(failures, &ix.Failures, ft)
		}
		if len(ix.text)+3*SnippetBytes+len(elision) <= TextBudget {
			c.textOff = uint32(len(ix.text))
			ix.text = appendEnds(ix.text, r.RawOutput, SnippetBytes)
			c.ansEnd = uint32(len(ix.text))
			ix.text = appendEnds(ix.text, deref(r.Violation), SnippetBytes/4)
			c.violEnd = uint32(len(ix.text))
			ix.text = appendEnds(ix.text, deref(r.ErrorMessage), SnippetBytes/4)
			c.textEnd = uint32(len(ix.text))
		} else {
			ix.NoText++
		}
		if i, ok := byKey[r.Key()]; ok {
			ix.cells[i] = c
			return nil
		}
		byKey[r.Key()] = len(ix.cells)
		ix.cells = append(ix.cells, c)
		return nil
	})
	if err != nil {
		return nil, err
	}
	// What was reserved and not used is given back.
	if cap(ix.text) > len(ix.text)+len(ix.text)/8 {
		ix.text = append([]byte(nil), ix.text...)
	}
	if cap(ix.cells) > len(ix.cells)+len(ix.cells)/8 {
		ix.cells = append([]cell(nil), ix.cells...)
	}
	ix.NSkipped = nSkipped
	ix.BuiltMS = float64(time.Since(start).Microseconds()) / 1000
	return ix, nil
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// Bytes is about what the index holds: its cells, its text and its
// names.
func (ix *Index) Bytes() int {
	n := cap(ix.cells)*int(unsafe.Sizeof(cell{})) + cap(ix.text)
	for _, l := range [][]string{ix.Groups, ix.Prompts, ix.Failures} {
		for _, s := range l {
			n += len(s) + 16
		}
	}
	return n
}

// elision stands for the middle of a text the index leaves out.
const elision = " … "

// appendEnds appends s whole when it is at most 2n bytes, else its first
// and last n bytes (each cut on a whole rune) around an elision. The
// text is kept as written: searching lowercases both sides.
func appendEnds(dst []byte, s string, n int) []byte {
	if len(s) <= 2*n {
		return append(dst, s...)
	}
	head, tail := n, len(s)-n
	for head > 0 && s[head]&0xC0 == 0x80 {
		head--
	}
	for tail < len(s) && s[tail]&0xC0 == 0x80 {
		tail++
	}
	dst = append(dst, s[:head]...)
	dst = append(dst, elision...)
	return append(dst, s[tail:]...)
}

// Query is a filter over a run's cells: each field "" for any.
type Query struct {
	Group, Prompt, Verdict, Failure string
	// Text is searched for, case-insensitively, in each cell's answer,
	// violation and error (as the index keeps them: appendEnds).
	Text   string
	Offset int
}

// Row is one cell as the table shows it.
type Row struct {
	Line       int    `json:"line"`
	Group      string `json:"group"`
	Prompt     string `json:"prompt"`
	Repetition int    `json:"repetition"`
	Verdict    string `json:"verdict"`
	Failure    string `json:"failure"`
	E2EMS      int64  `json:"e2e_ms"`
	TTFTMS     *int64 `json:"ttft_ms"`
	Answer     string `json:"answer"`
	Violation  string `json:"violation"`
	Error      string `json:"error"`
}

// Result is a query's answer: the cells matched, the first MaxRows of
// them from Offset, and the counts by verdict of the matches.
type Result struct {
	Total     int            `json:"total"`
	Matched   int            `json:"matched"`
	Rows      []Row          `json:"rows"`
	ByVerdict map[string]int `json:"by_verdict"`
	// NoText counts cells text search does not see (the index's budget).
	NoText int     `json:"no_text"`
	TookMS float64 `json:"took_ms"`
}

// Filter runs q over the index.
func (ix *Index) Filter(q Query) *Result {
	start := time.Now()
	find := func(list []string, s string) int32 {
		if s == "" {
			return -1
		}
		for i, v := range list {
			if v == s {
				return int32(i)
			}
		}
		return -2 // matches nothing
	}
	g, p, f := find(ix.Groups, q.Group), find(ix.Prompts, q.Prompt), find(ix.Failures, q.Failure)
	v := -1
	if q.Verdict != "" {
		v = -2
		for i, s := range verdicts {
			if s == q.Verdict {
				v = i
			}
		}
	}
	needle := bytes.ToLower([]byte(q.Text))
	res := &Result{Total: len(ix.cells), ByVerdict: map[string]int{}, Rows: []Row{}, NoText: ix.NoText}
	for i := range ix.cells {
		c := &ix.cells[i]
		if (g != -1 && c.group != g) || (p != -1 && c.prompt != p) || (f != -1 && c.failure != f) || (v != -1 && int(c.verdict) != v) {
			continue
		}
		if len(needle) > 0 && !containsFold(ix.text[c.textOff:c.textEnd], needle) {
			continue
		}
		res.ByVerdict[verdicts[c.verdict]]++
		if res.Matched >= q.Offset && len(res.Rows) < MaxRows {
			res.Rows = append(res.Rows, ix.row(c))
		}
		res.Matched++
	}
	res.TookMS = float64(time.Since(start).Microseconds()) / 1000
	return res
}

// containsFold says whether hay holds needle (already lowercase), ASCII
// letters compared without case.
func containsFold(hay, needle []byte) bool {
	n := len(needle)
	if n > len(hay) {
		return false
	}
	first := needle[0]
	upper := first
	if 'a' <= first && first <= 'z' {
		upper = first - 'a' + 'A'
	}
	for i := 0; i+n <= len(hay); i++ {
		if c := hay[i]; c != first && c != upper {
			continue
		}
		j := 1
		for ; j < n; j++ {
			c := hay[i+j]
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			if c != needle[j] {
				break
			}
		}
		if j == n {
			return true
		}
	}
	return false
}

func (ix *Index) row(c *cell) Row {
	r := Row{Line: int(c.line), Group: ix.Groups[c.group], Prompt: ix.Prompts[c.prompt], Repetition: int(c.rep), Verdict: verdicts[c.verdict], E2EMS: c.e2e}
	if c.failure >= 0 {
		r.Failure = ix.Failures[c.failure]
	}
	if c.ttft >= 0 {
		t := c.ttft
		r.TTFTMS = &t
	}
	if c.textEnd > c.textOff {
		r.Answer = string(ix.text[c.textOff:c.ansEnd])
		r.Violation = string(ix.text[c.ansEnd:c.violEnd])
		r.Error = string(ix.text[c.violEnd:c.textEnd])
	}
	return r
}

// Facets are the values each filter can take, for the page's menus.
type Facets struct {
	Groups   []string `json:"groups"`
	Prompts  []string `json:"prompts"`
	Verdicts []string `json:"verdicts"`
	Failures []string `json:"failures"`
}

// Facets lists the index's groups, prompts (natural order), verdicts and
// failure types.
func (ix *Index) Facets() Facets {
	f := Facets{Groups: append([]string(nil), ix.Groups...), Prompts: append([]string(nil), ix.Prompts...),
		Verdicts: verdicts, Failures: append([]string(nil), ix.Failures...)}
	sort.Strings(f.Groups)
	sort.SliceStable(f.Prompts, func(i, j int) bool { return report.NaturalLess(f.Prompts[i], f.Prompts[j]) })
	sort.Strings(f.Failures)
	return f
}

// indexes keeps the last MaxIndexes runs' indexes, each rebuilt when its
// results.jsonl changes (a run being written).
type indexes struct {
	mu    sync.Mutex
	m     map[string]*Index
	order []string
	// building serialises the builds: two at once would hold two files'
	// worth of decoding.
	building sync.Mutex
}

func (x *indexes) get(dir string) (*Index, error) {
	st, err := os.Stat(filepath.Join(dir, rundir.ResultsFile))
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("no %s yet", rundir.ResultsFile)
		}
		return nil, err
	}
	stamp := fmt.Sprintf("%d.%d", st.Size(), st.ModTime().UnixNano())
	x.mu.Lock()
	ix := x.m[dir]
	x.mu.Unlock()
	if ix != nil && ix.stamp == stamp {
		return ix, nil
	}
	x.building.Lock()
	defer x.building.Unlock()
	ix, err = BuildIndex(dir)
	if err != nil {
		return nil, err
	}
	ix.stamp = stamp
	x.mu.Lock()
	defer x.mu.Unlock()
	if _, ok := x.m[dir]; !ok {
		x.order = append(x.order, dir)
	}
	x.m[dir] = ix
	for len(x.order) > MaxIndexes {
		delete(x.m, x.order[0])
		x.order = x.order[1:]
	}
	return ix, nil
}

// Cell reads one cell's whole record from dir's results.jsonl, by line.
func Cell(dir string, line int) (*results.Record, error) {
	var rec *results.Record
	_, _, err := results.Scan(filepath.Join(dir, rundir.ResultsFile), results.ScanOptions{Lines: func(l int) bool { return l == line }},
		func(_ int, r *results.Record) error {
			c := *r
			rec = &c
			return nil
		})
	if err != nil {
		return nil, err
	}
	if rec == nil {
		return nil, fmt.Errorf("%s has no usable line %d", rundir.ResultsFile, line)
	}
	return rec, nil
}
