// Package bucketserver is a rate-limited server for tests: a token bucket
// in front of any handler (the fake model server of cmd/fakellm, say),
// answering as a hosted API does when an account's rate limit is reached.
// Each POST takes a token; without one it is refused with a 429 (or a
// 529, Anthropic's overloaded) carrying Retry-After. Every answer, taken
// or refused, carries the rate-limit headers of the style asked for:
// OpenAI's x-ratelimit-{limit,remaining,reset}-requests (the reset a
// duration such as "1.5s") with retry-after-ms, or Anthropic's
// anthropic-ratelimit-requests-{limit,remaining,reset} (the reset an RFC
// 3339 time). The bucket holds Capacity tokens and refills Rate per
// second, evenly; the reset is the time until it is full again, as both
// vendors describe theirs.
//
// The bucket reads its time from a clock of the test's choosing, so the
// controller built on its answers can be checked on a virtual clock;
// Server puts it on the wire with the real one. Log keeps every decision,
// on the same clock, for the throughput the bucket allowed.
//
// Layer: test peers (tests only).
package bucketserver

import (
	"fmt"
	"math"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// Bucket is a token bucket of requests.
type Bucket struct {
	// Capacity is the most tokens it holds (a burst); Rate the tokens it
	// gains per second.
	Capacity float64
	Rate     float64
	// Now is its clock; nil is time.Now.
	Now func() time.Time

	mu     sync.Mutex
	tokens float64
	last   time.Time
	begun  bool
	log    []Decision
}

// Decision is one request the bucket judged.
type Decision struct {
	At    time.Time
	Taken bool
	// Remaining are the whole tokens left after it; Reset the time until
	// the bucket is full; RetryAfter, for a refusal, until a token comes.
	Remaining  int
	Reset      time.Duration
	RetryAfter time.Duration
}

func (b *Bucket) now() time.Time {
	if b.Now != nil {
		return b.Now()
	}
	return time.Now()
}

// Take takes a token, or says when the next one comes.
func (b *Bucket) Take() Decision {
	b.mu.Lock()
	defer b.mu.Unlock()
	now := b.now()
	if !b.begun {
		b.tokens, b.last, b.begun = b.Capacity, now, true
	}
	b.tokens = math.Min(b.Capacity, b.tokens+now.Sub(b.last).Seconds()*b.Rate)
	b.last = now
	d := Decision{At: now}
	if b.tokens >= 1 {
		b.tokens--
		d.Taken = true
	} else {
		d.RetryAfter = seconds((1 - b.tokens) / b.Rate)
	}
	d.Remaining = int(b.tokens)
	d.Reset = seconds((b.Capacity - b.tokens) / b.Rate)
	b.log = append(b.log, d)
	return d
}

func seconds(s float64) time.Duration { return time.Duration(math.Ceil(s * float64(time.Second))) }

// Log returns the decisions so far, in order.
func (b *Bucket) Log() []Decision {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]Decision(nil), b.log...)
}

// Allowed is the most requests the bucket could have let through from
// its first decision to end: its capacity and what it refilled.
func (b *Bucket) Allowed(end time.Time) float64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.log) == 0 {
		return b.Capacity
	}
	return b.Capacity + end.Sub(b.log[0].At).Seconds()*b.Rate
}

// Style is the vendor whose headers the server sends.
type Style int

const (
	OpenAI Style = iota
	Anthropic
)

// Server puts a bucket in front of next.
type Server struct {
	Bucket *Bucket
	Next   http.Handler
	Style  Style
	// Status is the refusal's status: 429 (the zero value) or 529.
	Status int
	// Storm refuses every request, whatever the bucket holds (a 529
	// storm when Status is 529).
	Storm bool
}

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		s.Next.ServeHTTP(w, r)
		return
	}
	d := s.Bucket.Take()
	if s.Storm && d.Taken {
		d.Taken, d.RetryAfter = false, seconds(1/s.Bucket.Rate)
	}
	h := w.Header()
	limit := strconv.Itoa(int(s.Bucket.Capacity))
	switch s.Style {
	case Anthropic:
		h.Set("anthropic-ratelimit-requests-limit", limit)
		h.Set("anthropic-ratelimit-requests-remaining", strconv.Itoa(d.Remaining))
		h.Set("anthropic-ratelimit-requests-reset", d.At.Add(d.Reset).UTC().Format(time.RFC3339Nano))
	default:
		h.Set("x-ratelimit-limit-requests", limit)
		h.Set("x-ratelimit-remaining-requests", strconv.Itoa(d.Remaining))
		h.Set("x-ratelimit-reset-requests", d.Reset.String())
	}
	if d.Taken {
		s.Next.ServeHTTP(w, r)
		return
	}
	if s.Style == OpenAI {
		h.Set("retry-after-ms", strconv.FormatInt(max(d.RetryAfter.Milliseconds(), 1), 10))
	}
	h.Set("retry-after", strconv.Itoa(int(math.Ceil(d.RetryAfter.Seconds()))))
	h.Set("Content-Type", "application/json")
	status := s.Status
	if status == 0 {
		status = http.StatusTooManyRequests
	}
	w.WriteHeader(status)
	if status == 529 {
		fmt.Fprint(w, `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`)
		return
	}
	fmt.Fprintf(w, `{"error":{"message":"Rate limit reached for requests: Limit %s, Used %s, Requested 1. Please try again in %s.","type":"requests","param":null,"code":"rate_limit_exceeded"}}`,
		limit, limit, d.RetryAfter)
}
