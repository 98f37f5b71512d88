package providers

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"unicode/utf8"
)

// Every protocol bench reads is lines: SSE lines, NDJSON lines, the CLI's
// stream-json lines. A line of up to longLine bytes is read as it is. A
// longer one is read in long-line mode: each JSON string in it keeps at
// most the cell's cap (Request.MaxOutputBytes plus slack) and the rest of
// the string is dropped as it arrives, so a 70 MB answer in one line (the
// CLI's result line, a Responses completed event) costs the cap, not 70 MB,
// and the line's small fields (usage, stop reason, is_error) still parse.
// What is left must fit in maxLine; past that the line is an error.
const (
	// longLine is where a line switches to long-line mode.
	longLine = 1 << 20
	// maxLine bounds a line once its strings are cut: SSE, NDJSON and
	// stream-json alike.
	maxLine = 16 << 20
)

// errLineTooLong is a line that is longer than maxLine even with its
// strings cut (a flood of structure, or a line that never ends outside a
// string).
var errLineTooLong = fmt.Errorf("line longer than %d bytes", maxLine)

// shrinker cuts the JSON strings of a line to at most max bytes each as
// the line streams through it. It keeps escapes and UTF-8 sequences whole,
// so a JSON line stays JSON. It never holds more than what it returns.
type shrinker struct {
	max      int
	inString bool
	esc      int // 0: none; 1: after a backslash; 2-5: hex digits of \uXXXX to go
	kept     int // bytes of the current string kept
	dropping bool
	cut      int // strings cut so far
}

// feed appends to dst what is kept of p, the next bytes of the line.
func (z *shrinker) feed(dst, p []byte) []byte {
	for i := 0; i < len(p); {
		if !z.inString {
			// Copy up to and including the next quote in one go.
			j := bytes.IndexByte(p[i:], '"')
			if j < 0 {
				return append(dst, p[i:]...)
			}
			dst = append(dst, p[i:i+j+1]...)
			i += j + 1
			z.inString, z.kept, z.dropping, z.esc = true, 0, false, 0
			continue
		}
		if z.dropping && z.esc == 0 {
			// Skip to the next quote or backslash without copying.
			j := indexEither(p[i:], '"', '\\')
			if j < 0 {
				return dst
			}
			i += j
		}
		b := p[i]
		i++
		switch {
		case z.esc == 1:
			z.esc = 0
			if b == 'u' {
				z.esc = 5
			}
		case z.esc > 1:
			z.esc--
			if z.esc == 1 {
				z.esc = 0
			}
		case b == '"':
			z.inString = false
			dst = append(dst, b)
			continue
		default:
			// Cut at a rune's start; a run of bytes that starts no rune
			// (not UTF-8 at all) is cut anyway once a rune's length past.
			if !z.dropping && z.kept >= z.max && (b == '\\' || utf8.RuneStart(b) || z.kept >= z.max+utf8.UTFMax) {
				z.dropping = true
				z.cut++
			}
			if b == '\\' {
				z.esc = 1
			}
		}
		if !z.dropping {
			dst = append(dst, b)
			z.kept++
		}
	}
	return dst
}

// indexEither is the index of the first a or b in p, or -1. Two
// IndexByte calls beat one IndexAny: they are vectorised, and a long
// line's string is megabytes of neither.
func indexEither(p []byte, a, b byte) int {
	i := bytes.IndexByte(p, a)
	before := p
	if i >= 0 {
		before = p[:i]
	}
	if j := bytes.IndexByte(before, b); j >= 0 {
		return j
	}
	return i
}

// lineReader reads newline-terminated lines (NDJSON, stream-json) with
// the bounds above. Blank lines are returned as such; callers skip them,
// so a keep-alive flood costs time, not memory.
type lineReader struct {
	br   *bufio.Reader
	max  int // the cap of each string in a long line
	long []byte
	z    shrinker
}

func newLineReader(r io.Reader, size, maxString int) *lineReader {
	if maxString <= 0 {
		maxString = DefaultMaxOutputBytes + CapSlack
	}
	return &lineReader{br: bufio.NewReaderSize(r, size), max: maxString}
}

// next returns the next line without its newline; the slice is valid
// until the next call. At the end of input it returns what is left with
// io.EOF. A line past maxLine is read to its end and dropped, and
// errLineTooLong returned, so a caller may go on to the next line.
func (l *lineReader) next() ([]byte, error) {
	chunk, err := l.br.ReadSlice('\n')
	if err == nil {
		return chunk[:len(chunk)-1], nil // the common case: no copy
	}
	var line []byte
	for errors.Is(err, bufio.ErrBufferFull) && len(line)+len(chunk) <= longLine {
		line = append(line, chunk...)
		chunk, err = l.br.ReadSlice('\n')
	}
	if !errors.Is(err, bufio.ErrBufferFull) {
		line = append(line, chunk...)
		return bytes.TrimSuffix(line, []byte("\n")), err
	}
	// Long-line mode: what was read so far goes through the shrinker too.
	l.z = shrinker{max: l.max}
	l.long = l.z.feed(l.long[:0], line)
	tooLong := false
	for {
		l.long = l.z.feed(l.long, chunk)
		if len(l.long) > maxLine {
			tooLong, l.long = true, l.long[:0]
		}
		if !errors.Is(err, bufio.ErrBufferFull) {
			break
		}
		chunk, err = l.br.ReadSlice('\n')
	}
	if tooLong {
		if err == nil || errors.Is(err, io.EOF) {
			return nil, errLineTooLong
		}
		return nil, err
	}
	return bytes.TrimSuffix(l.long, []byte("\n")), err
}
