package answers

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"unsafe"

	"bench/internal/record/results"
	"bench/internal/record/rundir"
	"bench/internal/tape"
	"bench/report"
)

// Collector takes the records of a run as the summary's pass reads them
// (report.Load), so answers.html needs no read of results.jsonl of its
// own (issue 31: the second read of a 7 GB file was two thirds of bench
// report's time). The page cannot be made then: its groups' order and
// its cap (TextCap of the cells' count) are known only once the whole
// file is read. So each record's entry goes on a tape (internal/tape: a
// few MB in memory, then an unlinked temporary file), its texts cut at
// the cap of the cells seen so far, which is never smaller than the
// page's; Start then replays the tape into the page. The heap holds no
// cell: a million of them were 140 MB as Cells.
type Collector struct {
	tape tape.Tape
	refs []tape.Ref // the tape's chunks, in order
	buf  []byte     // the chunk being filled
	prev entry      // the last entry, whose keys the next mostly repeats
	n    int        // entries put
	// cap, when not 0, is the page's cap, known before the records come
	// (a Pass that reads them itself): every entry is cut at it.
	cap int
}

// chunkBytes is about how much of the tape one Put holds.
const chunkBytes = 64 << 10

// NewCollector returns an empty Collector; Close it when done.
func NewCollector() *Collector { return &Collector{} }

// Add takes the record at line of results.jsonl: each cell once, in file
// order (the records a summary counts). It keeps no reference to r.
func (c *Collector) Add(line int, r *results.Record) {
	c.n++
	textCap := c.cap
	if textCap == 0 {
		textCap = TextCap(c.n)
	}
	e := entryOf(line, r, textCap)
	c.buf = c.encode(c.buf, &e)
	// Only the keys: the texts may be borrowed (results.ScanOptions.Borrow).
	c.prev = entry{provider: e.provider, model: e.model, thinking: e.thinking, promptID: e.promptID}
	if len(c.buf) >= chunkBytes {
		c.flush()
	}
}

func (c *Collector) flush() {
	if len(c.buf) > 0 {
		c.refs = append(c.refs, c.tape.Put(c.buf))
		c.buf = c.buf[:0]
	}
}

// Close drops the tape.
func (c *Collector) Close() error {
	c.refs, c.buf = nil, nil
	return c.tape.Close()
}

// Pass is answers.html's pass over a run, started (Start) and not yet
// finished.
type Pass struct {
	dir string
	b   *Builder
	// c holds the run's entries; nil when Finish reads results.jsonl.
	c *Collector
	s *report.Summary
}

// Start begins answers.html's page of the run s summarises, from the
// records c collected (each counted record of the summary's pass, in file
// order): what the page needs of the summary's groups (their labels, keys
// and ranking order) is taken now, so the caller may let them go
// (report.Summary.DropGroups) before Finish writes the page. When c's
// texts were cut shorter than the page's cap (a resumed run's duplicate
// lines make the page's count smaller than the records read), Finish
// reads the answers from results.jsonl again instead.
func (c *Collector) Start(dir string, s *report.Summary) *Pass {
	p := Start(dir, s)
	if c.cap == 0 && TextCap(c.n) >= p.b.cap {
		p.c = c
	}
	return p
}

// Start begins answers.html's pass over the run s summarises, whose Finish
// reads the answers from results.jsonl (a summary of a run directory: its
// counted lines; any other: every line, a later record of a cell
// replacing the earlier). See Collector.Start.
func Start(dir string, s *report.Summary) *Pass {
	n := s.NRecords - s.NDuplicateLines
	p := &Pass{dir: dir, s: s, b: NewBuilder(s, n)}
	p.b.Questions(dir)
	if s.FromRunDir() {
		p.b.cells = nil
	}
	return p
}

// Finish writes dir/answers.html.
func (p *Pass) Finish() error {
	if err := p.finish(); err != nil {
		return fmt.Errorf("%s %s: %w", rundir.AnswersHTML, p.dir, err)
	}
	return nil
}

func (p *Pass) finish() error {
	path := rundir.Path(p.dir, rundir.AnswersHTML)
	if p.c == nil && !p.s.FromRunDir() {
		if _, _, err := results.ReadFile(rundir.Path(p.dir, rundir.ResultsFile), false, func(line int, r *results.Record) error {
			p.b.Add(line, r)
			return nil
		}); err != nil {
			return err
		}
		return WriteFile(path, p.b.Page())
	}
	c := p.c
	if c == nil {
		c = &Collector{cap: p.b.cap}
		defer c.Close()
		if err := p.s.EachCountedLine(false, c.Add); err != nil {
			return err
		}
	}
	c.flush()
	// The replay interns the texts (in the order the page takes them, the
	// budget spent as it always was) and puts each cell's JSON on a tape
	// of its own (the page's strings come before its cells), which the
	// page then copies.
	var out tape.Tape
	defer out.Close()
	var refs []tape.Ref
	var buf []byte
	var jerr error
	n := 0
	p.b.sink = func(cl Cell) {
		if n > 0 {
			buf = append(buf, ',')
		}
		n++
		var err error
		if buf, err = cl.appendJSON(buf); err != nil && jerr == nil {
			jerr = fmt.Errorf("render %s: %w", rundir.AnswersHTML, err)
		}
		if len(buf) >= chunkBytes {
			refs, buf = append(refs, out.Put(buf)), buf[:0]
		}
	}
	if err := c.replay(p.b.add); err != nil {
		return err
	}
	if jerr != nil {
		return jerr
	}
	refs = append(refs, out.Put(buf))
	p.b.frozen = true
	return writeFile(path, p.b.page, cells{n: n,
		json: func(w io.Writer) error {
			for _, ref := range refs {
				chunk, err := out.Get(ref)
				if err != nil {
					return err
				}
				if _, err := w.Write(chunk); err != nil {
					return err
				}
			}
			return nil
		},
		// The page the plain way (its texts hold writeStreamed's
		// marker): the cells again from the entries, every text found
		// or dropped as it was the first time.
		each: func(yield func(Cell) error) error {
			var yerr error
			p.b.sink = func(cl Cell) {
				if yerr == nil {
					yerr = yield(cl)
				}
			}
			if err := c.replay(p.b.add); err != nil {
				return err
			}
			return yerr
		}})
}

// The tape's entries: a byte of flags, then the fields as uvarints,
// varints and length-prefixed strings, the group and prompt left out when
// they are the previous entry's.
const (
	sameGroup = 1 << iota
	samePrompt
	hasThinking
	hasTTFT
	hasOut
	hasCost
	hasTurns
	redacted
)

func (c *Collector) encode(b []byte, e *entry) []byte {
	flags := byte(0)
	if c.n > 1 && e.provider == c.prev.provider && e.model == c.prev.model && (e.thinking == nil) == (c.prev.thinking == nil) &&
		(e.thinking == nil || *e.thinking == *c.prev.thinking) {
		flags |= sameGroup
	}
	if c.n > 1 && e.promptID == c.prev.promptID {
		flags |= samePrompt
	}
	for _, f := range []struct {
		on  bool
		bit byte
	}{{e.thinking != nil, hasThinking}, {e.ttft != nil, hasTTFT}, {e.out != nil, hasOut}, {e.cost != nil, hasCost}, {e.moreTurns >= 0 || len(e.turns) > 0, hasTurns}, {e.redacted, redacted}} {
		if f.on {
			flags |= f.bit
		}
	}
	b = append(b, flags)
	if flags&sameGroup == 0 {
		b = putString(b, e.provider)
		b = putString(b, e.model)
		if e.thinking != nil {
			b = putString(b, *e.thinking)
		}
	}
	if flags&samePrompt == 0 {
		b = putString(b, e.promptID)
	}
	b = binary.AppendUvarint(b, uint64(e.line))
	b = binary.AppendVarint(b, int64(e.rep))
	b = binary.AppendVarint(b, int64(e.verdict))
	for _, s := range []string{e.status, e.text, e.reasoning, e.violation, e.err} {
		b = putString(b, s)
	}
	b = binary.AppendVarint(b, int64(e.textBytes))
	b = binary.AppendVarint(b, int64(e.keptBytes))
	b = binary.AppendVarint(b, e.e2e)
	if e.ttft != nil {
		b = binary.AppendVarint(b, *e.ttft)
	}
	if e.out != nil {
		b = binary.AppendVarint(b, int64(*e.out))
	}
	if e.cost != nil {
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(*e.cost))
	}
	b = binary.AppendUvarint(b, uint64(len(e.calls)))
	for _, cl := range e.calls {
		b = putString(putString(b, cl.name), cl.args)
		b = binary.AppendUvarint(b, uint64(cl.flags))
	}
	if flags&hasTurns != 0 {
		b = binary.AppendVarint(b, int64(e.moreTurns))
		b = binary.AppendUvarint(b, uint64(len(e.turns)))
		for _, t := range e.turns {
			b = putString(putString(b, t.text), t.err)
			b = binary.AppendUvarint(b, uint64(t.moreCalls))
			b = binary.AppendUvarint(b, uint64(len(t.calls)))
			for _, cl := range t.calls {
				b = putString(putString(putString(b, cl.name), cl.args), cl.result)
				b = binary.AppendUvarint(b, uint64(cl.flags))
			}
		}
	}
	return b
}

func putString(b []byte, s string) []byte {
	return append(binary.AppendUvarint(b, uint64(len(s))), s...)
}

// replay hands add each entry of the tape, in order, with an empty key
// (a Pass's Builder keeps no index of cells).
func (c *Collector) replay(add func(*entry, results.Key)) error {
	var e entry
	for _, ref := range c.refs {
		chunk, err := c.tape.Get(ref)
		if err != nil {
			return err
		}
		d := entryReader{b: chunk}
		for len(d.b) > 0 {
			d.entry(&e)
			if d.err != nil {
				return d.err
			}
			add(&e, results.Key{})
		}
	}
	return nil
}

var errCorrupt = errors.New("answers: corrupt entry on the tape")

// entryReader decodes the entries encode wrote; a short or bad one sets
// err.
type entryReader struct {
	b   []byte
	err error
}

// entry decodes the next entry into e, which holds the previous one (its
// group and prompt, when this one repeats them).
func (d *entryReader) entry(e *entry) {
	flags := d.byte()
	if flags&sameGroup == 0 {
		e.provider, e.model, e.thinking = d.string(), d.string(), nil
		if flags&hasThinking != 0 {
			t := d.string()
			e.thinking = &t
		}
	}
	if flags&samePrompt == 0 {
		e.promptID = d.string()
	}
	e.line, e.rep, e.verdict = int(d.uvarint()), int(d.varint()), int(d.varint())
	e.status, e.text, e.reasoning, e.violation, e.err = d.string(), d.string(), d.string(), d.string(), d.string()
	e.textBytes, e.keptBytes, e.e2e = int(d.varint()), int(d.varint()), d.varint()
	e.redacted = flags&redacted != 0
	e.ttft, e.out, e.cost = nil, nil, nil
	if flags&hasTTFT != 0 {
		v := d.varint()
		e.ttft = &v
	}
	if flags&hasOut != 0 {
		v := int(d.varint())
		e.out = &v
	}
	if flags&hasCost != 0 {
		v := math.Float64frombits(d.uint64())
		e.cost = &v
	}
	e.calls = nil
	for range d.count() {
		e.calls = append(e.calls, entryCall{name: d.string(), args: d.string(), flags: int(d.uvarint())})
	}
	e.turns, e.moreTurns = nil, -1
	if flags&hasTurns != 0 {
		e.moreTurns = int(d.varint())
		for range d.count() {
			t := entryTurn{text: d.string(), err: d.string(), moreCalls: int(d.uvarint()), calls: []entryCall{}}
			for range d.count() {
				t.calls = append(t.calls, entryCall{name: d.string(), args: d.string(), result: d.string(), flags: int(d.uvarint())})
			}
			e.turns = append(e.turns, t)
		}
	}
}

func (d *entryReader) fail() {
	if d.err == nil {
		d.err = errCorrupt
	}
	d.b = nil
}

func (d *entryReader) byte() byte {
	if len(d.b) == 0 {
		d.fail()
		return 0
	}
	c := d.b[0]
	d.b = d.b[1:]
	return c
}

func (d *entryReader) uvarint() uint64 {
	v, k := binary.Uvarint(d.b)
	if k <= 0 {
		d.fail()
		return 0
	}
	d.b = d.b[k:]
	return v
}

func (d *entryReader) varint() int64 {
	v, k := binary.Varint(d.b)
	if k <= 0 {
		d.fail()
		return 0
	}
	d.b = d.b[k:]
	return v
}

func (d *entryReader) uint64() uint64 {
	if len(d.b) < 8 {
		d.fail()
		return 0
	}
	v := binary.LittleEndian.Uint64(d.b)
	d.b = d.b[8:]
	return v
}

// count is a list's length, bounded by the bytes left (each item takes
// at least one).
func (d *entryReader) count() int {
	n := d.uvarint()
	if n > uint64(len(d.b)) {
		d.fail()
		return 0
	}
	return int(n)
}

func (d *entryReader) string() string {
	n := d.uvarint()
	if n > uint64(len(d.b)) {
		d.fail()
		return ""
	}
	// The chunk is the tape's copy, never written again: the text is its
	// bytes (Builder.text copies what it keeps).
	s := unsafe.String(unsafe.SliceData(d.b), int(n))
	d.b = d.b[n:]
	return s
}
