package validators

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// CountWords counts the whitespace-separated tokens that hold at least one
// letter or digit, so a lone "-" or "—" is not a word.
func CountWords(text string) int {
	n := 0
	for _, f := range strings.Fields(text) {
		if hasWordChar(f) {
			n++
		}
	}
	return n
}

func hasWordChar(s string) bool {
	for _, r := range s {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			return true
		}
	}
	return false
}

// titles are abbreviations that never end a sentence (they precede a name).
var titles = map[string]bool{
	"mr": true, "mrs": true, "ms": true, "dr": true, "prof": true, "st": true,
	"jr": true, "sr": true, "vs": true, "cf": true, "approx": true, "fig": true,
	"vol": true, "mt": true, "dept": true,
	"e.g": true, "i.e": true, "eg": true, "ie": true, "viz": true,
}

// lowerEnd are abbreviations that end a sentence only when the next word
// starts with an upper-case letter ("apples, pears etc. are fruit").
var lowerEnd = map[string]bool{"etc": true, "inc": true, "ltd": true, "co": true, "corp": true, "al": true}

// CountSentences counts sentences. A sentence ends at a run of . ! ? or …
// (closing quotes and brackets may follow) that is followed by whitespace or
// the end of the text, and at every line break; only pieces holding a letter
// or digit count. A '.' does not end a sentence inside a number (3.14),
// after a title abbreviation (Dr., e.g., i.e., vs.), after a single letter
// (J. Smith, U.S.), after a list number at the start of a line ("1. "), or
// after etc./Inc. when the next word is lower case.
func CountSentences(text string) int {
	n := 0
	for _, line := range strings.Split(text, "\n") {
		n += sentencesInLine(line)
	}
	return n
}

func sentencesInLine(line string) int {
	n := 0
	words := false // the current sentence holds a letter or digit
	start := 0     // byte offset where the current sentence starts
	for i := 0; i < len(line); {
		r, size := utf8.DecodeRuneInString(line[i:])
		if !isTerminator(r) {
			if unicode.IsLetter(r) || unicode.IsDigit(r) {
				words = true
			}
			i += size
			continue
		}
		dot := i
		onlyDots, wide := true, false
		for i < len(line) {
			r, size := utf8.DecodeRuneInString(line[i:])
			if isTerminator(r) {
				onlyDots = onlyDots && r == '.'
				wide = wide || r >= 0x3000 // 。！？ need no space after them
			} else if !isCloser(r) {
				break
			}
			i += size
		}
		if i < len(line) && !wide {
			r, _ := utf8.DecodeRuneInString(line[i:])
			if !unicode.IsSpace(r) {
				continue // 3.14, example.com, a.m
			}
		}
		if onlyDots && i-dot == 1 && !endsAt(line, start, dot, i) {
			continue
		}
		if words {
			n++
		}
		words = false
		start = i
	}
	if words {
		n++
	}
	return n
}

// endsAt decides whether a single '.' at dot (sentence begun at start, next
// text at next) ends the sentence, looking at the token before it.
func endsAt(line string, start, dot, next int) bool {
	tokStart := strings.LastIndexFunc(line[:dot], unicode.IsSpace) + 1
	tok := strings.TrimLeftFunc(line[tokStart:dot], func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
	low := strings.ToLower(tok)
	if titles[low] {
		return false
	}
	if utf8.RuneCountInString(tok) == 1 && unicode.IsLetter(firstRune(tok)) {
		return false // an initial
	}
	if strings.Contains(tok, ".") && !strings.ContainsFunc(tok, unicode.IsDigit) {
		return false // U.S, e.g, a.m
	}
	if strings.TrimSpace(line[:tokStart]) == "" && tok != "" && strings.Trim(tok, "0123456789") == "" {
		return false // "1. item" list marker
	}
	if lowerEnd[low] {
		rest := strings.TrimLeftFunc(line[next:], unicode.IsSpace)
		return rest == "" || unicode.IsUpper(firstRune(rest))
	}
	return true
}

func firstRune(s string) rune {
	r, _ := utf8.DecodeRuneInString(s)
	return r
}

func isTerminator(r rune) bool {
	switch r {
	case '.', '!', '?', '…', '。', '！', '？':
		return true
	}
	return false
}

func isCloser(r rune) bool {
	switch r {
	case '"', '\'', ')', ']', '}', '”', '’', '»', '*', '_':
		return true
	}
	return false
}

// CountBullets counts markdown bullet lines: after optional indentation, a
// '-', '*', '+' or '•' followed by a space or tab and some text. Numbered
// items, horizontal rules (---, ***), bold lines (**x**) and lines inside
// fenced code blocks are not bullets; nested bullets count.
func CountBullets(text string) int {
	n := 0
	fenced := false
	for _, line := range strings.Split(text, "\n") {
		t := strings.TrimLeft(line, " \t")
		if strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~") {
			fenced = !fenced
			continue
		}
		if fenced {
			continue
		}
		r, size := utf8.DecodeRuneInString(t)
		switch r {
		case '-', '*', '+', '•':
		default:
			continue
		}
		rest := t[size:]
		if rest == "" || (rest[0] != ' ' && rest[0] != '\t') {
			continue
		}
		if strings.Trim(rest, " \t-*_") == "" {
			continue // "- " alone, or a rule like "* * *"
		}
		n++
	}
	return n
}
