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
// (testdata/junit-10.xsd, MIT): for that schema the <testsuites> element
// carries no skipped count (the <testsuite> elements do).
//
// Like every report of a run it is built from results.jsonl alone: feed
// each record to Builder.Add (report.LoadEach does it in the summary's
// pass), then Write or WriteFile.
package junitxml

import (
	"bytes"
	"cmp"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/jstemmer/go-junit-report/v2/junit"

	"bench/results"
	"bench/rundir"
)

// FileName is junit.xml's name in a run directory.
const FileName = "junit.xml"

// maxMessage bounds a message attribute: CI pages show it on one line; the
// element's text keeps the whole violation.
const maxMessage = 500

// Builder collects the cells of a run, in any order, into test suites.
type Builder struct {
	suites map[suiteKey]*suite
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
	reps         map[int]bool
	cases        []cell
}

// cell is what a testcase needs from a record; the record itself is reused
// by the reader.
type cell struct {
	promptID, promptName string
	rep                  int
	seq                  int // order in results.jsonl
	seconds              float64
	skipped, failure     *junit.Result
	err                  *junit.Result
}

// New returns an empty Builder.
func New() *Builder { return &Builder{suites: map[suiteKey]*suite{}} }

// Add records one cell. It keeps no reference to r.
func (b *Builder) Add(r *results.Record) {
	k := suiteKey{provider: r.Provider, model: r.Model}
	if r.ThinkingLevel != nil {
		k.level, k.hasLevel = *r.ThinkingLevel, true
	}
	s := b.suites[k]
	if s == nil {
		s = &suite{key: k, providerType: r.ProviderType, runID: r.RunID, first: r.StartedAtMS, last: r.EndedAtMS, reps: map[int]bool{}}
		b.suites[k] = s
	}
	s.first, s.last = min(s.first, r.StartedAtMS), max(s.last, r.EndedAtMS)
	s.reps[r.Repetition] = true
	c := cell{promptID: r.PromptID, promptName: r.PromptName, rep: r.Repetition, seq: len(s.cases), seconds: float64(r.E2EMS) / 1000}
	switch outcome(r) {
	case failed:
		v := deref(r.Violation)
		if v == "" {
			v = "failed its check"
		}
		c.failure = &junit.Result{Message: message(v), Type: "check_failed", Data: details(r, v)}
	case skipped:
		why := reason(r)
		c.skipped = &junit.Result{Message: message(why), Type: deref(r.FailureType), Data: details(r, why)}
	case errored:
		why := reason(r)
		typ := deref(r.FailureType)
		if typ == "" {
			typ = r.AvailabilityStatus
		}
		c.err = &junit.Result{Message: message(why), Type: typ, Data: details(r, why)}
	}
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
	}
	return passed
}

// reason is a not-run or errored cell's one-line cause.
func reason(r *results.Record) string {
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

// Testsuites returns the suites in a stable order (provider, model,
// thinking level; testcases by prompt id, then repetition), whatever order
// the cells finished in.
func (b *Builder) Testsuites() junit.Testsuites {
	keys := make([]suiteKey, 0, len(b.suites))
	for k := range b.suites {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b suiteKey) int {
		return cmp.Or(naturalCmp(a.provider, b.provider), naturalCmp(a.model, b.model),
			cmpBool(a.hasLevel, b.hasLevel), naturalCmp(a.level, b.level))
	})
	var out junit.Testsuites
	out.Name = "bench"
	var total float64
	for i, k := range keys {
		s := b.suites[k]
		ts := s.testsuite(i)
		total += float64(s.last-s.first) / 1000
		out.AddSuite(ts)
	}
	if len(keys) > 0 {
		out.Name = "bench " + b.suites[keys[0]].runID
	}
	out.Time = seconds(total)
	// The Jenkins schema has no skipped count on <testsuites>; each
	// <testsuite> keeps its own.
	out.Skipped = 0
	return out
}

func (s *suite) testsuite(id int) junit.Testsuite {
	name := s.key.provider + "/" + s.key.model
	if s.key.hasLevel {
		name += " (" + s.key.level + ")"
	}
	ts := junit.Testsuite{Name: clean(name), ID: id, Package: clean(s.runID),
		Time: seconds(float64(s.last-s.first) / 1000)}
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
	// A cell is recorded once; the order in the file breaks any tie a
	// doubled line could make.
	slices.SortFunc(s.cases, func(a, b cell) int {
		return cmp.Or(naturalCmp(a.promptID, b.promptID), cmp.Compare(a.rep, b.rep), cmp.Compare(a.seq, b.seq))
	})
	manyReps := len(s.reps) > 1
	for _, c := range s.cases {
		n := c.promptID
		if c.promptName != "" {
			n += " " + c.promptName
		}
		if manyReps {
			n += " #" + strconv.Itoa(c.rep)
		}
		ts.AddTestcase(junit.Testcase{Name: clean(n), Classname: ts.Name, Time: seconds(c.seconds),
			Skipped: c.skipped, Failure: c.failure, Error: c.err})
	}
	return ts
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

// Write writes the XML document (with its declaration) to w.
func (b *Builder) Write(w io.Writer) error {
	ts := b.Testsuites()
	if _, err := io.WriteString(w, xmlHeader); err != nil {
		return err
	}
	return ts.WriteXML(w)
}

const xmlHeader = `<?xml version="1.0" encoding="UTF-8"?>` + "\n"

// WriteFile writes the document to path through a temporary file and a
// rename, so a CI job never reads half a report.
func (b *Builder) WriteFile(path string) error {
	var buf bytes.Buffer
	if err := b.Write(&buf); err != nil {
		return fmt.Errorf("render %s: %w", path, err)
	}
	return rundir.WriteFile(path, buf.Bytes())
}
