package resources

import (
	"fmt"
	"sort"
	"strings"

	"bench/internal/format"
	"bench/internal/record/rundir"
)

// renderSnapshot is the human-readable _before.txt / _after.txt content.
// peak is printed when given (the after file).
func renderSnapshot(when string, rec *rundir.SuiteRecord, s *rundir.Snapshot, peak *rundir.Peak) string {
	var b strings.Builder
	level := "none"
	if rec.ThinkingLevel != nil {
		level = *rec.ThinkingLevel
	}
	fmt.Fprintf(&b, "Resources %s the suite of %s / %s (thinking: %s)\n", when, rec.Provider, rec.Model, level)
	fmt.Fprintf(&b, "taken at:      %s\n", s.TakenAt.Format("2006-01-02 15:04:05.000 UTC"))
	fmt.Fprintf(&b, "cpu:           %s logical cores, %s busy over %d ms\n", format.Int(s.CPUCount), format.Pct(s.CPUPercent), s.CPUWindowMS)
	fmt.Fprintf(&b, "load average:  %s %s %s (1, 5, 15 min)\n", format.Float(s.Load1), format.Float(s.Load5), format.Float(s.Load15))
	fmt.Fprintf(&b, "memory:        total %s, used %s, available %s\n", format.Bytes(s.MemTotal), format.Bytes(s.MemUsed), format.Bytes(s.MemAvailable))
	fmt.Fprintf(&b, "swap:          total %s, used %s\n", format.Bytes(s.SwapTotal), format.Bytes(s.SwapUsed))
	fmt.Fprintf(&b, "disk:          %s: total %s, used %s, free %s; run directory %s\n", s.DiskPath, format.Bytes(s.DiskTotal), format.Bytes(s.DiskUsed), format.Bytes(s.DiskFree), format.Bytes(s.OutDirBytes))
	fmt.Fprintf(&b, "processes:     %s\n", format.Int(s.ProcessCount))
	if srv := s.Server; srv != nil {
		fmt.Fprintf(&b, "model server:  pid %d (%s), found by %s: %d processes, rss %s, cpu %s of one core\n",
			srv.PID, srv.Name, srv.FoundBy, srv.Processes, format.Bytes(srv.RSSBytes), format.Pct(srv.CPUPercent))
	} else {
		fmt.Fprintf(&b, "model server:  n/a\n")
	}
	if peak != nil {
		fmt.Fprintf(&b, "during suite:  %d samples every %d ms; peak cpu %s (mean %s), peak memory used %s, peak server rss %s, peak server cpu %s\n",
			peak.Samples, peak.IntervalMS, format.Pct(peak.CPUPercent), format.Pct(peak.CPUPercentMean), format.Bytes(peak.MemUsed), format.Bytes(peak.ServerRSS), format.Pct(peak.ServerCPUPercent))
		other := "n/a"
		if peak.OtherCPUPercentMean != nil {
			other = fmt.Sprintf("%.2f cores", *peak.OtherCPUPercentMean/100)
		}
		fmt.Fprintf(&b, "other work:    %s on average; cpu pressure %s of the time, steal %s\n", other, format.Pct(peak.CPUPressurePercentMean), format.Pct(peak.StealPercentMean))
	}
	writeReasons(&b, "not available", s.Unavailable)
	if peak != nil {
		writeReasons(&b, "not available during suite", peak.Unavailable)
	}
	return b.String()
}

func writeReasons(b *strings.Builder, title string, m map[string]string) {
	if len(m) == 0 {
		return
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	fmt.Fprintf(b, "%s:\n", title)
	for _, k := range keys {
		fmt.Fprintf(b, "  %s: %s\n", k, m[k])
	}
}
