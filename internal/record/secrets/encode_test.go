package secrets

import (
	"encoding/base64"
	"encoding/hex"
	"net/url"
	"strings"
	"testing"
)

// A key with bytes that base64's two alphabets and URL encoding write
// differently ("+", "/", "=", "&", "%", " " are not in it: it is
// token-like).
const encKey = "sk-Xy7/Zq9+Lm2~Np4=Rs6.Tu8_Vw0!Ab3*Cd5"

// The encoded forms of a key wherever it sits in a longer text: base64
// of text with the key at each byte offset (std and URL, padded or not),
// hex (both cases), URL-encoded: after the scrub, decoding what is left
// recovers no 8-byte piece of the key, and the text around it is kept.
func TestEncodingsAreScrubbed(t *testing.T) {
	s := New(encKey)
	for off := range 7 {
		for _, tail := range []string{"", "x", "xy", `","more":"tail of the blob"}`} {
			blob := `{"user":"` + strings.Repeat("u", off) + `","key":"` + encKey + tail
			for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding, base64.RawStdEncoding, base64.RawURLEncoding} {
				text := "Authorization: Basic " + enc.EncodeToString([]byte(blob)) + " end"
				got := s.Text(text)
				if !strings.Contains(got, Redacted) || !strings.HasPrefix(got, "Authorization: Basic ") || !strings.HasSuffix(got, " end") {
					t.Fatalf("offset %d: %q", off, got)
				}
				// Whatever base64 is left, at any alignment, holds no piece.
				for _, part := range strings.Split(strings.TrimSuffix(strings.TrimPrefix(got, "Authorization: Basic "), " end"), Redacted) {
					for cut := range 4 {
						if len(part) < cut {
							continue
						}
						p := part[cut:]
						p = p[:len(p)/4*4]
						dec, _ := enc.WithPadding(base64.NoPadding).DecodeString(strings.TrimRight(p, "="))
						if piece := secretPiece(string(dec), encKey); piece != "" {
							t.Fatalf("offset %d %v: %q decodes to a piece %q", off, enc == base64.URLEncoding, part, piece)
						}
					}
				}
			}
		}
	}
	h := hex.EncodeToString([]byte(encKey))
	for _, text := range []string{"h=" + h + ";", "H=" + strings.ToUpper(h) + ";", "u=" + url.QueryEscape(encKey) + "&",
		"p=/" + url.PathEscape(encKey) + "/", "all=" + everyByte(encKey, false) + ";", "ALL=" + everyByte(encKey, true) + ";"} {
		got := s.Text(text)
		if strings.Count(got, Redacted) == 0 || got[len(got)-1] != text[len(text)-1] {
			t.Errorf("%q: %q", text, got)
		}
		if dec, err := url.QueryUnescape(got); err == nil && secretPiece(dec, encKey) != "" {
			t.Errorf("%q URL-decodes to a piece of the key", got)
		}
		if secretPiece(strings.ToLower(got), strings.ToLower(h)) != "" {
			t.Errorf("%q keeps a piece of the key's hex", got)
		}
	}
	// Half of the hex cut off at a text's end: no 8 hex digits are left.
	if got := New(encKey).Clean("id "+h[:40], 0); secretPiece(got, h) != "" {
		t.Errorf("a cut hex key: %q", got)
	}
}

func everyByte(s string, upper bool) string {
	var b strings.Builder
	for _, c := range []byte(s) {
		e := hex.EncodeToString([]byte{c})
		if upper {
			e = strings.ToUpper(e)
		}
		b.WriteString("%" + e)
	}
	return b.String()
}

// Ordinary base64 and hex (a digest, an id) are not touched: only the
// key's own forms are secrets, and no encoding stands at a text's edge.
func TestEncodingsLeaveOtherText(t *testing.T) {
	s := New(encKey)
	for _, text := range []string{
		"sha256:" + strings.Repeat("0123456789abcdef", 4),
		base64.StdEncoding.EncodeToString([]byte("an ordinary blob of text that is no key at all")),
		"6b73", "c2st", // the first bytes of the key's hex and base64 at an edge
	} {
		if got := s.Text(text); got != text {
			t.Errorf("%q became %q", text, got)
		}
	}
}

// Each encoding is one the key really has: decoding it (at its offset)
// gives the key's bytes back.
func TestEncodingsDecode(t *testing.T) {
	found := map[string]bool{}
	for _, e := range Encodings(encKey) {
		switch {
		case strings.HasPrefix(e, "%"):
			dec, err := url.PathUnescape(e)
			found["every byte"] = found["every byte"] || (err == nil && dec == encKey)
		case strings.Contains(e, "%"):
			dec, err := url.QueryUnescape(e)
			found["url"] = found["url"] || (err == nil && dec == encKey)
		}
		if dec, err := hex.DecodeString(e); err == nil {
			found["hex"] = found["hex"] || string(dec) == encKey
		}
		for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding} {
			if dec, err := enc.DecodeString(e); err == nil && string(dec) == encKey {
				found["base64"] = true
			}
			// A middle part decodes, once aligned, to a run of the key.
			for pad := range 4 {
				p := strings.Repeat("A", pad) + e
				p = p[:len(p)/4*4]
				if dec, err := enc.WithPadding(base64.NoPadding).DecodeString(p); err == nil && len(dec) > pad && strings.Contains(encKey, string(dec[pad:])) && len(dec)-pad >= 16 {
					found["base64 part"] = true
				}
			}
		}
	}
	for _, want := range []string{"every byte", "url", "hex", "base64", "base64 part"} {
		if !found[want] {
			t.Errorf("no %s encoding among %q", want, Encodings(encKey))
		}
	}
}
