package runner

import (
	"context"
	"fmt"
	"sync"

	"bench/internal/record/pricing"
	"bench/internal/record/results"
	"bench/providers"
	"bench/run/plan"
)

// EndBudget is run.json's end_reason when the budget stopped the run: the
// cells it did not start are recorded skipped_unavailable /
// FailBudgetExhausted.
const EndBudget = "budget_exhausted"

// FailBudgetExhausted is the failure_type of a cell the budget did not
// start (availability_status skipped_unavailable: it never reached a
// model; a --resume runs it).
const FailBudgetExhausted = "budget_exhausted"

// Budget is run.max_cost_usd as the runner keeps it. A cell starts only
// when what is spent, plus the projected cost of the cells in flight,
// plus its own projected cost, stays within MaxUSD; when it would not,
// the runner waits for the cells in flight (their own costs replace their
// projections) and, when it still would not with none in flight, starts
// no more cells: those are recorded as not run. A suite's warm-up is paid
// for the same way. What a cell spent is its cost_usd (and its judge's,
// where known); a cell that reached its model without a known cost counts
// its projection, never nothing.
type Budget struct {
	// MaxUSD is the budget; Spent what the run's records already cost (a
	// resumed run's earlier invocations).
	MaxUSD, Spent float64
	// Projector projects the cells and warm-ups.
	Projector *plan.Projector
}

// budget is a Budget in use by one sweep.
type budget struct {
	*Budget
	mu   sync.Mutex
	cond *sync.Cond
	// spent is what is paid; reserved the projections of the cells in
	// flight, inflight how many.
	spent, reserved float64
	inflight        int
	// stopped says the budget stopped the sweep; next is the projected
	// cost of the cell that did not fit.
	stopped bool
	next    float64
}

func newBudget(b *Budget) *budget {
	if b == nil {
		return nil
	}
	bg := &budget{Budget: b, spent: b.Spent}
	bg.cond = sync.NewCond(&bg.mu)
	return bg
}

// take reserves cost for a cell (or a warm-up) about to start, waiting for
// the cells in flight while it does not fit; false when the budget is
// spent (the sweep stops starting cells) or the run stops meanwhile.
func (b *budget) take(ctx context.Context, drain <-chan struct{}, cost float64) bool {
	if b == nil {
		return true
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	for {
		switch {
		case b.stopped || ctx.Err() != nil || isClosed(drain):
			return false
		case b.spent+b.reserved+cost <= b.MaxUSD:
			b.reserved += cost
			b.inflight++
			return true
		case b.inflight == 0:
			b.stopped, b.next = true, cost
			b.cond.Broadcast()
			return false
		}
		// A cell in flight ends, and its settle wakes this up (a drain or
		// an abort ends the cells in flight too).
		b.cond.Wait()
	}
}

// settle replaces a started cell's reservation by what it spent.
func (b *budget) settle(reserved, spent float64) {
	if b == nil {
		return
	}
	b.mu.Lock()
	b.reserved -= reserved
	b.spent += spent
	b.inflight--
	b.cond.Broadcast()
	b.mu.Unlock()
}

// exhausted says the budget stopped the sweep.
func (b *budget) exhausted() bool {
	if b == nil {
		return false
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.stopped
}

// Spent is what a finished cell counts against the budget: its cost (and
// its judge's, where known), or, when it reached its model without a
// known cost, its projection.
func Spent(rec *results.Record, projected float64) float64 {
	var usd float64
	switch {
	case rec.CostUSD != nil:
		usd = *rec.CostUSD
	case results.Reached(rec):
		usd = projected
	}
	if rec.Judge != nil && rec.Judge.CostUSD != nil {
		usd += *rec.Judge.CostUSD
	}
	return usd
}

// warmupSpent is what a warm-up's answer cost at the pricing block's
// price (the provider's own figure first), or its projection when that
// cannot be told; nothing when it did not reach the server.
func warmupSpent(resp *providers.Response, err error, price *pricing.Price, projected float64) float64 {
	if err != nil && providers.Unreachable(err) {
		return 0
	}
	if resp != nil && resp.CostUSD != nil {
		return *resp.CostUSD
	}
	if resp != nil && price != nil {
		u := resp.Usage
		if usd, ok, _ := price.Cost(pricing.Tokens{Input: u.InputTokens, CachedInput: u.CachedInputTokens, Output: u.OutputTokens, Reasoning: u.ReasoningTokens}); ok {
			return usd
		}
	}
	return projected
}

// why is what a cell the budget did not start records as its error.
func (b *budget) why() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return fmt.Sprintf("not run: run.max_cost_usd is $%.6g and $%.6g is spent; the next cell was projected at $%.6g (bench run --resume with a larger --max-cost runs it)", b.MaxUSD, b.spent, b.next)
}
