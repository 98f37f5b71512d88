package compare

import (
	"encoding/json"
	"regexp"
	"strings"

	"github.com/sergi/go-diff/diffmatchpatch"

	"bench/internal/record/results"
	"bench/internal/record/rundir"
)

// maxSideBytes is the most of one answer compare.html shows on a side;
// maxSideBySide the root causes it shows side by side (the rest are
// listed).
const (
	maxSideBytes  = 4 << 10
	maxSideBySide = 100
)

// segment is a run of words of a word-level diff: Op is "" (in both),
// "del" (the base's only) or "ins" (the new run's only).
type segment struct {
	Text, Op string
}

// sideBySide is one root cause's example cell, base beside new.
type sideBySide struct {
	Cause    *RootCause
	Cell     string
	BaseLine int
	NewLine  int
	// Base and New are the answers as segments of a word diff.
	Base, New []segment
	// BaseCut and NewCut say the answer was longer than shown;
	// BaseRedacted and NewRedacted that bench replaced a secret in it
	// (raw_output_redacted).
	BaseCut, NewCut           bool
	BaseRedacted, NewRedacted bool
	// Turns are an agentic cell's turns; Diverged the first that differs.
	Turns    []turnRow
	Diverged string
	// Missing says a side could not be read back (the file changed).
	Missing string
}

// turnRow is one turn of both trajectories.
type turnRow struct {
	N         int
	Base, New string
	Diverged  bool
}

// wordToken splits a text into words, runs of spaces, and single other
// characters, so a diff marks whole words.
var wordToken = regexp.MustCompile(`\s+|[\p{L}\p{N}_]+|.`)

// privateUse is the first code point a word is mapped to.
const privateUse = 0xF0000

// wordDiff is the word-level diff of two texts (go-diff's Myers diff over
// words mapped to runes, then its semantic clean-up), as the base's
// segments and the new run's.
func wordDiff(a, b string) (base, cur []segment) {
	ids := map[string]rune{}
	var words []string
	toRunes := func(s string) []rune {
		var out []rune
		for _, w := range wordToken.FindAllString(s, -1) {
			id, ok := ids[w]
			if !ok {
				// Private-use code points (planes 15 and 16): valid in the
				// diff's strings, never a surrogate.
				id = privateUse + rune(len(words))
				ids[w] = id
				words = append(words, w)
			}
			out = append(out, id)
		}
		return out
	}
	ra, rb := toRunes(a), toRunes(b)
	dmp := diffmatchpatch.New()
	diffs := dmp.DiffCleanupSemantic(dmp.DiffMainRunes(ra, rb, false))
	add := func(list []segment, text, op string) []segment {
		if n := len(list); n > 0 && list[n-1].Op == op {
			list[n-1].Text += text
			return list
		}
		return append(list, segment{Text: text, Op: op})
	}
	for _, d := range diffs {
		var sb strings.Builder
		for _, r := range d.Text {
			sb.WriteString(words[r-privateUse])
		}
		t := sb.String()
		switch d.Type {
		case diffmatchpatch.DiffEqual:
			base, cur = add(base, t, ""), add(cur, t, "")
		case diffmatchpatch.DiffDelete:
			base = add(base, t, "del")
		case diffmatchpatch.DiffInsert:
			cur = add(cur, t, "ins")
		}
	}
	return base, cur
}

// sideBySides reads back the example cell of each root cause (the first
// maxSideBySide) from both results files and lays its answers or turns
// side by side.
func sideBySides(r *Result) ([]sideBySide, error) {
	var out []sideBySide
	baseLines, newLines := map[int]bool{}, map[int]bool{}
	for _, rc := range r.RootCauses {
		if len(out) == maxSideBySide {
			break
		}
		c := rc.Example
		if c == nil || c.BaseLine == 0 || c.NewLine == 0 {
			continue
		}
		baseLines[c.BaseLine], newLines[c.NewLine] = true, true
		out = append(out, sideBySide{Cause: rc, Cell: c.Label(), BaseLine: c.BaseLine, NewLine: c.NewLine})
	}
	if len(out) == 0 {
		return nil, nil
	}
	base, err := readRecords(rundir.Path(r.BaseDir, rundir.ResultsFile), baseLines)
	if err != nil {
		return nil, err
	}
	cur, err := readRecords(rundir.Path(r.NewDir, rundir.ResultsFile), newLines)
	if err != nil {
		return nil, err
	}
	for i := range out {
		s := &out[i]
		b, n := base[s.BaseLine], cur[s.NewLine]
		if b == nil || n == nil {
			s.Missing = "the results files changed since the comparison; this cell could not be read back"
			continue
		}
		if len(b.TurnDetails) > 0 || len(n.TurnDetails) > 0 {
			s.Turns = turnRows(b.TurnDetails, n.TurnDetails)
			if d := s.Cause.Example.Diverged; d != nil {
				s.Diverged = d.String()
				for j := range s.Turns {
					s.Turns[j].Diverged = s.Turns[j].N == d.Turn
				}
			}
		}
		bt, bcut := cutText(b.RawOutput, maxSideBytes)
		nt, ncut := cutText(n.RawOutput, maxSideBytes)
		s.Base, s.New = wordDiff(bt, nt)
		s.BaseCut, s.NewCut = bcut || b.RawOutputTruncated, ncut || n.RawOutputTruncated
		s.BaseRedacted, s.NewRedacted = b.RawOutputRedacted, n.RawOutputRedacted
	}
	return out, nil
}

// readRecords decodes the chosen lines of a results file. Each record is
// copied whole (through its JSON): the scanner reuses its records and their
// strings.
func readRecords(path string, lines map[int]bool) (map[int]*results.Record, error) {
	out := map[int]*results.Record{}
	o := scanOptions
	o.Lines = func(line int) bool { return lines[line] }
	_, _, err := results.Scan(path, o, func(line int, rec *results.Record) error {
		b, err := json.Marshal(rec)
		if err != nil {
			return err
		}
		var cp results.Record
		if err := json.Unmarshal(b, &cp); err != nil {
			return err
		}
		out[line] = &cp
		return nil
	})
	if err != nil {
		return nil, inputError(path, err)
	}
	return out, nil
}

func cutText(s string, n int) (string, bool) {
	if len(s) <= n {
		return s, false
	}
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n], true
}

// turnRows lays two trajectories turn by turn.
func turnRows(b, n []results.Turn) []turnRow {
	var rows []turnRow
	for i := 0; i < max(len(b), len(n)); i++ {
		row := turnRow{N: i + 1, Base: "(no such turn)", New: "(no such turn)"}
		if i < len(b) {
			row.Base = turnDetail(b[i])
		}
		if i < len(n) {
			row.New = turnDetail(n[i])
		}
		rows = append(rows, row)
	}
	return rows
}

// turnDetail is a turn as text: its text, each call with its arguments
// and the result, and its error.
func turnDetail(t results.Turn) string {
	var lines []string
	if t.Text != "" {
		s, cut := cutText(t.Text, 600)
		if cut {
			s += "…"
		}
		lines = append(lines, s)
	}
	for _, c := range t.Calls {
		l := "→ " + c.Name + " " + compact(c.Arguments, 200)
		switch {
		case c.Unanswered:
			l += "\n   (never answered)"
		default:
			res, cut := cutText(c.Result, 300)
			if cut {
				res += "…"
			}
			l += "\n   ← " + res
		}
		var marks []string
		for _, m := range []struct {
			on   bool
			name string
		}{{c.IsError, "error"}, {c.Unknown, "unknown tool"}, {c.WrongArgs, "wrong arguments"}} {
			if m.on {
				marks = append(marks, m.name)
			}
		}
		if len(marks) > 0 {
			l += " [" + strings.Join(marks, ", ") + "]"
		}
		lines = append(lines, l)
	}
	if t.Error != "" {
		lines = append(lines, "error: "+t.Error)
	}
	if len(lines) == 0 {
		return "(empty reply)"
	}
	return strings.Join(lines, "\n")
}
