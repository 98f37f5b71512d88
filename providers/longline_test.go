package providers

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"unicode/utf8"
)

// shrink runs a whole line through a shrinker in pieces of n bytes.
func shrink(line []byte, max, n int) ([]byte, int) {
	z := shrinker{max: max}
	var out []byte
	for i := 0; i < len(line); i += n {
		out = z.feed(out, line[i:min(i+n, len(line))])
	}
	return out, z.cut
}

func TestShrinker(t *testing.T) {
	long := strings.Repeat("é", 50) // 100 bytes, two per rune
	cases := []struct {
		name, in, want string
		cut            int
	}{
		{"short strings untouched", `{"a":"bc","d":[1,"e"]}`, `{"a":"bc","d":[1,"e"]}`, 0},
		{"a long string cut", `{"text":"` + strings.Repeat("x", 30) + `","n":1}`, `{"text":"` + strings.Repeat("x", 10) + `","n":1}`, 1},
		{"escapes kept whole", `{"t":"123456789\u00e9abc"}`, `{"t":"123456789\u00e9"}`, 1},
		{"an escaped quote is not the end", `{"t":"12345678\"9abcdef","k":"v"}`, `{"t":"12345678\"","k":"v"}`, 1},
		{"a backslash escape is not split", `{"t":"123456789\nmore"}`, `{"t":"123456789\n"}`, 1},
		{"an escaped backslash is one escape", `{"t":"123456789\\nmore"}`, `{"t":"123456789\\"}`, 1},
		{"runes not split", `{"t":"` + long + `"}`, `{"t":"` + long[:10] + `"}`, 1},
		{"not JSON passes", `data: plain text`, `data: plain text`, 0},
	}
	for _, c := range cases {
		for _, n := range []int{1, 3, 1 << 20} {
			got, cut := shrink([]byte(c.in), 10, n)
			if string(got) != c.want || cut != c.cut {
				t.Errorf("%s (pieces of %d): got %s (%d cut), want %s (%d)", c.name, n, got, cut, c.want, c.cut)
			}
		}
	}
}

// FuzzShrinker: whatever the line, the result is no longer than it, keeps
// every string within the cap (plus one escape or rune), is the line
// itself when nothing was cut, is valid JSON when the line is, and does
// not depend on how the line was split.
func FuzzShrinker(f *testing.F) {
	f.Add([]byte(`{"type":"result","result":"`+strings.Repeat("ab", 40)+`","usage":{"n":1}}`), 8, 5)
	f.Add([]byte(`{"a":"\u00e9\u00e9\u00e9\u00e9\\\"\"","b":["xxxxxxxxxxxxxxxx"]}`), 3, 2)
	f.Add([]byte(`"unterminated \`), 1, 1)
	f.Fuzz(func(t *testing.T, line []byte, max, n int) {
		if max < 1 || max > 1<<10 || n < 1 {
			return
		}
		whole, cut := shrink(line, max, len(line)+1)
		split, cut2 := shrink(line, max, n)
		if !bytes.Equal(whole, split) || cut != cut2 {
			t.Fatalf("depends on the split: %q vs %q", whole, split)
		}
		if len(whole) > len(line) || (cut == 0 && !bytes.Equal(whole, line)) {
			t.Fatalf("%q → %q (%d cut)", line, whole, cut)
		}
		if json.Valid(line) && !json.Valid(whole) {
			t.Fatalf("valid JSON %q became %q", line, whole)
		}
		var v any
		if cut > 0 && json.Unmarshal(whole, &v) == nil {
			checkStrings(t, v, max)
		}
	})
}

// checkStrings fails on a string longer than max plus one escape or rune
// (decoding turns each byte that is not UTF-8 into three).
func checkStrings(t *testing.T, v any, max int) {
	switch x := v.(type) {
	case string:
		if len(x) > 3*(max+utf8.UTFMax+6) {
			t.Fatalf("string of %d bytes kept, cap %d", len(x), max)
		}
	case []any:
		for _, e := range x {
			checkStrings(t, e, max)
		}
	case map[string]any:
		for k, e := range x {
			checkStrings(t, k, max)
			checkStrings(t, e, max)
		}
	}
}

// endless is a reader of a prefix, then the same byte forever.
type endless struct {
	prefix []byte
	b      byte
	n      int64 // bytes of the endless part read so far
	limit  int64 // 0: forever; else the endless part ends there, then suffix
	suffix []byte
}

func (e *endless) Read(p []byte) (int, error) {
	if len(e.prefix) > 0 {
		n := copy(p, e.prefix)
		e.prefix = e.prefix[n:]
		return n, nil
	}
	if e.limit > 0 && e.n >= e.limit {
		if len(e.suffix) == 0 {
			return 0, io.EOF
		}
		n := copy(p, e.suffix)
		e.suffix = e.suffix[n:]
		return n, nil
	}
	k := len(p)
	if e.limit > 0 {
		k = int(min(int64(k), e.limit-e.n))
	}
	for i := range k {
		p[i] = e.b
	}
	e.n += int64(k)
	return k, nil
}

// A line of 40 MB whose bulk is one string reads as the line with that
// string cut, and the fields after it intact; a line that is too long
// outside any string is an error, and the reader goes on past it.
func TestLineReaderLongLines(t *testing.T) {
	r := &endless{prefix: []byte(`{"type":"result","result":"`), b: 'x', limit: 40 << 20,
		suffix: []byte(`","is_error":false}` + "\n" + `{"type":"next"}` + "\n")}
	lr := newLineReader(r, 64<<10, 1000)
	line, err := lr.next()
	if err != nil {
		t.Fatal(err)
	}
	var l struct {
		Type, Result string
		IsError      *bool `json:"is_error"`
	}
	if err := json.Unmarshal(line, &l); err != nil || l.Type != "result" || len(l.Result) != 1000 || l.IsError == nil {
		t.Fatalf("%v: type %q, %d bytes of result, is_error %v", err, l.Type, len(l.Result), l.IsError)
	}
	if line, err := lr.next(); err != nil || string(line) != `{"type":"next"}` {
		t.Fatalf("next line %q, %v", line, err)
	}

	r = &endless{prefix: []byte(`[`), b: '1', limit: maxLine + 1, suffix: []byte("]\n{}\n")}
	lr = newLineReader(r, 64<<10, 1000)
	if _, err := lr.next(); !errors.Is(err, errLineTooLong) {
		t.Fatalf("structure past maxLine: %v", err)
	}
	if line, err := lr.next(); err != nil || string(line) != "{}" {
		t.Fatalf("the line after a too-long one: %q, %v", line, err)
	}
}

// The SSE reader reads a long data line the same way, and refuses an
// event whose data lines add up past the bound.
func TestSSELongLine(t *testing.T) {
	r := &endless{prefix: []byte("event: x\ndata: {\"delta\":\""), b: 'y', limit: 20 << 20,
		suffix: []byte("\",\"n\":2}\r\n\ndata: [DONE]\n\n")}
	sr := newSSEReaderCap(r, 500)
	ev, err := sr.Next()
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Delta string
		N     int
	}
	if err := json.Unmarshal(ev.Data, &d); err != nil || ev.Event != "x" || len(d.Delta) != 500 || d.N != 2 {
		t.Fatalf("%v: %q %d bytes n=%d", err, ev.Event, len(d.Delta), d.N)
	}
	if ev, err := sr.Next(); err != nil || string(ev.Data) != "[DONE]" {
		t.Fatalf("after the long line: %q %v", ev.Data, err)
	}

	var many bytes.Buffer
	for many.Len() <= maxSSELine+maxSSELine/16 {
		many.WriteString("data: " + strings.Repeat("z", 1000) + "\n")
	}
	many.WriteString("\n")
	if _, err := NewSSEReader(&many).Next(); !errors.Is(err, ErrSSELineTooLong) {
		t.Fatalf("an event of over %d bytes of data: %v", maxSSELine, err)
	}
}

func TestCapped(t *testing.T) {
	c := newCapped(5)
	c.WriteString("abc")
	c.WriteString("defgh")
	c.WriteString("")
	if c.String() != "abcde" || c.Total() != 8 || !c.Cut() || c.Len() != 5 {
		t.Errorf("%q total %d", c.String(), c.Total())
	}
	tb := newToolBudget(6)
	a, b := tb.args(), tb.args()
	a.WriteString("1234")
	b.WriteString("5678")
	if a.String() != "1234" || b.String() != "56" || tb.left != 0 {
		t.Errorf("shared budget: %q %q left %d", a, b, tb.left)
	}
	for range MaxToolCalls + 3 {
		tb.admit()
	}
	resp := &Response{}
	tb.noteCut(b)
	tb.report(resp)
	if resp.Metrics["tool_calls_dropped"] != 3 || resp.Metrics["tool_arguments_cut"] != 1 {
		t.Errorf("metrics %v", resp.Metrics)
	}
}

func BenchmarkLineReaderLongLine(b *testing.B) {
	b.SetBytes(64 << 20)
	for b.Loop() {
		r := &endless{prefix: []byte(`{"result":"`), b: 'x', limit: 64 << 20, suffix: []byte("\"}\n")}
		if _, err := newLineReader(r, 64<<10, 1<<16).next(); err != nil {
			b.Fatal(err)
		}
	}
}
