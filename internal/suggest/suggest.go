// Package suggest finds the word a user probably meant, for "did you mean"
// hints on commands, flags and config keys.
//
// Layer: internal helpers (imports no bench package).
package suggest

import (
	"strings"

	"github.com/hbollon/go-edlib"
)

// Closest returns the candidate nearest to word by edit distance (case
// folded), or "" when none is near enough to be a plausible typo: at most
// one edit for words of up to four letters, two up to eight, three beyond.
// Swapping two neighbouring letters is one edit (Damerau's distance, in
// its optimal-string-alignment form): the commonest typo, "rnu" for "run",
// is two edits to Levenshtein, too many for a three-letter word.
func Closest(word string, candidates []string) string {
	w := strings.ToLower(word)
	best, bestD := "", -1
	for _, c := range candidates {
		d := edlib.OSADamerauLevenshteinDistance(w, strings.ToLower(c))
		if bestD < 0 || d < bestD {
			best, bestD = c, d
		}
	}
	if bestD < 0 || bestD == 0 && best == word || bestD > allowed(len([]rune(word))) {
		return ""
	}
	return best
}

func allowed(n int) int {
	switch {
	case n <= 4:
		return 1
	case n <= 8:
		return 2
	}
	return 3
}

// Hint is Closest as a message suffix: ` (did you mean "x"?)`, or "".
func Hint(word string, candidates []string) string {
	if c := Closest(word, candidates); c != "" {
		return ` (did you mean "` + c + `"?)`
	}
	return ""
}
