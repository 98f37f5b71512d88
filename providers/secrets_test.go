package providers

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestSecretsClean(t *testing.T) {
	key := "sk-proj-AbCdEfGhIjKlMnOpQrStUvWx"
	s := Secrets{key, "", "ab"}
	cases := []struct {
		name, in string
		max      int
		want     string
	}{
		{"whole key", "bad key " + key + " given", 0, "bad key [redacted] given"},
		{"twice", key + key, 0, "[redacted][redacted]"},
		{"piece quoted by the server", "Incorrect key sk-proj-AbCdEfGh****", 0, "Incorrect key [redacted]****"},
		{"tail that starts inside the key", "MnOpQrStUvWx rejected", 0, "[redacted] rejected"},
		{"short values are not secrets", "ab cd", 0, "ab cd"},
		{"cut after scrubbing", "xxxx " + key + " yyyy", 12, "xxxx [redact..."},
		{"cut inside what would be a prefix", "error: sk-pr", 0, "error: [redacted]"},
	}
	for _, c := range cases {
		if got := s.Clean(c.in, c.max); got != c.want {
			t.Errorf("%s: Clean(%q, %d) = %q, want %q", c.name, c.in, c.max, got, c.want)
		}
	}
}

// Whatever the offset of the key and wherever the cut, no 8-byte piece of
// it survives, and the result is valid UTF-8 when the input was.
func TestSecretsCleanEveryOffsetAndCut(t *testing.T) {
	// A made-up key, put together so that no secret scanner takes the
	// source for a leaked one.
	key := "sk-ant-" + "api03-" + "Xy7Zq9Lm2Np4Rs6Tu8Vw0"
	for off := 0; off < 40; off++ {
		text := strings.Repeat("é", off) + "token=" + key + "; retry"
		for cut := 1; cut < len(text)+2; cut++ {
			got := Secrets{key}.Clean(text, cut)
			if p := secretPiece(got, key); p != "" {
				t.Fatalf("offset %d cut %d: %q left in %q", off, cut, p, got)
			}
			if !utf8.ValidString(got) {
				t.Fatalf("offset %d cut %d: invalid UTF-8 %q", off, cut, got)
			}
		}
	}
}

func FuzzSecretsClean(f *testing.F) {
	f.Add("prefix sk-test-123456789 suffix", "sk-test-123456789", 10)
	f.Add("", "abcdefgh", 0)
	f.Fuzz(func(t *testing.T, text, key string, max int) {
		if max < 0 || max > 1<<16 {
			return
		}
		got := Secrets{key}.Clean(text, max)
		if len(key) >= fragment && secretPiece(got, key) != "" && !strings.Contains(Redacted, key[:fragment]) {
			// A piece may only remain when it is part of the marker itself.
			for i := 0; i+fragment <= len(key); i++ {
				if strings.Contains(got, key[i:i+fragment]) && !strings.Contains(Redacted+"...", key[i:i+fragment]) {
					t.Fatalf("Clean(%q, %q, %d) = %q keeps %q", text, key, max, got, key[i:i+fragment])
				}
			}
		}
	})
}
