package jsonvalue

// Hex4 reads the four hex digits at s[i:] (a \u escape's), in a string
// or in bytes: the secret scrub and the chat chunk decoder both read
// escapes.
func Hex4[T string | []byte](s T, i int) (rune, bool) {
	if i < 0 || i+4 > len(s) {
		return 0, false
	}
	var r rune
	for k := i; k < i+4; k++ {
		c := s[k]
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c -= 'a' - 10
		case c >= 'A' && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

// IsHighSurrogate and IsLowSurrogate say which half of a UTF-16
// surrogate pair a \u escape is.
func IsHighSurrogate(r rune) bool { return r >= 0xD800 && r < 0xDC00 }
func IsLowSurrogate(r rune) bool  { return r >= 0xDC00 && r < 0xE000 }

// Unescape is the byte a one-character JSON escape stands for (the e of
// \e: " \ / b f n r t), and false for any other (u's four hex digits are
// Hex4's).
func Unescape(e byte) (byte, bool) {
	switch e {
	case '"', '\\', '/':
		return e, true
	case 'b':
		return '\b', true
	case 'f':
		return '\f', true
	case 'n':
		return '\n', true
	case 'r':
		return '\r', true
	case 't':
		return '\t', true
	}
	return 0, false
}
