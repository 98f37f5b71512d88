package runner

import (
	"context"
	"fmt"
	"io"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"bench/config"
	"bench/plan"
	"bench/providers"
	"bench/results"
)

// Why a run ended, as recorded in run.json.
const (
	EndFinished    = "finished"
	EndInterrupted = "interrupted" // Ctrl-C: no new cells, in-flight ones finished
	EndAborted     = "aborted"     // second Ctrl-C: in-flight cells cancelled
	EndIOError     = "io_error"
)

// Sink receives each finished cell's record. results.Writer is the real one.
type Sink interface {
	Write(r *results.Record) error
}

// Options are what a run needs besides its context.
type Options struct {
	Config *config.Config
	Plan   *plan.Plan
	// Clock stamps every cell; nil means the real clock.
	Clock Clock
	// Providers by provider name (the entry's name, not its type).
	Providers map[string]providers.Provider
	// Sink is results.jsonl: a failure to write it stops the run.
	Sink Sink
	// Observers are fed each record after Sink has it (see Observer).
	Observers []Observer
	// TraceParent, when set, gives the W3C traceparent a cell's requests
	// carry (execution traces), "" for none.
	TraceParent func(c plan.Cell) string
	// Hooks, when set, bracket each suite (resource snapshots).
	Hooks SuiteHooks
	// Drain, when closed, stops new cells from starting; cells in flight
	// finish or time out. Cancelling the run's context aborts them instead.
	Drain <-chan struct{}
	// OnRecord is called after each record is written, from many goroutines
	// one at a time, for progress display.
	OnRecord func(r *results.Record, done, total int)
	// Log receives one-line notes (preparation, warm-ups).
	Log io.Writer
}

// Outcome says how a run went.
type Outcome struct {
	EndReason string
	Planned   int
	Recorded  int
	ByStatus  map[string]int
	StartedAt time.Time
	EndedAt   time.Time
}

// Run executes the plan. The error is non-nil only for a failure that stopped
// the run (writing results); failing providers are records, not errors.
func Run(ctx context.Context, o Options) (*Outcome, error) {
	cfg := o.Config
	if o.Log == nil {
		o.Log = io.Discard
	}
	if o.Clock == nil {
		o.Clock = realClock{}
	}
	out := &Outcome{Planned: len(o.Plan.Cells), ByStatus: map[string]int{}, StartedAt: o.Clock.Now()}
	// Preparing (listing, pulling, warming up) ends at the first Ctrl-C,
	// not the second: no cell starts after it anyway.
	pctx, stop := UntilDrained(ctx, o.Drain)
	prepare(pctx, o)
	stop()
	obs := startObservers(o.Observers, o.Log)

	g, gctx := errgroup.WithContext(ctx)
	global := make(chan struct{}, cfg.Run.Concurrency)
	var mu sync.Mutex // guards out counters and OnRecord ordering
	var ends sync.WaitGroup
	drained := false

	byProvider := map[string][]plan.Cell{}
	var order []string
	for _, c := range o.Plan.Cells {
		if _, ok := byProvider[c.Provider.Name]; !ok {
			order = append(order, c.Provider.Name)
		}
		byProvider[c.Provider.Name] = append(byProvider[c.Provider.Name], c)
	}

	suiteWG := make([]sync.WaitGroup, len(o.Plan.Suites))
	for _, name := range order {
		cells := byProvider[name]
		prov := o.Providers[name]
		g.Go(func() error {
			psem := make(chan struct{}, cells[0].Provider.Concurrency)
			current := -1
			endSuite := func() {
				if current < 0 || o.Hooks == nil {
					return
				}
				s, wg := o.Plan.Suites[current], &suiteWG[current]
				ends.Add(1)
				go func() {
					defer ends.Done()
					wg.Wait()
					o.Hooks.SuiteEnd(s)
				}()
			}
			defer func() { endSuite() }()
			for _, c := range cells {
				if !acquire(gctx, o.Drain, psem) {
					mu.Lock()
					drained = drained || isClosed(o.Drain)
					mu.Unlock()
					return nil
				}
				if !acquire(gctx, o.Drain, global) {
					<-psem
					mu.Lock()
					drained = drained || isClosed(o.Drain)
					mu.Unlock()
					return nil
				}
				if c.Suite != current {
					endSuite()
					current = c.Suite
					if o.Hooks != nil {
						o.Hooks.SuiteStart(o.Plan.Suites[current])
					}
				}
				suiteWG[c.Suite].Add(1)
				g.Go(func() error {
					defer func() { <-global; <-psem; suiteWG[c.Suite].Done() }()
					rec := runCell(gctx, cfg, o.Clock, prov, c, o.traceParent(c))
					mu.Lock()
					defer mu.Unlock()
					if err := o.Sink.Write(rec); err != nil {
						return err
					}
					obs.observe(rec)
					out.Recorded++
					out.ByStatus[rec.AvailabilityStatus]++
					if o.OnRecord != nil {
						o.OnRecord(rec, out.Recorded, out.Planned)
					}
					return nil
				})
			}
			return nil
		})
	}
	err := g.Wait()
	ends.Wait()
	obs.close(o.Observers)
	out.EndedAt = o.Clock.Now()
	switch {
	case err != nil:
		out.EndReason = EndIOError
		return out, fmt.Errorf("run stopped: %w", err)
	case ctx.Err() != nil:
		out.EndReason = EndAborted
	case drained || out.Recorded < out.Planned:
		out.EndReason = EndInterrupted
	default:
		out.EndReason = EndFinished
	}
	return out, nil
}

// acquire takes a slot unless the run is draining or cancelled.
func acquire(ctx context.Context, drain <-chan struct{}, sem chan struct{}) bool {
	if isClosed(drain) || ctx.Err() != nil {
		return false
	}
	select {
	case sem <- struct{}{}:
		// A drain that raced the slot wins: no new cell after Ctrl-C.
		if isClosed(drain) {
			<-sem
			return false
		}
		return true
	case <-drain:
		return false
	case <-ctx.Done():
		return false
	}
}

func isClosed(ch <-chan struct{}) bool {
	if ch == nil {
		return false
	}
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// prepare lets providers do their once-per-run work, each with its models.
func prepare(ctx context.Context, o Options) {
	for _, p := range o.Config.Providers {
		pr, ok := o.Providers[p.Name].(providers.Preparer)
		if !ok {
			continue
		}
		if ctx.Err() != nil {
			return
		}
		if err := pr.Prepare(ctx, p.Models, o.Log); err != nil && ctx.Err() == nil {
			fmt.Fprintf(o.Log, "prepare %s: %s\n", p.Name, o.Providers[p.Name].Secrets().Clean(err.Error(), maxErrorMessage))
		}
	}
}

func (o *Options) traceParent(c plan.Cell) string {
	if o.TraceParent == nil {
		return ""
	}
	return o.TraceParent(c)
}
