package providers

import (
	"strings"
	"testing"
)

// Frame ends are where servers flush one event on an HTTP/1.1 stream; a
// search finds the first at or after from, using the two bytes read
// before for an end split across reads.
func TestFrameEnd(t *testing.T) {
	const sse = "5f\r\ndata: {\"x\":1}\n\n\r\n"
	for _, c := range []struct {
		name string
		tail string
		b    string
		from int
		want string // the bytes up to the end; "" for none
	}{
		{"headers, then a chunk", "", "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\n" + sse, 0,
			"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\n"},
		{"an SSE event with its chunk's CRLF", "", sse + sse, 0, sse},
		{"the next event, searched from the first's end", "", sse + sse, len(sse), sse + sse},
		{"an SSE event whose chunk CRLF has not come", "", "data: x\n\n", 0, "data: x\n\n"},
		{"an NDJSON line in a chunk", "", "1a\r\n{\"message\":{\"c\":\"a\"}}\n\r\n1a\r\n", 0, "1a\r\n{\"message\":{\"c\":\"a\"}}\n\r\n"},
		{"a blank line split across reads", "x\n", "\n\r\n5f", 0, "\n\r\n"},
		{"a chunk end split across reads", "\n\r", "\n5f\r\n", 0, "\n"},
		{"a chunk end split after its first byte", "}\n", "\r\n5f\r\n", 0, "\r\n"},
		{"a line but no frame", "", "data: x\ndata: y\n", 0, ""},
		{"a chunk header is no frame end", "\r\n", "5f\r\ndata", 0, ""},
		{"nothing", "", "", 0, ""},
	} {
		var tail [2]byte
		copy(tail[2-len(c.tail):], c.tail)
		got := frameEnd(tail, []byte(c.b), c.from)
		if got != len(c.want) || !strings.HasPrefix(c.b, c.want) {
			t.Errorf("%s: end %d (%q), want %q", c.name, got, c.b[:got], c.want)
		}
	}
}

// Held bytes go out a frame per read, each with its own arrival, a frame
// in pieces when the reader's buffer is small, and nothing is lost.
func TestHeldFrames(t *testing.T) {
	var h heldFrames
	b := []byte("AAAABBBBBBCC")
	// The read returned AAAA itself; BBBBBB (arrived at 20) and CC (30)
	// are held.
	h.hold(b, 4, []heldEnd{{end: 10, ts: 20}, {end: 12, ts: 30}})
	type got struct {
		s  string
		ts int64
	}
	var gots []got
	p := make([]byte, 4)
	for h.pending() {
		n, ts := h.next(p)
		gots = append(gots, got{string(p[:n]), ts})
	}
	want := []got{{"BBBB", 20}, {"BB", 20}, {"CC", 30}}
	if len(gots) != len(want) {
		t.Fatalf("reads %v, want %v", gots, want)
	}
	for i := range want {
		if gots[i] != want[i] {
			t.Errorf("read %d: %v, want %v", i, gots[i], want[i])
		}
	}
	// Emptied, the buffer is reused for the next hold.
	h.hold([]byte("XY"), 1, []heldEnd{{end: 2, ts: 40}})
	if n, ts := h.next(p); string(p[:n]) != "Y" || ts != 40 || h.pending() {
		t.Errorf("after reuse: %q at %d, pending %v", p[:n], ts, h.pending())
	}
	h.keepTail([]byte("ab"))
	h.keepTail([]byte("c"))
	if h.tail != [2]byte{'b', 'c'} {
		t.Errorf("tail %q", h.tail[:])
	}
}
