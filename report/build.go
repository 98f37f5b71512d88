package report

import (
	"bench/rundir"
	"bytes"
	"fmt"
	"io"
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
	files := []struct {
		name string
		data func() ([]byte, error)
	}{
		{rundir.SummaryJSON, func() ([]byte, error) { return rundir.MarshalJSON(s) }},
		{rundir.TiersFile, func() ([]byte, error) { return rundir.MarshalJSON(t) }},
		{rundir.SummaryMD, func() ([]byte, error) { return md.Bytes(), nil }},
	}
	for _, f := range files {
		data, err := f.data()
		if err != nil {
			return fmt.Errorf("encode %s: %w", f.name, err)
		}
		if err := rundir.WriteFile(rundir.Path(dir, f.name), data); err != nil {
			return err
		}
	}
	return nil
}
