package answers

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"
)

// A cell's array written by hand is encoding/json's of the same values,
// whatever they are: nil and set pointers, negative and large numbers,
// costs at every magnitude encoding/json switches format at, calls and
// turns present, empty or absent.
func TestCellJSONIsEncodingJSONs(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	i32 := func() int32 { return int32(rng.IntN(2001) - 1000) }
	costs := []float64{0, 1, -1, 1e-6, 9.99e-7, 1e-7, 1.5e-9, 1e20, 1e21, 1.234e21, -1e-7, 0.1 + 0.2, 1e308, 5e-324, math.Copysign(0, -1), 0.000123}
	for n := range 2000 {
		c := Cell{group: i32(), prompt: i32(), rep: i32(), line: i32(), status: i32(), verdict: i32(), text: i32(), textBytes: i32(),
			keptBytes: i32(), reasoning: i32(), violation: i32(), errText: i32(), e2e: rng.Int64() - rng.Int64()}
		if n%3 > 0 {
			v := rng.Int64N(1<<40) - 1<<39
			c.ttft = &v
		}
		if n%4 > 0 {
			v := rng.IntN(1<<20) - 1<<19
			c.out = &v
		}
		if n%5 > 0 {
			v := costs[n%len(costs)]
			if n%7 == 0 {
				v = rng.Float64() * math.Pow(10, float64(rng.IntN(40)-20))
			}
			c.cost = &v
		}
		switch n % 3 {
		case 1:
			c.calls = [][3]int{}
		case 2:
			c.calls = [][3]int{{1, -1, 3}, {4, 5, 0}}
		}
		switch n % 4 {
		case 1:
			c.turns = []any{}
		case 2:
			c.turns = []any{[]any{1, -1, [][4]int{}, 0}, []any{2, 3, [][4]int{{1, 2, 3, 4}, {-1, -1, -1, 0}}, 2}}
		case 3:
			c.turns = []any{[]any{1, -1, [][4]int{{5, 6, 7, 8}}, 0}, 12}
		}
		c.redacted = n%3 == 0
		red := 0
		if c.redacted {
			red = 1
		}
		want, err := json.Marshal([19]any{int(c.group), int(c.prompt), int(c.rep), int(c.line), int(c.status), int(c.verdict),
			int(c.text), int(c.textBytes), int(c.keptBytes), int(c.reasoning), int(c.violation), int(c.errText),
			c.ttft, c.e2e, c.out, c.cost, c.calls, c.turns, red})
		if err != nil {
			t.Fatal(err)
		}
		got, err := c.MarshalJSON()
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("cell %d: %s (%v), want %s", n, got, err, want)
		}
	}
	inf := math.Inf(1)
	if _, err := (&Cell{cost: &inf}).MarshalJSON(); err == nil {
		t.Error("an infinite cost encoded")
	}
}

// cut's shortcut (only the kept start checked) cuts as the whole check
// does, around multi-byte runes and invalid bytes at every place.
func TestCutShortcut(t *testing.T) {
	whole := func(s string, n int) string {
		if !utf8.ValidString(s) {
			s = strings.ToValidUTF8(s, "\uFFFD")
		}
		if len(s) <= n {
			return s
		}
		for n > 0 && !utf8.RuneStart(s[n]) {
			n--
		}
		return s[:n]
	}
	pieces := []string{"a", "é", "€", "😀", "\xff", "\xe2\x82", "\xed\xa0\x80", "\uFFFD", "\xc3"}
	rng := rand.New(rand.NewPCG(3, 4))
	for range 20000 {
		var b strings.Builder
		for range rng.IntN(12) {
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
		s := b.String()
		for n := range len(s) + 2 {
			if got, want := cut(s, n), whole(s, n); got != want {
				t.Fatalf("cut(%q, %d) = %q, want %q", s, n, got, want)
			}
		}
	}
}

// argsText's shortcut gives json.Compact's text, or the text itself when
// it is not JSON.
func TestArgsTextShortcut(t *testing.T) {
	for _, a := range []string{`{}`, `{"a":1}`, `{"command":"free -h","n":[1,2]}`, `{ "a" : 1 }`, "{\"a\":\n1}", `{"a":"x\" y"}`,
		`{"a":"x\\"}`, `{"a":"x\\" , "b":1}`, `not json`, `not json at all`, `"a b"`, `["a", "b"]`, `{"a":"\t"}`, "{\"a\":\"\t\"}", `{"a":"é ü"}`} {
		want := a
		var b bytes.Buffer
		if json.Compact(&b, []byte(a)) == nil {
			want = b.String()
		}
		if got := argsText([]byte(a)); got != want {
			t.Errorf("argsText(%q) = %q, want %q", a, got, want)
		}
	}
}
