package compare

import (
	"fmt"

	"bench/rundir"
	"bench/stats"
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

// machineLoad reads each group's other-work CPU from both runs and warns
// where a latency regression (or improvement) of the group came with the
// machine busier (or quieter) by busierBy: the gate still decides on the
// numbers, and the warning tells a reader what else moved. Unreadable
// resource files cost the figure, not the compare.
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
		slower, faster := false, false
		for _, v := range g.Latency {
			slower = slower || v.Change == stats.Regression
			faster = faster || v.Change == stats.Improvement
		}
		for _, p := range g.Prompts {
			for _, v := range p.Latency {
				slower = slower || v.Change == stats.Regression
				faster = faster || v.Change == stats.Improvement
			}
		}
		switch d := *l.New - *l.Base; {
		case slower && d >= busierBy:
			c.res.Warnings = append(c.res.Warnings, fmt.Sprintf(
				"%s: other work on the machine used %.1f cores on average during the new run's suite, %.1f during the base run's: its latency regressions may be the machine's, not the model's or the server's",
				g.Label(), *l.New/100, *l.Base/100))
		case faster && -d >= busierBy:
			c.res.Warnings = append(c.res.Warnings, fmt.Sprintf(
				"%s: other work on the machine used %.1f cores on average during the base run's suite, %.1f during the new run's: its latency improvements may be the machine's, not the model's or the server's",
				g.Label(), *l.Base/100, *l.New/100))
		}
	}
}
