package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"

	"bench/providers"
	"bench/results"
)

// progress shows a live count of finished and failed cells: one rewritten
// line on a terminal, one line per cell otherwise (CI logs), and keeps the
// tallies the end-of-run messages need.
type progress struct {
	mu           sync.Mutex
	w            io.Writer
	tty, quiet   bool
	done, total  int
	failed       int
	byStatus     map[string]int
	failureTypes map[string]int
	groups       map[string]*groupTally
	order        []string
	// shownSkips keeps per-cell lines for an absent provider to one per
	// provider and reason, so a dead server is one line, not a wall.
	shownSkips map[string]bool
}

type groupTally struct {
	provider, model, thinking    string
	n, ok, success, pass, judged int
	ttft, e2e                    []int64
}

func newProgress(w io.Writer, quiet bool) *progress {
	tty := false
	if f, ok := w.(*os.File); ok {
		if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
			tty = true
		}
	}
	return &progress{w: w, tty: tty, quiet: quiet, byStatus: map[string]int{}, failureTypes: map[string]int{}, groups: map[string]*groupTally{}, shownSkips: map[string]bool{}}
}

func (p *progress) record(r *results.Record, done, total int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.done, p.total = done, done
	p.byStatus[r.AvailabilityStatus]++
	if r.FailureType != nil {
		p.failureTypes[*r.FailureType]++
	}
	if !r.Success {
		p.failed++
	}
	th := "-"
	if r.ThinkingLevel != nil {
		th = *r.ThinkingLevel
	}
	key := r.Provider + "\x00" + r.Model + "\x00" + th
	g := p.groups[key]
	if g == nil {
		g = &groupTally{provider: r.Provider, model: r.Model, thinking: th}
		p.groups[key] = g
		p.order = append(p.order, key)
	}
	g.n++
	if r.AvailabilityStatus == providers.StatusOK {
		g.ok++
		g.e2e = append(g.e2e, r.E2EMS)
		if r.TTFTMS != nil {
			g.ttft = append(g.ttft, *r.TTFTMS)
		}
	}
	if r.Success {
		g.success++
	}
	if r.ObjectivePass != nil {
		g.judged++
		if *r.ObjectivePass {
			g.pass++
		}
	}
	if p.quiet {
		return
	}
	if p.tty {
		fmt.Fprintf(p.w, "\r\033[K  %d/%d cells · %d ok · %d failed", done, total, done-p.failed, p.failed)
		return
	}
	if r.AvailabilityStatus == providers.StatusSkippedUnavailable && r.FailureType != nil {
		key := r.Provider + "\x00" + *r.FailureType
		if p.shownSkips[key] {
			return
		}
		p.shownSkips[key] = true
		msg := ""
		if r.ErrorMessage != nil {
			msg = ": " + *r.ErrorMessage
		}
		fmt.Fprintf(p.w, "  [%d/%d] %s %s skipped (%s)%s; further cells skipped for this reason are not listed\n", done, total, r.Provider, r.Model, *r.FailureType, msg)
		return
	}
	verdict := r.AvailabilityStatus
	if r.FailureType != nil {
		verdict += "/" + *r.FailureType
	} else if r.ObjectivePass != nil {
		verdict += map[bool]string{true: " pass", false: " FAIL"}[*r.ObjectivePass]
	}
	ttft := "-"
	if r.TTFTMS != nil {
		ttft = fmt.Sprintf("%dms", *r.TTFTMS)
	}
	fmt.Fprintf(p.w, "  [%d/%d] %s %s %s %s#%d ttft=%s e2e=%dms %s\n", done, total, r.Provider, r.Model, th, r.PromptID, r.Repetition, ttft, r.E2EMS, verdict)
}

func (p *progress) finish() {
	if p.tty && !p.quiet && p.done > 0 {
		fmt.Fprintln(p.w)
	}
}

// printTable prints the short end-of-run table.
func printTable(w io.Writer, p *progress) {
	if len(p.order) == 0 {
		return
	}
	fmt.Fprintf(w, "\n%-16s %-28s %-8s %9s %9s %9s %9s\n", "provider", "model", "thinking", "ok/total", "pass", "ttft p50", "e2e p50")
	fmt.Fprintln(w, strings.Repeat("-", 94))
	for _, key := range p.order {
		g := p.groups[key]
		pass := "-"
		if g.judged > 0 {
			pass = fmt.Sprintf("%d/%d", g.pass, g.judged)
		}
		fmt.Fprintf(w, "%-16s %-28s %-8s %9s %9s %9s %9s\n", g.provider, g.model, g.thinking,
			fmt.Sprintf("%d/%d", g.ok, g.n), pass, median(g.ttft), median(g.e2e))
	}
	fmt.Fprintln(w)
}

func median(v []int64) string {
	if len(v) == 0 {
		return "-"
	}
	s := append([]int64(nil), v...)
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
	return fmt.Sprintf("%dms", s[len(s)/2])
}
