package providers

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"
)

// readAllSSE drains r and returns the events and the error that ended it.
func readAllSSE(r io.Reader) ([]SSEEvent, error) {
	sr := NewSSEReader(r)
	var out []SSEEvent
	for {
		ev, err := sr.Next()
		if err != nil {
			return out, err
		}
		out = append(out, ev)
	}
}

func TestSSEReader(t *testing.T) {
	ev := func(name, data, id string) SSEEvent { return SSEEvent{Event: name, Data: []byte(data), ID: id} }
	tests := []struct {
		name string
		in   string
		want []SSEEvent
		err  error
	}{
		{"empty", "", nil, io.EOF},
		{"one event LF", "event: a\ndata: {\"x\":1}\n\n", []SSEEvent{ev("a", `{"x":1}`, "")}, io.EOF},
		{"CRLF", "event: a\r\ndata: x\r\n\r\n", []SSEEvent{ev("a", "x", "")}, io.EOF},
		{"lone CR", "event: a\rdata: x\r\r", []SSEEvent{ev("a", "x", "")}, io.EOF},
		{"multi-line data joined", "data: a\ndata:b\ndata:  c\n\n", []SSEEvent{ev("", "a\nb\n c", "")}, io.EOF},
		{"comments and unknown fields skipped", ": ping\nretry: 10\nfoo: bar\ndata: x\n\n: bye\n", []SSEEvent{ev("", "x", "")}, io.EOF},
		{"event without data not dispatched, name reset", "event: a\n\ndata: x\n\n", []SSEEvent{ev("", "x", "")}, io.EOF},
		{"field without colon", "data\n\n", []SSEEvent{ev("", "", "")}, io.EOF},
		{"id persists", "id: 7\ndata: a\n\ndata: b\n\n", []SSEEvent{ev("", "a", "7"), ev("", "b", "7")}, io.EOF},
		{"id with NUL ignored", "id: 1\ndata: a\n\nid: x\x00y\ndata: b\n\n", []SSEEvent{ev("", "a", "1"), ev("", "b", "1")}, io.EOF},
		{"BOM stripped", "\xEF\xBB\xBFdata: x\n\n", []SSEEvent{ev("", "x", "")}, io.EOF},
		{"cut before blank line", "data: a\n\ndata: b\n", []SSEEvent{ev("", "a", "")}, io.ErrUnexpectedEOF},
		{"cut mid-line", "data: a\n\ndata: {\"par", []SSEEvent{ev("", "a", "")}, io.ErrUnexpectedEOF},
		{"trailing blank lines only", "\n\n\n", nil, io.EOF},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, mode := range []string{"whole", "one byte"} {
				var r io.Reader = strings.NewReader(tt.in)
				if mode == "one byte" {
					r = iotest.OneByteReader(r)
				}
				got, err := readAllSSE(r)
				if !errors.Is(err, tt.err) {
					t.Errorf("%s: err = %v, want %v", mode, err, tt.err)
				}
				if !reflect.DeepEqual(got, tt.want) {
					t.Errorf("%s: events = %q, want %q", mode, got, tt.want)
				}
			}
		})
	}
}

// TestSSEReaderDoesNotWaitPastEvent checks that an event is returned as soon
// as its blank line is in, without reading further: a reader that fails on
// the next read proves it was not called.
func TestSSEReaderDoesNotWaitPastEvent(t *testing.T) {
	boom := errors.New("read past the event")
	r := io.MultiReader(strings.NewReader("data: a\r\n\r\n"), iotest.ErrReader(boom))
	sr := NewSSEReader(r)
	ev, err := sr.Next()
	if err != nil || string(ev.Data) != "a" {
		t.Fatalf("Next = %q, %v; want data a", ev.Data, err)
	}
	// The CR's LF is part of the event, and the next call is where the
	// reader's error shows.
	if _, err := sr.Next(); !errors.Is(err, boom) {
		t.Fatalf("second Next err = %v, want %v", err, boom)
	}
}

func TestSSEReaderLineLimit(t *testing.T) {
	r := io.MultiReader(strings.NewReader("data: "), neverEnding('x'))
	_, err := NewSSEReader(r).Next()
	if !errors.Is(err, ErrSSELineTooLong) {
		t.Fatalf("err = %v, want ErrSSELineTooLong", err)
	}
}

type neverEnding byte

func (b neverEnding) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(b)
	}
	return len(p), nil
}

func TestSSEReaderRecordings(t *testing.T) {
	body := httpBody(t, "v1_responses_stream_text.http")
	evs, err := readAllSSE(bytes.NewReader(body))
	if err != io.EOF {
		t.Fatalf("err = %v, want io.EOF", err)
	}
	var names []string
	for _, e := range evs {
		names = append(names, e.Event)
	}
	want := "response.created response.in_progress response.output_item.added response.content_part.added " +
		"response.output_text.delta response.output_text.delta response.output_text.delta response.output_text.done " +
		"response.content_part.done response.output_item.done response.completed"
	if got := strings.Join(names, " "); got != want {
		t.Fatalf("event names:\n got %s\nwant %s", got, want)
	}
}

// httpBody returns the body of a recorded HTTP response in testdata/responses.
func httpBody(tb testing.TB, name string) []byte {
	tb.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", "responses", name))
	if err != nil {
		tb.Fatal(err)
	}
	i := bytes.Index(raw, []byte("\r\n\r\n"))
	if i < 0 {
		tb.Fatalf("%s: no header/body separator", name)
	}
	return raw[i+4:]
}

// refSSE is a deliberately naive reading of the event-stream format over the
// whole input, the reference the fuzzer checks the streaming reader against.
func refSSE(in []byte) ([]SSEEvent, error) {
	in = bytes.TrimPrefix(in, bom)
	var lines []string
	cur := []byte{}
	terminated := true
	for i := 0; i < len(in); i++ {
		switch in[i] {
		case '\r':
			if i+1 < len(in) && in[i+1] == '\n' {
				i++
			}
			fallthrough
		case '\n':
			lines = append(lines, string(cur))
			cur = []byte{}
			terminated = true
		default:
			cur = append(cur, in[i])
			terminated = false
		}
	}
	var out []SSEEvent
	var name, id string
	var data []string
	pending := false
	for _, l := range lines {
		switch {
		case l == "":
			if data != nil {
				out = append(out, SSEEvent{Event: name, Data: []byte(strings.Join(data, "\n")), ID: id})
			}
			name, data, pending = "", nil, false
			continue
		case l[0] == ':':
			continue
		}
		pending = true
		f, v, _ := strings.Cut(l, ":")
		v = strings.TrimPrefix(v, " ")
		switch f {
		case "event":
			name = v
		case "data":
			data = append(data, v)
		case "id":
			if !strings.Contains(v, "\x00") {
				id = v
			}
		}
	}
	if pending || !terminated {
		return out, io.ErrUnexpectedEOF
	}
	return out, io.EOF
}

func FuzzSSE(f *testing.F) {
	for _, name := range []string{"v1_responses_stream_text.http", "v1_responses_stream_function_call.http",
		"scripted_reasoning_text.http", "scripted_error_event.http"} {
		f.Add(httpBody(f, name))
	}
	f.Add([]byte("event: a\r\ndata: x\r\rdata: y\n\n"))
	f.Add([]byte("\xEF\xBB\xBF: c\nid: 1\x00\ndata\n\ndata: {\"cut"))
	f.Fuzz(func(t *testing.T, in []byte) {
		want, wantErr := refSSE(in)
		for _, mode := range []string{"whole", "one byte", "half"} {
			var r io.Reader = bytes.NewReader(in)
			switch mode {
			case "one byte":
				r = iotest.OneByteReader(r)
			case "half":
				r = iotest.HalfReader(bufio.NewReaderSize(r, 16))
			}
			got, err := readAllSSE(r)
			if err != wantErr {
				t.Fatalf("%s: err = %v, reference %v", mode, err, wantErr)
			}
			if len(got) != len(want) {
				t.Fatalf("%s: %d events, reference %d\n got %q\nwant %q", mode, len(got), len(want), got, want)
			}
			for i := range got {
				if got[i].Event != want[i].Event || got[i].ID != want[i].ID || !bytes.Equal(got[i].Data, want[i].Data) {
					t.Fatalf("%s: event %d = %q, reference %q", mode, i, got[i], want[i])
				}
			}
		}
	})
}

func BenchmarkSSEReader(b *testing.B) {
	body := httpBody(b, "v1_responses_stream_text.http")
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := readAllSSE(bytes.NewReader(body)); err != io.EOF {
			b.Fatal(err)
		}
	}
}

// NewSSEReader is a reader of the events in r with the default cap, as the
// providers make one for a response of DefaultMaxOutputBytes.
func NewSSEReader(r io.Reader) *SSEReader {
	return newSSEReaderCap(r, DefaultMaxOutputBytes+CapSlack)
}
