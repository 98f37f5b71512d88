// Package secrets is the one scrub of everything bench keeps: a Set of
// secret values, compiled once, and the cleaning of a text, a JSON value
// or a whole record (results.Record.Scrub takes a Set as its Cleaner) on
// every path a record takes: bench run before anything writes it, bench
// rescore before the checks see it and after they ran, bench merge and
// bench report over what they read. A secret is found as it is written,
// behind JSON escapes, and in its standard encodings (encode.go: base64
// std and URL at each alignment, hex, URL-encoding); which values are
// secrets is the caller's to say (names.go: the config's and what a
// provider's process receives, never every credential-looking variable
// of bench's environment).
//
// Layer: the record (every stage's scrub; it imports only the record's
// results and the helpers).
package secrets

import (
	"bytes"
	"encoding/json"
	"slices"
	"sort"
	"strings"
	"unicode/utf8"

	"bench/internal/jsonvalue"
)

// Redacted replaces a secret in any text bench keeps.
const Redacted = "[redacted]"

// minSecret is the shortest value treated as a secret: shorter values (an
// env flag such as "1") would redact ordinary text and cannot be a key.
const minSecret = 4

// fragment is the shortest piece of a secret removed when it stands alone
// (a server quoting part of a key, a tail that starts inside one).
const fragment = 8

// maxPieceValue: only a token-like secret (no space, at most this many
// bytes) is scrubbed piece by piece; a long or spaced value (a PEM key, a
// JSON credential file) only whole, as its 8-byte pieces ("-----BEG",
// `"type": `) are ordinary text.
const maxPieceValue = 512

// Set holds the values that must never be kept (an API key, a CLI's env
// values, a command validator's credentials), compiled once for scanning:
// every 8-byte piece of a secret and of its encodings is in a hash set
// behind a bit filter, so a text is scanned in one pass whatever the
// number of secrets. The zero value holds none.
type Set struct{ set *secretSet }

type secretSet struct {
	// pieces and whole are the values the set was compiled from (before
	// their encodings), for Union.
	pieces, whole []string
	// values are the distinct secrets and their encodings, sorted.
	values []string
	// wholeOnly are found whole only: those shorter than a piece, and long
	// or spaced values.
	wholeOnly []string
	// grams are every 8-byte piece of the other secrets, filter a bit per
	// hash of a piece: most windows of a text are ruled out by one bit.
	grams  map[uint64]struct{}
	filter []uint64
	// quads has a bit per hash of each 4-byte piece of those secrets: a
	// text is sampled every 5 bytes against it (see spans), and only
	// around a hit are its 8-byte windows looked up.
	quads []uint64
	// inSecret marks the bytes some secret holds: a JSON escape that
	// stands for none of them (\n in most texts) cannot hide a secret.
	inSecret [256]bool
	// heads and tails index the piece-scrubbed secrets (as written, not
	// their encodings: 4 hex digits are too common an ending) by their
	// first and last 4 bytes, for a piece left at a text's edge
	// (trimEdges); edge is the longest of those secrets.
	heads, tails map[uint32][]string
	edge         int
	// edges has a bit per hash of each head and tail, for mayHold's scan.
	edges []uint64
}

const (
	filterBits = 16
	quadBits   = 16
	edgeBits   = 12
	gramMul    = 0x9E3779B97F4A7C15
	edgeMul    = 0x9E3779B1
)

// New compiles values, each as its shape says (Shaped): a token-like
// value is scrubbed whole and by any piece of 8 bytes or more, a long or
// spaced one whole; each in its encodings too. Values shorter than 4
// bytes are ignored.
func New(values ...string) Set {
	return Compile(Shaped(values))
}

// Shaped splits values into those scrubbed by their pieces (token-like:
// no space, tab, newline or quote, at most 512 bytes) and those scrubbed
// only whole.
func Shaped(values []string) (pieces, whole []string) {
	for _, v := range values {
		if len(v) > maxPieceValue || strings.ContainsAny(v, " \t\r\n\"") {
			whole = append(whole, v)
		} else {
			pieces = append(pieces, v)
		}
	}
	return pieces, whole
}

// Compile compiles pieces (scrubbed whole and by any 8-byte piece) and
// whole (scrubbed whole only), each with its encodings (Encodings) in the
// same way.
func Compile(pieces, whole []string) Set {
	t := &secretSet{}
	seen := map[string]bool{}
	add := func(v string, piecewise, edges bool) {
		if len(v) < minSecret || seen[v] {
			return
		}
		seen[v] = true
		t.values = append(t.values, v)
		for i := range len(v) {
			t.inSecret[v[i]] = true
		}
		if !piecewise || len(v) < fragment {
			t.wholeOnly = append(t.wholeOnly, v)
		}
		if !piecewise {
			return
		}
		if len(v) >= fragment {
			if t.grams == nil {
				t.grams = map[uint64]struct{}{}
				t.filter = make([]uint64, 1<<filterBits/64)
				t.quads = make([]uint64, 1<<quadBits/64)
			}
			for i := 0; i+4 <= len(v); i++ {
				h := load32(v, i) * edgeMul >> (32 - quadBits)
				t.quads[h>>6] |= 1 << (h & 63)
			}
			for i := 0; i+fragment <= len(v); i++ {
				w := load64(v, i)
				t.grams[w] = struct{}{}
				h := w * gramMul >> (64 - filterBits)
				t.filter[h>>6] |= 1 << (h & 63)
			}
		}
		if !edges {
			return
		}
		if t.heads == nil {
			t.heads, t.tails = map[uint32][]string{}, map[uint32][]string{}
			t.edges = make([]uint64, 1<<edgeBits/64)
		}
		for _, w := range []uint32{load32(v, 0), load32(v, len(v)-minSecret)} {
			h := w * edgeMul >> (32 - edgeBits)
			t.edges[h>>6] |= 1 << (h & 63)
		}
		t.heads[load32(v, 0)] = append(t.heads[load32(v, 0)], v)
		t.tails[load32(v, len(v)-minSecret)] = append(t.tails[load32(v, len(v)-minSecret)], v)
		t.edge = max(t.edge, len(v))
	}
	for _, v := range pieces {
		if len(v) >= minSecret && !slices.Contains(t.pieces, v) {
			t.pieces = append(t.pieces, v)
		}
		add(v, true, true)
	}
	for _, v := range whole {
		if len(v) >= minSecret && !slices.Contains(t.whole, v) {
			t.whole = append(t.whole, v)
		}
		add(v, false, false)
	}
	// The encodings after every value as written: a value that is also
	// another's encoding keeps its edges.
	for _, v := range pieces {
		if len(v) >= minSecret {
			for _, e := range Encodings(v) {
				add(e, true, false)
			}
		}
	}
	for _, v := range whole {
		if len(v) >= minSecret {
			for _, e := range Encodings(v) {
				add(e, false, false)
			}
		}
	}
	if len(t.values) == 0 {
		return Set{}
	}
	sort.Strings(t.values)
	// Longest first, so a secret that contains another is found whole.
	sort.SliceStable(t.wholeOnly, func(i, j int) bool { return len(t.wholeOnly[i]) > len(t.wholeOnly[j]) })
	return Set{t}
}

// Union is one set of every secret of sets.
func Union(sets ...Set) Set {
	var pieces, whole []string
	for _, s := range sets {
		if s.set != nil {
			pieces = append(pieces, s.set.pieces...)
			whole = append(whole, s.set.whole...)
		}
	}
	return Compile(pieces, whole)
}

// Empty says whether the set holds no secret.
func (s Set) Empty() bool { return s.set == nil }

// Len is how many values the set was compiled from (not counting their
// encodings).
func (s Set) Len() int {
	if s.set == nil {
		return 0
	}
	return len(s.set.pieces) + len(s.set.whole)
}

// load64 and load32 read 8 and 4 bytes of s at i, little-endian (the
// compiler makes each one load).
func load64(s string, i int) uint64 {
	_ = s[i+7]
	return uint64(s[i]) | uint64(s[i+1])<<8 | uint64(s[i+2])<<16 | uint64(s[i+3])<<24 |
		uint64(s[i+4])<<32 | uint64(s[i+5])<<40 | uint64(s[i+6])<<48 | uint64(s[i+7])<<56
}

func load32(s string, i int) uint32 {
	_ = s[i+3]
	return uint32(s[i]) | uint32(s[i+1])<<8 | uint32(s[i+2])<<16 | uint32(s[i+3])<<24
}

// Clean is the one way text from a server or a CLI is made safe to keep:
// every secret, and any piece of one of 8 bytes or more, is replaced by
// [redacted], in the text as it is and in the text its JSON escapes stand
// for (a key written as \u0073\u006b... is found); then the text is cut to
// max bytes (0 = no cut) on a rune boundary with "..." appended, and a
// piece of a secret left at either edge (a cut inside a key, a tail that
// began inside one) is removed too. Scrubbing before cutting matters: a
// cut inside a key would otherwise leave most of it where no whole key is
// left to find.
func (s Set) Clean(text string, max int) string {
	text, _, _ = s.clean(text, max, "...")
	return text
}

// Text is Clean without a cut: results.Record.Scrub's Cleaner.
func (s Set) Text(text string) string { return s.Clean(text, 0) }

// Cut is Clean for kept output (an answer, reasoning): the same scrub,
// then cut, without the "..." marker; cut says whether text was cut (at
// max, never by the scrub alone), redacted whether the scrub changed it.
func (s Set) Cut(text string, max int) (_ string, cut, redacted bool) {
	return s.clean(text, max, "")
}

func (s Set) clean(text string, max int, marker string) (_ string, cut, changed bool) {
	t := s.set
	if t != nil {
		text, changed = t.redact(text)
	}
	if max > 0 && len(text) > max {
		i := max
		for i > 0 && !utf8.RuneStart(text[i]) {
			i--
		}
		text, cut = text[:i], true
	}
	if t != nil {
		trimmed := t.trimEdges(text)
		changed = changed || trimmed != text
		text = trimmed
	}
	if cut {
		text += marker
	}
	if t != nil && (changed || cut) {
		// Once more over the text as it will be kept: a piece of a secret
		// that a [redacted] or the cut's marker now stands next to is a
		// piece too.
		again, more := t.redact(text)
		text, changed = again, changed || more
	}
	return text, cut, changed
}

// span is a range of a text to redact.
type span struct{ i, j int }

// redact replaces every span of text that holds a secret or a piece of one
// with Redacted, and says whether there was any. A [redacted] already in
// the text that a span overlaps becomes part of it, and the bytes next to
// each marker that would form a piece with the marker's own bytes (a
// secret holding "]" or "[") are taken into it, so no pass leaves a piece
// at a marker's edge for the next to find.
func (t *secretSet) redact(text string) (string, bool) {
	spans := t.spans(text, nil)
	if t.escaped(text) {
		if view, pos, ok := jsonView(text); ok {
			for _, sp := range t.spans(string(view), nil) {
				spans = append(spans, span{int(pos[sp.i]), unitEnd(pos, sp.j)})
			}
		}
	}
	if len(spans) == 0 {
		return text, false
	}
	for off := 0; ; {
		k := strings.Index(text[off:], Redacted)
		if k < 0 {
			break
		}
		spans = append(spans, span{off + k, off + k + len(Redacted)})
		off += k + len(Redacted)
	}
	slices.SortFunc(spans, func(a, b span) int { return a.i - b.i })
	var b strings.Builder
	b.Grow(len(text))
	last := 0
	for k := 0; k < len(spans); {
		i, j := max(spans[k].i, last), spans[k].j
		for n := t.pieceBefore(text[last:i]); n > 0; n = t.pieceBefore(text[last:i]) {
			i -= n
		}
		// Overlapping spans are one; touching ones (a key twice) stay two.
		for k++; ; k++ {
			if k < len(spans) && spans[k].i < j {
				j = max(j, spans[k].j)
				continue
			}
			n := t.pieceAfter(text[j:])
			if n == 0 {
				break
			}
			j += n
			k--
		}
		b.WriteString(text[last:i])
		b.WriteString(Redacted)
		last = j
	}
	b.WriteString(text[last:])
	return b.String(), true
}

// pieceBefore is how many bytes at the end of text form a piece of a
// secret with the first bytes of a Redacted written after them (0: none).
func (t *secretSet) pieceBefore(text string) int {
	for n := min(fragment-1, len(text)); n > 0 && t.grams != nil; n-- {
		if _, ok := t.grams[load64(text[len(text)-n:]+Redacted[:fragment-n], 0)]; ok {
			return n
		}
	}
	return 0
}

// pieceAfter is how many bytes at the start of text form a piece of a
// secret with the last bytes of a Redacted written before them.
func (t *secretSet) pieceAfter(text string) int {
	for n := min(fragment-1, len(text)); n > 0 && t.grams != nil; n-- {
		if _, ok := t.grams[load64(Redacted[len(Redacted)-(fragment-n):]+text[:n], 0)]; ok {
			return n
		}
	}
	return 0
}

// spans appends to out where text holds a whole secret or a piece of one;
// the pieces come in order, overlapping ones merged.
//
// An 8-byte piece that starts at a holds the 4 bytes at every p from a to
// a+4, one of which is a multiple of 5: so the text is sampled every 5
// bytes, each sample's 4 bytes against the secrets' 4-byte pieces (one bit
// of quads), and only after a hit are the 8-byte windows that could hold
// the sample looked up. Ordinary text is ruled out at a fifth of a lookup
// a byte.
func (t *secretSet) spans(text string, out []span) []span {
	if t.grams != nil {
		quads, filter := t.quads, t.filter
		for p := 0; p+4 <= len(text); p += fragment - 4 + 1 {
			if h := load32(text, p) * edgeMul >> (32 - quadBits); quads[h>>6]&(1<<(h&63)) == 0 {
				continue
			}
			for i := max(0, p-4); i <= p && i+fragment <= len(text); i++ {
				w := load64(text, i)
				h := w * gramMul >> (64 - filterBits)
				if filter[h>>6]&(1<<(h&63)) == 0 {
					continue
				}
				if _, ok := t.grams[w]; !ok {
					continue
				}
				if n := len(out); n > 0 && out[n-1].j > i {
					out[n-1].j = i + fragment
				} else {
					out = append(out, span{i, i + fragment})
				}
			}
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

// trimEdges replaces a prefix of a secret that ends text, and a suffix of
// one that starts it, when at least minSecret bytes long (and shorter than
// the secret: a whole one is gone already).
func (t *secretSet) trimEdges(text string) string {
	if t.heads == nil {
		return text
	}
	return t.trimHead(t.trimTail(text))
}

// trimTail replaces the longest prefix of a secret that ends text: the
// earliest start that matches.
func (t *secretSet) trimTail(text string) string {
	for p := max(0, len(text)-t.edge+1); p+minSecret <= len(text); p++ {
		if !t.maybeEdge(load32(text, p)) {
			continue
		}
		for _, v := range t.heads[load32(text, p)] {
			if len(text)-p < len(v) && strings.HasPrefix(v, text[p:]) {
				return text[:p] + Redacted
			}
		}
	}
	return text
}

// trimHead replaces the longest suffix of a secret that starts text.
func (t *secretSet) trimHead(text string) string {
	for k := min(len(text), t.edge-1); k >= minSecret; k-- {
		if !t.maybeEdge(load32(text, k-minSecret)) {
			continue
		}
		for _, v := range t.tails[load32(text, k-minSecret)] {
			if k < len(v) && strings.HasSuffix(v, text[:k]) {
				return Redacted + text[k:]
			}
		}
	}
	return text
}

// maybeEdge says whether w may be the first or last 4 bytes of a secret.
func (t *secretSet) maybeEdge(w uint32) bool {
	h := w * edgeMul >> (32 - edgeBits)
	return t.edges[h>>6]&(1<<(h&63)) != 0
}

// escaped says whether text has a JSON escape that may stand for a byte
// of a secret: any \uXXXX, or \/ \" \n ... when a secret holds what it
// stands for, or such an escape escaped again (\\u0073, a JSON string
// holding JSON). Only then is the text's escaped view scanned.
func (t *secretSet) escaped(text string) bool {
	for i := strings.IndexByte(text, '\\'); i >= 0 && i+1 < len(text); {
		switch c := text[i+1]; {
		case c == 'u' || t.inSecret[unescapeByte(c)]:
			return true
		case c == '\\' && i+2 < len(text):
			if n := text[i+2]; n == 'u' || n == '\\' || t.inSecret[unescapeByte(n)] {
				return true
			}
		}
		k := strings.IndexByte(text[i+2:], '\\')
		if k < 0 {
			break
		}
		i += 2 + k
	}
	return false
}

// unescapeByte is what the JSON escape \c stands for (c itself for \/,
// \" and \\, and for what is not an escape).
func unescapeByte(c byte) byte {
	switch c {
	case 'b':
		return '\b'
	case 'f':
		return '\f'
	case 'n':
		return '\n'
	case 'r':
		return '\r'
	case 't':
		return '\t'
	}
	return c
}

// mayHold says whether cleaning text as JSON could change it: a secret or
// a piece of one in it, or in the text its escapes stand for, read once
// (the strings JSON decodes) and twice (what Clean then reads in them), or
// the first or last 4 bytes of a secret anywhere (a piece at the edge of a
// string inside it).
func (t *secretSet) mayHold(text string) bool {
	if len(t.spans(text, nil)) > 0 {
		return true
	}
	view := text
	for range 2 {
		if !t.escaped(view) {
			break
		}
		v, _, ok := jsonView(view)
		if !ok {
			break
		}
		if view = string(v); len(t.spans(view, nil)) > 0 {
			return true
		}
	}
	if t.heads != nil {
		for i := 0; i+minSecret <= len(view); i++ {
			w := load32(view, i)
			if !t.maybeEdge(w) {
				continue
			}
			if t.heads[w] != nil || t.tails[w] != nil {
				return true
			}
		}
	}
	return false
}

// JSON cleans a JSON value: decoded, every string in it (object keys
// included) cleaned as Clean does, then encoded again. A value that needs
// no cleaning is returned as it is, byte for byte, so a tool call's
// arguments stay as the model sent them unless they held a secret (then
// they are re-encoded: keys sorted, no HTML escaping). A value that is not
// JSON is cleaned as text and returned as a JSON string.
func (s Set) JSON(raw json.RawMessage) json.RawMessage {
	t := s.set
	if t == nil || len(raw) == 0 || !t.mayHold(string(raw)) {
		return raw
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil || dec.InputOffset() != int64(len(bytes.TrimRight(raw, " \t\r\n"))) {
		return encode(s.Text(string(raw)))
	}
	return encode(s.Value(v))
}

// encode is v as JSON without HTML escaping (the record's writer escapes
// what it writes itself).
func encode(v any) json.RawMessage {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return json.RawMessage(`"` + Redacted + `"`)
	}
	return bytes.TrimRight(b.Bytes(), "\n")
}

// jsonView is what text's JSON escapes stand for: every \uXXXX (surrogate
// pairs joined), \n, \t, \/, \", \\ ... decoded, the rest as it is; pos[k]
// is the offset in text of the escape (or byte) view[k] came from, and
// pos[len(view)] is len(text). ok is false when nothing was decoded.
func jsonView(text string) (view []byte, pos []int32, ok bool) {
	view = make([]byte, 0, len(text))
	pos = make([]int32, 0, len(text)+1)
	for i := 0; i < len(text); {
		c := text[i]
		if c != '\\' || i+1 >= len(text) {
			view = append(view, c)
			pos = append(pos, int32(i))
			i++
			continue
		}
		n, r := 2, rune(-1)
		switch text[i+1] {
		case '"', '\\', '/':
			r = rune(text[i+1])
		case 'b':
			r = '\b'
		case 'f':
			r = '\f'
		case 'n':
			r = '\n'
		case 'r':
			r = '\r'
		case 't':
			r = '\t'
		case 'u':
			if u, good := jsonvalue.Hex4(text, i+2); good {
				n, r = 6, u
				if jsonvalue.IsHighSurrogate(r) {
					if lo, good := jsonvalue.Hex4(text, i+8); good && text[i+6] == '\\' && text[i+7] == 'u' && jsonvalue.IsLowSurrogate(lo) {
						n, r = 12, (r-0xD800)<<10|(lo-0xDC00)+0x10000
					} else {
						r = utf8.RuneError
					}
				} else if jsonvalue.IsLowSurrogate(r) {
					r = utf8.RuneError
				}
			}
		}
		if r < 0 {
			view = append(view, c)
			pos = append(pos, int32(i))
			i++
			continue
		}
		ok = true
		before := len(view)
		view = utf8.AppendRune(view, r)
		for range len(view) - before {
			pos = append(pos, int32(i))
		}
		i += n
	}
	pos = append(pos, int32(len(text)))
	return view, pos, ok
}

// unitEnd is the offset in the text where the view's byte j-1 ends: the
// start of the next escape or byte.
func unitEnd(pos []int32, j int) int {
	k := j
	for k < len(pos)-1 && pos[k] == pos[j-1] {
		k++
	}
	return int(pos[k])
}

// MayHold says whether cleaning text, as text or as JSON, could change
// it: a secret or a piece of one in it or behind its escapes, or the edge
// of one anywhere. A text it says no to is clean; one it says yes to may
// still be (bench merge decodes and re-encodes only the lines it says yes
// to).
func (s Set) MayHold(text string) bool { return s.set != nil && s.set.mayHold(text) }
