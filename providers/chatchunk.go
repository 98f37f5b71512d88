package providers

import (
	"unicode/utf16"
	"unicode/utf8"

	"bench/internal/jsonvalue"
)

// decodeChunk is the fast path of readChatStream: a decoder written for
// chatChunk alone, for the shapes servers send (Ollama's /v1, vLLM,
// OpenAI). A chunk is decoded per streamed token, and the general decoder
// spends most of its time on reflection, case-insensitive name lookup and
// skipping the fields bench ignores; this one matches names as bytes and
// skips by scanning.
//
// It reports ok=false on anything it is not sure encoding/json would
// decode the same way: a name in another case or with escapes, a known
// name twice, invalid UTF-8, a lone surrogate escape, a number that is not
// a plain integer, a value of the wrong type, invalid JSON, nesting deeper
// than maxChunkDepth. The caller then decodes with chunkJSON, so the
// result never differs (FuzzDecodeChunk holds the two to that). Written by
// hand rather than with a fast JSON library because none of them promises
// encoding/json's exact semantics, and giving up is the point.
//
// ch must be the zero value; on ok=false it may be partly filled.
func decodeChunk(data []byte, ch *chatChunk) bool {
	s := chunkScanner{b: data}
	s.space()
	var seen uint8
	ok := s.object(func(name []byte) bool {
		switch string(name) {
		case "choices":
			return once(&seen, 1) && s.choices(&ch.Choices)
		case "usage":
			return once(&seen, 2) && s.usage(&ch.Usage)
		case "error":
			return once(&seen, 4) && s.error(&ch.Error)
		}
		return s.skipField(name)
	})
	s.space()
	return ok && s.i == len(s.b)
}

// maxChunkDepth bounds the nesting decodeChunk skips through; encoding/json
// allows 10000, so below this the two agree.
const maxChunkDepth = 64

// chunkScanner reads JSON from b at i. Its methods return false to give
// up, and everything unwinds.
type chunkScanner struct {
	b     []byte
	i     int
	depth int
}

// once marks bit in seen and reports whether it was clear: a known name
// twice is given up on, since encoding/json merges the two values.
func once(seen *uint8, bit uint8) bool {
	if *seen&bit != 0 {
		return false
	}
	*seen |= bit
	return true
}

// space skips JSON whitespace.
func (s *chunkScanner) space() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// consume skips whitespace then c, if c is next.
func (s *chunkScanner) consume(c byte) bool {
	s.space()
	if s.i < len(s.b) && s.b[s.i] == c {
		s.i++
		return true
	}
	return false
}

// null consumes a null literal if one is next. For every field of
// chatChunk, null leaves the (zero) value as it is, the same as absent.
func (s *chunkScanner) null() bool {
	s.space()
	if len(s.b)-s.i >= 4 && string(s.b[s.i:s.i+4]) == "null" {
		s.i += 4
		return true
	}
	return false
}

// object reads an object, calling field with each member's name with the
// scanner before the value; field reads the value.
func (s *chunkScanner) object(field func(name []byte) bool) bool {
	if !s.consume('{') {
		return false
	}
	if s.depth++; s.depth > maxChunkDepth {
		return false
	}
	if s.consume('}') {
		s.depth--
		return true
	}
	for {
		s.space()
		name, ok := s.name()
		if !ok || !s.consume(':') || !field(name) {
			return false
		}
		if s.consume('}') {
			s.depth--
			return true
		}
		if !s.consume(',') {
			return false
		}
	}
}

// array reads an array, calling elem before each element; elem reads it.
func (s *chunkScanner) array(elem func() bool) bool {
	if !s.consume('[') {
		return false
	}
	if s.depth++; s.depth > maxChunkDepth {
		return false
	}
	if s.consume(']') {
		s.depth--
		return true
	}
	for {
		if !elem() {
			return false
		}
		if s.consume(']') {
			s.depth--
			return true
		}
		if !s.consume(',') {
			return false
		}
	}
}

// name reads a member name as its raw bytes. A name with an escape could
// spell a known name, so it is given up on.
func (s *chunkScanner) name() ([]byte, bool) {
	if s.i >= len(s.b) || s.b[s.i] != '"' {
		return nil, false
	}
	start := s.i + 1
	for j := start; j < len(s.b); j++ {
		switch c := s.b[j]; {
		case c == '"':
			s.i = j + 1
			return s.b[start:j], true
		case c == '\\' || c < 0x20:
			return nil, false
		}
	}
	return nil, false
}

// skipField skips the value of a name chatChunk does not have at this
// level. encoding/json matches names without regard to case (and folds
// some non-ASCII letters, such as the Kelvin sign, to ASCII ones), so a
// name with an upper-case or non-ASCII letter might be a known one in
// another case: given up on. All known names are lower-case ASCII.
func (s *chunkScanner) skipField(name []byte) bool {
	for _, c := range name {
		if c >= 'A' && c <= 'Z' || c >= utf8.RuneSelf {
			return false
		}
	}
	return s.skip()
}

// skip reads any JSON value, checking it is valid.
func (s *chunkScanner) skip() bool {
	s.space()
	if s.i >= len(s.b) {
		return false
	}
	switch c := s.b[s.i]; {
	case c == '{':
		return s.object(func([]byte) bool { return s.skip() })
	case c == '[':
		return s.array(s.skip)
	case c == '"':
		_, ok := s.str(false)
		return ok
	case c == 't':
		return s.literal("true")
	case c == 'f':
		return s.literal("false")
	case c == 'n':
		return s.literal("null")
	case c == '-' || c >= '0' && c <= '9':
		return s.number()
	}
	return false
}

func (s *chunkScanner) literal(lit string) bool {
	if len(s.b)-s.i >= len(lit) && string(s.b[s.i:s.i+len(lit)]) == lit {
		s.i += len(lit)
		return true
	}
	return false
}

// number reads a JSON number: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?
func (s *chunkScanner) number() bool {
	s.consume('-')
	if s.i < len(s.b) && s.b[s.i] == '0' {
		s.i++
	} else if !s.digits() {
		return false
	}
	if s.i < len(s.b) && s.b[s.i] == '.' {
		s.i++
		if !s.digits() {
			return false
		}
	}
	if s.i < len(s.b) && (s.b[s.i] == 'e' || s.b[s.i] == 'E') {
		s.i++
		if s.i < len(s.b) && (s.b[s.i] == '+' || s.b[s.i] == '-') {
			s.i++
		}
		if !s.digits() {
			return false
		}
	}
	return true
}

// digits reads one or more decimal digits.
func (s *chunkScanner) digits() bool {
	start := s.i
	for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
		s.i++
	}
	return s.i > start
}

// integer reads a number into an int. Only plain integers of at most 18
// digits are taken (no fraction, exponent or leading zero, no overflow);
// encoding/json refuses the first two for an int, and the rest is rare
// enough to leave to it.
func (s *chunkScanner) integer(v *int) bool {
	s.space()
	neg := s.i < len(s.b) && s.b[s.i] == '-'
	if neg {
		s.i++
	}
	start, n := s.i, 0
	for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
		n = n*10 + int(s.b[s.i]-'0')
		s.i++
	}
	digits := s.i - start
	if digits == 0 || digits > 18 || digits > 1 && s.b[start] == '0' {
		return false
	}
	if s.i < len(s.b) {
		switch s.b[s.i] {
		case '.', 'e', 'E':
			return false
		}
	}
	if neg {
		n = -n
	}
	*v = n
	return true
}

// string reads a string value into v (null leaves it as it is).
func (s *chunkScanner) string(v *string) bool {
	if s.null() {
		return true
	}
	str, ok := s.str(true)
	*v = str
	return ok
}

// str reads a string. With keep it returns the decoded text; without, it
// only checks the string is valid. Escapes are decoded as encoding/json
// does; a surrogate escape that is not half of a valid pair (which
// encoding/json turns into U+FFFD) and invalid UTF-8 (the same) are given
// up on.
func (s *chunkScanner) str(keep bool) (string, bool) {
	if s.i >= len(s.b) || s.b[s.i] != '"' {
		return "", false
	}
	start := s.i + 1
	j := start
	// Most strings have no escape: one scan, one copy.
	for j < len(s.b) {
		c := s.b[j]
		if c == '"' {
			s.i = j + 1
			if !keep {
				return "", true
			}
			return string(s.b[start:j]), true
		}
		if c == '\\' {
			break
		}
		if c < 0x20 {
			return "", false
		}
		if c < utf8.RuneSelf {
			j++
			continue
		}
		r, size := utf8.DecodeRune(s.b[j:])
		if r == utf8.RuneError && size == 1 {
			return "", false
		}
		j += size
	}
	// Escaped strings are put together on the stack (most are short), and
	// copied once into the string.
	var stack [128]byte
	buf := append(stack[:0], s.b[start:j]...)
	for j < len(s.b) {
		c := s.b[j]
		switch {
		case c == '"':
			s.i = j + 1
			if !keep {
				return "", true
			}
			return string(buf), true
		case c == '\\':
			if j+1 >= len(s.b) {
				return "", false
			}
			j += 2
			e := s.b[j-1]
			if c, ok := jsonvalue.Unescape(e); ok {
				buf = append(buf, c)
				continue
			}
			switch e {
			case 'u':
				r, ok := jsonvalue.Hex4(s.b, j)
				if !ok {
					return "", false
				}
				j += 4
				if utf16.IsSurrogate(r) {
					// Only a high half followed by an escaped low half.
					if !jsonvalue.IsHighSurrogate(r) || len(s.b)-j < 6 || s.b[j] != '\\' || s.b[j+1] != 'u' {
						return "", false
					}
					lo, ok := jsonvalue.Hex4(s.b, j+2)
					if !ok || !jsonvalue.IsLowSurrogate(lo) {
						return "", false
					}
					j += 6
					r = utf16.DecodeRune(r, lo)
				}
				buf = utf8.AppendRune(buf, r)
			default:
				return "", false
			}
		case c < 0x20:
			return "", false
		case c < utf8.RuneSelf:
			buf = append(buf, c)
			j++
		default:
			r, size := utf8.DecodeRune(s.b[j:])
			if r == utf8.RuneError && size == 1 {
				return "", false
			}
			buf = append(buf, s.b[j:j+size]...)
			j += size
		}
	}
	return "", false
}

func (s *chunkScanner) choices(v *[]chatChoice) bool {
	if s.null() {
		return true
	}
	// An empty array is an empty slice, not nil, as encoding/json has it.
	*v = make([]chatChoice, 0, 1)
	return s.array(func() bool {
		if s.null() {
			return false // encoding/json keeps what the element held
		}
		*v = append(*v, chatChoice{})
		c := &(*v)[len(*v)-1]
		var seen uint8
		return s.object(func(name []byte) bool {
			switch string(name) {
			case "delta":
				return once(&seen, 1) && (s.null() || s.delta(&c.Delta))
			case "finish_reason":
				return once(&seen, 2) && s.string(&c.FinishReason)
			}
			return s.skipField(name)
		})
	})
}

func (s *chunkScanner) delta(d *chatDelta) bool {
	var seen uint8
	return s.object(func(name []byte) bool {
		switch string(name) {
		case "content":
			return once(&seen, 1) && s.string(&d.Content)
		case "reasoning_content":
			return once(&seen, 2) && s.string(&d.ReasoningContent)
		case "reasoning":
			return once(&seen, 4) && s.string(&d.Reasoning)
		case "tool_calls":
			return once(&seen, 8) && s.toolCalls(&d.ToolCalls)
		}
		return s.skipField(name)
	})
}

func (s *chunkScanner) toolCalls(v *[]chatToolCall) bool {
	if s.null() {
		return true
	}
	*v = make([]chatToolCall, 0, 1)
	return s.array(func() bool {
		if s.null() {
			return false
		}
		*v = append(*v, chatToolCall{})
		tc := &(*v)[len(*v)-1]
		var seen uint8
		return s.object(func(name []byte) bool {
			switch string(name) {
			case "index":
				if !once(&seen, 1) {
					return false
				}
				if s.null() {
					return true
				}
				tc.Index = new(int)
				return s.integer(tc.Index)
			case "id":
				return once(&seen, 2) && s.string(&tc.ID)
			case "function":
				if !once(&seen, 4) {
					return false
				}
				if s.null() {
					return true
				}
				var fseen uint8
				return s.object(func(name []byte) bool {
					switch string(name) {
					case "name":
						return once(&fseen, 1) && s.string(&tc.Function.Name)
					case "arguments":
						return once(&fseen, 2) && s.string(&tc.Function.Arguments)
					}
					return s.skipField(name)
				})
			}
			return s.skipField(name)
		})
	})
}

func (s *chunkScanner) usage(v **chatUsage) bool {
	if s.null() {
		return true
	}
	u := &chatUsage{}
	*v = u
	var seen uint8
	return s.object(func(name []byte) bool {
		switch string(name) {
		case "prompt_tokens":
			return once(&seen, 1) && (s.null() || s.integer(&u.PromptTokens))
		case "completion_tokens":
			return once(&seen, 2) && (s.null() || s.integer(&u.CompletionTokens))
		case "prompt_tokens_details":
			if !once(&seen, 4) {
				return false
			}
			if s.null() {
				return true
			}
			d := &u.PromptTokensDetails
			*d = &chatPromptDetails{}
			var dseen uint8
			return s.object(func(name []byte) bool {
				if string(name) != "cached_tokens" {
					return s.skipField(name)
				}
				if !once(&dseen, 1) {
					return false
				}
				if s.null() {
					return true
				}
				(*d).CachedTokens = new(int)
				return s.integer((*d).CachedTokens)
			})
		case "completion_tokens_details":
			if !once(&seen, 8) {
				return false
			}
			if s.null() {
				return true
			}
			d := &u.CompletionTokensDetails
			*d = &chatCompletionDetails{}
			var dseen uint8
			return s.object(func(name []byte) bool {
				if string(name) != "reasoning_tokens" {
					return s.skipField(name)
				}
				return once(&dseen, 1) && (s.null() || s.integer(&(*d).ReasoningTokens))
			})
		}
		return s.skipField(name)
	})
}

// error reads an error object. Its code is kept as the raw bytes of its
// value, whatever their type, as json.RawMessage is.
func (s *chunkScanner) error(v **chatError) bool {
	if s.null() {
		return true
	}
	e := &chatError{}
	*v = e
	var seen uint8
	return s.object(func(name []byte) bool {
		switch string(name) {
		case "message":
			return once(&seen, 1) && s.string(&e.Message)
		case "type":
			return once(&seen, 2) && s.string(&e.Type)
		case "code":
			if !once(&seen, 4) {
				return false
			}
			s.space()
			start := s.i
			if !s.skip() {
				return false
			}
			e.Code = append([]byte(nil), s.b[start:s.i]...)
			return true
		}
		return s.skipField(name)
	})
}
