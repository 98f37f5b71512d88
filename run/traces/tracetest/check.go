// Package tracetest checks a trace file against the execution-trace spec
// and bench's span tree, for tests: the checker reads the file as the spec
// writes it, apart from the writer in package traces, so it cannot share
// the writer's mistakes.
//
// Layer: test peers (tests only; production code never imports it).
package tracetest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"
)

// Span is one line of a trace file: the spec's Span interface.
type Span struct {
	TraceID string `json:"trace_id"`
	SpanID  string `json:"span_id"`
	// ParentSpanID is absent on the root only.
	ParentSpanID string `json:"parent_span_id,omitempty"`
	// StartTime and EndTime are ISO-8601 UTC with microseconds.
	StartTime string `json:"start_time"`
	EndTime   string `json:"end_time"`
	// DurationMS is EndTime − StartTime in milliseconds, to the microsecond.
	DurationMS float64        `json:"duration_ms"`
	Kind       string         `json:"kind"`
	Name       string         `json:"name"`
	Status     string         `json:"status"`
	Attributes map[string]any `json:"attributes"`
	Events     []Event        `json:"events"`
	// Error is there exactly when Status is error.
	Error *SpanError `json:"error,omitempty"`
}

// Event is a timestamped event within a span (first byte, a retry, ...).
type Event struct {
	Timestamp  string         `json:"timestamp"`
	Name       string         `json:"name"`
	Attributes map[string]any `json:"attributes,omitempty"`
}

// SpanError is why a span failed.
type SpanError struct {
	Type    string `json:"type"`
	Message string `json:"message"`
}

// The spec's span kinds and statuses, written here from the spec rather
// than taken from package traces, so the checker does not share the
// writer's constants.
var kinds = []string{"skill.execute", "skill.input", "skill.output", "tool.call", "tool.result",
	"file.read", "file.write", "http.request", "llm.reason", "assertion.check", "branch", "custom"}

const (
	statusOK      = "ok"
	statusError   = "error"
	statusSkipped = "skipped"
	kindSkillExec = "skill.execute"
	sopLevel      = "L2"
)

// fileName is the spec's {timestamp}_{name}_{trace-id}.jsonl.
var fileName = regexp.MustCompile(`^(\d{4}-\d{2}-\d{2}T\d{6}Z)_(.+)_([0-9a-f]{32})\.jsonl$`)

// parseFileName splits a trace file's name into its stamp, root name and
// trace id.
func parseFileName(path string) (stamp time.Time, root, tid string, ok bool) {
	m := fileName.FindStringSubmatch(filepath.Base(path))
	if m == nil {
		return time.Time{}, "", "", false
	}
	stamp, err := time.Parse("2006-01-02T150405Z", m[1])
	if err != nil {
		return time.Time{}, "", "", false
	}
	return stamp, m[2], m[3], true
}

// requiredFields are the spec's Span fields every line carries
// (parent_span_id and error only where they apply).
var requiredFields = []string{"span_id", "trace_id", "start_time", "end_time", "duration_ms", "kind", "name", "status", "attributes", "events"}

var knownFields = append([]string{"parent_span_id", "error"}, requiredFields...)

// AttrName is a lowercase dotted attribute name, as the spec writes them.
var AttrName = regexp.MustCompile(`^[a-z][a-z0-9_]*(\.[a-z0-9_]+)*$`)

// isoUTC is ISO-8601 UTC with at least millisecond precision.
var isoUTC = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3,9}Z$`)

var hexID = regexp.MustCompile(`^[0-9a-f]+$`)

// CheckFile checks a trace file against every rule of the spec and of
// bench's tree (see Check), and its name against the spec's pattern
// {timestamp}_{name}_{trace-id}.jsonl.
func CheckFile(path string, forbidden ...string) ([]Span, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	spans, err := Check(f, forbidden...)
	var errs []error
	if err != nil {
		errs = append(errs, err)
	}
	stamp, name, tid, ok := parseFileName(path)
	switch {
	case !ok:
		errs = append(errs, fmt.Errorf("%s: name is not {timestamp}_{name}_{trace-id}.jsonl", filepath.Base(path)))
	case len(spans) > 0:
		root := rootOf(spans)
		if tid != spans[0].TraceID {
			errs = append(errs, fmt.Errorf("%s: trace id in the name is not the spans' %s", filepath.Base(path), spans[0].TraceID))
		}
		if root != nil {
			if name != root.Name {
				errs = append(errs, fmt.Errorf("%s: name %q is not the root span's %q", filepath.Base(path), name, root.Name))
			}
			if st, err := time.Parse(time.RFC3339Nano, root.StartTime); err == nil && !st.Truncate(time.Second).Equal(stamp) {
				errs = append(errs, fmt.Errorf("%s: timestamp is not the root's start %s", filepath.Base(path), root.StartTime))
			}
		}
	}
	return spans, errors.Join(errs...)
}

func rootOf(spans []Span) *Span {
	for i := range spans {
		if spans[i].ParentSpanID == "" {
			return &spans[i]
		}
	}
	return nil
}

// Check reads a trace (one span per line) and returns its spans and every
// rule they break, each naming its line: every field of the spec's Span,
// typed and named as it says; times ISO-8601 UTC to the millisecond or
// finer; duration_ms equal to end − start (to the microsecond); kinds and
// statuses among the spec's; error exactly when status is error; one
// trace id; unique span ids; one root (skill.execute, sop.level L2, the
// run id and bench version), every other span's parent present and its
// window inside the parent's; events inside their span; attribute names
// lowercase and dotted; every cell with an assertion.check whose
// assertions add up; and none of the forbidden strings (keys, prompts,
// answers) anywhere in the file.
func Check(r io.Reader, forbidden ...string) ([]Span, error) {
	var errs []error
	bad := func(line int, format string, args ...any) {
		errs = append(errs, fmt.Errorf("line %d: %s", line, fmt.Sprintf(format, args...)))
	}
	var spans []Span
	var lines []int
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	n := 0
	for sc.Scan() {
		n++
		raw := sc.Bytes()
		for _, f := range forbidden {
			if f != "" && bytes.Contains(raw, []byte(f)) {
				bad(n, "holds a forbidden string (a secret, a prompt or an answer) of %d bytes", len(f))
			}
		}
		s, ok := checkLine(n, raw, bad)
		if ok {
			spans = append(spans, s)
			lines = append(lines, n)
		}
	}
	if err := sc.Err(); err != nil {
		errs = append(errs, err)
	}
	if n == 0 {
		errs = append(errs, errors.New("no spans"))
	}
	checkTree(spans, lines, bad)
	return spans, errors.Join(errs...)
}

// checkLine checks one line on its own.
func checkLine(n int, raw []byte, bad func(int, string, ...any)) (Span, bool) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil {
		bad(n, "not a JSON object: %v", err)
		return Span{}, false
	}
	for _, f := range requiredFields {
		if v, ok := fields[f]; !ok || string(v) == "null" {
			bad(n, "%s is missing", f)
		}
	}
	for f := range fields {
		if !slices.Contains(knownFields, f) {
			bad(n, "%s is not a field of the spec's Span", f)
		}
	}
	var s Span
	if err := json.Unmarshal(raw, &s); err != nil {
		bad(n, "a field has the wrong type: %v", err)
		return Span{}, false
	}
	if !hexID.MatchString(s.TraceID) || len(s.TraceID) != 32 || strings.Trim(s.TraceID, "0") == "" {
		bad(n, "trace_id %q is not 32 hex digits", s.TraceID)
	}
	if !hexID.MatchString(s.SpanID) || len(s.SpanID) != 16 || strings.Trim(s.SpanID, "0") == "" {
		bad(n, "span_id %q is not 16 hex digits", s.SpanID)
	}
	if p, ok := fields["parent_span_id"]; ok && string(p) != "null" && (len(s.ParentSpanID) != 16 || !hexID.MatchString(s.ParentSpanID)) {
		bad(n, "parent_span_id %s is not 16 hex digits (absent or null on the root)", p)
	}
	start, ok1 := checkTime(n, "start_time", s.StartTime, bad)
	end, ok2 := checkTime(n, "end_time", s.EndTime, bad)
	if ok1 && ok2 {
		if end.Before(start) {
			bad(n, "end_time is before start_time")
		}
		want := float64(end.Sub(start).Nanoseconds()) / 1e6
		if math.Abs(s.DurationMS-want) > 0.0005 {
			bad(n, "duration_ms %v is not end − start (%v)", s.DurationMS, want)
		}
	}
	if !slices.Contains(kinds, s.Kind) {
		bad(n, "kind %q is not one of the spec's", s.Kind)
	}
	if s.Name == "" {
		bad(n, "name is empty")
	}
	switch s.Status {
	case statusOK, statusSkipped:
		if _, has := fields["error"]; has && string(fields["error"]) != "null" {
			bad(n, "error is set but status is %s", s.Status)
		}
	case statusError:
		if s.Error == nil || s.Error.Type == "" || s.Error.Message == "" {
			bad(n, "status is error but error {type, message} is missing or empty")
		}
	default:
		bad(n, "status %q is not ok, error or skipped", s.Status)
	}
	checkAttrs(n, "", s.Attributes, bad)
	for i, e := range s.Events {
		at, ok := checkTime(n, fmt.Sprintf("events[%d].timestamp", i), e.Timestamp, bad)
		if e.Name == "" {
			bad(n, "events[%d] has no name", i)
		}
		if ok && ok1 && ok2 && (at.Before(start) || at.After(end)) {
			bad(n, "events[%d] (%s) at %s is outside the span", i, e.Name, e.Timestamp)
		}
		checkAttrs(n, fmt.Sprintf("events[%d].", i), e.Attributes, bad)
	}
	return s, true
}

func checkTime(n int, field, v string, bad func(int, string, ...any)) (time.Time, bool) {
	if !isoUTC.MatchString(v) {
		bad(n, "%s %q is not ISO-8601 UTC with milliseconds", field, v)
		return time.Time{}, false
	}
	t, err := time.Parse(time.RFC3339Nano, v)
	if err != nil {
		bad(n, "%s %q: %v", field, v, err)
		return time.Time{}, false
	}
	return t, true
}

func checkAttrs(n int, where string, attrs map[string]any, bad func(int, string, ...any)) {
	for k, v := range attrs {
		if !AttrName.MatchString(k) {
			bad(n, "%sattributes: %q is not a lowercase dotted name", where, k)
		}
		if v == nil {
			bad(n, "%sattributes.%s is null", where, k)
		}
	}
}

// checkTree checks what spans the lines: one trace, unique ids, the root,
// parents and windows, and the assertion span of every cell.
func checkTree(spans []Span, lines []int, bad func(int, string, ...any)) {
	byID := map[string]int{}
	var roots []int
	for i, s := range spans {
		if j, dup := byID[s.SpanID]; dup {
			bad(lines[i], "span_id %s is also line %d's", s.SpanID, lines[j])
		}
		byID[s.SpanID] = i
		if s.TraceID != spans[0].TraceID {
			bad(lines[i], "trace_id %s is not the trace's %s", s.TraceID, spans[0].TraceID)
		}
		if s.ParentSpanID == "" {
			roots = append(roots, i)
		}
	}
	if len(spans) > 0 && len(roots) != 1 {
		bad(0, "%d root spans (without parent_span_id), want exactly 1", len(roots))
	}
	for _, i := range roots {
		r := spans[i]
		if r.Kind != kindSkillExec {
			bad(lines[i], "the root's kind is %s, want %s", r.Kind, kindSkillExec)
		}
		if r.Attributes["sop.level"] != sopLevel {
			bad(lines[i], "the root's sop.level is %v, want %s", r.Attributes["sop.level"], sopLevel)
		}
		for _, k := range []string{"bench.run.id", "bench.version"} {
			if v, _ := r.Attributes[k].(string); v == "" {
				bad(lines[i], "the root has no %s", k)
			}
		}
	}
	asserts := map[string]int{}
	for i, s := range spans {
		if s.Kind == "assertion.check" {
			asserts[s.ParentSpanID]++
			total, t1 := intAttr(s.Attributes, "assertions.total")
			passed, t2 := intAttr(s.Attributes, "assertions.passed")
			failed, t3 := intAttr(s.Attributes, "assertions.failed")
			if !t1 || !t2 || !t3 || total != passed+failed || total < 0 || passed < 0 || failed < 0 {
				bad(lines[i], "assertion.check needs whole assertions.total = passed + failed, got %v %v %v",
					s.Attributes["assertions.total"], s.Attributes["assertions.passed"], s.Attributes["assertions.failed"])
			}
		}
		if s.ParentSpanID == "" {
			continue
		}
		j, ok := byID[s.ParentSpanID]
		if !ok {
			bad(lines[i], "parent_span_id %s names no span of the trace", s.ParentSpanID)
			continue
		}
		p := spans[j]
		if s.StartTime < p.StartTime || s.EndTime > p.EndTime {
			// Same layout and zone, so the strings order as the times do
			// when their precision is the same; compare the times to be sure.
			if before(s.StartTime, p.StartTime) || before(p.EndTime, s.EndTime) {
				bad(lines[i], "window %s–%s is outside its parent's (line %d) %s–%s", s.StartTime, s.EndTime, lines[j], p.StartTime, p.EndTime)
			}
		}
		// Every span reaches the root: no cycles.
		seen := map[string]bool{s.SpanID: true}
		for cur := s; cur.ParentSpanID != ""; {
			k, ok := byID[cur.ParentSpanID]
			if !ok {
				break
			}
			if seen[cur.ParentSpanID] {
				bad(lines[i], "its parents form a cycle")
				break
			}
			seen[cur.ParentSpanID] = true
			cur = spans[k]
		}
	}
	for i, s := range spans {
		if strings.HasPrefix(s.Name, "cell ") && s.Kind == "custom" && asserts[s.SpanID] != 1 {
			bad(lines[i], "cell span has %d assertion.check children, want 1", asserts[s.SpanID])
		}
	}
}

func before(a, b string) bool {
	ta, e1 := time.Parse(time.RFC3339Nano, a)
	tb, e2 := time.Parse(time.RFC3339Nano, b)
	return e1 == nil && e2 == nil && ta.Before(tb)
}

func intAttr(m map[string]any, k string) (int64, bool) {
	f, ok := m[k].(float64)
	if !ok || f != math.Trunc(f) {
		return 0, false
	}
	return int64(f), true
}
