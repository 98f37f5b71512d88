package compare

import (
	"fmt"
	"strings"

	"bench/internal/record/rundir"
	"bench/report"
	"bench/report/stats"
)

// busierBy is how much more CPU (percent of one core) other work must have
// used during one run's suite than the other's before a latency change of
// the group is reported as possibly the machine's: half a core.
const busierBy = 50

// OtherLoad is what the machine did besides bench and the model server
// during a group's suite in each run, from the suites' resource files
// (nil where a run did not measure it): the mean CPU of other work in
// percent of one core, the cores, the CPU pressure and the steal.
type OtherLoad struct {
	Base *float64 `json:"base"`
	New  *float64 `json:"new"`
	// Cores are each machine's logical cores (nil: not recorded).
	CoresBase *int `json:"cores_base,omitempty"`
	CoresNew  *int `json:"cores_new,omitempty"`
	// PressureBase and PressureNew are the mean CPU pressure ("some", in
	// percent of the time); StealBase and StealNew the stolen share.
	PressureBase *float64 `json:"cpu_pressure_percent_base,omitempty"`
	PressureNew  *float64 `json:"cpu_pressure_percent_new,omitempty"`
	StealBase    *float64 `json:"steal_percent_base,omitempty"`
	StealNew     *float64 `json:"steal_percent_new,omitempty"`
	// BusyBase and BusyNew say the suite ran on a busy machine (the
	// thresholds above); Busy says why, with the figures.
	BusyBase bool   `json:"busy_base"`
	BusyNew  bool   `json:"busy_new"`
	Busy     string `json:"busy,omitempty"`
	// NoPressure says a run's machine had no pressure figure, and why.
	NoPressure []string `json:"no_pressure,omitempty"`
}

// WhyMachineBusy: the group's suite ran on a busy machine in either run
// (other work filled half the cores or more, or the hypervisor stole
// CPU, or tasks waited for a CPU beside other work), or other work rose
// by half a core during the run whose latency looks worse: the change,
// or its absence, may be the machine's.
const WhyMachineBusy = "machine busy"

// sideLoad is one run's figures for a group's suite.
type sideLoad struct {
	other, pressure, steal *float64
	cores                  *int
	noPressure             string
}

func readSideLoad(dir string, g *Group) (sideLoad, bool) {
	rec, err := rundir.ReadSuite(dir, g.Provider, g.Model, g.ThinkingLevel)
	if err != nil || rec == nil || rec.Peak == nil {
		return sideLoad{}, false
	}
	s := sideLoad{other: rec.Peak.OtherCPUPercentMean, pressure: rec.Peak.CPUPressurePercentMean, steal: rec.Peak.StealPercentMean}
	if rec.Before != nil {
		s.cores = rec.Before.CPUCount
	}
	if s.pressure == nil {
		s.noPressure = rec.Peak.Unavailable["cpu_pressure_percent_mean"]
	}
	return s, true
}

// busy says whether the side's suite ran on a busy machine, and why
// (report.MachineBusy's rule, the one summary.md warns by).
func (s sideLoad) busy() (bool, string) {
	return report.MachineBusy(&rundir.Peak{OtherCPUPercentMean: s.other, CPUPressurePercentMean: s.pressure, StealPercentMean: s.steal}, s.cores)
}

// coresText is "1.97/2 cores" (or "1.97 cores" without the count).
func coresText(other *float64, cores *int) string {
	if other == nil {
		return "not measured"
	}
	if cores == nil {
		return fmt.Sprintf("%.2f cores", *other/100)
	}
	return fmt.Sprintf("%.2f/%d cores", *other/100, *cores)
}

// figures is the two runs' machines in one line: "other work 1.97/2 cores
// base, 1.96/2 new; CPU pressure 85 % base, 80 % new".
func (l *OtherLoad) figures() string {
	s := fmt.Sprintf("other work %s base, %s new", coresText(l.Base, l.CoresBase), coresText(l.New, l.CoresNew))
	if l.PressureBase != nil || l.PressureNew != nil {
		s += fmt.Sprintf("; CPU pressure %s base, %s new", pctOr(l.PressureBase), pctOr(l.PressureNew))
	}
	if (l.StealBase != nil && *l.StealBase >= 1) || (l.StealNew != nil && *l.StealNew >= 1) {
		s += fmt.Sprintf("; steal %s base, %s new", pctOr(l.StealBase), pctOr(l.StealNew))
	}
	return s
}

func pctOr(v *float64) string {
	if v == nil {
		return "-"
	}
	return fmt.Sprintf("%.0f %%", *v)
}

// machineLoad reads each group's machine figures from both runs. Where
// either run's suite ran on a busy machine, none of the group's latency
// (and load-stage throughput) is judged: every such comparison is not
// judged ("machine busy") with the figures, its regressions stay listed
// and fail the gate only with FailOnSuspect. Where the machine was not
// busy but other work used at least busierBy more during the new run's
// suite, the group's latency regressions are not judged alike; where the
// base run's suite was the busier, its improvements. Quality is never
// touched. Unreadable resource files cost the figure, not the compare.
func (c *comparison) machineLoad() {
	defer c.otherWorkSetup()
	for _, g := range c.res.Groups {
		b, okB := readSideLoad(c.base.dir, g)
		n, okN := readSideLoad(c.cur.dir, g)
		if !okB && !okN {
			continue
		}
		l := &OtherLoad{Base: b.other, New: n.other, CoresBase: b.cores, CoresNew: n.cores,
			PressureBase: b.pressure, PressureNew: n.pressure, StealBase: b.steal, StealNew: n.steal}
		var why []string
		if l.BusyBase, why = busyWhy(b, okB, "base", why); okB && b.noPressure != "" {
			l.NoPressure = append(l.NoPressure, "base: "+b.noPressure)
		}
		if l.BusyNew, why = busyWhy(n, okN, "new", why); okN && n.noPressure != "" {
			l.NoPressure = append(l.NoPressure, "new: "+n.noPressure)
		}
		l.Busy = strings.Join(why, "; ")
		if l.Base == nil && l.New == nil && l.PressureBase == nil && l.PressureNew == nil {
			continue
		}
		g.OtherLoad = l
		var suspect stats.Change // "" marks every judged comparison
		var figures string
		switch {
		case l.BusyBase || l.BusyNew:
			figures = "the machine was busy (" + l.Busy + "): " + l.figures()
		case l.Base != nil && l.New != nil && *l.New-*l.Base >= busierBy:
			suspect = stats.Regression
			figures = fmt.Sprintf("other work on the machine rose by %.1f cores during the new run's suite: %s", (*l.New-*l.Base)/100, l.figures())
		case l.Base != nil && l.New != nil && *l.Base-*l.New >= busierBy:
			suspect = stats.Improvement
			figures = fmt.Sprintf("other work on the machine was %.1f cores busier during the base run's suite: %s", (*l.Base-*l.New)/100, l.figures())
		default:
			continue
		}
		n0 := 0
		mark := func(cat, stage, prompt, metric string, v *stats.Verdict) {
			if v == nil || !v.Judged() || (suspect != "" && v.Change != suspect) {
				return
			}
			n0++
			v.Reason = fmt.Sprintf("%s %s; %s", v.Change, v.Reason, figures)
			v.Change, v.NotJudged, v.MDEPct = stats.NotJudged, WhyMachineBusy, 0
			for i := range c.res.Findings {
				f := &c.res.Findings[i]
				if f.Category == cat && f.Metric == metric && f.PromptID == prompt && f.Stage == stage && f.Provider == g.Provider && f.Model == g.Model &&
					ptrEq(f.ThinkingLevel, g.ThinkingLevel) {
					f.Suspect = WhyMachineBusy
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
			if suspect == "" {
				// Goodput (requests within the SLO's latencies) and the
				// saturation point are timings too.
				suspectFinding := func(stage, metric string) {
					for i := range c.res.Findings {
						f := &c.res.Findings[i]
						if f.Category == CapacityCat && f.Metric == metric && f.Stage == stage && f.Provider == g.Provider && f.Model == g.Model && ptrEq(f.ThinkingLevel, g.ThinkingLevel) {
							f.Suspect, f.Message = WhyMachineBusy, f.Message+"; not judged: "+figures
							f.FailsGate = c.opt.failsOn(CapacityCat) && c.opt.FailOnSuspect
						}
					}
				}
				for _, s := range g.Capacity.Stages {
					if gp := &s.Goodput; gp.Change != string(stats.NotJudged) {
						n0++
						gp.Change, gp.NotJudged = string(stats.NotJudged), WhyMachineBusy
						suspectFinding(s.Stage, MetricGoodput)
					}
				}
				if sat := &g.Capacity.Saturation; sat.Change != string(stats.NotJudged) {
					n0++
					sat.Reason = fmt.Sprintf("%s %s; %s", sat.Change, sat.Reason, figures)
					sat.Change, sat.NotJudged = string(stats.NotJudged), WhyMachineBusy
					suspectFinding("", MetricSaturation)
				}
			}
		}
		if n0 == 0 {
			continue
		}
		what := "latency comparisons"
		switch suspect {
		case stats.Regression:
			what = "latency regressions"
		case stats.Improvement:
			what = "latency improvements"
		}
		gate := "its regressions do not fail the gate (--fail-on-suspect makes them)"
		if c.opt.FailOnSuspect {
			gate = "--fail-on-suspect: its regressions fail the gate"
		}
		c.res.Warnings = append(c.res.Warnings, fmt.Sprintf("%s: %s: its %d %s are not judged (machine busy), listed with their figures; %s",
			g.Label(), figures, n0, what, gate))
	}
}

// busyWhy adds a side's busy reason to why.
func busyWhy(s sideLoad, ok bool, side string, why []string) (bool, []string) {
	if !ok {
		return false, why
	}
	busy, w := s.busy()
	if busy {
		why = append(why, side+": "+w)
	}
	return busy, why
}

// otherWorkSetup adds the machines' other work to the setup, always
// listed as a difference (base -> new): the busiest suite of each run,
// with its CPU pressure. A run whose machine gave no pressure figure is
// said once.
func (c *comparison) otherWorkSetup() {
	var side [2]struct {
		other, pressure *float64
		cores           *int
		noPressure      string
	}
	any := false
	for _, g := range c.res.Groups {
		l := g.OtherLoad
		if l == nil {
			continue
		}
		any = true
		for i, v := range []struct {
			other, pressure *float64
			cores           *int
		}{{l.Base, l.PressureBase, l.CoresBase}, {l.New, l.PressureNew, l.CoresNew}} {
			s := &side[i]
			if v.other != nil && (s.other == nil || *v.other > *s.other) {
				s.other, s.cores = v.other, v.cores
			}
			if v.pressure != nil && (s.pressure == nil || *v.pressure > *s.pressure) {
				s.pressure = v.pressure
			}
		}
		for _, np := range l.NoPressure {
			i := 0
			if strings.HasPrefix(np, "new: ") {
				i = 1
			}
			side[i].noPressure = strings.SplitN(np, ": ", 2)[1]
		}
	}
	if !any {
		return
	}
	text := func(i int) string {
		s := side[i]
		t := coresText(s.other, s.cores)
		if s.pressure != nil {
			t += fmt.Sprintf(", CPU pressure %.0f %%", *s.pressure)
		}
		return t
	}
	c.res.Setup = append(c.res.Setup, SetupItem{Name: "other work (busiest suite)", Base: text(0), New: text(1)})
	for i, name := range []string{"base", "new"} {
		if why := side[i].noPressure; why != "" && (side[i].other != nil) {
			c.res.Warnings = append(c.res.Warnings, fmt.Sprintf("the %s run's machine gave no CPU pressure figure (%s): its busy machine is judged on other work and steal alone", name, why))
		}
	}
}
