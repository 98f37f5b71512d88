package main

import (
	"fmt"
	"io"
	"os"
	"sync"

	"bench/results"
)

// progress shows a live count of finished and failed cells: one rewritten
// line on a terminal, one line per cell otherwise (CI logs), and keeps the
// status tallies the end-of-run message needs.
type progress struct {
	mu         sync.Mutex
	w          io.Writer
	tty, quiet bool
	recorded   int
	failed     int
	byStatus   map[string]int
	// shownSkips keeps per-cell lines for an absent provider to one per
	// provider and reason, so a dead server is one line, not a wall.
	shownSkips map[string]bool
	// skipped maps provider name and failure type to the models skipped so.
	skipped map[string]map[string][]string
}

func newProgress(w io.Writer, quiet bool) *progress {
	tty := false
	if f, ok := w.(*os.File); ok {
		if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
			tty = true
		}
	}
	return &progress{w: w, tty: tty, quiet: quiet, byStatus: map[string]int{}, shownSkips: map[string]bool{}, skipped: map[string]map[string][]string{}}
}

func (p *progress) record(r *results.Record, done, total int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.recorded = done
	p.byStatus[r.AvailabilityStatus]++
	if r.FailureType != nil {
		if r.AvailabilityStatus == results.StatusSkippedUnavailable {
			byType := p.skipped[r.Provider]
			if byType == nil {
				byType = map[string][]string{}
				p.skipped[r.Provider] = byType
			}
			if ms := byType[*r.FailureType]; len(ms) == 0 || ms[len(ms)-1] != r.Model {
				byType[*r.FailureType] = append(ms, r.Model)
			}
		}
	}
	if !r.Success {
		p.failed++
	}
	th := "-"
	if r.ThinkingLevel != nil {
		th = *r.ThinkingLevel
	}
	if p.quiet {
		return
	}
	if p.tty {
		fmt.Fprintf(p.w, "\r\033[K  %d/%d cells · %d ok · %d failed", done, total, done-p.failed, p.failed)
		return
	}
	if r.AvailabilityStatus == results.StatusSkippedUnavailable && r.FailureType != nil {
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
	if p.tty && !p.quiet && p.recorded > 0 {
		fmt.Fprintln(p.w)
	}
}
