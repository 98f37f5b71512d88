package resources

import (
	"fmt"
	"sort"
	"strings"
)

// renderSnapshot is the human-readable _before.txt / _after.txt content.
// peak is printed when given (the after file).
func renderSnapshot(when string, rec *SuiteRecord, s *Snapshot, peak *Peak) string {
	var b strings.Builder
	level := "none"
	if rec.ThinkingLevel != nil {
		level = *rec.ThinkingLevel
	}
	fmt.Fprintf(&b, "Resources %s the suite of %s / %s (thinking: %s)\n", when, rec.Provider, rec.Model, level)
	fmt.Fprintf(&b, "taken at:      %s\n", s.TakenAt.Format("2006-01-02 15:04:05.000 UTC"))
	fmt.Fprintf(&b, "cpu:           %s logical cores, %s busy over %d ms\n", Int(s.CPUCount), Pct(s.CPUPercent), s.CPUWindowMS)
	fmt.Fprintf(&b, "load average:  %s %s %s (1, 5, 15 min)\n", Float(s.Load1), Float(s.Load5), Float(s.Load15))
	fmt.Fprintf(&b, "memory:        total %s, used %s, available %s\n", Bytes(s.MemTotal), Bytes(s.MemUsed), Bytes(s.MemAvailable))
	fmt.Fprintf(&b, "swap:          total %s, used %s\n", Bytes(s.SwapTotal), Bytes(s.SwapUsed))
	fmt.Fprintf(&b, "disk:          %s: total %s, used %s, free %s; run directory %s\n", s.DiskPath, Bytes(s.DiskTotal), Bytes(s.DiskUsed), Bytes(s.DiskFree), Bytes(s.OutDirBytes))
	fmt.Fprintf(&b, "processes:     %s\n", Int(s.ProcessCount))
	if srv := s.Server; srv != nil {
		fmt.Fprintf(&b, "model server:  pid %d (%s), found by %s: %d processes, rss %s, cpu %s of one core\n",
			srv.PID, srv.Name, srv.FoundBy, srv.Processes, Bytes(srv.RSSBytes), Pct(srv.CPUPercent))
	} else {
		fmt.Fprintf(&b, "model server:  n/a\n")
	}
	if peak != nil {
		fmt.Fprintf(&b, "during suite:  %d samples every %d ms; peak cpu %s (mean %s), peak memory used %s, peak server rss %s, peak server cpu %s\n",
			peak.Samples, peak.IntervalMS, Pct(peak.CPUPercent), Pct(peak.CPUPercentMean), Bytes(peak.MemUsed), Bytes(peak.ServerRSS), Pct(peak.ServerCPUPercent))
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

// Bytes renders a byte count in binary units, "n/a" for null.
func Bytes(v *uint64) string {
	if v == nil {
		return "n/a"
	}
	n := float64(*v)
	for _, u := range []string{"B", "KiB", "MiB", "GiB", "TiB"} {
		if n < 1024 || u == "TiB" {
			if u == "B" {
				return fmt.Sprintf("%d B", *v)
			}
			return fmt.Sprintf("%.1f %s", n, u)
		}
		n /= 1024
	}
	return ""
}

// Pct renders a percent with one decimal, "n/a" for null.
func Pct(v *float64) string {
	if v == nil {
		return "n/a"
	}
	return fmt.Sprintf("%.1f%%", *v)
}

// Float renders a number with two decimals, "n/a" for null.
func Float(v *float64) string {
	if v == nil {
		return "n/a"
	}
	return fmt.Sprintf("%.2f", *v)
}

// Int renders an integer, "n/a" for null.
func Int(v *int) string {
	if v == nil {
		return "n/a"
	}
	return fmt.Sprint(*v)
}
