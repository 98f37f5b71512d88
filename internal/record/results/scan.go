package results

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"runtime"
	"strings"
	"sync"

	"bench/internal/record/rundir"
	"bench/internal/record/secrets"
)

// ScanOptions say what a scan decodes of each line and what an unusable
// line does.
type ScanOptions struct {
	// Detail is the fields decoded (Full unless set).
	Detail Detail
	// Lines, when not nil, picks the lines to decode by number; the others
	// are read past unparsed (a second pass over chosen cells). It is
	// called in line order on the scan's reading goroutine, not fn's.
	Lines func(line int) bool
	// Strict is the reading of a gate, which must not judge a file it
	// could not read whole: the first unusable line ends the scan with a
	// *LineError whose problem is worded for a person (the column of a
	// syntax error, the field of a wrong type), and a line must also carry
	// the whole cell key (provider_type, prompt_id and repetition besides
	// what every reading needs) and declare no schema_version but
	// SchemaVersion. Otherwise an unusable line is a Problem and the scan
	// goes on.
	Strict bool
	// Borrow says fn may see the bulky texts (raw_output, reasoning, a
	// turn's text, reasoning and calls' results, calls' arguments) not as
	// copies but in the scan's own buffers: valid only until fn returns.
	// A reader that keeps none of them (bench report, which cuts and
	// copies what answers.html shows) is spared copying most of each line.
	Borrow bool
	// Scope is what each record is scrubbed with as it is decoded (see
	// Record.Scrub); Scan takes the run directory's (secrets.OfRun) when
	// it is empty, a Reader's Scan the Reader's.
	Scope secrets.Scope
}

// SchemaVersion is the results schema this bench writes and reads: the
// fields of Record with record_type "result" and the full cell key. Lines
// do not carry a version today; a strict scan refuses one that declares
// another, and one without provider_type or prompt_id (written by a bench
// from before the full cell key), since its cells could not be paired.
const SchemaVersion = 1

// schemaVersionKey is where a line would declare its schema.
const schemaVersionKey = "schema_version"

// LineError is the line a strict scan stopped at, and why.
type LineError struct {
	Line int
	Err  error
}

// Error says the line and what is wrong with it.
func (e *LineError) Error() string { return fmt.Sprintf("line %d: %v", e.Line, e.Err) }

// Unwrap gives the line's problem.
func (e *LineError) Unwrap() error { return e.Err }

// Scan calls fn, in file order, with every usable record of the results
// file at path that o picks, reusing Records; see ScanOptions. It returns
// the skipped lines (none when strict). Only I/O failure, an error from
// fn, or (strict) an unusable line aborts.
func Scan(path string, o ScanOptions, fn func(line int, rec *Record) error) (problems []Problem, nProblems int, err error) {
	f, err := rundir.Open(path, 0)
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	rd := NewReader(f)
	if o.Scope.Empty() {
		o.Scope = secrets.OfRun(filepath.Dir(path))
	}
	err = rd.Scan(o, fn)
	return rd.Problems(), rd.ProblemCount(), err
}

// Scan is the package's Scan over the rest of r's input; o.Detail, not
// r.Detail, says what is decoded. Lines are read on one goroutine and
// decoded on the others (JSON decoding is most of the cost of reading a
// large file), and fn sees them in file order.
func (r *Reader) Scan(o ScanOptions, fn func(line int, rec *Record) error) error {
	if o.Scope.Empty() {
		o.Scope = r.Scope
	}
	return r.scan(runtime.GOMAXPROCS(0), o, fn)
}

// A batch is a run of consecutive lines, read straight into its buffer,
// decoded by one worker and handed to fn in file order. Batches are reused
// once fn has seen them, so reading allocates per batch, not per line.
type batch struct {
	buf   []byte
	lines []rawLine
	recs  []Record
	errs  []error // per line: the decode problem, or nil for a record
	// arena holds the texts a borrowing decode unquoted, pools what its
	// records point to (Borrow).
	arena []byte
	pools pools
	done  chan struct{}
}

type rawLine struct {
	n                 int
	start, end        int // in buf
	complete, tooLong bool
}

const (
	// batchBytes is about how much of the file a batch holds.
	batchBytes = 256 << 10
	// minRead is the least room a read gets: a batch's buffer grows (a
	// line longer than the batch) rather than read less.
	minRead = 64 << 10
)

func (r *Reader) scan(workers int, o ScanOptions, fn func(line int, rec *Record) error) error {
	workers = max(1, workers)
	todo := make(chan *batch, 2*workers)
	ordered := make(chan *batch, 4*workers)
	// free holds batches fn is done with; the reader takes one before
	// making a new one, which bounds the batches in flight.
	free := make(chan *batch, 8*workers)
	stop := make(chan struct{})
	var readErr error
	go func() { // reader: one goroutine owns the input
		defer close(ordered)
		defer close(todo)
		lr := lineReader{r: r, pick: o.Lines}
		for !lr.eof {
			var b *batch
			select {
			case b = <-free:
				b.lines = b.lines[:0]
			default:
				b = &batch{buf: make([]byte, 0, batchBytes+batchBytes/2)}
			}
			b.done = make(chan struct{})
			lr.fill(b)
			if len(b.lines) == 0 {
				continue
			}
			select {
			case ordered <- b:
			case <-stop:
				return
			}
			todo <- b
		}
		readErr = lr.err
	}()
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			fd := newFastDecoder()
			fd.borrow = o.Borrow
			for b := range todo {
				if cap(b.recs) < len(b.lines) {
					b.recs = make([]Record, len(b.lines))
					b.errs = make([]error, len(b.lines))
				}
				b.recs, b.errs = b.recs[:len(b.lines)], b.errs[:len(b.lines)]
				if o.Borrow {
					fd.arena = b.arena[:0]
					b.pools.reset()
					fd.lent = &b.pools
				}
				for j, l := range b.lines {
					b.errs[j] = decodeLine(b.buf[l.start:l.end], l, &b.recs[j], fd, o)
				}
				b.arena, fd.arena, fd.lent = fd.arena, nil, nil
				close(b.done)
			}
		})
	}
	var fnErr error
	for b := range ordered {
		<-b.done
		for j, l := range b.lines {
			switch err := b.errs[j]; {
			case err == nil:
				fnErr = fn(l.n, &b.recs[j])
			case o.Strict:
				fnErr = &LineError{Line: l.n, Err: err}
			default:
				r.problem(Problem{Line: l.n, Truncated: !l.complete && !l.tooLong, Reason: err.Error()})
			}
			if fnErr != nil {
				break
			}
		}
		if fnErr != nil {
			break
		}
		if cap(b.buf) <= 4*batchBytes && cap(b.arena) <= 4*batchBytes { // not a batch a huge line grew
			select {
			case free <- b:
			default:
			}
		}
	}
	if fnErr != nil {
		close(stop)
		for b := range ordered { // let the reader and the workers end
			<-b.done
		}
	}
	wg.Wait()
	if fnErr != nil {
		return fnErr
	}
	return readErr
}

// lineReader reads a Scan's input into batches, a batch's lines ending
// where its bytes do (the start of a line the batch cannot end is carried
// to the next): no line is copied out of bufio first. The lines and their
// numbers are what readLine gives Next, a line longer than MaxLineBytes
// included (counted, its bytes dropped).
type lineReader struct {
	r     *Reader
	pick  func(line int) bool
	carry []byte // the unfinished line the last batch read the start of
	// skipping says the unfinished line is past MaxLineBytes: its bytes
	// are dropped up to its newline.
	skipping bool
	eof      bool
	err      error
}

// fill reads into b until it holds about batchBytes of lines or the input
// ends (or fails: err, and eof).
func (lr *lineReader) fill(b *batch) {
	b.buf = append(b.buf[:0], lr.carry...)
	lr.carry = lr.carry[:0]
	start, scanned := 0, 0 // b.buf[start:] is the unfinished line, searched up to scanned
	for {
		for {
			nl := bytes.IndexByte(b.buf[scanned:], '\n')
			if nl < 0 {
				break
			}
			end := scanned + nl
			lr.line(b, start, end, true, lr.skipping)
			lr.skipping = false
			start, scanned = end+1, end+1
		}
		scanned = len(b.buf)
		if lr.skipping || len(b.buf)-start > MaxLineBytes+1 {
			lr.skipping = true
			b.buf, scanned = b.buf[:start], start
		}
		if start >= batchBytes || lr.eof {
			break
		}
		if cap(b.buf)-len(b.buf) < minRead {
			grown := make([]byte, len(b.buf), 2*cap(b.buf)+minRead)
			copy(grown, b.buf)
			b.buf = grown
		}
		n, err := lr.read(b.buf[len(b.buf):cap(b.buf)])
		b.buf = b.buf[:len(b.buf)+n]
		switch {
		case errors.Is(err, io.EOF):
			lr.eof = true
		case err != nil:
			// The lines read whole are used; the one cut short is not.
			lr.err = fmt.Errorf("read results line %d: %w", lr.r.line+1, err)
			lr.eof, lr.skipping = true, false
			b.buf = b.buf[:start]
			return
		}
	}
	if lr.eof {
		if len(b.buf) > start || lr.skipping {
			lr.line(b, start, len(b.buf), false, lr.skipping)
		}
		return
	}
	lr.carry = append(lr.carry, b.buf[start:]...)
	b.buf = b.buf[:start]
}

// line numbers the line b.buf[start:end] (complete: it ended with a
// newline) and adds it to b unless it is blank or not picked.
func (lr *lineReader) line(b *batch, start, end int, complete, tooLong bool) {
	lr.r.line++
	n := lr.r.line
	data := b.buf[start:end]
	// With its newline a line may hold MaxLineBytes, without (the last)
	// one more: what readLine allows.
	tooLong = tooLong || (complete && len(data) > MaxLineBytes)
	if (!tooLong && len(bytes.TrimSpace(data)) == 0) || (lr.pick != nil && !lr.pick(n)) {
		return
	}
	if tooLong {
		end = start
	}
	b.lines = append(b.lines, rawLine{n: n, start: start, end: end, complete: complete, tooLong: tooLong})
}

// read reads what the Reader's bufio holds (from a Next before the Scan)
// and then its source itself.
func (lr *lineReader) read(p []byte) (int, error) {
	if n := lr.r.br.Buffered(); n > 0 {
		return lr.r.br.Read(p[:min(len(p), n)])
	}
	return lr.r.src.Read(p)
}

// decodeLine decodes one line as Next does (strictly when o says so); it
// touches no Reader state, so workers may call it concurrently, each with
// its own fd.
func decodeLine(data []byte, l rawLine, rec *Record, fd *fastDecoder, o ScanOptions) error {
	if l.tooLong {
		return fmt.Errorf("line longer than %d bytes", MaxLineBytes)
	}
	err := decode(data, rec, o.Detail, fd, o.Strict)
	if err == nil {
		scrub(data, rec, o.Scope)
	}
	if err != nil && o.Strict && !l.complete {
		err = fmt.Errorf("the last line is cut short, with no newline (was the run killed while writing it?): %w", err)
	}
	return err
}

// keyProbe is what a strict read checks that Record cannot hold: whether
// the line had a repetition (0 is one), and its schema_version's text.
type keyProbe struct {
	Repetition    bool
	SchemaVersion json.RawMessage
}

// probeKey reads the keyProbe of a line encoding/json decoded.
func probeKey(data []byte) keyProbe {
	var p struct {
		Repetition    *int            `json:"repetition"`
		SchemaVersion json.RawMessage `json:"schema_version"`
	}
	json.Unmarshal(data, &p) // it decoded into a Record: it decodes into this
	return keyProbe{Repetition: p.Repetition != nil, SchemaVersion: p.SchemaVersion}
}

// checkKey is a strict read's check of a decoded line.
func checkKey(rec *Record, key keyProbe) error {
	if v := bytes.TrimSpace(key.SchemaVersion); len(v) > 0 && string(v) != "null" && string(v) != fmt.Sprint(SchemaVersion) {
		return fmt.Errorf("schema_version is %s; this bench reads results schema %d only", v, SchemaVersion)
	}
	for _, f := range []struct {
		name    string
		present bool
	}{{"provider_type", rec.ProviderType != ""}, {"prompt_id", rec.PromptID != ""}} {
		if !f.present {
			return fmt.Errorf("no %s: written by a bench older than results schema %d, whose cells cannot be paired on the full key", f.name, SchemaVersion)
		}
	}
	if !key.Repetition {
		return errors.New("repetition is missing")
	}
	return nil
}

// describe words a line encoding/json could not decode for a person: a
// syntax error's column, a field of the wrong type.
func describe(data []byte, err error) error {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		if se.Offset >= int64(len(bytes.TrimRight(data, " \t\r"))) {
			return errors.New("not a results record: the JSON ends too early")
		}
		return fmt.Errorf("not a results record: column %d: %v", se.Offset, se)
	case errors.As(err, &te) && te.Field != "":
		// A Detail's target embeds the Record: its name is no JSON's.
		field := strings.TrimPrefix(te.Field, "Record.")
		return fmt.Errorf("field %s: a JSON %s, want %s", field, te.Value, jsonType(te.Type.Kind().String()))
	}
	return fmt.Errorf("not a results record: %v", err)
}

// jsonType names a Go kind as the JSON a field of it takes.
func jsonType(kind string) string {
	switch kind {
	case "string":
		return "a string"
	case "bool":
		return "true or false"
	case "slice", "array":
		return "an array"
	case "struct", "map":
		return "an object"
	case "ptr":
		return "a value or null"
	case "int", "int8", "int16", "int32", "int64", "uint", "uint8", "uint16", "uint32", "uint64":
		return "an integer"
	}
	return "a number"
}
