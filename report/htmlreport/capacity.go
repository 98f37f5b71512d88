package htmlreport

import (
	"fmt"

	"bench/internal/format"
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
func newSweeps(ranked []*report.Group) ([]pageSweep, []capacityRow) {
	var out []pageSweep
	var rows []capacityRow
	for _, g := range ranked {
		var sw pageSweep
		for _, st := range g.Stages {
			if st.Warmup || st.Level == nil {
				continue
			}
			sw.Mode = st.Mode
			pt := pagePoint{Stage: st.Stage, Level: *st.Level, Throughput: st.RequestThroughput, OutputTPS: st.OutputTokensPerS,
				TTFTP50: st.TTFTMS.P50, TTFTP99: st.TTFTMS.P99, ITLP99: st.ITLMS.P99, E2EP99: st.E2EMS.P99, ErrorRate: st.ErrorRate}
			good := "–"
			if st.Goodput != nil {
				pt.GoodputRate = st.Goodput.Rate
				good = format.Pct(st.Goodput.Share)
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
		out = append(out, sw)
	}
	return out, rows
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
