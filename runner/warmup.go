package runner

import (
	"context"
	"errors"
	"fmt"
	"time"

	"bench/providers"
)

// warmup sends the suite's unrecorded warm-up request when its provider
// entry asks for one (warmup, on by default): the model is loaded before
// the first cell, so no cell pays for the load, and the time it took is
// the suite's load time (told to a WarmupHook, written to the suite's
// resource record, shown in the summary). A provider that can load a model
// without generating (providers.Warmer) does that; any other gets one short
// request through Stream. The warm-up holds a cell's slots, so it counts
// against the concurrency like a cell; a failed one is logged and the
// suite runs anyway (its cells then record what is wrong).
func (r *sweep) warmup(si int, w *residency) {
	s := r.o.Plan.Suites[si]
	first := r.cells[si][0]
	if !first.Provider.Warmup || r.stopping() {
		return
	}
	release, ok := r.slots(s.Provider)
	if !ok {
		return
	}
	defer release()
	prov := r.o.Providers[s.Provider]
	req := providers.Request{Model: s.Model, Prompt: providers.WarmupPrompt, Now: r.o.Clock.Now}
	if s.ThinkingLevel != nil {
		req.ThinkingLevel = *s.ThinkingLevel
	}
	start := r.o.Clock.Now()
	var res Warmup
	err := providers.ErrWarmupUnsupported
	if wm, ok := prov.(providers.Warmer); ok {
		ctx, cancel := context.WithTimeout(r.ctx, providers.WarmupTimeout)
		err = wm.Warmup(ctx, req)
		cancel()
	}
	if errors.Is(err, providers.ErrWarmupUnsupported) {
		start = r.o.Clock.Now()
		ctx, cancel := context.WithTimeout(r.ctx, time.Duration(r.cfg.Run.Timeout))
		var resp *providers.Response
		resp, err = prov.Stream(ctx, req, func(providers.Event) {})
		cancel()
		if resp != nil {
			res.ServerLoad = resp.Load
		}
	}
	res.Load = r.o.Clock.Now().Sub(start)
	if err != nil {
		res.Err = errors.New(prov.Secrets().Clean(err.Error(), 300))
		fmt.Fprintf(r.o.Log, "bench: warm-up of %s failed (its cells run anyway): %v\n", suiteName(s.Provider, s.Model, s.ThinkingLevel), res.Err)
	}
	if w != nil {
		// What the server holds now, so the suite's first cells are not
		// taken for cold ones on a reading from before the load.
		w.poll()
	}
	if h, ok := r.o.Hooks.(WarmupHook); ok {
		h.SuiteWarmup(s, res)
	}
}

func suiteName(provider, model string, level *string) string {
	n := provider + "/" + model
	if level != nil {
		n += " (" + *level + ")"
	}
	return n
}
