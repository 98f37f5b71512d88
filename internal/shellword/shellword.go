// Package shellword quotes a string as one POSIX shell word, for the
// commands bench prints for the user to run (resume a run, run a config).
// The one library that quotes (shlex) only splits, and quoting is five
// lines.
//
// Layer: internal helpers (imports no bench package).
package shellword

import "strings"

// Quote returns s as one shell word: as it is when it holds only
// characters a shell leaves alone, else in single quotes.
func Quote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:=,+@%", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
