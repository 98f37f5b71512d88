package providers

import (
	"bytes"
	"time"
)

// A first token's stamp, frame by frame.
//
// A reader that runs late (many streams on few cores) finds several frames
// queued on its socket, and one read of them all carries the kernel's
// receive time of the last: the first token would be stamped with the
// arrival of a later one, one or two token gaps late. Reading only up to
// the first frame's end is no cure: the rest of that segment stays queued,
// and Linux merges segments that arrive later into it (TCP receive
// coalescing), so the rest is stamped with their arrival instead.
//
// So while a first token is awaited, a read (stamp_linux.go) peeks at
// what is queued, asks the kernel for the receive time of each frame's
// end (a peek up to that end, with MSG_TRUNC so nothing is copied), takes
// all of it off the socket at once and hands it over a frame per Read,
// each stamped with its own end's arrival. The transport, the chunked
// decoder and the SSE or NDJSON reader above then complete the first token
// on a Read whose stamp is that of the segment that brought it.

// maxHeldFrames bounds the frames one read stamps apart (a syscall each);
// what follows them is one frame stamped with the read's last segment.
const maxHeldFrames = 32

// heldFrames is what a split read took off the socket and has not handed
// over yet: buf[off:], in frames that end at ends[i].end (offsets in buf)
// and arrived at ends[i].ts (the kernel's receive time, Unix ns; 0:
// unknown). tail is the last two bytes taken off the socket, for frameEnd.
type heldFrames struct {
	buf  []byte
	off  int
	ends []heldEnd
	tail [2]byte
}

type heldEnd struct {
	end int
	ts  int64
}

func (h *heldFrames) pending() bool { return h.off < len(h.buf) }

// next hands over the held bytes up to the next frame's end (as many as p
// holds) and that frame's arrival.
func (h *heldFrames) next(p []byte) (int, int64) {
	e := h.ends[0]
	n := copy(p, h.buf[h.off:e.end])
	h.off += n
	if h.off == e.end {
		h.ends = h.ends[1:]
	}
	if h.off == len(h.buf) {
		h.buf, h.off, h.ends = h.buf[:0], 0, h.ends[:0]
	}
	return n, e.ts
}

// hold keeps b[from:] (b is what a read took off the socket), whose frames
// end at ends (offsets in b, after from; the last is len(b)).
func (h *heldFrames) hold(b []byte, from int, ends []heldEnd) {
	h.buf = append(h.buf[:0], b[from:]...)
	h.off = 0
	h.ends = h.ends[:0]
	for _, e := range ends {
		h.ends = append(h.ends, heldEnd{end: e.end - from, ts: e.ts})
	}
}

// keepTail remembers the last two bytes taken off the socket.
func (h *heldFrames) keepTail(b []byte) {
	switch len(b) {
	case 0:
	case 1:
		h.tail = [2]byte{h.tail[1], b[0]}
	default:
		h.tail = [2]byte{b[len(b)-2], b[len(b)-1]}
	}
}

// frameEnd is the offset in b just past the first frame end at or after
// from, or 0 when there is none; tail is the two bytes before b. A frame
// ends where a server's flush of one event does on an HTTP/1.1 stream: at
// a blank line (the headers' end; an SSE event's end, with the CRLF that
// closes its chunk when that follows) or at a line end just before a
// chunk's closing CRLF (an NDJSON line: "\n\r\n"). On a stream framed
// otherwise (TLS, an unchunked NDJSON body) ends are rarer or fall
// anywhere; a split anywhere is still stamped by the segment that holds
// its last byte, so it costs a syscall, never a wrong stamp.
func frameEnd(tail [2]byte, b []byte, from int) int {
	at := func(i int) byte {
		if i < 0 {
			return tail[2+i]
		}
		return b[i]
	}
	for i := from; i < len(b); i++ {
		j := bytes.IndexByte(b[i:], '\n')
		if j < 0 {
			return 0
		}
		i += j
		switch {
		case at(i-1) == '\n':
			if bytes.HasPrefix(b[i+1:], crlf) {
				return i + 3
			}
			return i + 1
		case at(i-1) == '\r' && at(i-2) == '\n':
			return i + 1
		}
	}
	return 0
}

var crlf = []byte("\r\n")

// maxStampAge bounds a kernel stamp's age; an older one (a clock step) is
// not believed and the read is stamped now.
const maxStampAge = time.Minute

// ageOf is how long ago the kernel received bytes it stamped ts (Unix ns),
// or 0 when ts is unknown or not believable.
func ageOf(ts int64) time.Duration {
	if ts == 0 {
		return 0
	}
	age := time.Duration(time.Now().UnixNano() - ts)
	if age < 0 || age > maxStampAge {
		return 0
	}
	return age
}
