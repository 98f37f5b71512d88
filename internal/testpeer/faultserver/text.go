package faultserver

import (
	"bytes"
	"encoding/json"
	"io"
	"strings"
)

// seg is a piece of streamed text repeated n times. A flood of a million
// identical deltas is one seg, so what a block has said so far costs the
// server constant memory however long the stream runs.
type seg struct {
	s string
	n int
}

// text is everything one content block has streamed, in order.
type text []seg

// add appends s, merging it with the last piece when they are the same.
func (t *text) add(s string, n int) {
	if n <= 0 || s == "" {
		return
	}
	if k := len(*t); k > 0 && (*t)[k-1].s == s {
		(*t)[k-1].n += n
		return
	}
	*t = append(*t, seg{s, n})
}

// String is the whole text; only for small texts (tests, whole bodies).
func (t text) String() string {
	var b strings.Builder
	for _, g := range t {
		for range g.n {
			b.WriteString(g.s)
		}
	}
	return b.String()
}

// frames accumulates the bytes of the next frames to send. A frame that
// embeds a long repeated text spills to w as it goes, so no frame is ever
// held whole in memory.
type frames struct {
	buf []byte
	w   io.Writer
	err error
}

// spillAt is how much a frame may buffer before it is written out.
const spillAt = 32 << 10

func (f *frames) str(s string) { f.buf = append(f.buf, s...) }

// quote appends s as a JSON string.
func (f *frames) quote(s string) { f.buf = appendQuoted(f.buf, s) }

// quoteText appends a whole text as one JSON string, writing out as it
// grows.
func (f *frames) quoteText(t text) {
	f.buf = append(f.buf, '"')
	f.rawText(t)
	f.buf = append(f.buf, '"')
}

// rawText appends a text's JSON-escaped contents without quotes, writing
// out as it grows.
func (f *frames) rawText(t text) {
	for _, g := range t {
		esc := appendQuoted(nil, g.s)
		esc = esc[1 : len(esc)-1]
		// Repeats are appended a block at a time: a long line of one
		// byte repeated is millions of appends otherwise, slow enough
		// under the race detector to run past a test's timeout.
		per := max(1, min(g.n, 32<<10/max(1, len(esc))))
		block := bytes.Repeat(esc, per)
		for left := g.n; left > 0; left -= per {
			k := min(per, left)
			f.buf = append(f.buf, block[:k*len(esc)]...)
			if len(f.buf) >= spillAt {
				f.spill()
			}
		}
	}
}

// spill writes what is buffered.
func (f *frames) spill() {
	if f.err == nil && len(f.buf) > 0 && f.w != nil {
		_, f.err = f.w.Write(f.buf)
	}
	f.buf = f.buf[:0]
}

// appendQuoted appends s as a JSON string literal, escaped as
// encoding/json does. Plain ASCII, the common case, skips the encoder.
func appendQuoted(b []byte, s string) []byte {
	plain := true
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			plain = false
			break
		}
	}
	if plain {
		b = append(b, '"')
		b = append(b, s...)
		return append(b, '"')
	}
	q, _ := json.Marshal(s) // a string always marshals
	return append(b, q...)
}

// kind is what a content block carries.
type kind int

const (
	kindText kind = iota
	kindReasoning
	kindTool
)

// block is one content block of an answer: its kind and what it streamed.
type block struct {
	kind kind
	// index is the block's position in the answer (output_index, index).
	index int
	text  text
	// deltas counts the frames that carried a piece of it.
	deltas int
	// raw says a tool block's text is its arguments as JSON, which a
	// protocol that sends arguments as an object (Ollama) writes as they
	// are.
	raw bool
}

// Built-in content every protocol streams for a normal answer.
var answer = []string{"I will run ", "`free -h`", " to check memory."}

// Usage reported for answers: the prompt size of the recorded real streams.
const inputTokens = 12

// toolName is the function a tool-call flood calls.
const toolName = "get_memory"

// floodUnit is the piece a flood repeats.
const floodUnit = "flood "

// HostileText is what the hostile behaviour's error says: a line that a
// GitHub Actions runner would read as a command, terminal escapes (clear
// screen, window title, OSC 52 clipboard write, bell) and an Azure
// Pipelines command.
const HostileText = "bad request\n::error title=pwned::owned by the server\n\x1b[2J\x1b[H\x1b]0;pwned\x07" +
	"\x1b]52;c;cHduZWQ=\x07 ##vso[task.setvariable variable=x]1 \u009b31m done"

// filler pads long messages around an echoed key. Its words are at most
// five letters between spaces, so no eight-character window of it can look
// like a piece of a key (keys have no spaces).
const filler = "lorem ipsum dolor sit amet "

// fill returns n bytes of filler.
func fill(n int) string {
	if n <= 0 {
		return ""
	}
	return strings.Repeat(filler, n/len(filler)+1)[:n]
}
