package report

import (
	"bytes"
	"fmt"
	"io"

	"bench/internal/record/rundir"
)

// maxWarnings bounds the skipped-line warnings Warn prints; summary.json
// keeps the first 1000 and the count.
const maxWarnings = 20

// Warn prints the skipped lines and warnings of s, the first few of them.
func Warn(w io.Writer, s *Summary) {
	if w == nil {
		return
	}
	for i, p := range s.SkippedLines {
		if i == maxWarnings {
			break
		}
		fmt.Fprintf(w, "warning: results.jsonl %s\n", p)
	}
	if more := s.NSkippedLines - min(len(s.SkippedLines), maxWarnings); more > 0 {
		fmt.Fprintf(w, "warning: results.jsonl: %d more unusable lines skipped (listed in summary.json)\n", more)
	}
	for _, m := range s.Warnings {
		fmt.Fprintf(w, "warning: %s\n", m)
	}
}

// Write writes the three report files of s into dir, tiers.json from t
// (TierRanking of s; nil makes it), each through a temporary file and a
// rename, so a reader never sees half a report.
func Write(dir string, s *Summary, t *Tiers) error {
	if t == nil {
		t = TierRanking(s)
	}
	var md bytes.Buffer
	if err := WriteMarkdown(&md, s); err != nil {
		return fmt.Errorf("render summary.md: %w", err)
	}
	// summary.json and tiers.json are streamed a group at a time: their
	// size grows with the groups (about 1 KB each), and a run of 100,000
	// one-cell groups must not hold them whole.
	head := *s
	head.Groups = nil
	if err := writeJSONFile(rundir.Path(dir, rundir.SummaryJSON), &head, "groups", len(s.Groups), func(i int) any { return s.Groups[i] }); err != nil {
		return err
	}
	th := *t
	th.Ranking = nil
	if err := writeJSONFile(rundir.Path(dir, rundir.TiersFile), &th, "ranking", len(t.Ranking), func(i int) any { return t.Ranking[i] }); err != nil {
		return err
	}
	return rundir.WriteFile(rundir.Path(dir, rundir.SummaryMD), md.Bytes())
}
