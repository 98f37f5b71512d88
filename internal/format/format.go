// Package format renders the figures of a run as people read them, in the
// terminal, summary.md, report.html and the resource snapshots' text
// files: one rendering of each, shared by the run (progress, resources)
// and the reports so neither imports the other.
//
// Layer: internal helpers (imports no bench package).
package format

import "fmt"

// Each renders "n/a" where the figure is null (not measured).

// Bytes renders a byte count in binary units.
func Bytes(v *uint64) string {
	if v == nil {
		return "n/a"
	}
	n := float64(*v)
	for _, u := range []string{"B", "KiB", "MiB", "GiB", "TiB"} {
		if n < 1024 || u == "TiB" {
			if u == "B" {
				return fmt.Sprintf("%d B", *v)
			}
			return fmt.Sprintf("%.1f %s", n, u)
		}
		n /= 1024
	}
	return ""
}

// Pct renders a percent with one decimal.
func Pct(v *float64) string {
	if v == nil {
		return "n/a"
	}
	return fmt.Sprintf("%.1f%%", *v)
}

// Float renders a number with two decimals.
func Float(v *float64) string {
	if v == nil {
		return "n/a"
	}
	return fmt.Sprintf("%.2f", *v)
}

// Int renders an integer.
func Int(v *int) string {
	if v == nil {
		return "n/a"
	}
	return fmt.Sprint(*v)
}

// Plural is "1 record", "2 records": n and the noun, with an s unless n is 1.
func Plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
