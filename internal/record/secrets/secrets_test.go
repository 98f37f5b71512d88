package secrets

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestSecretsClean(t *testing.T) {
	key := "sk-proj-AbCdEfGhIjKlMnOpQrStUvWx"
	s := New(key, "", "ab")
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
			got := New(key).Clean(text, cut)
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
		got := New(key).Clean(text, max)
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

func jsonEscaped(s string) string {
	var b strings.Builder
	for _, r := range s {
		fmt.Fprintf(&b, `\u%04X`, r)
	}
	return b.String()
}

// A key hidden by JSON escapes is found in the text the escapes stand for,
// and the whole escaped run is replaced.
func TestSecretsCleanEscaped(t *testing.T) {
	key := "sk-test-" + "Zx9Cv8Bn7Mq6Wp5"
	s := New(key)
	cases := []struct{ name, in, want string }{
		{"all escaped", `{"a":"` + jsonEscaped(key) + `"}`, `{"a":"[redacted]"}`},
		{"some escaped", `key=\u0073k-test-Zx9Cv8Bn7Mq6Wp5 end`, `key=[redacted] end`},
		{"piece escaped", `tail \u005a\u0078\u0039Cv8Bn7Mq6Wp5!`, `tail [redacted]!`},
		{"escapes of other text are kept", `line\nnext \u00e9 \"q\"`, `line\nnext \u00e9 \"q\"`},
		{"double escaped", `{\"k\":\"\u0073k-test-Zx9Cv8Bn7Mq6Wp5\"}`, `{\"k\":\"[redacted]\"}`},
	}
	for _, c := range cases {
		if got := s.Clean(c.in, 0); got != c.want {
			t.Errorf("%s: Clean(%q) = %q, want %q", c.name, c.in, got, c.want)
		}
	}
	// Some encoders write "/" as "\/" (a base64 key holds slashes).
	if got := New("ghs/Ab12Cd34Ef56").Clean(`k=ghs\/Ab12Cd34Ef56`, 0); got != "k=[redacted]" {
		t.Errorf("slash escaped: %q", got)
	}
}

// JSON decodes a value before cleaning it and re-encodes it after, so no
// JSON parser can recover the key from what is kept; a clean value is kept
// byte for byte.
func TestSecretsJSON(t *testing.T) {
	key := "sk-test-" + "Zx9Cv8Bn7Mq6Wp5"
	s := New(key)
	cases := []struct{ name, in, want string }{
		{"escaped value", `{"cmd": "echo ` + jsonEscaped(key) + `", "n": 10.50}`, `{"cmd":"echo [redacted]","n":10.50}`},
		{"escaped key", `{"` + jsonEscaped(key) + `": true}`, `{"[redacted]":true}`},
		{"nested", `[1, {"a": ["` + key + `"]}]`, `[1,{"a":["[redacted]"]}]`},
		{"escaped twice", `{"cmd": "echo '{\"k\":\"` + strings.ReplaceAll(jsonEscaped(key), `\`, `\\`) + `\"}'"}`, `{"cmd":"echo '{\"k\":\"[redacted]\"}'"}`},
		{"clean kept as sent", `{ "unit" :  "MB" }`, `{ "unit" :  "MB" }`},
		{"not JSON", `oops ` + key + ` {`, `"oops [redacted] {"`},
		{"edge of a string", `{"a":"ends sk-te"}`, `{"a":"ends [redacted]"}`},
	}
	for _, c := range cases {
		got := string(s.JSON(json.RawMessage(c.in)))
		if got != c.want {
			t.Errorf("%s: JSON(%s) = %s, want %s", c.name, c.in, got, c.want)
		}
		if !json.Valid([]byte(got)) {
			t.Errorf("%s: %s is not JSON", c.name, got)
		}
	}
	if got := (Set{}).JSON(json.RawMessage(`{"a":1}`)); string(got) != `{"a":1}` {
		t.Errorf("no secrets: %s", got)
	}
}

// naiveSpans is spans by brute force: every 8-byte window of text looked up
// in every secret, then every whole-only secret found.
func naiveSpans(t *secretSet, text string) []span {
	var out []span
	for i := 0; i+fragment <= len(text); i++ {
		hit := false
		for _, v := range t.values {
			if !slices.Contains(t.wholeOnly, v) && strings.Contains(v, text[i:i+fragment]) {
				hit = true
			}
		}
		if !hit {
			continue
		}
		if n := len(out); n > 0 && out[n-1].j > i {
			out[n-1].j = i + fragment
		} else {
			out = append(out, span{i, i + fragment})
		}
	}
	for _, v := range t.wholeOnly {
		for off := 0; ; {
			k := strings.Index(text[off:], v)
			if k < 0 {
				break
			}
			out = append(out, span{off + k, off + k + len(v)})
			off += k + len(v)
		}
	}
	return out
}

// The sampled scan finds exactly what looking at every window finds,
// wherever a piece of whatever length sits.
func FuzzSpansSampled(f *testing.F) {
	f.Add("sk-test-Zx9Cv8Bn7Mq6Wp5", "lorem sk-test-Zx9 ipsum Cv8Bn7Mq6Wp5 x", 3, 11)
	f.Add("abcdefghij", "xxabcdefghxx", 0, 0)
	f.Fuzz(func(t *testing.T, key, text string, at, n int) {
		s := New(key)
		if s.set == nil || len(text) > 1<<12 {
			return
		}
		// Plant a piece of the key in the text.
		if at >= 0 && at <= len(text) && n >= 0 && n <= len(key) {
			text = text[:at] + key[len(key)-n:] + text[at:]
		}
		got, want := s.set.spans(text, nil), naiveSpans(s.set, text)
		if !slices.Equal(got, want) {
			t.Fatalf("spans(%q) with key %q = %v, brute force %v", text, key, got, want)
		}
	})
}

// secretPiece returns an 8-byte piece of secret found in text, or "".
func secretPiece(text, secret string) string {
	for i := 0; i+fragment <= len(secret); i++ {
		if strings.Contains(text, secret[i:i+fragment]) {
			return secret[i : i+fragment]
		}
	}
	return ""
}
