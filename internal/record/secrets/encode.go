package secrets

import (
	"encoding/base64"
	"encoding/hex"
	"net/url"
	"strings"
)

// Encodings are the standard encodings of a secret that a server, a CLI
// or a validator may write instead of the secret itself, each one a
// secret too (scrubbed as the secret is, whole or by its 8-byte pieces):
//
//   - base64, standard and URL alphabets, padded: the secret encoded alone
//     (an Authorization: Basic header, a JWT's part);
//   - base64 at each of the three alignments a secret can have inside a
//     longer base64 text (a JSON credential file encoded whole, the key
//     after "user:"): at offset o (0, 1, 2 bytes into a 3-byte group) only
//     the characters every one of whose 6 bits comes from the secret are
//     the same whatever surrounds it, so those are the encoding; both
//     alphabets, which padding does not touch;
//   - hex, lower and upper case;
//   - URL encoding: url.QueryEscape and url.PathEscape (where they differ
//     from the secret), and every byte as %XX in either case (what a
//     client that escapes everything sends).
//
// An encoding shorter than a piece (8 bytes) is left out: it would be
// scrubbed only whole, and 4 to 7 characters of base64 or hex are
// ordinary text. The list may hold the secret itself (a secret URL
// encoding leaves as it is) and duplicates.
func Encodings(secret string) []string {
	var out []string
	add := func(e string) {
		if len(e) >= fragment && e != secret {
			out = append(out, e)
		}
	}
	b := []byte(secret)
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding} {
		add(enc.EncodeToString(b))
		raw := enc.WithPadding(base64.NoPadding)
		for o := range 3 {
			buf := make([]byte, o+len(b))
			copy(buf[o:], b)
			s := raw.EncodeToString(buf)
			// Character k holds bits 6k to 6k+6 of the text: from the
			// secret's when 8o <= 6k and 6k+6 <= 8(o+len).
			first, end := (8*o+5)/6, 8*(o+len(b))/6
			if end > first {
				add(s[first:end])
			}
		}
	}
	h := hex.EncodeToString(b)
	add(h)
	add(strings.ToUpper(h))
	add(url.QueryEscape(secret))
	add(url.PathEscape(secret))
	var every strings.Builder
	for i := 0; i < len(h); i += 2 {
		every.WriteString("%" + h[i:i+2])
	}
	add(every.String())
	add(strings.ToUpper(every.String()))
	return out
}
