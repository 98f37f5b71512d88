package printable

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestString(t *testing.T) {
	cases := []struct{ name, in, want string }{
		{"plain", "model qwen3:4b failed: 500 [x]", "model qwen3:4b failed: 500 [x]"},
		{"tab and newline kept", "a\tb\nc", "a\tb\nc"},
		{"clear screen", "\x1b[2J\x1b[Hhi", `\x1b[2J\x1b[Hhi`},
		{"window title", "\x1b]0;pwned\x07", `\x1b]0;pwned\x07`},
		{"OSC 52 clipboard", "\x1b]52;c;ZWNobyBwd25lZA==\x1b\\", `\x1b]52;c;ZWNobyBwd25lZA==\x1b\`},
		{"carriage return", "ok\rEVIL", `ok\x0dEVIL`},
		{"C1 CSI", "a\u009b31mb", `a\u009b31mb`},
		{"bidi override", "abc\u202edcba", `abc\u202edcba`},
		{"line separator", "a\u2028::error::x", `a\u2028::error::x`},
		{"invalid UTF-8", "a\xffb", "a\uFFFDb"},
		{"GitHub command", "body:\n::error title=pwned::x", "body:\n:\\x3aerror title=pwned::x"},
		{"GitHub command after blanks", "x\n  \t\u00a0::warning::y", "x\n  \t\u00a0:\\x3awarning::y"},
		{"colons later in the line", "a::b\n x ::y", "a::b\n x ::y"},
		{"GitHub legacy", "text ##[error]bad", `text ##\x5berror]bad`},
		{"Azure anywhere", "x ##vso[task.setvariable variable=a]b", `x ##vso\x5btask.setvariable variable=a]b`},
		{"Azure any case", "##VSO[task.complete]", `##VSO\x5btask.complete]`},
		{"TeamCity", "##teamcity[buildStatus text='x']", `##teamcity\x5bbuildStatus text='x']`},
		{"Markdown headings kept", "## Ranking\n### [link](x)", "## Ranking\n### [link](x)"},
		{"Buildkite group", "--- :boom: pwned\n+++ x\n~~~ y\n^^^ +++", `---\x20:boom: pwned` + "\n" + `+++\x20x` + "\n" + `~~~\x20y` + "\n" + `^^^\x20+++`},
		{"rules and tables kept", "---\n|---|---|\n - --- x", "---\n|---|---|\n - --- x"},
	}
	for _, c := range cases {
		if got := String(c.in); got != c.want {
			t.Errorf("%s: String(%q) = %q, want %q", c.name, c.in, got, c.want)
		}
	}
}

// What is printed never holds a control character other than tab and
// newline, is valid UTF-8, and no line of it starts a GitHub command,
// whatever the input and however it is split into writes.
func FuzzWriter(f *testing.F) {
	f.Add([]byte("\n::error::x\x1b[2J"), 3)
	f.Add([]byte("é\xe2\x82"), 1)
	f.Add([]byte(" :\n:"), 2)
	f.Fuzz(func(t *testing.T, in []byte, split int) {
		var out bytes.Buffer
		w := New(&out)
		if split > 0 && split < len(in) {
			w.Write(in[:split])
			w.Write(in[split:])
		} else {
			w.Write(in)
		}
		w.Flush()
		checkPrintable(t, out.String())
		if split <= 0 || split >= len(in) {
			if got := String(string(in)); got != out.String() {
				t.Errorf("String and Writer differ: %q vs %q", got, out.String())
			}
		}
	})
}

func checkPrintable(t *testing.T, s string) {
	t.Helper()
	if !utf8.ValidString(s) {
		t.Fatalf("not UTF-8: %q", s)
	}
	for _, r := range s {
		if (r < 0x20 && r != '\t' && r != '\n') || r == 0x7f || (r >= 0x80 && r <= 0x9f) {
			t.Fatalf("control character %U in %q", r, s)
		}
	}
	for _, line := range strings.Split(s, "\n") {
		if strings.HasPrefix(strings.TrimLeft(line, " \t\u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u202f\u205f\u3000"), "::") {
			t.Fatalf("line starts a workflow command: %q", line)
		}
		if l := strings.ToLower(line); strings.Contains(l, "##[") || strings.Contains(l, "##vso[") || strings.Contains(l, "##teamcity[") {
			t.Fatalf("line holds a workflow command: %q", line)
		}
	}
}

// A command split across writes is caught, and a rune split across writes
// is kept whole.
func TestWriterAcrossWrites(t *testing.T) {
	var out bytes.Buffer
	w := New(&out)
	for _, p := range []string{"ok\n", ":", ":error::x\n", "##v", "so[y]\n", "caf\xc3", "\xa9\n", "end\xe2\x82"} {
		w.Write([]byte(p))
	}
	w.Flush()
	want := "ok\n:\\x3aerror::x\n##vso\\x5by]\ncafé\nend\uFFFD\uFFFD"
	if out.String() != want {
		t.Errorf("got %q, want %q", out.String(), want)
	}
	if w.Unwrap() != &out {
		t.Error("Unwrap is not the wrapped writer")
	}
}
