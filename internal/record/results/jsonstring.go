package results

import (
	"bench/internal/jsonvalue"
	"encoding/binary"
	"encoding/hex"
	"math/bits"
	"unicode/utf16"
	"unicode/utf8"
)

// The fast decoder's JSON strings, read a word (8 bytes) at a time: most
// of a results line is the answer and the reasoning, and an answer of
// short lines has an escape every few dozen bytes, so finding the next
// byte that matters quickly, with no call per run, is most of reading a
// line. Strings mean what encoding/json makes of them: an escape is
// decoded, a surrogate pair is one rune, a lone surrogate and each byte of
// invalid UTF-8 are U+FFFD, a raw control character or a bad escape makes
// the line encoding/json's to judge.

const (
	ones  = 0x0101010101010101
	highs = 0x8080808080808080
)

// specials marks, in the high bit of each of its bytes, x's quotes,
// backslashes and bytes below 0x20, and with high its bytes of 0x80 and
// above. A mark above the lowest may be spurious (a borrow carried up):
// only the lowest is used.
func specials(x uint64, high bool) uint64 {
	q, s := x^(ones*'"'), x^(ones*'\\')
	m := (q-ones)&^q | (s-ones)&^s | (x-ones*0x20)&^x
	if high {
		m |= x
	}
	return m & highs
}

// nextSpecial is the index of the first quote, backslash or control byte
// of b at or after j (with high, or byte of 0x80 and above), len(b) when
// none.
func nextSpecial(b []byte, j int, high bool) int {
	for ; j+8 <= len(b); j += 8 {
		if m := specials(binary.LittleEndian.Uint64(b[j:]), high); m != 0 {
			return j + bits.TrailingZeros64(m)>>3
		}
	}
	for ; j < len(b); j++ {
		if c := b[j]; c == '"' || c == '\\' || c < 0x20 || (high && c >= utf8.RuneSelf) {
			return j
		}
	}
	return len(b)
}

// skipString reads past the JSON string at b[i] (its opening quote),
// checking it, and returns the index after its closing quote.
func skipString(b []byte, i int) (end int, ok bool) {
	for j := i + 1; ; {
		k := nextSpecial(b, j, false)
		if k == len(b) || b[k] < 0x20 {
			return 0, false
		}
		if b[k] == '"' {
			return k + 1, true
		}
		if j, ok = escapeEnd(b, k); !ok {
			return 0, false
		}
	}
}

// escapeEnd checks the escape at b[k] (its backslash) and returns the
// index after it.
func escapeEnd(b []byte, k int) (int, bool) {
	if k+1 >= len(b) {
		return 0, false
	}
	switch b[k+1] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		return k + 2, true
	case 'u':
		if k+5 < len(b) && isHex(b[k+2]) && isHex(b[k+3]) && isHex(b[k+4]) && isHex(b[k+5]) {
			return k + 6, true
		}
	}
	return 0, false
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// plainEnd is the end of the plain start of the JSON string whose text
// begins at b[j]: the index of its first quote, backslash, control byte
// or byte of invalid UTF-8 (len(b) when none). When it is the quote, the
// string is plain: its text is its bytes.
func plainEnd(b []byte, j int) int {
	for {
		k := nextSpecial(b, j, true)
		if k == len(b) || b[k] < utf8.RuneSelf {
			return k
		}
		r, size := utf8.DecodeRune(b[k:])
		if r == utf8.RuneError && size == 1 {
			return k
		}
		j = k + size
	}
}

// appendUnquoted appends to dst the text of the JSON string that goes on
// at b[k] (its text before k, if any, the caller has), up to its closing
// quote, and returns the index after the quote.
func appendUnquoted(dst, b []byte, k int) (out []byte, end int, ok bool) {
	for {
		j := k
		k = nextSpecial(b, j, true)
		dst = append(dst, b[j:k]...)
		if k == len(b) {
			return dst, 0, false
		}
		switch c := b[k]; {
		case c == '"':
			return dst, k + 1, true
		case c < 0x20:
			return dst, 0, false
		case c >= utf8.RuneSelf:
			r, size := utf8.DecodeRune(b[k:])
			if r == utf8.RuneError && size == 1 {
				dst = utf8.AppendRune(dst, utf8.RuneError)
			} else {
				dst = append(dst, b[k:k+size]...)
			}
			k += size
		default: // a backslash
			next, ok := escapeEnd(b, k)
			if !ok {
				return dst, 0, false
			}
			switch e := b[k+1]; e {
			case 'u':
				r := rune4(b[k+2 : k+6])
				if utf16.IsSurrogate(r) {
					// A pair is one rune; a surrogate alone is U+FFFD, and
					// what follows it is read on its own.
					pair := utf8.RuneError
					if next+1 < len(b) && b[next] == '\\' && b[next+1] == 'u' {
						if after, ok := escapeEnd(b, next); ok {
							if pair = utf16.DecodeRune(r, rune4(b[next+2:next+6])); pair != utf8.RuneError {
								next = after
							}
						}
					}
					r = pair
				}
				dst = utf8.AppendRune(dst, r)
			default: // escapeEnd has checked it is one of " \\ / b f n r t
				c, _ := jsonvalue.Unescape(e)
				dst = append(dst, c)
			}
			k = next
		}
	}
}

// rune4 is the value of a \u escape's four hex digits (escapeEnd has
// checked them).
func rune4(p []byte) rune {
	var v [2]byte
	hex.Decode(v[:], p[:4])
	return rune(v[0])<<8 | rune(v[1])
}
