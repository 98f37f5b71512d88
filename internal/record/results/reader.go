package results

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"unsafe"

	"bench/internal/record/rundir"
	"bench/internal/record/secrets"
)

// MaxLineBytes bounds one results.jsonl line. The writer never comes near it
// (raw_output and reasoning are cut at max_output_bytes); a longer line is
// reported as malformed and skipped rather than read into memory.
const MaxLineBytes = 64 << 20

// maxKeptProblems bounds the problems a Reader keeps; ProblemCount counts all.
const maxKeptProblems = 1000

// Problem is a line of results.jsonl that could not be used. Bad input is a
// record with a reason, not the end of the report.
type Problem struct {
	// Line is the 1-based line number in the file.
	Line int `json:"line"`
	// Truncated says the line is the file's last, has no newline and does not
	// parse: the run was killed while writing it.
	Truncated bool `json:"truncated"`
	// Reason says what is wrong with the line.
	Reason string `json:"reason"`
}

// String renders the problem as a warning line.
func (p Problem) String() string {
	if p.Truncated {
		return fmt.Sprintf("line %d: truncated last line skipped (the run was probably killed while writing it): %s", p.Line, p.Reason)
	}
	return fmt.Sprintf("line %d: malformed line skipped: %s", p.Line, p.Reason)
}

// Reader reads results.jsonl back one record at a time, so a report over a
// large file holds one line in memory, not the file. Malformed lines are
// skipped and remembered as Problems.
type Reader struct {
	src      io.Reader
	br       *bufio.Reader
	line     int
	buf      []byte
	problems []Problem
	nProblem int
	// OnProblem, when set, is called for every problem as it is found.
	OnProblem func(Problem)
	// Detail is the fields decoded (Full unless set): Aggregates leaves
	// raw_output, reasoning, parsed_output, tool_call_details and
	// provider_metrics empty, which aggregates do not need; not unquoting
	// and allocating them makes reading a large file faster.
	Detail Detail
	// Scope is what each record is scrubbed with as it is read (see
	// Scrub); ReadFile and Scan give their Reader the run directory's
	// (secrets.OfRun). A line NextRaw returns is then the scrubbed
	// record's, re-encoded, when the scrub changed it.
	Scope secrets.Scope
	fd    *fastDecoder
}

// NewReader reads records from r.
func NewReader(r io.Reader) *Reader {
	return &Reader{src: r, br: bufio.NewReaderSize(r, 1<<20)}
}

// Next decodes the next usable record into rec (which it zeroes first) and
// returns its line number. It returns io.EOF after the last line; any other
// error is an I/O failure of the underlying reader.
func (r *Reader) Next(rec *Record) (int, error) {
	line, _, err := r.NextRaw(rec)
	return line, err
}

// NextRaw is Next that also returns the line as it is in the file, without
// its newline, for a caller that copies lines (bench merge). The bytes are
// valid until the next call.
func (r *Reader) NextRaw(rec *Record) (int, []byte, error) {
	for {
		data, complete, tooLong, err := r.readLine()
		if err != nil && !errors.Is(err, io.EOF) {
			return 0, nil, fmt.Errorf("read results line %d: %w", r.line+1, err)
		}
		if data == nil && !tooLong && errors.Is(err, io.EOF) {
			return 0, nil, io.EOF
		}
		r.line++
		if tooLong {
			r.problem(Problem{Line: r.line, Reason: fmt.Sprintf("line longer than %d bytes", MaxLineBytes)})
			continue
		}
		if len(bytes.TrimSpace(data)) == 0 {
			continue
		}
		if r.fd == nil {
			r.fd = newFastDecoder()
		}
		if perr := decode(data, rec, r.Detail, r.fd, false); perr != nil {
			// Only a last line without its newline can be a half-written one.
			r.problem(Problem{Line: r.line, Truncated: !complete, Reason: perr.Error()})
			continue
		}
		if scrub(data, rec, r.Scope) {
			data = rescrubbed(data, rec.Provider, r.Scope, data)
		}
		return r.line, data, nil
	}
}

// decode parses one line into rec and checks it can be grouped (and, when
// strict, paired across runs: see ScanOptions.Strict). The fast decoder
// takes the lines it is sure of; encoding/json the rest, so the record and
// the error are always encoding/json's.
func decode(data []byte, rec *Record, detail Detail, fd *fastDecoder, strict bool) error {
	*rec = Record{}
	var key keyProbe
	if fd.decode(data, rec, detail) {
		key = keyProbe{Repetition: fd.rep, SchemaVersion: fd.schema}
	} else {
		*rec = Record{}
		if err := json.Unmarshal(data, target(detail, rec)); err != nil {
			if strict {
				return describe(data, err)
			}
			if detail == Reports {
				// encoding/json names the target's type in its message:
				// a read of the aggregates words it, as bench report's
				// summary did before it read the answers in the same pass.
				if aerr := json.Unmarshal(data, target(Aggregates, &Record{})); aerr != nil {
					err = aerr
				}
			}
			return fmt.Errorf("not a result record: %w", err)
		}
		if strict {
			key = probeKey(data)
		}
	}
	switch {
	case rec.RecordType != RecordType:
		return fmt.Errorf("record_type is %q, want %q", rec.RecordType, RecordType)
	case rec.Provider == "":
		return errors.New("provider is empty")
	case rec.Model == "":
		return errors.New("model is empty")
	case rec.AvailabilityStatus == "":
		return errors.New("availability_status is empty")
	}
	for _, f := range []struct {
		name string
		v    *float64
	}{{"tokens_per_s", rec.TokensPerS}, {"reasoning_tokens_per_s", rec.ReasoningTokensPerS}, {"queue_ms", rec.QueueMS}, {"load_ms", rec.LoadMS}} {
		if f.v != nil && !(math.Abs(*f.v) <= MaxValue) {
			return fmt.Errorf("%s is %g, beyond any latency or rate", f.name, *f.v)
		}
	}
	if strict {
		return checkKey(rec, key)
	}
	return nil
}

// scrub scrubs rec, decoded from data, with its provider entry's set of
// sc, when data may hold one of sc's secrets (secrets.Set.MayHold: most
// lines are ruled out by one scan, and never decoded twice); it says
// whether it did.
func scrub(data []byte, rec *Record, sc secrets.Scope) bool {
	if sc.Empty() || !sc.Any().MayHold(unsafe.String(unsafe.SliceData(data), len(data))) {
		return false
	}
	rec.Scrub(sc.For(rec.Provider))
	return true
}

// rescrubbed is the line data, decoded whole, scrubbed and encoded again
// as Writer encodes a record, or keep when the scrub changed nothing.
func rescrubbed(data []byte, provider string, sc secrets.Scope, keep []byte) []byte {
	var whole Record
	if json.Unmarshal(data, &whole) != nil {
		return keep
	}
	before, err1 := marshalLine(&whole)
	whole.Scrub(sc.For(provider))
	after, err2 := marshalLine(&whole)
	if err1 != nil || err2 != nil || bytes.Equal(before, after) {
		return keep
	}
	return after
}

// marshalLine is r as Writer writes it, without the newline.
func marshalLine(r *Record) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(r); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// MaxValue is the largest magnitude a record's rate or duration may have
// (as stats.MaxAbs, which compare holds them to): two of 1e308 would sum
// to +Inf, which no JSON report can hold, and no latency or rate comes
// near it. A line beyond it is skipped as malformed, naming the field.
const MaxValue = 1e300

// readLine returns the next line without its newline. complete says the line
// ended with a newline; tooLong says it passed MaxLineBytes and was discarded.
// At the end of input it returns a nil line with io.EOF.
func (r *Reader) readLine() (line []byte, complete, tooLong bool, err error) {
	r.buf = r.buf[:0]
	for {
		chunk, err := r.br.ReadSlice('\n')
		if err == nil && len(r.buf) == 0 && !tooLong {
			// Fast path: the whole line is in bufio's buffer; no copy.
			return chunk[:len(chunk)-1], true, false, nil
		}
		if !tooLong {
			if len(r.buf)+len(chunk) > MaxLineBytes+1 {
				tooLong, r.buf = true, r.buf[:0]
			} else {
				r.buf = append(r.buf, chunk...)
			}
		}
		switch {
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case err == nil:
			if tooLong {
				return nil, true, true, nil
			}
			return r.buf[:len(r.buf)-1], true, false, nil
		case errors.Is(err, io.EOF):
			if tooLong {
				return nil, false, true, io.EOF
			}
			if len(r.buf) == 0 {
				return nil, false, false, io.EOF
			}
			return r.buf, false, false, nil
		default:
			return nil, false, false, err
		}
	}
}

func (r *Reader) problem(p Problem) {
	r.nProblem++
	if len(r.problems) < maxKeptProblems {
		r.problems = append(r.problems, p)
	}
	if r.OnProblem != nil {
		r.OnProblem(p)
	}
}

// Problems returns the skipped lines found so far (the first 1000).
func (r *Reader) Problems() []Problem { return r.problems }

// ProblemCount returns how many lines were skipped so far.
func (r *Reader) ProblemCount() int { return r.nProblem }

// ReadFile calls fn with every usable record of the results file at path,
// reusing one Record, and returns the skipped lines. Only I/O failure, or an
// error from fn, aborts. With skipBulk the bulky fields are left empty
// (Aggregates); otherwise every field is decoded.
func ReadFile(path string, skipBulk bool, fn func(line int, rec *Record) error) (problems []Problem, nProblems int, err error) {
	o := ScanOptions{}
	if skipBulk {
		o.Detail = Aggregates
	}
	return ScanFile(path, o, fn)
}

// ScanFile is ReadFile reading what o says (see ScanOptions). Records are
// scrubbed with o.Scope, or with the run directory's (secrets.OfRun) when
// it is empty.
func ScanFile(path string, o ScanOptions, fn func(line int, rec *Record) error) (problems []Problem, nProblems int, err error) {
	f, err := rundir.Open(path, 0)
	if err != nil {
		return nil, 0, fmt.Errorf("open results: %w", err)
	}
	defer f.Close()
	rd := NewReader(f)
	if o.Scope.Empty() {
		o.Scope = secrets.OfRun(filepath.Dir(path))
	}
	if err := rd.Scan(o, fn); err != nil {
		return rd.Problems(), rd.ProblemCount(), fmt.Errorf("%s: %w", path, err)
	}
	return rd.Problems(), rd.ProblemCount(), nil
}
