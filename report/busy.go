package report

import (
	"fmt"
	"strings"

	"bench/internal/record/rundir"
)

// The busy machine's thresholds: a suite ran on a busy machine when other
// work (neither bench nor the model servers it measured) used at least
// BusyOtherShare of the machine's cores on average, when the hypervisor
// stole at least BusyStealPercent of the CPU time, or when tasks waited
// for a CPU at least BusyPressurePercent of the time (the kernel's
// pressure stall information) while other work used at least a quarter
// of a core. Pressure alone is not enough: bench and a CPU-bound model
// server make pressure of their own, the same every night.
const (
	BusyOtherShare      = 0.5
	BusyStealPercent    = 10
	BusyPressurePercent = 10
	busyPressureOther   = 25 // percent of a core
)

// MachineBusy says whether a suite whose sampler saw peak, on a machine
// of cores logical cores (nil: not recorded), ran on a busy machine, and
// why with the figures ("other work 98 % of the cores, CPU pressure 85 %
// beside other work"). A suite without figures is not busy: nothing says
// it was.
func MachineBusy(peak *rundir.Peak, cores *int) (bool, string) {
	if peak == nil {
		return false, ""
	}
	var why []string
	if o := peak.OtherCPUPercentMean; o != nil && cores != nil && *cores > 0 && *o/100 >= BusyOtherShare*float64(*cores) {
		why = append(why, fmt.Sprintf("other work %.0f %% of the cores", *o/float64(*cores)))
	}
	if s := peak.StealPercentMean; s != nil && *s >= BusyStealPercent {
		why = append(why, fmt.Sprintf("steal %.0f %%", *s))
	}
	if p, o := peak.CPUPressurePercentMean, peak.OtherCPUPercentMean; p != nil && *p >= BusyPressurePercent && o != nil && *o >= busyPressureOther {
		why = append(why, fmt.Sprintf("CPU pressure %.0f %% beside other work", *p))
	}
	return len(why) > 0, strings.Join(why, ", ")
}

// busyWarning is ColdWarnings' line for a group whose suite ran on a busy
// machine, "" when it did not.
func busyWarning(g *Group) string {
	var cores *int
	if g.ResourcesBefore != nil {
		cores = g.ResourcesBefore.CPUCount
	}
	busy, why := MachineBusy(g.ResourcesPeak, cores)
	if !busy {
		return ""
	}
	return fmt.Sprintf("%s: the machine was busy during its suite (%s): its latency and throughput figures are the machine's as much as the model's, "+
		"and bench compare does not judge them (machine busy)", g.Label(), why)
}
