package traces

import (
	"bufio"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"time"
	"unicode/utf8"

	"bench/internal/record/rundir"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
)

// TimeLayout is how span times are written: UTC, microseconds.
const TimeLayout = "2006-01-02T15:04:05.000000Z"

// fileStampLayout is the {timestamp} of a trace file's name.
const fileStampLayout = "2006-01-02T150405Z"

// FileName is the spec's {timestamp}_{name}_{trace-id}.jsonl for a trace
// whose root starts at start.
func FileName(start time.Time, tid trace.TraceID) string {
	return start.UTC().Format(fileStampLayout) + "_" + RootName + "_" + tid.String() + ".jsonl"
}

var fileNameRE = regexp.MustCompile(`^(\d{4}-\d{2}-\d{2}T\d{6}Z)_(.+)_([0-9a-f]{32})\.jsonl$`)

// ParseFileName splits a trace file's name into its parts.
func ParseFileName(name string) (stamp time.Time, root string, tid trace.TraceID, ok bool) {
	m := fileNameRE.FindStringSubmatch(filepath.Base(name))
	if m == nil {
		return time.Time{}, "", tid, false
	}
	stamp, err := time.Parse(fileStampLayout, m[1])
	if err != nil {
		return time.Time{}, "", tid, false
	}
	tid, err = trace.TraceIDFromHex(m[3])
	if err != nil {
		return time.Time{}, "", tid, false
	}
	return stamp, m[2], tid, true
}

// previousTrace finds the latest trace of a run directory: the one a
// resumed run's root links to.
func previousTrace(runDir string) (trace.TraceID, bool) {
	paths, _ := filepath.Glob(filepath.Join(runDir, rundir.TracesDir, rundir.TraceFiles))
	type found struct {
		stamp time.Time
		name  string
		tid   trace.TraceID
	}
	var all []found
	for _, p := range paths {
		if st, root, tid, ok := ParseFileName(p); ok && root == RootName {
			all = append(all, found{st, filepath.Base(p), tid})
		}
	}
	if len(all) == 0 {
		return trace.TraceID{}, false
	}
	sort.Slice(all, func(i, j int) bool {
		if !all[i].stamp.Equal(all[j].stamp) {
			return all[i].stamp.Before(all[j].stamp)
		}
		return all[i].name < all[j].name
	})
	return all[len(all)-1].tid, true
}

// ndjsonFile writes a trace's spans as they come, one line each. Lines are
// buffered and flushed at least every flushEvery, so a killed run loses at
// most that much of its trace (results.jsonl is written line by line).
type ndjsonFile struct {
	f     *os.File
	w     *bufio.Writer
	buf   []byte
	last  time.Time
	now   func() time.Time
	path  string
	tid   string
	err   error
	lines int
}

const flushEvery = time.Second

func createNDJSON(runDir string, start time.Time, tid trace.TraceID, now func() time.Time) (*ndjsonFile, error) {
	dir := rundir.Path(runDir, rundir.TracesDir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("traces: %w", err)
	}
	path := filepath.Join(dir, FileName(start, tid))
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if err != nil {
		return nil, fmt.Errorf("traces: %w", err)
	}
	return &ndjsonFile{f: f, w: bufio.NewWriterSize(f, 64<<10), path: path, tid: tid.String(), now: now, last: now()}, nil
}

// write appends the spans. After a failure it writes nothing more and
// keeps returning the first error.
func (n *ndjsonFile) write(spans []span) error {
	if n.err != nil {
		return n.err
	}
	for i := range spans {
		n.buf = appendSpan(n.buf[:0], n.tid, &spans[i])
		if _, err := n.w.Write(n.buf); err != nil {
			n.err = fmt.Errorf("traces: write %s: %w", n.path, err)
			return n.err
		}
		n.lines++
	}
	if now := n.now(); now.Sub(n.last) >= flushEvery {
		n.last = now
		if err := n.w.Flush(); err != nil {
			n.err = fmt.Errorf("traces: write %s: %w", n.path, err)
		}
	}
	return n.err
}

func (n *ndjsonFile) close() error {
	err := n.err
	if ferr := n.w.Flush(); ferr != nil && err == nil {
		err = fmt.Errorf("traces: write %s: %w", n.path, ferr)
	}
	if serr := n.f.Sync(); serr != nil && err == nil {
		err = fmt.Errorf("traces: sync %s: %w", n.path, serr)
	}
	if cerr := n.f.Close(); cerr != nil && err == nil {
		err = fmt.Errorf("traces: close %s: %w", n.path, cerr)
	}
	return err
}

// appendSpan encodes one span line by hand: the attributes keep the order
// they were built in and no map is made per span (see BenchmarkAddRecord).
func appendSpan(b []byte, tid string, s *span) []byte {
	b = append(b, `{"trace_id":"`...)
	b = append(b, tid...)
	b = append(b, `","span_id":"`...)
	b = appendID(b, s.id[:])
	b = append(b, '"')
	if s.parent.IsValid() {
		b = append(b, `,"parent_span_id":"`...)
		b = appendID(b, s.parent[:])
		b = append(b, '"')
	}
	b = append(b, `,"start_time":"`...)
	b = appendTime(b, s.start)
	b = append(b, `","end_time":"`...)
	b = appendTime(b, s.end)
	b = append(b, `","duration_ms":`...)
	b = strconv.AppendFloat(b, durationMS(s.start, s.end), 'f', -1, 64)
	b = append(b, `,"kind":`...)
	b = appendString(b, s.kind)
	b = append(b, `,"name":`...)
	b = appendString(b, s.name)
	b = append(b, `,"status":`...)
	b = appendString(b, s.status)
	b = append(b, `,"attributes":`...)
	b = appendAttrs(b, s.attrs)
	b = append(b, `,"events":[`...)
	for i, e := range s.events {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"timestamp":"`...)
		b = appendTime(b, e.at)
		b = append(b, `","name":`...)
		b = appendString(b, e.name)
		if len(e.attrs) > 0 {
			b = append(b, `,"attributes":`...)
			b = appendAttrs(b, e.attrs)
		}
		b = append(b, '}')
	}
	b = append(b, ']')
	if s.status == StatusError {
		b = append(b, `,"error":{"type":`...)
		b = appendString(b, s.errType)
		b = append(b, `,"message":`...)
		b = appendString(b, s.errMsg)
		b = append(b, '}')
	}
	return append(b, "}\n"...)
}

// appendTime writes t as TimeLayout does (UTC, microseconds), by hand:
// time.AppendFormat was a tenth of a cell's tracing cost.
func appendTime(b []byte, t time.Time) []byte {
	t = t.UTC()
	y, mo, d := t.Date()
	h, mi, sec := t.Clock()
	us := t.Nanosecond() / 1000
	b = appendDigits(b, y, 4)
	b = append(b, '-')
	b = appendDigits(b, int(mo), 2)
	b = append(b, '-')
	b = appendDigits(b, d, 2)
	b = append(b, 'T')
	b = appendDigits(b, h, 2)
	b = append(b, ':')
	b = appendDigits(b, mi, 2)
	b = append(b, ':')
	b = appendDigits(b, sec, 2)
	b = append(b, '.')
	b = appendDigits(b, us, 6)
	return append(b, 'Z')
}

// appendDigits writes n zero-padded to width digits.
func appendDigits(b []byte, n, width int) []byte {
	var buf [9]byte
	for i := width - 1; i >= 0; i-- {
		buf[i] = byte('0' + n%10)
		n /= 10
	}
	return append(b, buf[:width]...)
}

// durationMS is end − start in milliseconds, exact to the microsecond
// (both stamps are whole microseconds).
func durationMS(start, end time.Time) float64 {
	return float64(end.Sub(start).Microseconds()) / 1000
}

const hexDigits = "0123456789abcdef"

func appendID(b, id []byte) []byte {
	for _, c := range id {
		b = append(b, hexDigits[c>>4], hexDigits[c&15])
	}
	return b
}

func appendAttrs(b []byte, attrs []attribute.KeyValue) []byte {
	b = append(b, '{')
	for i, kv := range attrs {
		if i > 0 {
			b = append(b, ',')
		}
		// Keys are bench's own constants, lowercase dotted (a test checks
		// every one): nothing to escape.
		b = append(b, '"')
		b = append(b, kv.Key...)
		b = append(b, '"', ':')
		b = appendValue(b, kv.Value)
	}
	return append(b, '}')
}

func appendValue(b []byte, v attribute.Value) []byte {
	switch v.Type() {
	case attribute.BOOL:
		return strconv.AppendBool(b, v.AsBool())
	case attribute.INT64:
		return strconv.AppendInt(b, v.AsInt64(), 10)
	case attribute.FLOAT64:
		return appendFloat(b, v.AsFloat64())
	case attribute.STRING:
		return appendString(b, v.AsString())
	case attribute.BOOLSLICE:
		return appendSlice(b, v.AsBoolSlice(), strconv.AppendBool)
	case attribute.INT64SLICE:
		return appendSlice(b, v.AsInt64Slice(), func(b []byte, i int64) []byte { return strconv.AppendInt(b, i, 10) })
	case attribute.FLOAT64SLICE:
		return appendSlice(b, v.AsFloat64Slice(), appendFloat)
	case attribute.STRINGSLICE:
		return appendSlice(b, v.AsStringSlice(), appendString)
	}
	return append(b, "null"...)
}

func appendSlice[T any](b []byte, vs []T, f func([]byte, T) []byte) []byte {
	b = append(b, '[')
	for i, v := range vs {
		if i > 0 {
			b = append(b, ',')
		}
		b = f(b, v)
	}
	return append(b, ']')
}

// appendFloat writes a number; JSON has no NaN or infinity, so those are null.
func appendFloat(b []byte, f float64) []byte {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return append(b, "null"...)
	}
	return strconv.AppendFloat(b, f, 'g', -1, 64)
}

// safeASCII marks the bytes a JSON string holds as they are.
var safeASCII = func() (t [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// appendString writes s as a JSON string, invalid UTF-8 as U+FFFD (as
// encoding/json does).
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	plain := 0
	for plain < len(s) && safeASCII[s[plain]] {
		plain++
	}
	b = append(b, s[:plain]...)
	for i := plain; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				b = append(b, '\\', c)
			case c < 0x20:
				switch c {
				case '\n':
					b = append(b, '\\', 'n')
				case '\r':
					b = append(b, '\\', 'r')
				case '\t':
					b = append(b, '\\', 't')
				default:
					b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&15])
				}
			default:
				b = append(b, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, `\ufffd`...)
		} else {
			b = append(b, s[i:i+size]...)
		}
		i += size
	}
	return append(b, '"')
}
