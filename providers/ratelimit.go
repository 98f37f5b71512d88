package providers

import (
	"context"
	"math"
	"net/http"
	"net/textproto"
	"strconv"
	"strings"
	"time"
)

// Rate-limit signals, read in one place for every HTTP kind.
//
// What a kind gets, for free, by sending its cells through the one HTTP
// path (httpEndpoint.post): every answer's status and headers are read
// here into a RateLimit (ParseRateLimit); a 429 or a 529 (Anthropic's
// overloaded_error) is a refusal for rate, retried honouring its
// Retry-After; each refusal goes to the cell's Pacer (Refused) and every
// accepted answer's headers too (Answered), so the runner's adaptive
// concurrency hears the server as it answers; the last answer's signals
// are in Response.RateLimit and each retry's in its EventRetry. A kind
// does nothing for it beyond using post; a kind's refine may still rename
// a refusal's failure type (Anthropic's overloaded_error), not its class.
//
// The headers read:
//
//   - retry-after-ms (OpenAI, finer) and Retry-After in seconds or as an
//     HTTP date (RFC 9110);
//   - OpenAI's x-ratelimit-limit-{requests,tokens},
//     x-ratelimit-remaining-{requests,tokens} and
//     x-ratelimit-reset-{requests,tokens}, the resets durations such as
//     "6m0s", "1s", "20ms" (or bare seconds);
//   - Anthropic's anthropic-ratelimit-{requests,tokens,input-tokens,
//     output-tokens}-{limit,remaining,reset}, the resets RFC 3339 times.
//
// A header that does not parse is ignored, never an error: the signals
// steer the pace, they are not the answer.

// StatusOverloaded is Anthropic's 529: the API is overloaded. bench takes
// it as a refusal for rate (rate_limited, retried), as Anthropic's SDKs do.
const StatusOverloaded = 529

// RateLimit is what one answer said of the server's rate limits.
type RateLimit struct {
	// Status is 429 or 529 when the answer refused the request for rate,
	// else 0.
	Status int `json:"status,omitempty"`
	// RetryAfter is the wait the server asked for (0: none named).
	RetryAfter time.Duration `json:"retry_after,omitempty"`
	// Requests and Tokens are the budgets the headers describe; Tokens is
	// the most spent of the token budgets a server names apart (Anthropic's
	// input and output tokens).
	Requests Quota `json:"requests"`
	Tokens   Quota `json:"tokens"`
}

// Quota is one budget of a rate limit: how much of it is left and when it
// is whole again. A nil field was not said.
type Quota struct {
	Limit     *int64 `json:"limit,omitempty"`
	Remaining *int64 `json:"remaining,omitempty"`
	// Reset is how long until the budget is whole again (0: not said).
	Reset time.Duration `json:"reset,omitempty"`
}

// NearlySpentShare is the share of a budget left under which it is nearly
// spent: a tenth.
const NearlySpentShare = 0.1

// NearlySpent says the budget is spent or nearly: nothing left, or less
// than NearlySpentShare of its limit.
func (q Quota) NearlySpent() bool {
	if q.Remaining == nil {
		return false
	}
	if *q.Remaining <= 0 {
		return true
	}
	return q.Limit != nil && *q.Limit > 0 && float64(*q.Remaining) < NearlySpentShare*float64(*q.Limit)
}

// spent says nothing is left.
func (q Quota) spent() bool { return q.Remaining != nil && *q.Remaining <= 0 }

// Refill is how long one more unit of the budget takes to come back, when
// the headers say: the time to the reset over what is missing (a bucket
// that refills evenly, as both OpenAI's and Anthropic's are described).
func (q Quota) Refill() time.Duration {
	if q.Remaining == nil || q.Limit == nil || q.Reset <= 0 || *q.Limit <= *q.Remaining {
		return 0
	}
	return q.Reset / time.Duration(*q.Limit-max(*q.Remaining, 0))
}

// Refused says the answer refused the request for rate.
func (r *RateLimit) Refused() bool {
	return r != nil && (r.Status == http.StatusTooManyRequests || r.Status == StatusOverloaded)
}

// NearlySpent says some budget the headers describe is nearly spent.
func (r *RateLimit) NearlySpent() bool {
	return r != nil && (r.Requests.NearlySpent() || r.Tokens.NearlySpent())
}

// Wait is how long to wait before retrying the refused request: the
// server's Retry-After when it named one, else the refill of a budget the
// headers say is spent (0: nothing said).
func (r *RateLimit) Wait() time.Duration {
	if r == nil {
		return 0
	}
	if r.RetryAfter > 0 {
		return r.RetryAfter
	}
	return r.Refill()
}

// Refill is how long the server will take no more requests after this
// answer, by its headers: the longest refill of one unit among the
// budgets they say are spent (0: none is, or the headers do not tell).
// It is finer than a Retry-After in whole seconds, and counts from when
// the server judged the request.
func (r *RateLimit) Refill() time.Duration {
	if r == nil {
		return 0
	}
	var d time.Duration
	for _, q := range []Quota{r.Requests, r.Tokens} {
		if q.spent() {
			d = max(d, q.Refill())
		}
	}
	return d
}

// ParseRateLimit reads an answer's status and headers; nil when they say
// nothing of rate limits.
func ParseRateLimit(h http.Header, status int, now time.Time) *RateLimit {
	r := &RateLimit{RetryAfter: retryAfter(h, now)}
	if status == http.StatusTooManyRequests || status == StatusOverloaded {
		r.Status = status
	}
	r.Requests = openAIQuota(h, openAIRequests).or(anthropicQuota(h, anthropicRequests, now))
	r.Tokens = openAIQuota(h, openAITokens).or(anthropicQuota(h, anthropicTokens, now))
	for _, k := range anthropicTokenKinds {
		r.Tokens = mostSpent(r.Tokens, anthropicQuota(h, k, now))
	}
	if r.Status == 0 && r.RetryAfter == 0 && r.Requests.empty() && r.Tokens.empty() {
		return nil
	}
	return r
}

func (q Quota) empty() bool { return q.Limit == nil && q.Remaining == nil && q.Reset == 0 }

// or is q, or o when q says nothing.
func (q Quota) or(o Quota) Quota {
	if q.empty() {
		return o
	}
	return q
}

// mostSpent is the budget with the smaller share left (one that says
// nothing loses).
func mostSpent(a, b Quota) Quota {
	switch {
	case b.empty():
		return a
	case a.empty():
		return b
	}
	if share(b) < share(a) {
		return b
	}
	return a
}

// share is the part of the budget left, 1 when it cannot be told.
func share(q Quota) float64 {
	switch {
	case q.Remaining == nil:
		return 1
	case *q.Remaining <= 0:
		return 0
	case q.Limit == nil || *q.Limit <= 0:
		return 1
	}
	return float64(*q.Remaining) / float64(*q.Limit)
}

// quotaKeys are the header names of one budget, canonical (so reading
// them allocates nothing: this runs for every answer).
type quotaKeys struct{ limit, remaining, reset string }

// openAIKeys are x-ratelimit-{limit,remaining,reset}-<what>.
func openAIKeys(what string) quotaKeys {
	k := func(field string) string {
		return textproto.CanonicalMIMEHeaderKey("x-ratelimit-" + field + "-" + what)
	}
	return quotaKeys{k("limit"), k("remaining"), k("reset")}
}

// anthropicKeys are anthropic-ratelimit-<what>-{limit,remaining,reset}.
func anthropicKeys(what string) quotaKeys {
	k := func(field string) string {
		return textproto.CanonicalMIMEHeaderKey("anthropic-ratelimit-" + what + "-" + field)
	}
	return quotaKeys{k("limit"), k("remaining"), k("reset")}
}

var (
	openAIRequests, openAITokens       = openAIKeys("requests"), openAIKeys("tokens")
	anthropicRequests, anthropicTokens = anthropicKeys("requests"), anthropicKeys("tokens")
	// anthropicTokenKinds are the token budgets Anthropic names apart.
	anthropicTokenKinds = []quotaKeys{anthropicKeys("input-tokens"), anthropicKeys("output-tokens")}
)

// openAIQuota reads one of OpenAI's budgets (resets are durations).
func openAIQuota(h http.Header, k quotaKeys) Quota {
	return Quota{Limit: headerInt(h, k.limit), Remaining: headerInt(h, k.remaining), Reset: resetDuration(h.Get(k.reset))}
}

// anthropicQuota reads one of Anthropic's budgets (resets are RFC 3339
// times).
func anthropicQuota(h http.Header, k quotaKeys, now time.Time) Quota {
	q := Quota{Limit: headerInt(h, k.limit), Remaining: headerInt(h, k.remaining)}
	v := strings.TrimSpace(h.Get(k.reset))
	if v == "" {
		return q
	}
	if t, err := time.Parse(time.RFC3339, v); err == nil && t.After(now) {
		q.Reset = t.Sub(now)
	}
	return q
}

// headerInt is a header's non-negative integer, nil when absent or not
// one.
func headerInt(h http.Header, key string) *int64 {
	v := strings.TrimSpace(h.Get(key))
	if v == "" {
		return nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 {
		return nil
	}
	return &n
}

// maxReset bounds a reset or a wait read from a header: a day.
const maxReset = 24 * time.Hour

// resetDuration reads OpenAI's reset: a Go-style duration ("6m0s", "1s",
// "20ms", "1h2m3.5s") or bare seconds; 0 when it is neither.
func resetDuration(v string) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	// Bare seconds end in a digit; a duration in its unit (and a failed
	// ParseFloat would allocate its error, for every answer).
	if c := v[len(v)-1]; c >= '0' && c <= '9' {
		s, err := strconv.ParseFloat(v, 64)
		if err == nil && s > 0 && s*float64(time.Second) < float64(maxReset) {
			return time.Duration(s * float64(time.Second))
		}
		return 0
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 || d > maxReset {
		return 0
	}
	return d
}

// retryAfter reads how long the server asks us to wait: OpenAI's
// retry-after-ms first (finer), then Retry-After in seconds or as an HTTP
// date. It returns 0 when neither is usable.
func retryAfter(h http.Header, now time.Time) time.Duration {
	if v := strings.TrimSpace(h.Get("Retry-After-Ms")); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms > 0 && ms < 1e9 {
			return time.Duration(ms * float64(time.Millisecond))
		}
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil {
		if s > 0 && s < 1e6 {
			return time.Duration(s * float64(time.Second))
		}
		return 0
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return min(t.Sub(now), maxReset)
	}
	return 0
}

// Pacer paces one cell's requests: the runner's adaptive concurrency
// (run/runner) gives each cell one through its context (WithPacer), and
// the one HTTP path tells it what every answer said and lets it hold the
// retries. Without one, a retry waits what the server asked, or a
// back-off, and every retry counts against max_retries.
type Pacer interface {
	// Answered hears an accepted answer's signals (nil: its headers said
	// nothing of rate limits).
	Answered(rl *RateLimit)
	// Refused hears an answer that refused the request for rate (a 429
	// or a 529) and says whether retrying it is free: it does not count
	// against max_retries, because the pace can still slow down.
	Refused(rl *RateLimit) (free bool)
	// Wait holds the next attempt for at least wait, then until the pace
	// lets it go; ctx's error when the cell ends first.
	Wait(ctx context.Context, wait time.Duration) error
}

type pacerKey struct{}

// WithPacer gives the requests made under ctx the pacer p.
func WithPacer(ctx context.Context, p Pacer) context.Context {
	return context.WithValue(ctx, pacerKey{}, p)
}

// pacerOf is ctx's pacer, or nil.
func pacerOf(ctx context.Context) Pacer {
	p, _ := ctx.Value(pacerKey{}).(Pacer)
	return p
}

// maxBackoff bounds the doubling back-off of a retry the server named no
// wait for.
const maxBackoff = time.Minute

// backoff is the n-th retry's back-off from first, doubling, at most
// maxBackoff, before jitter.
func backoff(first time.Duration, n int) time.Duration {
	d := float64(first) * math.Pow(2, float64(n))
	if d > float64(maxBackoff) {
		return maxBackoff
	}
	return time.Duration(d)
}
