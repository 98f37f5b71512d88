package providers

import (
	"io"
	"strings"
	"unicode/utf8"
)

// Redacted replaces a secret in any text bench keeps.
const Redacted = "[redacted]"

// minSecret is the shortest value treated as a secret: shorter values (an
// env flag such as "1") would redact ordinary text and cannot be a key.
const minSecret = 4

// fragment is the shortest piece of a secret removed when it stands alone
// (a server quoting part of a key, a tail that starts inside one).
const fragment = 8

// Secrets are the values a provider must never let into a record, a log, a
// trace or an error: its API key and the expanded values of its env.
type Secrets []string

// Clean is the one way text from a server or a CLI is made safe to keep:
// every secret is removed from the whole text first, then any piece of a
// secret of 8 bytes or more, then the text is cut to max bytes (0 = no cut)
// on a rune boundary with "..." appended, and a piece of a secret left at
// either edge (a cut inside a key, a tail that began inside one) is removed
// too. Scrubbing before cutting matters: a cut inside a key would otherwise
// leave most of it where no whole key is left to find.
func (s Secrets) Clean(text string, max int) string {
	text, _ = s.clean(text, max, "...")
	return text
}

// Cut is Clean for kept output (an answer, reasoning): the same scrub,
// then cut, without the "..." marker; cut says whether text was cut.
func (s Secrets) Cut(text string, max int) (_ string, cut bool) {
	return s.clean(text, max, "")
}

func (s Secrets) clean(text string, max int, marker string) (string, bool) {
	for _, sec := range s {
		if len(sec) >= minSecret {
			text = strings.ReplaceAll(text, sec, Redacted)
		}
	}
	cut := false
	if max > 0 && len(text) > max {
		i := max
		for i > 0 && !utf8.RuneStart(text[i]) {
			i--
		}
		text, cut = text[:i], true
	}
	for _, sec := range s {
		text = trimEdges(text, sec)
	}
	if cut {
		text += marker
	}
	// Last, over the text as it will be kept (the marker included): any
	// piece of a secret, quoted by a server or formed at a cut.
	for _, sec := range s {
		text = redactPieces(text, sec)
	}
	return text, cut
}

// redactPieces replaces every run of 8 or more bytes that also occurs,
// contiguously, in sec.
func redactPieces(text, sec string) string {
	if len(sec) < fragment || len(text) < fragment {
		return text
	}
	var b strings.Builder
	i, last := 0, 0
	for i+fragment <= len(text) {
		j := strings.Index(sec, text[i:i+fragment])
		if j < 0 {
			i++
			continue
		}
		// Extend the match as far as text and sec agree.
		end := i + fragment
		for k := j + fragment; end < len(text) && k < len(sec) && text[end] == sec[k]; k++ {
			end++
		}
		b.WriteString(text[last:i])
		b.WriteString(Redacted)
		i, last = end, end
	}
	if last == 0 {
		return text
	}
	b.WriteString(text[last:])
	return b.String()
}

// trimEdges removes a prefix of sec that ends text, and a suffix of sec
// that starts it, if either is at least minSecret bytes long.
func trimEdges(text, sec string) string {
	if len(sec) < minSecret {
		return text
	}
	for k := min(len(sec)-1, len(text)); k >= minSecret; k-- {
		if strings.HasSuffix(text, sec[:k]) {
			text = text[:len(text)-k] + Redacted
			break
		}
	}
	for k := min(len(sec)-1, len(text)); k >= minSecret; k-- {
		if strings.HasPrefix(text, sec[len(sec)-k:]) {
			text = Redacted + text[k:]
			break
		}
	}
	return text
}

// maxLogLine bounds a line a provider writes to the run's log.
const maxLogLine = 1 << 10

// scrubWriter cleans each write (one line of a provider's log) of the
// secrets, then cuts it, keeping its newline.
type scrubWriter struct {
	w       io.Writer
	secrets Secrets
}

func (s *scrubWriter) Write(p []byte) (int, error) {
	line, nl := strings.CutSuffix(string(p), "\n")
	line = s.secrets.Clean(line, maxLogLine)
	if nl {
		line += "\n"
	}
	if _, err := io.WriteString(s.w, line); err != nil {
		return 0, err
	}
	return len(p), nil
}
