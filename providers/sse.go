package providers

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"sync"
)

// SSEEvent is one server-sent event, as the WHATWG event-stream format
// defines it: the event name (empty for the default "message"), the data
// lines joined by "\n", and the last event id seen on the stream.
type SSEEvent struct {
	Event string
	// Data belongs to the caller; the reader does not touch it again,
	// unless the reader reuses its data buffer (SSEReader.reuse): then
	// Data is valid until the next call to Next.
	Data []byte
	ID   string
}

// maxSSELine bounds one line, and one event's data, so a server that never
// sends a line break cannot grow memory without limit. A line past longLine
// is read in long-line mode (see longline.go): its JSON strings are cut to
// the cell's cap as they arrive, so a Responses completed event that
// repeats a long answer still parses.
const maxSSELine = maxLine

// ErrSSELineTooLong is returned when a line exceeds the reader's limit.
var ErrSSELineTooLong = errors.New("sse: line too long")

var bom = []byte("\xEF\xBB\xBF")

// SSEReader reads server-sent events from a stream. It accepts LF, CRLF and
// lone CR line endings, skips comments and a leading byte-order mark, and
// returns each event as soon as its closing blank line arrives: it never
// waits for more bytes than the event needs, so event times stay honest.
type SSEReader struct {
	r          io.Reader
	buf        []byte
	start, end int  // unread bytes are buf[start:end]
	skipLF     bool // the last line ended in CR; a following LF belongs to it
	started    bool // the BOM check has been done
	err        error
	zeroReads  int
	lastID     string
	// maxString is the cap of each JSON string of a long line; long is
	// where a long line is put together (see readLongLine).
	maxString int
	long      []byte
	// pooled is where buf came from (sseBufs), for release.
	pooled *[]byte
	// reuse makes an event's Data valid only until the next call to Next
	// (the stream readers here decode each event before reading the
	// next): the data is put together in dataBuf, not in a new slice per
	// event, which was a seventh of a load run's CPU.
	reuse   bool
	dataBuf []byte
}

// newSSEReaderCap returns a reader of the events in r whose long lines
// keep at most maxString bytes of each JSON string.
func newSSEReaderCap(r io.Reader, maxString int) *SSEReader {
	bp := sseBufs.Get().(*[]byte)
	return &SSEReader{r: r, buf: (*bp)[:0], pooled: bp, maxString: maxString}
}

// sseBufs holds the readers' line buffers between streams: a buffer per
// request was a fifth of what a load run allocated, and the collections it
// caused delay an open loop's sends.
var sseBufs = sync.Pool{New: func() any {
	b := make([]byte, 0, sseBufSize)
	return &b
}}

const sseBufSize = 4096

// release gives the reader's buffer back for another stream (one that grew
// for a long line is left to the collector). The reader must not be used
// after.
func (s *SSEReader) release() {
	if s.pooled != nil && cap(s.buf) == sseBufSize {
		*s.pooled = s.buf[:0]
		sseBufs.Put(s.pooled)
	}
	s.pooled, s.buf = nil, nil
}

// Next returns the next event. At a clean end of stream it returns io.EOF; if
// the stream ends inside an event (fields read, no closing blank line) the
// partial event is dropped, as the format says, and io.ErrUnexpectedEOF is
// returned so the caller can tell truncation from a clean end. Other read
// errors are returned as they come.
func (s *SSEReader) Next() (SSEEvent, error) {
	var (
		ev      SSEEvent
		data    []byte
		hasData bool
		pending bool // a field of the current event has been read
	)
	if s.reuse {
		data = s.dataBuf[:0]
	}
	for {
		line, err := s.readLine()
		if err != nil {
			if err == io.EOF && (pending || len(line) > 0) {
				return SSEEvent{}, io.ErrUnexpectedEOF
			}
			return SSEEvent{}, err
		}
		if len(line) == 0 {
			if !hasData {
				// An event without data is not dispatched; its name is reset.
				ev, pending = SSEEvent{}, false
				continue
			}
			if data == nil {
				data = []byte{}
			}
			if s.reuse {
				s.dataBuf = data
			}
			ev.Data = data
			ev.ID = s.lastID
			return ev, nil
		}
		if line[0] == ':' {
			continue
		}
		pending = true
		field, value := line, []byte(nil)
		if i := bytes.IndexByte(line, ':'); i >= 0 {
			field, value = line[:i], line[i+1:]
			if len(value) > 0 && value[0] == ' ' {
				value = value[1:]
			}
		}
		switch string(field) {
		case "event":
			ev.Event = string(value)
		case "data":
			if len(data)+len(value) >= maxSSELine {
				s.err = fmt.Errorf("%w (an event's data over %d bytes)", ErrSSELineTooLong, maxSSELine)
				return SSEEvent{}, s.err
			}
			if hasData {
				data = append(data, '\n')
			}
			data = append(data, value...)
			hasData = true
		case "id":
			if bytes.IndexByte(value, 0) < 0 {
				s.lastID = string(value)
			}
		}
		// "retry" and unknown fields are ignored.
	}
}

// readLine returns the next line without its terminator. The slice is valid
// until the next call. At the end of the stream it returns any unterminated
// rest together with the error.
func (s *SSEReader) readLine() ([]byte, error) {
	scanned := 0 // bytes of buf[start:end] known to hold no terminator
	for {
		if s.skipLF && s.start < s.end {
			s.skipLF = false
			if s.buf[s.start] == '\n' {
				s.start++
			}
		}
		if !s.started {
			avail := s.buf[s.start:s.end]
			switch {
			case bytes.HasPrefix(avail, bom):
				s.start += len(bom)
				s.started = true
			case s.err == nil && bytes.HasPrefix(bom, avail):
				// Too few bytes yet to tell a BOM from data.
				s.fill()
				continue
			default:
				s.started = true
			}
		}
		i := indexEither(s.buf[s.start+scanned:s.end], '\n', '\r')
		if i >= 0 {
			i += s.start + scanned
			line := s.buf[s.start:i]
			if s.buf[i] == '\r' {
				s.skipLF = true
			}
			s.start = i + 1
			return line, nil
		}
		scanned = s.end - s.start
		if s.err != nil {
			rest := s.buf[s.start:s.end]
			s.start = s.end
			return rest, s.err
		}
		if scanned >= longLine {
			return s.readLongLine()
		}
		s.fill()
	}
}

// readLongLine finishes a line that passed longLine, cutting its JSON
// strings to maxString as they arrive (see shrinker). The slice is valid
// until the next call.
func (s *SSEReader) readLongLine() ([]byte, error) {
	z := shrinker{max: s.maxString}
	s.long = s.long[:0]
	for {
		seg := s.buf[s.start:s.end]
		i := indexEither(seg, '\n', '\r')
		if i >= 0 {
			seg = seg[:i]
		}
		s.long = z.feed(s.long, seg)
		s.start += len(seg)
		if len(s.long) > maxSSELine {
			s.err = fmt.Errorf("%w (over %d bytes with its strings cut)", ErrSSELineTooLong, maxSSELine)
			return nil, s.err
		}
		if i >= 0 {
			if s.buf[s.start] == '\r' {
				s.skipLF = true
			}
			s.start++
			return s.long, nil
		}
		if s.err != nil {
			return s.long, s.err
		}
		s.fill()
	}
}

// fill reads more bytes, first moving the unread ones to the front and
// growing the buffer when it is full.
func (s *SSEReader) fill() {
	if s.err != nil {
		return
	}
	if s.start > 0 {
		n := copy(s.buf[:cap(s.buf)], s.buf[s.start:s.end])
		s.start, s.end = 0, n
	}
	if s.end == cap(s.buf) {
		grown := make([]byte, s.end, 2*cap(s.buf))
		copy(grown, s.buf[:s.end])
		s.buf = grown
	}
	n, err := s.r.Read(s.buf[s.end:cap(s.buf)])
	s.end += n
	s.buf = s.buf[:s.end]
	switch {
	case err != nil:
		s.err = err
	case n == 0:
		// A reader may return 0, nil; do not spin on one that always does.
		s.zeroReads++
		if s.zeroReads > 100 {
			s.err = io.ErrNoProgress
		}
	default:
		s.zeroReads = 0
	}
}
