// Package rebuild writes every report of a run directory from its
// results.jsonl: summary.json, summary.md, tiers.json, report.html,
// answers.html and junit.xml, all from one read of the file (rundir.Layout
// marks them all Report). bench
// report, bench merge and the end of bench run (its last output) all come
// here, so the three can never disagree on what a report is.
//
// Layer: verdicts (reads run directories only: results, rundir, report and
// its renderers; no provider or runner code).
package rebuild

import (
	"fmt"
	"io"

	"bench/internal/record/results"
	"bench/internal/record/rundir"
	"bench/report"
	"bench/report/answers"
	"bench/report/htmlreport"
	"bench/report/junitxml"
)

// onePassGroups is how many groups junit.xml is built for in the
// summary's pass over results.jsonl; past it, in a pass of its own.
var onePassGroups = 10_000

// Options tune a rebuild.
type Options struct {
	// JUnitCopy, when not "", is a second path junit.xml is written to
	// (bench run and bench report --junit).
	JUnitCopy string
	// Warn receives the reports' warnings (unusable lines, report.html's
	// notes); nil discards them.
	Warn io.Writer
	// Baseline, when not "", is the run bench run --baseline judges this
	// one against once the reports are written: report.html links the
	// comparison (bench report finds it in run.json).
	Baseline string
	// RequireRecords refuses a results.jsonl with no usable record (bench
	// report): an *EmptyError, and nothing written, so the reports a
	// damaged file would replace are kept and the command does not exit
	// 0 with no data. bench run and bench merge report an empty run.
	RequireRecords bool
}

// EmptyError is a results.jsonl with no usable record (RequireRecords).
type EmptyError struct {
	Path    string
	Skipped int
	// First is the first unusable line's problem, when there was one.
	First string
}

func (e *EmptyError) Error() string {
	if e.Skipped == 0 {
		return fmt.Sprintf("%s holds no record: nothing to report (the reports are left as they were)", e.Path)
	}
	return fmt.Sprintf("%s holds no usable line: %d skipped (the first: %s); nothing to report (the reports are left as they were)", e.Path, e.Skipped, e.First)
}

// All rebuilds every report of the run directory dir from its
// results.jsonl and returns the summary (for the terminal table; for a run
// of more than onePassGroups groups without its pass matrix and failures,
// which Summary.DropDetail lets go once the files that show them are
// written, and with only the groups the table lists, Summary.DropGroups). Only an I/O failure is an error; unusable lines are
// warnings and are listed in the reports.
func All(dir string, o Options) (*report.Summary, error) {
	if o.Warn == nil {
		o.Warn = io.Discard
	}
	var ju *junitxml.Builder
	var an *answers.Collector
	defer func() {
		if ju != nil {
			ju.Close()
		}
		if an != nil {
			an.Close()
		}
	}()
	// One read of results.jsonl feeds every page (issue 31): the summary,
	// junit.xml and answers.html's entries. Each cell once, by its last
	// record: a second pass (a resumed run's duplicate cells) starts the
	// collectors afresh. junit.xml is built in this pass unless the run
	// has more than onePassGroups groups: then its builder is let go, and
	// it is built in a pass of its own once the summary stands, so the two
	// never hold a suite each per group at once (issue 21, item 7: 100,000
	// one-cell groups).
	later := false
	s, err := report.Load(dir, report.LoadOptions{Answers: true, Start: func() func(int, *results.Record) {
		if ju != nil {
			ju.Close()
		}
		if an != nil {
			an.Close()
		}
		ju, an, later = junitxml.New(), answers.NewCollector(), false
		return func(line int, r *results.Record) {
			an.Add(line, r)
			if later {
				return
			}
			if ju.Add(r); ju.Suites() > onePassGroups {
				ju.Close()
				ju, later = nil, true
			}
		}
	}})
	if err != nil {
		return nil, err
	}
	if o.RequireRecords && s.NRecords == 0 {
		e := &EmptyError{Path: rundir.Path(dir, rundir.ResultsFile), Skipped: s.NSkippedLines}
		if len(s.SkippedLines) > 0 {
			e.First = s.SkippedLines[0].String()
		}
		return nil, e
	}
	report.Warn(o.Warn, s)
	// junit.xml, built in the pass, needs nothing more of the summary: it
	// is written beside the other pages, on the other core.
	var junitDone chan error
	if !later {
		junitDone = make(chan error, 1)
		go func() { junitDone <- writeJUnit(ju, dir, o.JUnitCopy) }()
		defer func() {
			if junitDone != nil {
				<-junitDone
			}
		}()
	}
	// tiers.json and report.html show the same tiers, from the summary in
	// hand: report.html reads neither file back.
	tiers := report.TierRanking(s)
	if err := report.Write(dir, s, tiers); err != nil {
		return nil, err
	}
	d := htmlreport.NewData(s, tiers, dir)
	if o.Baseline != "" {
		d.Gate = htmlreport.GatedBy(o.Baseline)
	}
	for _, w := range d.Warnings {
		fmt.Fprintf(o.Warn, "warning: %s: %s\n", rundir.ReportHTML, w)
	}
	if err := htmlreport.WriteFile(dir, d); err != nil {
		return nil, err
	}
	if later {
		// What only the files above needed goes before the page below:
		// the summary's groups and answers.html's page, then junit.xml's
		// suites, are then all it holds.
		s.DropDetail()
	}
	pass := an.Start(dir, s)
	if later {
		// Every file that lists every group is written, and the page has
		// what it needs of them: the groups past the terminal table's go
		// too (about a kilobyte each).
		s.DropGroups()
	}
	if err := pass.Finish(); err != nil {
		return nil, err
	}
	an.Close()
	an = nil
	if !later {
		err := <-junitDone
		junitDone = nil
		if err != nil {
			return nil, err
		}
		return s, nil
	}
	ju = junitxml.New()
	if err := s.EachCounted(ju.Add); err != nil {
		return nil, err
	}
	if err := writeJUnit(ju, dir, o.JUnitCopy); err != nil {
		return nil, err
	}
	return s, nil
}

// writeJUnit writes junit.xml of ju into dir, and to copyPath when not "".
func writeJUnit(ju *junitxml.Builder, dir, copyPath string) error {
	if err := ju.WriteFile(rundir.Path(dir, rundir.JUnitFile)); err != nil {
		return err
	}
	if copyPath != "" {
		if err := ju.WriteFile(copyPath); err != nil {
			return fmt.Errorf("--junit: %w", err)
		}
	}
	return nil
}

// WritePaths lists where a run's reports are (bench run and bench report
// end with it).
func WritePaths(w io.Writer, dir string) {
	fmt.Fprintf(w, "  summary:  %s\n", rundir.Path(dir, rundir.SummaryMD))
	fmt.Fprintf(w, "  report:   %s (open it in a browser)\n", rundir.Path(dir, rundir.ReportHTML))
	fmt.Fprintf(w, "  answers:  %s\n", rundir.Path(dir, rundir.AnswersHTML))
	fmt.Fprintf(w, "  junit:    %s\n", rundir.Path(dir, rundir.JUnitFile))
}
