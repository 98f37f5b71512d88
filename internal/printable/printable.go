// Package printable makes text that came from a server, a CLI or a file
// safe to print to a terminal, a CI log or a Markdown file: it cannot move
// the cursor, clear the screen, set the window title, write the clipboard
// (OSC 52) or ring the bell, and it cannot be read by a CI runner as a
// workflow command.
//
// Control characters are shown, not sent: C0 and DEL as \x1b, C1 and the
// bidirectional and line-separator characters as \u009b, bytes that are
// not UTF-8 as U+FFFD; tab and newline are kept. A line cannot start a CI
// command: GitHub Actions reads a line whose first non-blank characters
// are "::" (its second ':' is shown as \x3a), GitHub's legacy and Azure
// Pipelines' and TeamCity's commands start with "##[", "##vso[" and
// "##teamcity[" anywhere in a line (the '[' is shown as \x5b), and
// Buildkite opens a log group at a line that starts "--- ", "+++ ", "~~~ "
// or "^^^ " (the space is shown as \x20). The rest of the text is left
// as it is.
//
// No library fits: terminal sanitisers (e.g. in golang.org/x/term) strip
// escape sequences but know nothing of CI workflow commands, and bench
// wants what was stripped shown rather than dropped.
//
// Layer: internal helpers (imports no bench package).
package printable

import (
	"bytes"
	"io"
	"strconv"
	"sync"
	"unicode"
	"unicode/utf8"
)

// Writer escapes everything written through it (see the package doc) and
// writes the result to the writer it wraps. It keeps the state of the line
// between writes, so a command split over two writes is still caught; a
// rune split over two writes is held until the next one (Flush writes it
// as U+FFFD). It is safe for concurrent use; writes are not split.
type Writer struct {
	mu sync.Mutex
	w  io.Writer
	st state
	// pending holds the start of a UTF-8 sequence a write ended inside.
	pending []byte
	buf     []byte
}

// New returns a Writer that writes to w.
func New(w io.Writer) *Writer { return &Writer{w: w} }

// Unwrap is the writer Writer writes to: for telling whether that is a
// terminal, and for bench's own drawing (the progress bar's redraws),
// whose text is made printable before it is drawn.
func (p *Writer) Unwrap() io.Writer { return p.w }

// Write escapes b and writes it. It reports len(b) on success.
func (p *Writer) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	in := b
	if len(p.pending) > 0 {
		in = append(p.pending, b...)
		p.pending = nil
	}
	// A trailing partial rune waits for the next write.
	if cut := partialTail(in); cut > 0 {
		p.pending = append([]byte(nil), in[len(in)-cut:]...)
		in = in[:len(in)-cut]
	}
	p.buf = p.st.append(p.buf[:0], in)
	if _, err := p.w.Write(p.buf); err != nil {
		return 0, err
	}
	return len(b), nil
}

// Flush writes a rune a write ended inside as U+FFFD: call it once the
// last write is done.
func (p *Writer) Flush() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.pending) == 0 {
		return nil
	}
	p.buf = p.st.append(p.buf[:0], p.pending)
	p.pending = nil
	_, err := p.w.Write(p.buf)
	return err
}

// String is s made printable, as if written at the start of a line.
func String(s string) string {
	var st state
	out := st.append(make([]byte, 0, len(s)), []byte(s))
	if string(out) == s {
		return s
	}
	return string(out)
}

// Bytes is b made printable, as if written at the start of a line.
func Bytes(b []byte) []byte {
	var st state
	return st.append(make([]byte, 0, len(b)), b)
}

// partialTail is the length of a UTF-8 sequence b ends inside (0: none).
func partialTail(b []byte) int {
	for k := 1; k <= utf8.UTFMax-1 && k <= len(b); k++ {
		c := b[len(b)-k]
		if c < utf8.RuneSelf {
			return 0
		}
		if utf8.RuneStart(c) {
			if !utf8.FullRune(b[len(b)-k:]) {
				return k
			}
			return 0
		}
	}
	return 0
}

// state is where a line stands: what a workflow command needs to be
// recognised.
type state struct {
	// col counts the bytes written on the line; lead the non-blank runes
	// (up to 2), firstColon says the first one was ':'.
	col        int
	lead       int
	firstColon bool
	// tail holds the line's last bytes, ASCII letters lower-cased, for
	// the "##...[" commands.
	tail [16]byte
	n    int
}

const hexDigits = "0123456789abcdef"

func (st *state) append(out, in []byte) []byte {
	for i := 0; i < len(in); {
		c := in[i]
		if c >= 0x20 && c < 0x7f && c != ':' && c != '[' && c != ' ' {
			// Printable ASCII with no say in a command: the common case.
			out = append(out, c)
			st.note(c, false)
			i++
			continue
		}
		r, size := rune(c), 1
		if c >= utf8.RuneSelf {
			r, size = utf8.DecodeRune(in[i:])
		}
		i += size
		switch {
		case r == '\n':
			out = append(out, '\n')
			*st = state{}
		case r == '\t':
			out = append(out, '\t')
			st.note('\t', true)
		case r == utf8.RuneError && size == 1:
			out = append(out, "\uFFFD"...)
			st.note(0, false)
		case r < 0x20 || r == 0x7f:
			out = append(out, '\\', 'x', hexDigits[r>>4], hexDigits[r&15])
			st.note(0, false)
		case r >= 0x80 && r <= 0x9f, r == 0x2028, r == 0x2029, r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
			out = append(out, `\u`...)
			out = append(out, leftPad(strconv.FormatInt(int64(r), 16))...)
			st.note(0, false)
		case r == ':' && st.lead == 1 && st.firstColon:
			// "::" opens a GitHub Actions command.
			out = append(out, `\x3a`...)
			st.note(':', false)
		case r == '[' && st.commandPrefix():
			out = append(out, `\x5b`...)
			st.note('[', false)
		case r == ' ' && st.col == 3 && st.n >= 3 && groupMark(st.tail[st.n-3:st.n]):
			// "--- " opens a Buildkite log group.
			out = append(out, `\x20`...)
			st.note(' ', true)
		default:
			out = append(out, in[i-size:i]...)
			if size == 1 {
				st.note(c, unicode.IsSpace(r))
			} else {
				st.noteRune(r)
			}
		}
	}
	return out
}

func leftPad(h string) string {
	for len(h) < 4 {
		h = "0" + h
	}
	return h
}

// note records one byte written on the line; blank says it is whitespace.
func (st *state) note(c byte, blank bool) {
	st.col++
	if !blank && st.lead < 2 {
		if st.lead == 0 {
			st.firstColon = c == ':'
		}
		st.lead++
	}
	if c >= 'A' && c <= 'Z' {
		c += 'a' - 'A'
	}
	if st.n == len(st.tail) {
		copy(st.tail[:], st.tail[1:])
		st.n--
	}
	st.tail[st.n] = c
	st.n++
}

// noteRune records a rune of more than one byte.
func (st *state) noteRune(r rune) {
	blank := unicode.IsSpace(r)
	st.note(0, blank)
	st.col += utf8.RuneLen(r) - 1
}

// commandPrefix says whether the line so far ends with "##", "##vso" or
// "##teamcity", which a '[' would make a command.
func (st *state) commandPrefix() bool {
	t := st.tail[:st.n]
	for _, p := range [][]byte{[]byte("##"), []byte("##vso"), []byte("##teamcity")} {
		if bytes.HasSuffix(t, p) {
			return true
		}
	}
	return false
}

func groupMark(b []byte) bool {
	switch string(b) {
	case "---", "+++", "~~~", "^^^":
		return true
	}
	return false
}
