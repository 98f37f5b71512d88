package runner

import (
	"context"
	"sync"
	"time"

	"bench/internal/record/results"
	"bench/providers"
)

// Adaptive concurrency: each provider entry's cells go through a limiter
// whose limit follows the server's rate-limit signals (package providers,
// ratelimit.go), AIMD as TCP's congestion window does:
//
//   - a refusal for rate (429, 529), or an answer whose headers say a
//     budget is nearly spent, multiplies the limit by limitDecrease, once
//     per window: only a cell admitted since the last decrease lowers it
//     again, so a burst of refusals from cells sent together counts once;
//   - every other accepted answer adds 1/limit (one slot per window of
//     answers), never above the entry's configured concurrency;
//   - the server's Retry-After, or the refill time of a budget its
//     headers say is spent, holds every new attempt of the entry until
//     then (a cell in flight keeps going).
//
// A cell waits for the limiter after it has its entry's configured slot
// and before the run-wide one, so a throttled entry holds back only its
// own cells; the wait is the cell's limit_wait_ms, before its start. A
// retry gives its slot back while it waits and queues again ahead of new
// cells; that wait is in retry_wait_ms. While the limit can still come
// down, a refusal's retry is free (it does not count against
// max_retries): the server said "slower", and bench is slowing down. At
// one cell at a time, refusals count again, so a server that refuses
// everything (a 529 storm) ends in rate_limited cells.
const (
	// limitDecrease is the multiplicative decrease: 0.7, CUBIC's β
	// (RFC 9438) rather than Reno's 0.5, since the signal comes before
	// loss here (the headers warn while requests still pass) and a
	// halving leaves an account's limit a quarter unused on average.
	limitDecrease = 0.7
)

// limitClock is where a limiter reads the time and sets its wake-ups: the
// real clock, or a test's virtual one.
type limitClock interface {
	Now() time.Time
	AfterFunc(d time.Duration, f func()) (stop func() bool)
}

type realLimitClock struct{}

func (realLimitClock) Now() time.Time { return time.Now() }
func (realLimitClock) AfterFunc(d time.Duration, f func()) func() bool {
	return time.AfterFunc(d, f).Stop
}

// limiter is one provider entry's adaptive concurrency limit.
type limiter struct {
	mu    sync.Mutex
	clock limitClock
	max   int
	limit float64
	// inflight are the cells admitted and not yet released.
	inflight int
	// epoch counts the decreases: a cell admitted in an older one lowers
	// the limit no more.
	epoch int
	// hold is when the entry may send again; wake the pending wake-up.
	hold time.Time
	wake func() bool
	// queue are the cells waiting, retries first.
	queue []*waiter
	// lowered says the limit has been below max: from then on each
	// record carries the limit it started under.
	lowered bool
}

// waiter is one cell waiting for the limiter: admitted is called once,
// outside the lock, with the epoch and the limit it was admitted under.
// A retry waits ahead of new cells.
type waiter struct {
	admitted func(epoch, limit int)
	retry    bool
}

func newLimiter(max int, clock limitClock) *limiter {
	if clock == nil {
		clock = realLimitClock{}
	}
	max = maxInt(max, 1)
	return &limiter{clock: clock, max: max, limit: float64(max)}
}

func maxInt(a, b int) int {
	if a > b {
		return a
	}
	return b
}

// current is the whole limit: at least one cell.
func (l *limiter) current() int { return maxInt(int(l.limit), 1) }

// enqueue queues w and admits what can go.
func (l *limiter) enqueue(w *waiter) {
	l.mu.Lock()
	i := len(l.queue)
	if w.retry {
		i = 0
		for i < len(l.queue) && l.queue[i].retry {
			i++
		}
	}
	l.queue = append(l.queue, nil)
	copy(l.queue[i+1:], l.queue[i:])
	l.queue[i] = w
	run := l.pump()
	l.mu.Unlock()
	run()
}

// cancel takes w out of the queue; false when it was admitted already
// (its slot is then the caller's to release).
func (l *limiter) cancel(w *waiter) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	for i, q := range l.queue {
		if q == w {
			l.queue = append(l.queue[:i], l.queue[i+1:]...)
			return true
		}
	}
	return false
}

// release gives a cell's slot back.
func (l *limiter) release() {
	l.mu.Lock()
	l.inflight--
	run := l.pump()
	l.mu.Unlock()
	run()
}

// pump admits the waiting cells the limit and the hold let go, and
// returns the calls that tell them, to be made without the lock; while a
// hold is on, it sets the wake-up that pumps again when it ends.
func (l *limiter) pump() func() {
	var admit []func()
	now := l.clock.Now()
	if now.Before(l.hold) {
		if len(l.queue) > 0 && l.wake == nil {
			l.wake = l.clock.AfterFunc(l.hold.Sub(now), func() {
				l.mu.Lock()
				l.wake = nil
				run := l.pump()
				l.mu.Unlock()
				run()
			})
		}
		return func() {}
	}
	for len(l.queue) > 0 && l.inflight < l.current() {
		w := l.queue[0]
		l.queue = l.queue[1:]
		l.inflight++
		epoch, limit := l.epoch, l.current()
		admit = append(admit, func() { w.admitted(epoch, limit) })
	}
	return func() {
		for _, f := range admit {
			f()
		}
	}
}

// holdAfter holds new attempts after an answer to a request sent at
// sent: until the refill of a budget the headers say is spent (counted
// from the request, when the server judged it), else for the server's
// Retry-After from now. A longer hold stays.
func (l *limiter) holdAfter(sent time.Time, rl *providers.RateLimit) {
	var until time.Time
	switch {
	case rl.Refill() > 0:
		until = sent.Add(rl.Refill())
	case rl != nil && rl.RetryAfter > 0:
		until = l.clock.Now().Add(rl.RetryAfter)
	default:
		return
	}
	if until.After(l.hold) {
		l.hold = until
		if l.wake != nil {
			l.wake()
			l.wake = nil
		}
	}
}

// decrease lowers the limit once per window: for a cell admitted in the
// current epoch.
func (l *limiter) decrease(epoch int) {
	if epoch != l.epoch || l.limit <= 1 {
		return
	}
	l.limit = max(l.limit*limitDecrease, 1)
	l.epoch++
	l.lowered = true
}

// refused hears a refusal for rate of a cell admitted in epoch and sent
// at sent, and says
// whether its retry is free: it is, unless the cell was sent at one cell
// at a time in the current window (slowing down further is not possible).
func (l *limiter) refused(epoch int, sent time.Time, rl *providers.RateLimit) (free bool) {
	l.mu.Lock()
	free = epoch != l.epoch || l.limit > 1
	l.decrease(epoch)
	l.holdAfter(sent, rl)
	run := l.pump()
	l.mu.Unlock()
	run()
	return free
}

// answered hears an accepted answer of a cell admitted in epoch and sent
// at sent: its
// headers may say a budget is nearly spent (no increase, and a hold for
// its refill when it is spent), or nothing of the kind (up by one slot
// per window).
func (l *limiter) answered(epoch int, sent time.Time, rl *providers.RateLimit) {
	l.mu.Lock()
	if rl.NearlySpent() {
		l.decrease(epoch)
		l.holdAfter(sent, rl)
	} else if l.limit < float64(l.max) {
		l.limit = min(l.limit+1/l.limit, float64(l.max))
	}
	run := l.pump()
	l.mu.Unlock()
	run()
}

// acquire waits for a slot (a retry ahead of new cells) unless ctx ends
// or drain closes first; it returns the epoch and the limit it was
// admitted under, and whether it had to wait (queued: not admitted at
// once).
func (l *limiter) acquire(ctx context.Context, drain <-chan struct{}, retry bool) (epoch, limit int, queued, ok bool) {
	type grant struct{ epoch, limit int }
	ch := make(chan grant, 1)
	w := &waiter{retry: retry, admitted: func(e, lim int) { ch <- grant{e, lim} }}
	l.enqueue(w)
	select {
	case g := <-ch:
		return g.epoch, g.limit, false, true
	default:
	}
	select {
	case g := <-ch:
		return g.epoch, g.limit, true, true
	case <-ctx.Done():
	case <-drain:
	}
	if !l.cancel(w) {
		<-ch // admitted meanwhile: give the slot back
		l.release()
	}
	return 0, 0, true, false
}

// state is the limit as records show it: the limit now, and whether it
// has ever been below the configured one.
func (l *limiter) state() (limit int, lowered bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.current(), l.lowered
}

// cellPace is one cell's hold on its entry's limiter (providers.Pacer):
// the HTTP path tells it what each answer said, and its retries wait
// through it.
type cellPace struct {
	l *limiter
	// epoch and limit are what the cell's last admission was under, at.
	epoch, limit int
	at           time.Time
	// held says the cell has a slot (not while a retry waits).
	held bool
	// refusals counts the answers that refused the cell for rate.
	refusals int
	// waited is how long the cell waited for the limit before it
	// started (limit_wait_ms); retryWait how long its retries waited for
	// it after their own wait (part of retry_wait_ms).
	waited, retryWait time.Duration
}

// note puts what the limit did to the cell into its record: the wait for
// it, the limit it started under once the entry has been throttled, and
// the refusals for rate.
func (p *cellPace) note(rec *results.Record) {
	if p.waited > 0 {
		rec.LimitWaitMS = ptr(msFine(p.waited))
	}
	if _, lowered := p.l.state(); lowered {
		rec.ConcurrencyLimit = ptr(p.limit)
	}
	rec.RateLimitRefusals = p.refusals
}

func (p *cellPace) Answered(rl *providers.RateLimit) { p.l.answered(p.epoch, p.at, rl) }

func (p *cellPace) Refused(rl *providers.RateLimit) bool {
	p.refusals++
	return p.l.refused(p.epoch, p.at, rl)
}

// Wait gives the slot back for d, then queues for one again ahead of new
// cells.
func (p *cellPace) Wait(ctx context.Context, d time.Duration) error {
	p.l.release()
	p.held = false
	t := time.NewTimer(d)
	select {
	case <-ctx.Done():
		t.Stop()
		return ctx.Err()
	case <-t.C:
	}
	start := p.l.clock.Now()
	epoch, limit, queued, ok := p.l.acquire(ctx, nil, true)
	if !ok {
		return ctx.Err()
	}
	p.at = p.l.clock.Now()
	if queued {
		p.retryWait += p.at.Sub(start)
	}
	p.epoch, p.limit, p.held = epoch, limit, true
	return nil
}

// end gives the cell's slot back, if it holds one.
func (p *cellPace) end() {
	if p.held {
		p.held = false
		p.l.release()
	}
}
