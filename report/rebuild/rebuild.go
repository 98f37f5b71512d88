// Package rebuild writes every report of a run directory from its
// results.jsonl in one pass: summary.json, summary.md, tiers.json,
// report.html and junit.xml (rundir.Layout marks them Report). bench
// report, bench merge and the end of bench run (as the run's last output)
// all come here, so the three can never disagree on what a report is.
//
// The layer: it reads run directories only (results, rundir, report and
// its renderers), never provider or runner code.
package rebuild

import (
	"fmt"
	"io"

	"bench/output"
	"bench/report"
	"bench/report/htmlreport"
	"bench/report/junitxml"
	"bench/results"
	"bench/rundir"
)

// Options tune a rebuild.
type Options struct {
	// JUnitCopy, when not "", is a second path junit.xml is written to
	// (bench run and bench report --junit).
	JUnitCopy string
	// Warn receives the reports' warnings (unusable lines, report.html's
	// notes); nil discards them.
	Warn io.Writer
}

// All rebuilds every report of the run directory dir from its
// results.jsonl and returns the summary (for the terminal table). Only an
// I/O failure is an error; unusable lines are warnings and are listed in
// the reports.
func All(dir string, o Options) (*report.Summary, error) {
	if o.Warn == nil {
		o.Warn = io.Discard
	}
	var samples *htmlreport.Samples
	var ju *junitxml.Builder
	defer func() {
		if ju != nil {
			ju.Close()
		}
	}()
	// Each cell once, by its last record: a second pass (a resumed run's
	// duplicate cells) starts the collectors afresh.
	s, err := report.LoadEach(dir, func() func(*results.Record) {
		if ju != nil {
			ju.Close()
		}
		samples, ju = htmlreport.NewSamples(), junitxml.New()
		return func(r *results.Record) {
			samples.Add(r)
			ju.Add(r)
		}
	})
	if err != nil {
		return nil, err
	}
	report.Warn(o.Warn, s)
	if err := report.Write(dir, s); err != nil {
		return nil, err
	}
	// After summary.json: report.html reads the agentic figures from it.
	d := samples.Data(s, dir)
	for _, w := range d.Warnings {
		fmt.Fprintf(o.Warn, "warning: %s: %s\n", rundir.ReportHTML, w)
	}
	if err := htmlreport.WriteFile(dir, d); err != nil {
		return nil, err
	}
	if err := ju.WriteFile(rundir.Path(dir, rundir.JUnitFile)); err != nil {
		return nil, err
	}
	if o.JUnitCopy != "" {
		if err := ju.WriteFile(o.JUnitCopy); err != nil {
			return nil, fmt.Errorf("--junit: %w", err)
		}
	}
	return s, nil
}

// WritePaths lists where a run's reports are (bench run and bench report
// end with it).
func WritePaths(w io.Writer, dir string) {
	fmt.Fprintf(w, "  summary:  %s\n", rundir.Path(dir, rundir.SummaryMD))
	fmt.Fprintf(w, "  report:   %s (open it in a browser)\n", rundir.Path(dir, rundir.ReportHTML))
	fmt.Fprintf(w, "  junit:    %s\n", rundir.Path(dir, rundir.JUnitFile))
}

// Output builds the reports when a run has ended: the run's last output
// (output.WithRunEnd, WithStop), so it reads results.jsonl and the
// resource files once the outputs before it have closed them. A run that
// stopped because results.jsonl could not be written gets no reports
// (bench report rebuilds them from what was written).
type Output struct {
	dir  string
	o    Options
	end  output.End
	sum  *report.Summary
	err  error
	done bool
}

// NewOutput builds the reports of the run directory dir when the run ends.
func NewOutput(dir string, o Options) *Output { return &Output{dir: dir, o: o} }

// AddRecord takes nothing: the reports are read from results.jsonl, the
// one source of truth, when the run has ended.
func (b *Output) AddRecord(*results.Record) error { return nil }

// RunEnd takes how the run ended.
func (b *Output) RunEnd(e output.End) { b.end = e }

// Stop builds the reports.
func (b *Output) Stop() error {
	if b.end.Reason == "io_error" {
		return nil
	}
	b.done = true
	b.sum, b.err = All(b.dir, b.o)
	if b.err != nil {
		return fmt.Errorf("reports: %w", b.err)
	}
	return nil
}

// Summary is the summary Stop built, for the terminal table; nil with the
// error when the reports could not be built, or were not (the run failed
// before).
func (b *Output) Summary() (*report.Summary, error) {
	if !b.done {
		return nil, fmt.Errorf("reports: not built (the run did not end normally)")
	}
	return b.sum, b.err
}
