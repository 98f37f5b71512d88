// Package junitxml writes a run's results as JUnit XML (junit.xml), the
// test report format CI systems read (Jenkins, GitLab, GitHub Actions'
// reporters), so a sweep can gate a pipeline like a test suite does.
//
// The mapping: one <testsuite> per (provider, model, thinking level), named
// like the summary's groups ("provider/model (level)"); one <testcase> per
// cell, named by prompt id and name (and repetition when the suite has
// several); a failed check (objective_pass false) is a <failure> whose
// message is the violation; a cell skipped as unavailable (no server, no
// model, no key) is <skipped>; every other cell that did not succeed (errors,
// timeouts, rate limits, refused auth, empty answers, cancellations) is an
// <error> typed by its failure type. Passed cells and cells whose prompt has
// no check are plain testcases.
//
// The XML is checked against the Jenkins xUnit plugin's JUnit schema
// (internal/testpeer/junitschema/junit-10.xsd, MIT): for that schema the <testsuites> element
// carries no skipped count (the <testsuite> elements do).
//
// Like every report of a run it is built from results.jsonl alone: feed
// each record to Builder.Add (report.LoadEach does it in the summary's
// pass), then Write or WriteFile.
//
// Layer: verdicts (from results.jsonl; reads run directories only).
package junitxml

import (
	"bufio"
	"cmp"
	"encoding/xml"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/jstemmer/go-junit-report/v2/junit"

	"bench/internal/record/results"
	"bench/internal/record/rundir"
	"bench/internal/tape"
)

// maxMessage bounds a message attribute: CI pages show it on one line; the
// element's text keeps the whole violation.
const maxMessage = 500

// Builder collects the cells of a run, in any order, into test suites. It
// keeps 16 bytes a cell; the texts of failed, skipped and errored cells
// are on a tape (internal/tape) that moves to a temporary file past a few
// MB, so Close a Builder when done with it.
type Builder struct {
	suites map[suiteKey]*suite
	tape   tape.Tape
	refs   []tape.Ref // where each result's texts are on the tape
	buf    []byte
}

type suiteKey struct {
	provider, model, level string
	hasLevel               bool
}

type suite struct {
	key          suiteKey
	providerType string
	runID        string
	first, last  int64 // started_at_ms of the first cell, ended_at_ms of the last
	// rep0 is the first cell's repetition; manyReps says another was seen
	// (the testcase names then carry the repetition). Two words, not a
	// map: a run of 100,000 one-cell suites holds 100,000 of them.
	rep0     int
	manyReps bool
	cases    []cell
	// prompts are the (id, name) pairs of the suite's cells, indexed by
	// promptIndex: a million cells of twenty prompts hold twenty copies.
	// promptIndex is made at the ninth pair; below, a scan finds them (a
	// suite of one prompt holds no map).
	prompts     [][2]string
	promptIndex map[[2]string]int32
}

// maxScanned is how many prompts a suite finds by scanning before it
// indexes them in a map.
const maxScanned = 8

func (s *suite) prompt(id, name string) int32 {
	k := [2]string{id, name}
	if s.promptIndex != nil {
		if i, ok := s.promptIndex[k]; ok {
			return i
		}
	} else {
		for i, p := range s.prompts {
			if p == k {
				return int32(i)
			}
		}
	}
	k = [2]string{strings.Clone(id), strings.Clone(name)} // the reader reuses the record's buffers
	i := int32(len(s.prompts))
	s.prompts = append(s.prompts, k)
	if s.promptIndex == nil && len(s.prompts) > maxScanned {
		s.promptIndex = make(map[[2]string]int32, len(s.prompts))
		for j, p := range s.prompts {
			s.promptIndex[p] = int32(j)
		}
	} else if s.promptIndex != nil {
		s.promptIndex[k] = i
	}
	return i
}

// cell is what a testcase needs from a record; the record itself is reused
// by the reader. It is kept small (16 bytes): a million-line run holds a
// million of them until Write. Cells are in results.jsonl's order.
type cell struct {
	prompt int32 // index of the prompt's id and name in the suite's prompts
	rep    int32
	e2eMS  int32 // clamped: 2^31 ms is 24 days
	// res is the failure, skip or error: its verdict in the top two bits,
	// and 1 + the index of its texts in Builder.refs below; 0 for a plain
	// testcase.
	res uint32
}

const (
	resKindShift = 30
	resIndexMask = 1<<resKindShift - 1
)

func (c cell) kind() verdict { return verdict(c.res >> resKindShift) }

// result is a failure's, skip's or error's texts.
type result = junit.Result

// New returns an empty Builder.
func New() *Builder { return &Builder{suites: map[suiteKey]*suite{}} }

// Close drops the Builder's temporary file, if it made one.
func (b *Builder) Close() error { return b.tape.Close() }

// Suites is how many suites (groups) the builder holds.
func (b *Builder) Suites() int { return len(b.suites) }

// Add records one cell. It keeps no reference to r.
func (b *Builder) Add(r *results.Record) {
	k := suiteKey{provider: r.Provider, model: r.Model}
	if r.ThinkingLevel != nil {
		k.level, k.hasLevel = *r.ThinkingLevel, true
	}
	s := b.suites[k]
	if s == nil {
		s = &suite{key: k, providerType: r.ProviderType, runID: r.RunID, first: r.StartedAtMS, last: r.EndedAtMS, rep0: r.Repetition}
		b.suites[k] = s
	}
	s.first, s.last = min(s.first, r.StartedAtMS), max(s.last, r.EndedAtMS)
	s.manyReps = s.manyReps || r.Repetition != s.rep0
	c := cell{prompt: s.prompt(r.PromptID, r.PromptName), rep: int32(r.Repetition),
		e2eMS: int32(min(max(r.E2EMS, 0), math.MaxInt32))}
	var res result
	switch kind := outcome(r); kind {
	case passed:
		s.cases = append(s.cases, c)
		return
	case failed:
		v := deref(r.Violation)
		if v == "" {
			v = "failed its check"
		}
		res = result{Message: message(v), Type: "check_failed", Data: details(r, v)}
	case skipped:
		why := reason(r)
		res = result{Message: message(why), Type: deref(r.FailureType), Data: details(r, why)}
	case errored:
		why := reason(r)
		typ := deref(r.FailureType)
		if typ == "" && r.Success && len(r.CheckErrors) > 0 {
			typ = r.CheckErrors[0].Type
		}
		if typ == "" {
			typ = r.AvailabilityStatus
		}
		res = result{Message: message(why), Type: typ, Data: details(r, why)}
	}
	b.buf = encodeResult(b.buf, &res)
	b.refs = append(b.refs, b.tape.Put(b.buf))
	c.res = uint32(outcome(r))<<resKindShift | uint32(len(b.refs))
	s.cases = append(s.cases, c)
}

type verdict int

const (
	passed verdict = iota
	failed
	skipped
	errored
)

// outcome classifies a record for JUnit. Only a model that answered can
// fail a check; only a cell that could not be tried is skipped.
func outcome(r *results.Record) verdict {
	switch {
	case r.AvailabilityStatus == results.StatusSkippedUnavailable:
		return skipped
	case r.AvailabilityStatus != results.StatusOK || !r.Success:
		return errored
	case r.ObjectivePass != nil && !*r.ObjectivePass:
		return failed
	case r.ObjectivePass == nil && len(r.CheckErrors) > 0:
		// A check gave no verdict (its judge or program failed): an error
		// of the test, never a pass.
		return errored
	}
	return passed
}

// reason is a not-run or errored cell's one-line cause.
func reason(r *results.Record) string {
	if r.Success && len(r.CheckErrors) > 0 {
		e := r.CheckErrors[0]
		return e.Type + ": " + e.Check + ": " + e.Message
	}
	var parts []string
	if ft := deref(r.FailureType); ft != "" {
		parts = append(parts, ft)
	} else {
		parts = append(parts, r.AvailabilityStatus)
	}
	if m := deref(r.ErrorMessage); m != "" {
		parts = append(parts, m)
	}
	return strings.Join(parts, ": ")
}

// details is the element's text: the cause and the cell's figures, so a CI
// page shows what happened without opening results.jsonl.
func details(r *results.Record, why string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n\nprompt: %s %s (repetition %d)\nstatus: %s", why, r.PromptID, r.PromptName, r.Repetition, r.AvailabilityStatus)
	if ft := deref(r.FailureType); ft != "" {
		fmt.Fprintf(&b, " / %s", ft)
	}
	if r.HTTPStatus != nil {
		fmt.Fprintf(&b, " (HTTP %d)", *r.HTTPStatus)
	}
	fmt.Fprintf(&b, "\ne2e: %d ms", r.E2EMS)
	if r.TTFTMS != nil {
		fmt.Fprintf(&b, ", ttft: %d ms", *r.TTFTMS)
	}
	if len(r.ToolCalls) > 0 {
		fmt.Fprintf(&b, "\ntool calls: %s", strings.Join(r.ToolCalls, ", "))
	}
	if len(r.ExpectedTools) > 0 {
		fmt.Fprintf(&b, "\nexpected tools: %s", strings.Join(r.ExpectedTools, ", "))
	}
	b.WriteString("\n")
	return clean(b.String())
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// message folds s onto one line, cut to maxMessage bytes at a rune boundary.
func message(s string) string {
	s = strings.Join(strings.Fields(clean(s)), " ")
	if len(s) <= maxMessage {
		return s
	}
	cut := maxMessage
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// clean drops what XML 1.0 cannot carry (control characters but tab and
// newlines, invalid UTF-8, U+FFFE/U+FFFF): model output and error text can
// hold any of them, and one would make the whole file unreadable.
func clean(s string) string {
	ok := func(r rune) bool {
		return r == '\t' || r == '\n' || r == '\r' || (r >= 0x20 && r < 0xD800) || (r >= 0xE000 && r <= 0xFFFD) || (r >= 0x10000 && r <= 0x10FFFF)
	}
	for i, r := range s {
		if !ok(r) || (r == utf8.RuneError && !validAt(s, i)) {
			return strings.Map(func(r rune) rune {
				if ok(r) {
					return r
				}
				return '\uFFFD'
			}, strings.ToValidUTF8(s, "\uFFFD"))
		}
	}
	return s
}

// validAt says the RuneError at s[i] is a real U+FFFD, not a bad byte.
func validAt(s string, i int) bool {
	_, n := utf8.DecodeRuneInString(s[i:])
	return n == 3
}

func (b *Builder) sortedKeys() []suiteKey {
	keys := make([]suiteKey, 0, len(b.suites))
	for k := range b.suites {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b suiteKey) int {
		return cmp.Or(naturalCmp(a.provider, b.provider), naturalCmp(a.model, b.model),
			cmpBool(a.hasLevel, b.hasLevel), naturalCmp(a.level, b.level))
	})
	return keys
}

// header is the suite's <testsuite> without its testcases, with their
// counts.
func (s *suite) header(id int) junit.Testsuite {
	ts := junit.Testsuite{Name: s.name(), ID: id, Package: clean(s.runID),
		Time: seconds(float64(s.last-s.first) / 1000), Tests: len(s.cases)}
	ts.Failures, ts.Skipped, ts.Errors = s.counts()
	if s.first > 0 {
		ts.SetTimestamp(time.UnixMilli(s.first).UTC())
	}
	ts.AddProperty("run_id", clean(s.runID))
	ts.AddProperty("provider", clean(s.key.provider))
	ts.AddProperty("provider_type", clean(s.providerType))
	ts.AddProperty("model", clean(s.key.model))
	level := "null"
	if s.key.hasLevel {
		level = s.key.level
	}
	ts.AddProperty("thinking_level", clean(level))
	return ts
}

// counts are the suite's failed, skipped and errored testcases.
func (s *suite) counts() (failures, skips, errs int) {
	for _, c := range s.cases {
		switch c.kind() {
		case failed:
			failures++
		case skipped:
			skips++
		case errored:
			errs++
		}
	}
	return
}

func (s *suite) name() string {
	name := s.key.provider + "/" + s.key.model
	if s.key.hasLevel {
		name += " (" + s.key.level + ")"
	}
	return clean(name)
}

// testcases gives the suite's testcases to emit in order, one at a time
// (the testcase is reused; its result is its own).
func (b *Builder) testcases(s *suite, emit func(*junit.Testcase) error) error {
	// Prompt ids in natural order, ranked once rather than compared per
	// cell. A cell is recorded once; the order in the file (a stable sort)
	// breaks any tie a doubled line could make.
	byID := make([]int32, len(s.prompts))
	for i := range byID {
		byID[i] = int32(i)
	}
	slices.SortFunc(byID, func(a, b int32) int {
		return cmp.Or(naturalCmp(s.prompts[a][0], s.prompts[b][0]), strings.Compare(s.prompts[a][0], s.prompts[b][0]))
	})
	rank := make([]int32, len(s.prompts))
	for i, p := range byID {
		rank[p] = int32(i)
		if i > 0 && s.prompts[p][0] == s.prompts[byID[i-1]][0] {
			rank[p] = rank[byID[i-1]]
		}
	}
	slices.SortStableFunc(s.cases, func(a, b cell) int {
		return cmp.Or(cmp.Compare(rank[a.prompt], rank[b.prompt]), cmp.Compare(a.rep, b.rep))
	})
	manyReps := s.manyReps
	classname := s.name()
	var tc junit.Testcase
	for _, c := range s.cases {
		p := s.prompts[c.prompt]
		n := p[0]
		if p[1] != "" {
			n += " " + p[1]
		}
		if manyReps {
			n += " #" + strconv.Itoa(int(c.rep))
		}
		tc = junit.Testcase{Name: clean(n), Classname: classname, Time: seconds(float64(c.e2eMS) / 1000)}
		if c.res != 0 {
			p, err := b.tape.Get(b.refs[c.res&resIndexMask-1])
			if err != nil {
				return fmt.Errorf("junit texts: %w", err)
			}
			res, err := decodeResult(p)
			if err != nil {
				return err
			}
			switch c.kind() {
			case failed:
				tc.Failure = &res
			case skipped:
				tc.Skipped = &res
			default:
				tc.Error = &res
			}
		}
		if err := emit(&tc); err != nil {
			return err
		}
	}
	return nil
}

func seconds(s float64) string { return strconv.FormatFloat(max(s, 0), 'f', 3, 64) }

func cmpBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case !a:
		return -1
	}
	return 1
}

// naturalCmp orders runs of digits by value, so P2 comes before P10.
func naturalCmp(a, b string) int {
	for a != "" && b != "" {
		da, db := digits(a), digits(b)
		if da > 0 && db > 0 {
			na, nb := strings.TrimLeft(a[:da], "0"), strings.TrimLeft(b[:db], "0")
			if c := cmp.Or(cmp.Compare(len(na), len(nb)), strings.Compare(na, nb)); c != 0 {
				return c
			}
			a, b = a[da:], b[db:]
			continue
		}
		if a[0] != b[0] {
			return cmp.Compare(a[0], b[0])
		}
		a, b = a[1:], b[1:]
	}
	return cmp.Compare(len(a), len(b))
}

func digits(s string) int {
	n := 0
	for n < len(s) && s[n] >= '0' && s[n] <= '9' {
		n++
	}
	return n
}

// Write writes the XML document (with its declaration) to w: the bytes
// go-junit-report's Testsuites.WriteXML gives for the whole tree (its test
// holds the two to the same document), but one testcase at a time, so a
// million cells never stand in memory as testcases (the totals are counted
// from the cells first). Suites come in a stable order (provider, model,
// thinking level; testcases by prompt id, then repetition), whatever order
// the cells finished in.
func (b *Builder) Write(w io.Writer) error {
	keys := b.sortedKeys()
	var tests, errs, failures int
	var total float64
	// The totals first, each suite's header (a few hundred bytes) only as
	// it is written: 100,000 suites never hold 100,000 headers.
	for _, k := range keys {
		s := b.suites[k]
		f, _, e := s.counts()
		tests += len(s.cases)
		errs += e
		failures += f
		total += float64(s.last-s.first) / 1000
	}
	name := "bench"
	if len(keys) > 0 {
		name = "bench " + b.suites[keys[0]].runID
	}
	// The attributes junit.Testsuites marshals, in its field order, each
	// omitted when empty (skipped: none, as in Testsuites).
	start := xml.StartElement{Name: xml.Name{Local: "testsuites"}, Attr: attrs(
		attr{"name", name, false}, attr{"time", seconds(total), false},
		attr{"tests", strconv.Itoa(tests), tests == 0}, attr{"errors", strconv.Itoa(errs), errs == 0},
		attr{"failures", strconv.Itoa(failures), failures == 0})}
	if _, err := io.WriteString(w, xmlHeader); err != nil {
		return err
	}
	// EncodeElement flushes its buffer after each testcase: behind a
	// wrapper, that is its own buffer, not w's (a *bufio.Writer, which
	// xml would take as its buffer and flush to the file a million times).
	enc := xml.NewEncoder(struct{ io.Writer }{w})
	enc.Indent("", "\t")
	if err := enc.EncodeToken(start); err != nil {
		return err
	}
	for i, k := range keys {
		h := b.suites[k].header(i)
		if err := b.writeSuite(enc, b.suites[k], &h); err != nil {
			return err
		}
	}
	if err := enc.EncodeToken(start.End()); err != nil {
		return err
	}
	if err := enc.Flush(); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

// writeSuite writes one <testsuite> as junit.Testsuite marshals it: its
// attributes in field order (the omitempty ones left out when empty), its
// properties, then its testcases one at a time.
func (b *Builder) writeSuite(enc *xml.Encoder, s *suite, ts *junit.Testsuite) error {
	if len(s.cases) == 0 {
		return enc.EncodeElement(ts, xml.StartElement{Name: xml.Name{Local: "testsuite"}})
	}
	start := xml.StartElement{Name: xml.Name{Local: "testsuite"}, Attr: attrs(
		attr{"name", ts.Name, false}, attr{"tests", strconv.Itoa(ts.Tests), false},
		attr{"failures", strconv.Itoa(ts.Failures), false}, attr{"errors", strconv.Itoa(ts.Errors), false},
		attr{"id", strconv.Itoa(ts.ID), false},
		attr{"disabled", strconv.Itoa(ts.Disabled), ts.Disabled == 0}, attr{"hostname", ts.Hostname, ts.Hostname == ""},
		attr{"package", ts.Package, ts.Package == ""}, attr{"skipped", strconv.Itoa(ts.Skipped), ts.Skipped == 0},
		attr{"time", ts.Time, false}, attr{"timestamp", ts.Timestamp, ts.Timestamp == ""}, attr{"file", ts.File, ts.File == ""})}
	if err := enc.EncodeToken(start); err != nil {
		return err
	}
	if ts.Properties != nil && len(*ts.Properties) > 0 {
		props := struct {
			Property []junit.Property `xml:"property"`
		}{*ts.Properties}
		if err := enc.EncodeElement(props, xml.StartElement{Name: xml.Name{Local: "properties"}}); err != nil {
			return err
		}
	}
	tcStart := xml.StartElement{Name: xml.Name{Local: "testcase"}}
	if err := b.testcases(s, func(tc *junit.Testcase) error { return enc.EncodeElement(tc, tcStart) }); err != nil {
		return err
	}
	return enc.EncodeToken(start.End())
}

type attr struct {
	name, value string
	omit        bool
}

func attrs(as ...attr) []xml.Attr {
	var out []xml.Attr
	for _, a := range as {
		if !a.omit {
			out = append(out, xml.Attr{Name: xml.Name{Local: a.name}, Value: a.value})
		}
	}
	return out
}

const xmlHeader = `<?xml version="1.0" encoding="UTF-8"?>` + "\n"

// WriteFile writes the document to path through a temporary file and a
// rename, so a CI job never reads half a report; it is streamed, not
// rendered in memory first.
func (b *Builder) WriteFile(path string) error {
	f, err := rundir.CreateAtomic(path)
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(f, 256<<10)
	if err := b.Write(bw); err != nil {
		f.Abort()
		return fmt.Errorf("render %s: %w", path, err)
	}
	if err := bw.Flush(); err != nil {
		f.Abort()
		return err
	}
	return f.Commit()
}
