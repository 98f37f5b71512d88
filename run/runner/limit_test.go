package runner

import (
	"container/heap"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"bench/internal/testpeer/bucketserver"
	"bench/providers"
)

// virtualClock is a discrete-event clock: AfterFunc schedules, run pops
// the events in time order. Nothing waits for real time.
type virtualClock struct {
	now time.Time
	q   eventQueue
	seq int
}

type vEvent struct {
	at   time.Time
	seq  int
	f    func()
	dead bool
}

type eventQueue []*vEvent

func (q eventQueue) Len() int { return len(q) }
func (q eventQueue) Less(i, j int) bool {
	return q[i].at.Before(q[j].at) || q[i].at.Equal(q[j].at) && q[i].seq < q[j].seq
}
func (q eventQueue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *eventQueue) Push(x any)   { *q = append(*q, x.(*vEvent)) }
func (q *eventQueue) Pop() any {
	old := *q
	e := old[len(old)-1]
	*q = old[:len(old)-1]
	return e
}

func (c *virtualClock) Now() time.Time { return c.now }

func (c *virtualClock) AfterFunc(d time.Duration, f func()) func() bool {
	c.seq++
	e := &vEvent{at: c.now.Add(max(d, 0)), seq: c.seq, f: f}
	heap.Push(&c.q, e)
	return func() bool { was := !e.dead; e.dead = true; return was }
}

func (c *virtualClock) run() {
	for c.q.Len() > 0 {
		e := heap.Pop(&c.q).(*vEvent)
		if e.dead {
			continue
		}
		e.dead = true
		c.now = e.at
		e.f()
	}
}

// sim is a sweep of cells through one entry's limiter against a
// token-bucket server, on the virtual clock: each cell's attempts go as
// the one HTTP path sends them (providers' post: a refusal tells the
// pacer, waits what the server asked, gives its slot back meanwhile and
// queues again ahead of new cells; max_retries counts the refusals the
// pacer does not free), the server's answers are the bucket server's
// real headers, read by providers.ParseRateLimit.
type sim struct {
	clock      *virtualClock
	lim        *limiter
	srv        *bucketserver.Server
	ttft, work time.Duration // the headers come at ttft; the answer ends at work
	maxRetries int
	fixed      bool // no adaptation: signals are not heard (the old runner)

	cells, next                           int
	done, rateLimited, refusals, requests int
	first, last                           time.Time
	lowest                                int
}

func newSim(concurrency int, bucket *bucketserver.Bucket, clock *virtualClock) *sim {
	s := &sim{clock: clock, lim: newLimiter(concurrency, clock), ttft: 20 * time.Millisecond, work: 100 * time.Millisecond, maxRetries: 2, lowest: concurrency}
	bucket.Now = clock.Now
	ok := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {})
	s.srv = &bucketserver.Server{Bucket: bucket, Next: ok}
	return s
}

// ask sends one request to the server now and reads its answer's signals.
func (s *sim) ask() (taken bool, rl *providers.RateLimit) {
	s.requests++
	w := httptest.NewRecorder()
	s.srv.ServeHTTP(w, httptest.NewRequest(http.MethodPost, "/v1/chat/completions", strings.NewReader("{}")))
	return w.Code == http.StatusOK, providers.ParseRateLimit(w.Result().Header, w.Code, s.clock.now)
}

func (s *sim) run(cells, concurrency int) {
	s.cells = cells
	// The entry's configured slots: as many cells queue at once.
	for range min(concurrency, cells) {
		s.start()
	}
	s.clock.run()
}

// start queues the next cell for the limiter, as dispatch does once the
// cell has its configured slot.
func (s *sim) start() {
	if s.next == s.cells {
		return
	}
	s.next++
	counted := 0
	var attempt func(epoch, limit int)
	attempt = func(epoch, limit int) {
		s.lowest = min(s.lowest, limit)
		if s.first.IsZero() {
			s.first = s.clock.now
		}
		sent := s.clock.now
		taken, rl := s.ask()
		if taken {
			s.clock.AfterFunc(s.ttft, func() {
				if !s.fixed {
					s.lim.answered(epoch, sent, rl)
				}
			})
			s.clock.AfterFunc(s.work, func() {
				s.done++
				s.last = s.clock.now
				s.lim.release()
				s.start()
			})
			return
		}
		s.refusals++
		s.clock.AfterFunc(time.Millisecond, func() {
			free := false
			if !s.fixed {
				free = s.lim.refused(epoch, sent, rl)
			}
			if !free && counted >= s.maxRetries {
				s.rateLimited++
				s.last = s.clock.now
				s.lim.release()
				s.start()
				return
			}
			if !free {
				counted++
			}
			s.lim.release()
			s.clock.AfterFunc(rl.Wait(), func() {
				s.lim.enqueue(&waiter{retry: true, admitted: attempt})
			})
		})
	}
	s.lim.enqueue(&waiter{admitted: attempt})
}

// throughput is the answers per second over the sweep, on the virtual
// clock, and what it is of the bucket's own rate.
func (s *sim) throughput(rate float64) (perSec, ofBucket float64) {
	perSec = float64(s.done) / s.last.Sub(s.first).Seconds()
	return perSec, perSec / rate
}

// The Done-when on a virtual clock: eight cells at once against a server
// taking 100 ms an answer would send 80 requests a second; the bucket
// refills 56 a second (70 %), so the old runner, holding its eight, has
// more than 30 % of its requests refused and records rate_limited cells.
// The adaptive limiter finishes every cell, with no rate_limited one,
// within 15 % of the bucket's rate (here within 5 %), with the limit
// lowered on the way, and never above the configured eight. (Anthropic's
// Retry-After is whole seconds, so the fixed runner honouring it sends
// too little to be refused 30 %: the premise is checked on OpenAI's.)
func TestLimiterAgainstTokenBucket(t *testing.T) {
	const concurrency, cells = 8, 1200
	rate := 0.7 * concurrency / 0.1
	for _, style := range []bucketserver.Style{bucketserver.OpenAI, bucketserver.Anthropic} {
		t.Run(fmt.Sprint("style", style), func(t *testing.T) {
			fixed := newSim(concurrency, &bucketserver.Bucket{Capacity: concurrency, Rate: rate}, &virtualClock{now: time.Unix(1e9, 0)})
			fixed.srv.Style = style
			fixed.fixed = true
			fixed.run(cells, concurrency)
			refusedShare := float64(fixed.refusals) / float64(fixed.requests)
			if style == bucketserver.OpenAI && (refusedShare < 0.3 || fixed.rateLimited == 0) {
				t.Fatalf("the bucket refuses %.0f %% of the fixed runner's requests, %d rate_limited: want more than 30 %% and some", 100*refusedShare, fixed.rateLimited)
			}

			s := newSim(concurrency, &bucketserver.Bucket{Capacity: concurrency, Rate: rate}, &virtualClock{now: time.Unix(1e9, 0)})
			s.srv.Style = style
			s.run(cells, concurrency)
			perSec, share := s.throughput(rate)
			t.Logf("fixed: %d rate_limited, %.0f %% refused; adaptive: %d done, %d refusals of %d requests, %.1f/s (%.1f %% of the bucket's %.0f/s), lowest limit %d",
				fixed.rateLimited, 100*refusedShare, s.done, s.refusals, s.requests, perSec, 100*share, rate, s.lowest)
			if s.done != cells || s.rateLimited != 0 {
				t.Errorf("%d of %d done, %d rate_limited", s.done, cells, s.rateLimited)
			}
			if share < 0.95 || share > 1.05 {
				t.Errorf("throughput %.1f %% of the bucket's, want at least 95 %%", 100*share)
			}
			if s.lowest >= concurrency {
				t.Errorf("the limit never came down")
			}
		})
	}
}

// Around the Done-when's case: 4 to 32 cells at once, the bucket refilling
// 50, 70 or 90 % of what they would send, its burst the configured
// concurrency or four times it, either vendor's headers: every cell
// finishes, none rate_limited, at 85 % of the bucket's rate or more. (A
// burst smaller than the cells in flight, whose headers say "spent" after
// every answer, keeps the limit at one: docs/providers.md has its figures.)
func TestLimiterAcrossBuckets(t *testing.T) {
	for _, c := range []int{4, 8, 16, 32} {
		for _, burst := range []int{1, 4} {
			for _, share := range []float64{0.5, 0.7, 0.9} {
				for _, style := range []bucketserver.Style{bucketserver.OpenAI, bucketserver.Anthropic} {
					rate := share * float64(c) / 0.1
					s := newSim(c, &bucketserver.Bucket{Capacity: float64(burst * c), Rate: rate}, &virtualClock{now: time.Unix(1e9, 0)})
					s.srv.Style = style
					s.run(40*c, c)
					_, got := s.throughput(rate)
					if got < 0.85 || s.rateLimited > 0 || s.done != 40*c {
						t.Errorf("c=%d burst=%d×c refill=%.0f%% style=%d: %.1f %% of the bucket's rate, %d rate_limited, %d done", c, burst, 100*share, style, 100*got, s.rateLimited, s.done)
					}
				}
			}
		}
	}
}

// A 529 storm (every request refused): the limit comes down to one cell
// at a time, then each cell spends its retries and is recorded
// rate_limited; nothing hangs, and every cell ends.
func TestLimiter529Storm(t *testing.T) {
	clock := &virtualClock{now: time.Unix(1e9, 0)}
	s := newSim(8, &bucketserver.Bucket{Capacity: 8, Rate: 10}, clock)
	s.srv.Status, s.srv.Storm = 529, true
	s.run(40, 8)
	if s.done != 0 || s.rateLimited != 40 || s.lowest != 1 {
		t.Errorf("%d done, %d rate_limited, lowest limit %d: want 0, 40, 1", s.done, s.rateLimited, s.lowest)
	}
	// At one at a time each cell makes 1 + max_retries requests; the
	// free retries before the floor are a handful.
	if s.requests > 40*3+40 {
		t.Errorf("%d requests for 40 cells", s.requests)
	}
}

// The limiter's own rules: never above max, down once per window, up by
// one per window of answers, a hold from the headers, retries first.
func TestLimiterRules(t *testing.T) {
	clock := &virtualClock{now: time.Unix(1e9, 0)}
	l := newLimiter(4, clock)
	var order []string
	admit := func(name string, retry bool) {
		l.enqueue(&waiter{retry: retry, admitted: func(int, int) { order = append(order, name) }})
	}
	for _, n := range []string{"a", "b", "c", "d", "e"} {
		admit(n, false)
	}
	if strings.Join(order, "") != "abcd" {
		t.Fatalf("admitted %v, want the first four", order)
	}
	// Three refusals of cells of epoch 0: one decrease.
	for range 3 {
		l.refused(0, clock.now, &providers.RateLimit{Status: 429, RetryAfter: 50 * time.Millisecond})
	}
	if lim, lowered := l.state(); lim != 2 || !lowered || l.epoch != 1 {
		t.Errorf("limit %d (%.2f) epoch %d after one window of refusals, want 2 (4×0.7) and 1", lim, l.limit, l.epoch)
	}
	// Three cells end: under the hold nothing is admitted; after it, one
	// (the limit is 2, one is in flight), the retry queued meanwhile
	// before e.
	l.release()
	l.release()
	l.release()
	admit("r", true)
	if strings.Join(order, "") != "abcd" {
		t.Errorf("admitted during the hold: %v", order)
	}
	clock.run()
	if strings.Join(order, "") != "abcdr" || !clock.now.Equal(time.Unix(1e9, 0).Add(50*time.Millisecond)) {
		t.Errorf("after the hold: %v at %v", order, clock.now.Sub(time.Unix(1e9, 0)))
	}
	// Answers bring it back up, never past 4.
	for range 100 {
		l.answered(1, clock.now, nil)
	}
	if lim, _ := l.state(); lim != 4 || l.limit != 4 {
		t.Errorf("limit %v after many answers, want 4", l.limit)
	}
	// A spent budget lowers it (once per window) and holds for its
	// refill, counted from the request.
	spent := &providers.RateLimit{Requests: providers.Quota{Limit: ptr(int64(10)), Remaining: ptr(int64(0)), Reset: time.Second}}
	l.answered(1, clock.now.Add(-30*time.Millisecond), spent)
	if l.limit != 2.8 || !l.hold.Equal(clock.now.Add(70*time.Millisecond)) {
		t.Errorf("after a spent budget: limit %.2f, hold %v, want 2.8 and the refill (100 ms) from the request sent 30 ms ago", l.limit, l.hold.Sub(clock.now))
	}
}

// acquire gives up on a cancelled context, and a slot granted in the race
// goes back.
func TestLimiterAcquireCancelled(t *testing.T) {
	l := newLimiter(1, nil)
	if _, _, queued, ok := l.acquire(context.Background(), nil, false); !ok || queued {
		t.Fatal("first acquire")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, _, _, ok := l.acquire(ctx, nil, false); ok {
		t.Fatal("acquired with a cancelled context")
	}
	l.release()
	if l.inflight != 0 || len(l.queue) != 0 {
		t.Errorf("inflight %d, queue %d", l.inflight, len(l.queue))
	}
}
