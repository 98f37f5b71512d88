package runner

import (
	"context"
	"errors"
	"fmt"
	"time"

	"bench/providers"
	"bench/run/output"
)

// warmup sends the suite's unrecorded warm-up request when its provider
// entry asks for one (warmup, on by default): the model is loaded before
// the first cell, so no cell pays for the load, and the time it took is
// the suite's load time (told to the outputs that take it, output.WithWarmup:
// written to the suite's resource record, shown in the summary). A provider that can load a model
// without generating (providers.Warmer) does that first, and that is the
// load time; then one short request goes through Stream (for any other
// provider, its duration is the load time). A provider that can open connections ahead
// (providers.Preconnector) then opens as many as the suite runs cells at
// once. The warm-up holds a cell's slots, so it counts
// against the concurrency like a cell; a failed one is logged and the
// suite runs anyway (its cells then record what is wrong).
func (r *sweep) warmup(si int, w *serverWatch) {
	s := r.o.Plan.Suites[si]
	first := r.cells[si][0]
	if !first.Provider.Warmup || r.stopping() {
		return
	}
	// Under a budget the warm-up is paid for like a cell: its projection
	// reserved, then what its answer cost.
	var cost, spent float64
	if r.budget != nil {
		cost, _ = r.budget.Projector.Warmup(s)
		if !r.budget.take(r.ctx, r.o.Drain, cost) {
			r.noteDrain()
			return
		}
		spent = cost
		defer func() { r.budget.settle(cost, spent) }()
	}
	pace, release, ok := r.slots(s.Provider)
	if !ok {
		spent = 0
		return
	}
	defer release()
	prov := r.o.Providers[s.Provider]
	req := providers.Request{Model: s.Model, Prompt: providers.WarmupPrompt, MaxTokens: providers.WarmupMaxTokens, Now: r.o.Clock.Now,
		TraceParent: r.outs.SuiteTraceParent(s)}
	if s.ThinkingLevel != nil {
		req.ThinkingLevel = *s.ThinkingLevel
	}
	// A drain (Ctrl-C) ends the warm-up too: no cell of the suite will run.
	ctx, cancel := context.WithCancel(providers.WithPacer(r.ctx, pace))
	defer cancel()
	if r.o.Drain != nil {
		go func() {
			select {
			case <-r.o.Drain:
				cancel()
			case <-ctx.Done():
			}
		}()
	}
	var res output.Warmup
	loaded := false
	err := providers.ErrWarmupUnsupported
	var bound time.Duration // of the last request made
	timedOut := false       // it reached its bound
	if wm, ok := prov.(providers.Warmer); ok {
		start := r.o.Clock.Now()
		// A load that cannot finish within a cell's timeout would time out
		// every cell of the suite anyway; a stalled server costs no more.
		bound = min(providers.WarmupTimeout, time.Duration(r.cfg.Run.Timeout))
		wctx, wcancel := context.WithTimeout(ctx, bound)
		err = wm.Warmup(wctx, req)
		timedOut = errors.Is(wctx.Err(), context.DeadlineExceeded)
		wcancel()
		if !errors.Is(err, providers.ErrWarmupUnsupported) {
			res.Load, loaded = r.o.Clock.Now().Sub(start), true
		}
	}
	if err == nil || errors.Is(err, providers.ErrWarmupUnsupported) {
		// One short request through the cells' own path: a model that is
		// only loaded still pages its weights in and sets up its compute on
		// its first generation, which would otherwise be the first cells'.
		start := r.o.Clock.Now()
		bound = time.Duration(r.cfg.Run.Timeout)
		wctx, wcancel := context.WithTimeout(ctx, bound)
		resp, serr := prov.Stream(wctx, req, func(providers.Event) {})
		timedOut = errors.Is(wctx.Err(), context.DeadlineExceeded)
		wcancel()
		if r.budget != nil {
			spent = warmupSpent(resp, serr, r.cfg.Pricing.Lookup(s.Provider, s.Model), cost)
		}
		if !loaded {
			res.Load = r.o.Clock.Now().Sub(start)
			if resp != nil {
				res.ServerLoad = resp.Load
			}
		}
		err = serr
	}
	if ctx.Err() != nil {
		return // drained or aborted: nothing to report
	}
	if pc, ok := prov.(providers.Preconnector); ok && err == nil {
		// As many connections as the suite has cells in flight, opened
		// now rather than by its first cells all at once.
		n := min(first.Provider.Concurrency, r.cfg.Run.Concurrency)
		if len(s.Stages) > 0 {
			// A load profile sets its own streams.
			n = streamsOf(s, n)
		}
		pctx, pcancel := context.WithTimeout(ctx, providers.ProbeTimeout)
		if perr := pc.Preconnect(pctx, n); perr != nil && ctx.Err() == nil {
			fmt.Fprintf(r.o.Log, "bench: warm-up of %s: %v\n", suiteName(s.Provider, s.Model, s.ThinkingLevel), perr)
		}
		pcancel()
	}
	if err != nil {
		if timedOut {
			err = fmt.Errorf("no answer within %s", bound)
		}
		res.Err = errors.New(prov.Secrets().Clean(err.Error(), 300))
		// A server that is not there is said once, at the run's end.
		if !providers.Unreachable(err) {
			fmt.Fprintf(r.o.Log, "bench: warm-up of %s failed (its cells run anyway): %v\n", suiteName(s.Provider, s.Model, s.ThinkingLevel), res.Err)
		}
	}
	if w != nil && !timedOut {
		// What the server holds now, so the suite's first cells are not
		// taken for cold ones on a reading from before the load. Not after
		// a warm-up that got no answer within its bound: the server has
		// just shown it does not answer, and the reading would wait out a
		// bound of its own before the first cell.
		w.poll()
	}
	r.outs.SuiteWarmup(s, res)
}

func suiteName(provider, model string, level *string) string {
	n := provider + "/" + model
	if level != nil {
		n += " (" + *level + ")"
	}
	return n
}
