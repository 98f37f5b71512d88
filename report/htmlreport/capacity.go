package htmlreport

import (
	"fmt"
	"strings"

	"bench/internal/record/rundir"
	"bench/internal/record/slo"
	"bench/report"
)

// pageSweep is one group's load sweep for report.js's capacity curves:
// a point per stage (the warm-up left out), in the order the stages ran.
type pageSweep struct {
	Label string `json:"label"`
	// Mode is concurrency or rate: what Level counts.
	Mode   string      `json:"mode"`
	Points []pagePoint `json:"points"`
	// Saturation is the saturation point's level (null when the sweep
	// never saturated or has one stage).
	Saturation *float64 `json:"saturation"`
	// Search is the group's SLO search, for the attainment plot (null
	// without one).
	Search *pageSearch `json:"search"`
	// SearchText says what the search found, in a line under its title.
	SearchText string `json:"-"`
	// SearchRows are its stages for the table beside the plot.
	SearchRows []searchRow `json:"-"`
	// Server is what the sweep's server said of itself, drawn under the
	// curves on the stages' time axis (null without readings).
	Server *pageServer `json:"server"`
}

// pageSearch is an SLO search for report.js: each stage's attainment and
// its interval against the level, the attainment asked, and the limit.
type pageSearch struct {
	Mode       string        `json:"mode"`
	Attainment float64       `json:"attainment"`
	Limit      *float64      `json:"limit"`
	Fail       *float64      `json:"fail"`
	Points     []searchPoint `json:"points"`
}

type searchPoint struct {
	Stage      string  `json:"stage"`
	Level      float64 `json:"level"`
	Attainment float64 `json:"attainment"`
	Lo         float64 `json:"lo"`
	Hi         float64 `json:"hi"`
	Passed     bool    `json:"passed"`
}

// searchRow is one stage of a search in its table.
type searchRow struct {
	Stage, Level, N, Attainment, Interval, Verdict, Missed string
	Passed                                                 bool
}

type pagePoint struct {
	Stage       string   `json:"stage"`
	Level       float64  `json:"level"`
	Throughput  *float64 `json:"throughput"`
	OutputTPS   *float64 `json:"output_tps"`
	TTFTP50     *float64 `json:"ttft_p50"`
	TTFTP99     *float64 `json:"ttft_p99"`
	ITLP99      *float64 `json:"itl_p99"`
	E2EP99      *float64 `json:"e2e_p99"`
	GoodputRate *float64 `json:"goodput_rate"`
	ErrorRate   *float64 `json:"error_rate"`
}

// capacityRow is one stage in the capacity section's table.
type capacityRow struct {
	Sweep, Stage, Level, Throughput, OutputTPS, TTFT50, TTFT99, ITL99, Goodput, Errors string
	Saturation                                                                         bool
}

// newSweeps lays out the sweeps of the ranked groups.
func newSweeps(ranked []*report.Group, servers map[groupKey][]rundir.ServerSample) ([]pageSweep, []capacityRow) {
	var out []pageSweep
	var rows []capacityRow
	for _, g := range ranked {
		var sw pageSweep
		for _, st := range g.Stages {
			if st.Warmup || st.Level == nil || (g.SLOSearch != nil && st.Stage == slo.StageProbe) {
				// A search's probe is a closed loop of its streams, not a
				// level of the search's curve.
				continue
			}
			sw.Mode = st.Mode
			pt := pagePoint{Stage: st.Stage, Level: *st.Level, Throughput: st.RequestThroughput, OutputTPS: st.OutputTokensPerS,
				TTFTP50: st.TTFTMS.P50, TTFTP99: st.TTFTMS.P99, ITLP99: st.ITLMS.P99, E2EP99: st.E2EMS.P99, ErrorRate: st.ErrorRate}
			good := "–"
			if st.Goodput != nil {
				pt.GoodputRate = st.Goodput.Rate
				good = pctCell(st.Goodput.Share).Text // a 0–1 share
			}
			sw.Points = append(sw.Points, pt)
			sat := g.Saturation != nil && g.Saturation.Reached && g.Saturation.Stage == st.Stage
			rows = append(rows, capacityRow{Sweep: g.Label(), Stage: st.Stage, Level: levelText(st), Throughput: num1(st.RequestThroughput),
				OutputTPS: num1(st.OutputTokensPerS), TTFT50: msText(st.TTFTMS.P50), TTFT99: msText(st.TTFTMS.P99), ITL99: msText(st.ITLMS.P99),
				Goodput: good, Errors: errorsText(st), Saturation: sat})
		}
		if len(sw.Points) == 0 {
			continue
		}
		sw.Label = g.Label()
		if g.Saturation != nil && g.Saturation.Reached {
			sw.Saturation = &g.Saturation.Level
		}
		if ss := g.SLOSearch; ss != nil {
			sw.Search, sw.SearchText, sw.SearchRows = newSearch(ss)
		}
		if smp := servers[keyOf(g.Provider, g.Model, g.ThinkingLevel)]; len(smp) > 0 {
			sw.Server = newServer(g, smp)
		}
		out = append(out, sw)
	}
	return out, rows
}

// newSearch lays out a group's SLO search: the plot's points (the probe
// left out), the line that says what it found, and its table.
func newSearch(ss *report.SLOSearch) (*pageSearch, string, []searchRow) {
	ps := &pageSearch{Mode: ss.Mode, Attainment: ss.Attainment, Limit: ss.Limit, Fail: ss.Bracket[1]}
	var rows []searchRow
	for _, st := range ss.Stages {
		row := searchRow{Stage: st.Stage, Level: report.SearchLevel(ss.Mode, st.Level), N: fmt.Sprint(st.N), Attainment: pctCell(st.Attainment).Text, // a 0–1 share
			Verdict: st.Verdict(), Missed: st.MissedText(), Passed: st.Passed}
		if st.Probe {
			row.Level = fmt.Sprintf("%g streams", st.Level)
		}
		if st.CI != nil {
			row.Interval = fmt.Sprintf("[%.1f, %.1f] %%", 100*st.CI[0], 100*st.CI[1])
		}
		rows = append(rows, row)
		if st.Probe || st.Attainment == nil || st.CI == nil {
			continue
		}
		ps.Points = append(ps.Points, searchPoint{Stage: st.Stage, Level: st.Level, Attainment: *st.Attainment, Lo: st.CI[0], Hi: st.CI[1], Passed: st.Passed})
	}
	var text string
	switch {
	case ss.Found:
		text = fmt.Sprintf("Limit %s: it held there and failed at %s", report.SearchLevel(ss.Mode, *ss.Limit), report.SearchLevel(ss.Mode, *ss.Bracket[1]))
	case ss.Limit != nil:
		text = fmt.Sprintf("No stage failed: the SLO held up to %s", report.SearchLevel(ss.Mode, *ss.Limit))
	case ss.Bracket[1] != nil:
		text = fmt.Sprintf("No stage passed: the SLO failed down to %s", report.SearchLevel(ss.Mode, *ss.Bracket[1]))
	default:
		text = "No limit"
	}
	text += fmt.Sprintf(" (%d of %d stages, %s: %s).", ss.StagesUsed, ss.MaxStages, ss.End, ss.Reason)
	if f := ss.FirstFailed; f != nil {
		text += fmt.Sprintf(" First failed: %s at %s: %s.", f.Stage, report.SearchLevel(ss.Mode, f.Level), strings.Join(f.Targets, "; "))
	}
	return ps, text, rows
}

func levelText(st *report.Stage) string {
	if st.Mode == "rate" {
		return fmt.Sprintf("%g req/s", *st.Level)
	}
	return fmt.Sprintf("%g streams", *st.Level)
}

func num1(v *float64) string {
	if v == nil {
		return "–"
	}
	return fmt.Sprintf("%.1f", *v)
}

func msText(v *float64) string {
	if v == nil {
		return "–"
	}
	return FormatMS(*v)
}

// errorsText is a stage's errors over the cells it sent, and the cells it
// did not send (a stopped sweep, a stage timeout) with the reason in
// summary.json.
func errorsText(st *report.Stage) string {
	s := fmt.Sprintf("%d/%d", st.NError, st.NTotal-st.NNotRun)
	if st.NNotRun > 0 {
		s += fmt.Sprintf(", %d not run", st.NNotRun)
	}
	return s
}
