package history

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"

	"bench/internal/record/rundir"
	"bench/report/htmlreport"
)

// Output file names, in the --out directory.
const (
	JSONFile = "history.json"
	HTMLFile = "history.html"
)

// WriteFiles writes history.json and history.html into dir (created if
// needed), each atomically.
func WriteFiles(dir string, h *History) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	if err := rundir.WriteJSON(filepath.Join(dir, JSONFile), h); err != nil {
		return err
	}
	var b bytes.Buffer
	if err := WriteHTML(&b, h); err != nil {
		return fmt.Errorf("write %s: %w", HTMLFile, err)
	}
	return rundir.WriteFile(filepath.Join(dir, HTMLFile), b.Bytes())
}

// maxListed bounds the change points the terminal lists.
const maxListed = 50

// WriteText prints the history for a terminal: the runs, the warnings,
// the verdict, and the change points newest first with their setup
// changes.
func WriteText(w io.Writer, h *History) error {
	var b strings.Builder
	fmt.Fprintf(&b, "bench history: %d runs", len(h.Runs))
	if n := len(h.Runs); n > 0 {
		fmt.Fprintf(&b, ", %s (%s) to %s (%s)", h.Runs[0].ID, h.Runs[0].StartedAt.Format("2006-01-02"), h.Runs[n-1].ID, h.Runs[n-1].StartedAt.Format("2006-01-02"))
	}
	fmt.Fprintf(&b, "; %d series\n", len(h.Series))
	for _, m := range h.Warnings {
		fmt.Fprintf(&b, "warning: %s\n", m)
	}
	fmt.Fprintf(&b, "verdict: %s\n", verdictLine(h))
	switch {
	case len(h.ChangePoints) == 0 && len(h.Series) > 0 && h.Longest < h.MinRuns:
		fmt.Fprintf(&b, "no change point can be found yet: %d runs, a change point needs %d (--min-runs %d on each side)\n",
			h.Longest, h.MinRuns, h.Options.Detector.MinSegment)
	case len(h.ChangePoints) == 0:
		b.WriteString("no change point\n")
	default:
		b.WriteString("\nCHANGE POINTS (newest first)\n")
	}
	for i, c := range h.ChangePoints {
		if i == maxListed {
			fmt.Fprintf(&b, "  ... and %d more (history.json lists them all)\n", len(h.ChangePoints)-maxListed)
			break
		}
		gate := "    "
		if c.FailsGate {
			gate = "FAIL"
		}
		fmt.Fprintf(&b, "  %s %s: %s from run %s (%d runs ago): %s → %s (%+.1f %%, p=%.2g)\n", gate, c.Label(), c.Direction, c.RunID, c.RunsAgo,
			figure(c.Before), figure(c.After), c.ChangePct, c.P)
		for _, s := range c.Setup {
			fmt.Fprintf(&b, "         setup: %s %s → %s\n", s.What, orDash(s.From), orDash(s.To))
		}
		if len(c.Setup) == 0 {
			b.WriteString("         setup: nothing changed that bench records\n")
		}
		if c.Cause == CauseSetup {
			b.WriteString("         the setup's: bench measured otherwise from this run (not judged a regression of the model)\n")
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func verdictLine(h *History) string {
	if len(h.Options.FailOnChange) == 0 {
		return fmt.Sprintf("%d change points (no --fail-on-change: nothing gates)", len(h.ChangePoints))
	}
	if h.Verdict == VerdictNotJudged {
		return fmt.Sprintf("NOT JUDGED: too few runs for --fail-on-change %s: a change point needs %d runs (--min-runs %d on each side), the longest series has %d",
			strings.Join(h.Options.FailOnChange, ","), h.MinRuns, h.Options.Detector.MinSegment, h.Longest)
	}
	if h.Verdict == VerdictChange {
		return fmt.Sprintf("CHANGE: %d regression change points of --fail-on-change %s in the last %d runs", len(h.Failing),
			strings.Join(h.Options.FailOnChange, ","), h.Options.Since)
	}
	return fmt.Sprintf("ok: no regression change point of --fail-on-change %s in the last %d runs (%d change points in all)",
		strings.Join(h.Options.FailOnChange, ","), h.Options.Since, len(h.ChangePoints))
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// figure prints a value with about 3 significant digits.
func figure(v float64) string {
	switch a := math.Abs(v); {
	case a >= 100:
		return fmt.Sprintf("%.0f", v)
	case a >= 10:
		return fmt.Sprintf("%.1f", v)
	case a >= 1:
		return fmt.Sprintf("%.2f", v)
	}
	return fmt.Sprintf("%.3g", v)
}

var (
	//go:embed assets/history.html.tmpl
	htmlTemplate string
	page         = template.Must(template.New(HTMLFile).Parse(htmlTemplate))
)

type htmlView struct {
	Title, Verdict, VerdictLine string
	Warnings                    []string
	Runs                        int
	ChangePoints                []*ChangePoint
	UPlotJS                     template.JS
	UPlotCSS                    template.CSS
	Data                        template.JS
}

// plotSeries is one chart's data: x the run indexes, y the values, and
// the change points' run indexes.
type plotSeries struct {
	Group   string    `json:"group"`
	Metric  string    `json:"metric"`
	Unit    string    `json:"unit"`
	X       []int     `json:"x"`
	Y       []float64 `json:"y"`
	Changes []int     `json:"changes"`
	Worse   []bool    `json:"worse"`
}

// WriteHTML writes history.html: one self-contained page (uPlot and the
// data inlined, nothing loaded) with the verdict, the change points and
// one chart per series, change points drawn as vertical lines.
func WriteHTML(w io.Writer, h *History) error {
	v := htmlView{Title: fmt.Sprintf("bench history: %d runs", len(h.Runs)), Verdict: h.Verdict, VerdictLine: verdictLine(h),
		Warnings: h.Warnings, Runs: len(h.Runs), ChangePoints: h.ChangePoints}
	v.UPlotJS, v.UPlotCSS = htmlreport.UPlot()
	data := struct {
		Runs   []string     `json:"runs"`
		Series []plotSeries `json:"series"`
	}{Runs: []string{}, Series: []plotSeries{}}
	for _, r := range h.Runs {
		data.Runs = append(data.Runs, r.ID)
	}
	for _, s := range h.Series {
		ps := plotSeries{Group: s.Label(), Metric: s.Metric, Unit: s.Unit, Changes: []int{}, Worse: []bool{}}
		for _, p := range s.Points {
			ps.X = append(ps.X, p.Run)
			ps.Y = append(ps.Y, p.Value)
		}
		for _, c := range s.ChangePoints {
			ps.Changes = append(ps.Changes, c.Run)
			ps.Worse = append(ps.Worse, c.Direction == Regression)
		}
		data.Series = append(data.Series, ps)
	}
	b, err := json.Marshal(data)
	if err != nil {
		return err
	}
	v.Data = template.JS(b)
	return page.Execute(w, v)
}
