package runner

import (
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"sync"
	"time"

	"bench/config"
	"bench/internal/record/pricing"
	"bench/internal/record/results"
	"bench/internal/record/slo"
	"bench/run/plan"
)

// Failure types of cells a load profile did not send (results.Sent).
const (
	FailSweepStopped = results.FailSweepStopped
	FailStageTimeout = results.FailStageTimeout
	FailSearchDone   = results.FailSearchDone
)

// stageRun is what a finished stage tells the sweep: how many cells it
// sent, how many got no answer, and the rate it was answered at.
type stageRun struct {
	sent, unanswered, succeeded int
	// window is from the stage's start to its last cell's end.
	window time.Duration
	// tally is an SLO search stage's attainment (its sent cells under the
	// run's slo: block).
	tally slo.Tally
}

// rate is successful requests per second over the stage's window.
func (s stageRun) rate() float64 {
	if s.window <= 0 {
		return 0
	}
	return float64(s.succeeded) / s.window.Seconds()
}

// staged runs a suite's load stages in order: each stage's cells at its
// concurrency (closed loop) or on its schedule (open loop), the next stage
// once every cell of this one has ended. An auto sweep's rate stages get
// their rates from what its sync and throughput stages measured. After a
// stage in which load.stop_error_rate of the cells or more got no answer
// (availability_status not ok), the later stages' cells are recorded as
// not run (skipped_unavailable, sweep_stopped), naming the stage: a server
// that fell over is not hammered for the rest of the sweep, and the
// reports show where it broke. It returns false when the run stops
// starting cells.
func (r *sweep) staged(si int, w *serverWatch) bool {
	if st := r.o.Plan.Suites[si].Stages; len(st) > 0 && st[0].Load.Search != nil {
		return r.searched(si, w)
	}
	cells := r.cells[si]
	// A resumed auto sweep takes the rates of the sync and throughput
	// stages it ran before (their cells are not in cells), and a rate
	// stage it had begun keeps its level.
	var prior map[string]recordedStage
	if st := r.o.Plan.Suites[si].Stages; len(st) > 0 && st[0].Load.Sweep.Auto {
		prior = r.recordedStages(r.o.Plan.Suites[si], plan.IsAutoStage)
	}
	sync, peak := prior[plan.AutoSync].throughput, prior[plan.AutoThroughput].throughput
	stopped := ""
	for i := 0; i < len(cells); {
		st := cells[i].Stage
		j := i
		for j < len(cells) && cells[j].Stage == st {
			j++
		}
		group := cells[i:j]
		i = j
		if r.stopping() {
			return false
		}
		if stopped != "" {
			for _, c := range group {
				if err := r.notRun(c, st.Level, FailSweepStopped, stopped); err != nil {
					return false
				}
			}
			continue
		}
		level := st.Level
		if was := prior[st.Name]; st.Auto == plan.AutoRate && was.sent > 0 {
			level = was.level
		} else if st.Auto == plan.AutoRate {
			level = autoRate(sync, peak, st.AutoStep, st.Load.AutoRates)
			if level <= 0 {
				why := "not sent: the auto sweep's sync and throughput stages measured no answered request, so it has no rate to run"
				for _, c := range group {
					if err := r.notRun(c, 0, FailSweepStopped, why); err != nil {
						return false
					}
				}
				continue
			}
		}
		run, ok := r.stage(st, level, group, w)
		if !ok {
			return false
		}
		switch st.Auto {
		case plan.AutoSync:
			sync = prior[st.Name].rateWith(run)
		case plan.AutoThroughput:
			peak = prior[st.Name].rateWith(run)
		}
		if !st.Warmup && run.sent > 0 && float64(run.unanswered) >= st.Load.StopErrorRate*float64(run.sent) {
			stopped = fmt.Sprintf("not sent: the sweep stopped after stage %s, where %d of %d cells got no answer (load.stop_error_rate %g)",
				st.Name, run.unanswered, run.sent, st.Load.StopErrorRate)
		}
	}
	return true
}

// autoRate is rate step of n in an auto sweep: evenly spaced from the
// synchronous rate to the peak, the last at the peak (GuideLLM's sweep).
// A peak below the synchronous rate (a server that did worse with more
// streams) spaces the rates up to the synchronous one instead.
func autoRate(sync, peak float64, step, n int) float64 {
	peak = max(peak, sync)
	if n < 1 {
		return 0
	}
	return sync + (peak-sync)*float64(step)/float64(n)
}

// loadCell is what the generator knows of a cell it sends: when it was
// due, and when it had its slot.
type loadCell struct {
	stage      *plan.Stage
	level      float64
	stageStart time.Time
	// due is when the cell was due: its place in an open loop's schedule,
	// or when a closed loop's stream was free.
	due time.Time
	// woke is when the cell's goroutine started (past the generator's own
	// delay); slot is when it had a slot under max_concurrency (woke
	// otherwise).
	woke, slot time.Time
}

// fill writes the cell's stage and schedule into its record. The sent
// time is the record's start (started_at_us: when runCell began).
func (lc *loadCell) fill(rec *results.Record) {
	rec.Stage, rec.StageMode, rec.StageLevel = lc.stage.Name, lc.stage.Mode, ptr(lc.level)
	rec.StageStartUS = lc.stageStart.UnixMicro()
	rec.EndedAtUS = endUS(rec)
	sent := time.UnixMicro(rec.StartedAtUS)
	if rec.StartedAtUS == 0 {
		sent = lc.slot
	}
	wait := lc.slot.Sub(lc.woke)
	rec.ScheduledAtMS = ptr(msFine(lc.due.Sub(lc.stageStart)))
	rec.SentAtMS = ptr(msFine(sent.Sub(lc.stageStart)))
	rec.ScheduleSlipMS = ptr(msFine(max(sent.Sub(lc.due)-wait, 0)))
	if lc.stage.Load.MaxConcurrency > 0 && lc.stage.Mode == plan.ModeRate {
		rec.SlotWaitMS = ptr(msFine(wait))
	}
}

// endUS is the cell's end in µs since the epoch: its timeline's end event
// (µs precise), else ended_at_ms.
func endUS(rec *results.Record) int64 {
	for i := len(rec.Timeline) - 1; i >= 0; i-- {
		if e := rec.Timeline[i]; e.Event == results.EventEnd && rec.StartedAtUS > 0 {
			return rec.StartedAtUS + int64(e.AtMS*1000)
		}
	}
	return rec.EndedAtMS * 1000
}

// stage runs one stage's cells and waits for them all; ok is false when
// the run stopped starting cells (the stage's unsent cells are then left
// unrecorded, as any cell after a Ctrl-C).
func (r *sweep) stage(st *plan.Stage, level float64, cells []plan.Cell, w *serverWatch) (run stageRun, ok bool) {
	defer collectLess()()
	clock := r.o.Clock
	start := clock.Now()
	deadline := start.Add(time.Duration(st.Load.StageTimeout))
	var mu sync.Mutex
	var wg sync.WaitGroup
	lastEnd := start
	// An open loop's cap: a cell due while it is reached waits for a slot.
	var capSem chan struct{}
	if st.Load.MaxConcurrency > 0 && st.Mode == plan.ModeRate {
		capSem = make(chan struct{}, st.Load.MaxConcurrency)
	}
	send := func(c plan.Cell, lc *loadCell, release func()) bool {
		// Under a budget a load cell is paid for as a sweep's is: one it
		// cannot afford stops the stage (and holds its schedule while the
		// cells in flight settle).
		var cost float64
		if r.budget != nil {
			cost, _ = r.budget.Projector.Cell(c)
			if !r.budget.take(r.ctx, r.o.Drain, cost) {
				if release != nil {
					release()
				}
				r.noteDrain()
				return false
			}
		}
		r.mu.Lock()
		r.dispatched[c.Key()] = true
		r.mu.Unlock()
		wg.Add(1)
		prov := r.o.Providers[c.Provider.Name]
		r.g.Go(func() error {
			defer wg.Done()
			lc.woke = clock.Now()
			lc.slot = lc.woke
			if capSem != nil {
				if !acquire(r.ctx, nil, capSem) {
					r.budget.settle(cost, 0)
					return nil
				}
				lc.slot = clock.Now()
				release = func() { <-capSem }
			}
			if release != nil {
				defer release()
			}
			rec, times := runCellTimed(r.ctx, r.cfg, clock, prov, c, r.outs.TraceParent(c))
			if !times.loadReported && w != nil && !rec.ColdStart && !times.sent.IsZero() && w.cold(c.Model, times.sent, times.firstOrEnd) {
				rec.ColdStart = true
			}
			lc.fill(rec)
			mu.Lock()
			if st.Search != "" {
				run.tally.Add(r.cfg.SLO, rec)
			}
			run.sent++
			if rec.AvailabilityStatus != results.StatusOK {
				run.unanswered++
			}
			if rec.Success {
				run.succeeded++
			}
			if end := time.UnixMicro(rec.EndedAtUS); end.After(lastEnd) {
				lastEnd = end
			}
			mu.Unlock()
			err := r.record(rec)
			r.budget.settle(cost, Spent(rec, cost))
			return err
		})
		return true
	}
	ok = true
	if st.Mode == plan.ModeConcurrency {
		ok = r.closedLoop(st, level, cells, start, deadline, send)
	} else {
		ok = r.openLoop(st, level, cells, start, deadline, send)
	}
	wg.Wait()
	// On the records' µs, so the rate read back from results.jsonl (a
	// resumed search's probe, the reports) is this one.
	run.window = lastEnd.Sub(time.UnixMicro(start.UnixMicro()))
	return run, ok
}

// stageGCPercent is the collector's target while a load stage runs (Go's
// default is 100): a stage allocates per request, and at 100 the
// collections come often enough that their pauses and assists are most of
// an open loop's schedule slip at 2,000 requests/s (p99 1.3-2.1 ms; 0.74-0.86
// ms at 400, BenchmarkOpenLoop). The heap may grow to five times what is
// live, a few tens of MB for a generator that keeps no answers in memory.
// A GOGC set in the environment is left as it is.
const stageGCPercent = 400

var gcMu sync.Mutex
var gcStages int // load stages running now, over every lane
var gcBefore int

// collectLess raises the collector's target for a load stage, and returns
// the function that puts it back once the last running stage has ended.
func collectLess() func() {
	if os.Getenv("GOGC") != "" {
		return func() {}
	}
	gcMu.Lock()
	if gcStages++; gcStages == 1 {
		gcBefore = debug.SetGCPercent(stageGCPercent)
	}
	gcMu.Unlock()
	return func() {
		gcMu.Lock()
		if gcStages--; gcStages == 0 {
			debug.SetGCPercent(gcBefore)
		}
		gcMu.Unlock()
	}
}

// closedLoop sends each cell when one of level streams is free; a ramp
// starts the streams spread over its length.
func (r *sweep) closedLoop(st *plan.Stage, level float64, cells []plan.Cell, start, deadline time.Time, send func(plan.Cell, *loadCell, func()) bool) bool {
	streams := max(int(level), 1)
	sem := make(chan struct{}, streams)
	ramp := time.Duration(st.Load.Ramp)
	for i, c := range cells {
		if ramp > 0 && i < streams {
			r.sleepUntil(start.Add(ramp * time.Duration(i) / time.Duration(streams)))
		}
		if !acquire(r.ctx, r.o.Drain, sem) {
			r.noteDrain()
			return false
		}
		due := r.o.Clock.Now()
		if due.After(deadline) {
			<-sem
			for _, rest := range cells[i:] {
				if err := r.notRun(rest, level, FailStageTimeout, stageTimeoutWhy(st)); err != nil {
					return false
				}
			}
			return true
		}
		if !send(c, &loadCell{stage: st, level: level, stageStart: start, due: due}, func() { <-sem }) {
			return false
		}
	}
	return true
}

// openLoop sends each cell at its time in the stage's schedule, whatever
// the cells before it are doing; under max_concurrency a cell then waits
// for a slot (its own goroutine waits, in order, so the schedule of the
// cells after it is kept).
func (r *sweep) openLoop(st *plan.Stage, level float64, cells []plan.Cell, start, deadline time.Time, send func(plan.Cell, *loadCell, func()) bool) bool {
	n := 0
	for _, c := range cells {
		n = max(n, c.Ordinal+1)
	}
	offsets := plan.Arrivals(st.Load, level, st.Index, n, 0)
	for i, c := range cells {
		due := start.Add(offsets[c.Ordinal])
		if due.After(deadline) {
			for _, rest := range cells[i:] {
				if err := r.notRun(rest, level, FailStageTimeout, stageTimeoutWhy(st)); err != nil {
					return false
				}
			}
			return true
		}
		if !r.sleepUntil(due) {
			return false
		}
		if !send(c, &loadCell{stage: st, level: level, stageStart: start, due: due}, nil) {
			return false
		}
	}
	return true
}

func stageTimeoutWhy(st *plan.Stage) string {
	return fmt.Sprintf("not sent: stage %s passed load.stage_timeout (%s) before the cell was due", st.Name, time.Duration(st.Load.StageTimeout))
}

// sleepUntil waits until t on the run's clock, or until the run stops
// starting cells (false). A timer wakes the generator for all but the last
// moments: Go's timers fire late by up to a millisecond when the process
// is otherwise idle (the runtime's poller waits in whole milliseconds), a
// slip an open loop at 2,000 requests/s cannot afford. The last
// preciseWindow is waited in short sleeps of the thread itself (napUntil),
// which wake within tens of microseconds and leave the CPU to the server
// and to the cells in between (BenchmarkOpenLoop measures the slip).
func (r *sweep) sleepUntil(t time.Time) bool {
	d := t.Sub(r.o.Clock.Now())
	if d <= 0 {
		return !r.stopping()
	}
	// The run's clock may be a test's; the wait is in real time.
	end := time.Now().Add(d)
	if d > preciseWindow {
		tm := time.NewTimer(d - preciseWindow)
		defer tm.Stop()
		select {
		case <-tm.C:
		case <-r.o.Drain:
			r.noteDrain()
			return false
		case <-r.ctx.Done():
			return false
		}
	}
	napUntil(end)
	return !r.stopping()
}

// preciseWindow is the end of a wait that sleepUntil does not leave to a
// timer: the runtime poller's millisecond, and some room for its rounding.
const preciseWindow = 1200 * time.Microsecond

// napUntil waits until end, at most preciseWindow away, letting the cells
// this goroutine just started run first (runtime.Gosched: a new goroutine
// waits on its creator's processor until the creator yields it) and then
// sleeping the thread in steps short enough to wake on time.
func napUntil(end time.Time) {
	for {
		runtime.Gosched()
		left := time.Until(end)
		if left <= 0 {
			return
		}
		nap(min(left, 100*time.Microsecond))
	}
}

// notRun records a cell the run did not send (the load profile's time
// was up, the budget was spent), with why.
func (r *sweep) notRun(c plan.Cell, level float64, failure, why string) error {
	rec := newRecord(r.cfg, c)
	r.mu.Lock()
	r.dispatched[c.Key()] = true // recorded: not to be recorded again
	r.mu.Unlock()
	now := r.o.Clock.Now()
	rec.StartedAtMS, rec.EndedAtMS = now.UnixMilli(), now.UnixMilli()
	// Never sent, whether the sweep stopped or the stage timed out: not
	// run, in the progress line, the table and summary.json alike (and
	// no model was reached).
	rec.AvailabilityStatus = results.StatusSkippedUnavailable
	rec.FailureType, rec.ErrorMessage = ptr(failure), ptr(why)
	rec.ToolCallDetails = []results.ToolCall{}
	if c.Stage != nil {
		rec.Stage, rec.StageMode = c.Stage.Name, c.Stage.Mode
	}
	if level > 0 {
		rec.StageLevel = ptr(level)
	}
	finish(rec, r.cfg, r.o.Providers[c.Provider.Name].Secrets())
	if rec.CostMissing != "" {
		rec.CostMissing = pricing.NotRun // priced, but never sent
	}
	if err := r.record(rec); err != nil {
		// results.jsonl failed: the run stops, through its group.
		r.g.Go(func() error { return err })
		return err
	}
	return nil
}

// streamsOf is how many connections a suite's cells may hold at once: its
// highest concurrency level, its max_concurrency, or the entry's
// concurrency, whichever is most (the warm-up opens that many ahead).
func streamsOf(s plan.Suite, entry int) int {
	n := entry
	for _, st := range s.Stages {
		if st.Mode == plan.ModeConcurrency {
			n = max(n, int(st.Level))
		}
		n = max(n, st.Load.MaxConcurrency)
	}
	return min(n, config.MaxLoadConcurrency)
}
