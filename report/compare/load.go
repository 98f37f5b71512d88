package compare

import (
	"fmt"

	"bench/internal/record/rundir"
	"bench/report/stats"
)

// busierBy is how much more CPU (percent of one core) other work must have
// used during one run's suite than the other's before a latency change of
// the group is reported as possibly the machine's: half a core.
const busierBy = 50

// OtherLoad is the mean CPU, in percent of one core, that other work on
// the machine (neither bench nor the model server) used during a group's
// suite in each run, from the suites' resource files (nil where a run did
// not measure it).
type OtherLoad struct {
	Base *float64 `json:"base"`
	New  *float64 `json:"new"`
}

// WhyMachineLoad: other work on the machine rose by at least half a core
// during the run whose latency looks worse (or, for an improvement, during
// the base run): the change may be the machine's.
const WhyMachineLoad = "machine load"

// machineLoad reads each group's other-work CPU from both runs. Where
// other work used at least busierBy more during the new run's suite, the
// group's latency regressions (group and prompts) are not judged
// ("machine load"): their findings stay listed with the figures and fail
// the gate only with FailOnSuspect. Where the base run's suite was the
// busier one, its latency improvements are not judged alike. Quality is
// never touched. Unreadable resource files cost the figure, not the
// compare.
func (c *comparison) machineLoad() {
	for _, g := range c.res.Groups {
		var l OtherLoad
		for _, side := range []struct {
			dir string
			to  **float64
		}{{c.base.dir, &l.Base}, {c.cur.dir, &l.New}} {
			if rec, err := rundir.ReadSuite(side.dir, g.Provider, g.Model, g.ThinkingLevel); err == nil && rec != nil && rec.Peak != nil {
				*side.to = rec.Peak.OtherCPUPercentMean
			}
		}
		if l.Base == nil && l.New == nil {
			continue
		}
		g.OtherLoad = &l
		if l.Base == nil || l.New == nil {
			continue
		}
		d := *l.New - *l.Base
		var suspect stats.Change
		var figures string
		switch {
		case d >= busierBy:
			suspect = stats.Regression
			figures = fmt.Sprintf("other work on the machine used %.1f cores on average during the new run's suite, %.1f during the base run's", *l.New/100, *l.Base/100)
		case -d >= busierBy:
			suspect = stats.Improvement
			figures = fmt.Sprintf("other work on the machine used %.1f cores on average during the base run's suite, %.1f during the new run's", *l.Base/100, *l.New/100)
		default:
			continue
		}
		n := 0
		mark := func(cat, stage, prompt, metric string, v *stats.Verdict) {
			if v == nil || v.Change != suspect {
				return
			}
			n++
			v.Reason = fmt.Sprintf("%s %s; %s", v.Change, v.Reason, figures)
			v.Change, v.NotJudged = stats.NotJudged, WhyMachineLoad
			for i := range c.res.Findings {
				f := &c.res.Findings[i]
				if f.Category == cat && f.Metric == metric && f.PromptID == prompt && f.Stage == stage && f.Provider == g.Provider && f.Model == g.Model &&
					ptrEq(f.ThinkingLevel, g.ThinkingLevel) {
					f.Suspect = WhyMachineLoad
					f.Message += "; not judged: " + figures
					f.FailsGate = c.opt.failsOn(cat) && c.opt.FailOnSuspect
				}
			}
		}
		for _, m := range Metrics {
			mark(Latency, "", "", m, g.Latency[m])
		}
		for _, p := range g.Prompts {
			for _, m := range Metrics {
				mark(Latency, "", p.PromptID, m, p.Latency[m])
			}
		}
		if g.Capacity != nil {
			for _, s := range g.Capacity.Stages {
				mark(CapacityCat, s.Stage, "", MetricThroughput, s.Throughput)
			}
		}
		if n == 0 {
			continue
		}
		what := "regressions"
		if suspect == stats.Improvement {
			what = "improvements"
		}
		gate := "they do not fail the gate (--fail-on-suspect makes them)"
		if c.opt.FailOnSuspect {
			gate = "--fail-on-suspect: they fail the gate"
		}
		c.res.Warnings = append(c.res.Warnings, fmt.Sprintf(
			"%s: %s: its %d latency %s are not judged (machine load), listed with their figures; %s",
			g.Label(), figures, n, what, gate))
	}
}
