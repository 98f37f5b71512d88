// Package htmlreport renders report.html: one self-contained file that shows
// a run the way people compare models, by looking. It holds the ranking with
// the tool-use tiers and the Tier-1 routing list, TTFT, end-to-end latency
// and tokens/s distributions per group (box plots and percentile curves with
// p50/p95/p99 marked), the prompts x models pass matrix as a heatmap with the
// violation on hover, the tool-use (and agentic) results, the suites'
// resource timelines when the sampler recorded series, and the failures with
// their error text.
//
// The file works offline from a file:// URL: the charting library (uPlot,
// MIT, vendored under uplot/ and embedded with go:embed) and the data (JSON,
// through html/template) are inlined; it loads nothing. It stays usable at
// 100 models x 100 prompts and 100,000 cells: the heatmap and box plots are
// drawn on canvases (no DOM per cell), each distribution is sent as 101
// quantiles rather than its samples, timelines are cut to at most
// MaxTimelinePoints buckets (keeping each bucket's maximum, so peaks
// survive), and tables are capped at MaxRows with a count of the rest. On
// any run it stays bounded: the charts and the matrix show the first
// report.MaxPlotted groups of the ranking and at most MaxPlotPrompts of the
// prompts they ran, with a note counting the rest (100,000 groups of one
// prompt each make a report.html of 1.5 MB, not a matrix of 10^10 cells).
//
// Inputs are the report.Summary (which report.Load builds from
// results.jsonl; its pass matrix carries each cell's violation or error
// text) and its report.Tiers, as the caller hands them (the values
// summary.json and tiers.json are written from: nothing is read back), and
// the optional resource sample series. The package reads resource files as
// plain JSON; it does not import the providers, runner or resources
// packages.
//
// Wiring (bench report):
//
//	s, err := report.LoadEach(runDir, ...)
//	tiers := report.TierRanking(s)
//	err = report.Write(runDir, s, tiers)
//	err = htmlreport.WriteFile(runDir, htmlreport.NewData(s, tiers, runDir)) // runDir/report.html
//
// Layer: verdicts (renders what report computed; reads run directories
// only).
package htmlreport

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"bench/internal/record/rundir"
	"bench/report"
)

// UPlotVersion is the vendored uPlot's version (see uplot/README.md).
const UPlotVersion = "1.6.32"

// MaxRows caps every table of the report; the rest are counted in a note
// pointing at summary.json or results.jsonl.
const MaxRows = 500

// Data is everything report.html shows. Build it with NewData.
type Data struct {
	// Summary is the run's summary; every figure of the tables comes from it.
	Summary *report.Summary
	// Tiers are the summary's tool-use tiers (report.TierRanking), the
	// ones tiers.json is written from.
	Tiers *report.Tiers
	// Groups holds what summary.json does not, indexed like Summary.Groups
	// (read only: the groups without distributions share one).
	Groups []*GroupData
	// Timelines are the suites' resource sample series, when the run has them.
	Timelines []*Timeline
	// Servers are the server readings of the groups with load stages (at
	// most MaxServerPlots of them), for the plot under each sweep's
	// curves.
	Servers map[groupKey][]rundir.ServerSample
	// Warnings are problems with optional inputs (a bad samples line) that
	// cost a part of the report, not all of it.
	Warnings []string
	// Gate is the night's gate result beside the report, when the run
	// was gated (run.json's baseline) or compared into its own
	// directory: nil otherwise.
	Gate *Gate
}

// Gate is where the run's comparison with its baseline is.
type Gate struct {
	// Ref is compare.html's path from report.html; Baseline the baseline
	// run directory as bench run --baseline was given it ("" when only
	// the page was found).
	Ref, Baseline string
}

// GroupData is what one (provider, model, thinking level) adds to its
// report.Group: the distributions to plot (report.Group.Dists, set for the
// groups report.html plots).
type GroupData struct {
	TTFT       Dist `json:"ttft_ms"`
	E2E        Dist `json:"latency_ms"`
	TokensPerS Dist `json:"tokens_per_s"`
}

// Dist is a metric's distribution in one group (report.Dist): Q[50], Q[95]
// and Q[99] are summary.json's p50, p95 and p99.
type Dist = report.Dist

type groupKey struct {
	provider, model, thinking string
	hasThinking               bool
}

func keyOf(provider, model string, thinking *string) groupKey {
	k := groupKey{provider: provider, model: model}
	if thinking != nil {
		k.thinking, k.hasThinking = *thinking, true
	}
	return k
}

// NewData joins the summary built from results.jsonl (whose pass matrix
// carries each cell's hover detail: report.MatrixCell) to its tiers
// (report.TierRanking of it; nil makes them), and reads the resource
// sample series from runDir when the run recorded them. A bad samples file
// is a warning in Data.Warnings; with runDir "" no file is read.
func NewData(s *report.Summary, t *report.Tiers, runDir string) *Data {
	if t == nil {
		t = report.TierRanking(s)
	}
	d := &Data{Summary: s, Tiers: t, Groups: make([]*GroupData, len(s.Groups))}
	// The groups without plotted distributions (all but the first
	// report.MaxPlotted) share one empty GroupData, read only: 96 bytes
	// a group fewer (a run of 100,000 groups, issue 21 item 7).
	none := &GroupData{}
	for i, g := range s.Groups {
		d.Groups[i] = none
		if g.Dists != nil {
			d.Groups[i] = &GroupData{TTFT: g.Dists.TTFTMS, E2E: g.Dists.LatencyMS, TokensPerS: g.Dists.TokensPerS}
		}
	}
	if runDir == "" {
		return d
	}
	d.Gate = findGate(runDir)
	tl, warn, err := ReadTimelines(runDir)
	if err != nil {
		d.Warnings = append(d.Warnings, err.Error())
	}
	d.Timelines = tl
	d.Warnings = append(d.Warnings, warn...)
	d.Servers = map[groupKey][]rundir.ServerSample{}
	for _, g := range s.Groups {
		if len(g.Stages) == 0 || len(d.Servers) == MaxServerPlots {
			continue
		}
		samples, warn, err := ReadServer(runDir, g.Provider, g.Model, g.ThinkingLevel)
		d.Warnings = append(d.Warnings, warn...)
		if err != nil {
			d.Warnings = append(d.Warnings, err.Error())
		}
		if len(samples) > 0 {
			d.Servers[keyOf(g.Provider, g.Model, g.ThinkingLevel)] = samples
		}
	}
	return d
}

// findGate says where the run's gate result is: compare/compare.html,
// when run.json says bench run --baseline gated the run (the comparison
// is written just after the reports) or the page is already there (bench
// compare BASE RUN wrote it; bench report then links it).
func findGate(runDir string) *Gate {
	if info, err := rundir.ReadRunInfo(runDir); err == nil && info.Baseline != "" {
		return GatedBy(info.Baseline)
	}
	if st, err := os.Stat(filepath.Join(runDir, rundir.CompareDir, rundir.CompareHTML)); err == nil && st.Mode().IsRegular() {
		return GatedBy("")
	}
	return nil
}

// GatedBy is the gate of a run judged against baseline (bench run
// --baseline, whose comparison is written into the run's CompareDir just
// after its reports).
func GatedBy(baseline string) *Gate {
	return &Gate{Ref: rundir.CompareDir + "/" + rundir.CompareHTML, Baseline: baseline}
}

// Write renders report.html of d to w.
func Write(w io.Writer, d *Data) error {
	if d == nil || d.Summary == nil {
		return errors.New("htmlreport: no data")
	}
	v, err := newView(d)
	if err != nil {
		return err
	}
	var b bytes.Buffer
	if err := pageTemplate().Execute(&b, v); err != nil {
		return fmt.Errorf("render report.html: %w", err)
	}
	_, err = w.Write(b.Bytes())
	return err
}

// WriteFile writes runDir/report.html through a temporary file and a
// rename (rundir.CreateAtomic: a reader never sees half a report, and the
// next command in the directory removes what a kill left).
func WriteFile(runDir string, d *Data) error {
	f, err := rundir.CreateAtomic(rundir.Path(runDir, rundir.ReportHTML))
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(f, 256<<10)
	if err := Write(bw, d); err != nil {
		f.Abort()
		return err
	}
	if err := bw.Flush(); err != nil {
		f.Abort()
		return err
	}
	return f.Commit()
}
