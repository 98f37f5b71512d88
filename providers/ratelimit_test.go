package providers

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"bench/internal/record/results"
)

func i64(v int64) *int64 { return &v }

// The headers as the vendors document them: OpenAI's rate-limit headers
// (platform.openai.com/docs/guides/rate-limits, "Rate limits in headers":
// the example values), Anthropic's (docs.anthropic.com/en/api/rate-limits,
// "Response headers"), Groq's fractional resets, and what a 429 and a 529
// carry.
func TestParseRateLimit(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name   string
		status int
		header map[string]string
		want   *RateLimit
	}{
		{"nothing said", 200, nil, nil},
		{"openai example", 200, map[string]string{
			"x-ratelimit-limit-requests": "60", "x-ratelimit-limit-tokens": "150000",
			"x-ratelimit-remaining-requests": "59", "x-ratelimit-remaining-tokens": "149984",
			"x-ratelimit-reset-requests": "1s", "x-ratelimit-reset-tokens": "6m0s",
		}, &RateLimit{Requests: Quota{i64(60), i64(59), time.Second}, Tokens: Quota{i64(150000), i64(149984), 6 * time.Minute}}},
		{"openai 429", 429, map[string]string{
			"retry-after-ms": "20", "retry-after": "1",
			"x-ratelimit-limit-requests": "60", "x-ratelimit-remaining-requests": "0", "x-ratelimit-reset-requests": "20ms",
		}, &RateLimit{Status: 429, RetryAfter: 20 * time.Millisecond, Requests: Quota{i64(60), i64(0), 20 * time.Millisecond}}},
		{"groq fractional reset", 200, map[string]string{
			"x-ratelimit-remaining-requests": "14370", "x-ratelimit-limit-requests": "14400", "x-ratelimit-reset-requests": "2m59.56s",
		}, &RateLimit{Requests: Quota{i64(14400), i64(14370), 2*time.Minute + 59560*time.Millisecond}}},
		{"anthropic", 200, map[string]string{
			"anthropic-ratelimit-requests-limit": "50", "anthropic-ratelimit-requests-remaining": "49",
			"anthropic-ratelimit-requests-reset": now.Add(1200 * time.Millisecond).Format(time.RFC3339Nano),
			"anthropic-ratelimit-tokens-limit":   "100000", "anthropic-ratelimit-tokens-remaining": "90000",
			"anthropic-ratelimit-input-tokens-limit": "80000", "anthropic-ratelimit-input-tokens-remaining": "4000",
			"anthropic-ratelimit-input-tokens-reset":  now.Add(30 * time.Second).Format(time.RFC3339),
			"anthropic-ratelimit-output-tokens-limit": "16000", "anthropic-ratelimit-output-tokens-remaining": "15000",
		}, &RateLimit{Requests: Quota{i64(50), i64(49), 1200 * time.Millisecond}, Tokens: Quota{i64(80000), i64(4000), 30 * time.Second}}},
		{"anthropic 529", 529, map[string]string{"retry-after": "3"}, &RateLimit{Status: 529, RetryAfter: 3 * time.Second}},
		{"a 429 without headers", 429, nil, &RateLimit{Status: 429}},
		{"garbage ignored", 200, map[string]string{
			"x-ratelimit-remaining-requests": "lots", "x-ratelimit-reset-requests": "soon", "retry-after": "-1",
			"anthropic-ratelimit-requests-reset": "tomorrow",
		}, nil},
		{"a reset in the past", 200, map[string]string{
			"anthropic-ratelimit-requests-remaining": "3", "anthropic-ratelimit-requests-reset": now.Add(-time.Second).Format(time.RFC3339),
		}, &RateLimit{Requests: Quota{nil, i64(3), 0}}},
		{"bare seconds and a bound", 200, map[string]string{
			"x-ratelimit-reset-requests": "7.5", "x-ratelimit-reset-tokens": "900000h",
		}, &RateLimit{Requests: Quota{nil, nil, 7500 * time.Millisecond}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := http.Header{}
			for k, v := range tt.header {
				h.Set(k, v)
			}
			got := ParseRateLimit(h, tt.status, now)
			if !sameRateLimit(got, tt.want) {
				t.Errorf("got  %s\nwant %s", rlString(got), rlString(tt.want))
			}
		})
	}
}

func sameRateLimit(a, b *RateLimit) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Status == b.Status && a.RetryAfter == b.RetryAfter && sameQuota(a.Requests, b.Requests) && sameQuota(a.Tokens, b.Tokens)
}

func sameQuota(a, b Quota) bool {
	eq := func(x, y *int64) bool { return x == nil && y == nil || x != nil && y != nil && *x == *y }
	return eq(a.Limit, b.Limit) && eq(a.Remaining, b.Remaining) && a.Reset == b.Reset
}

func rlString(r *RateLimit) string {
	if r == nil {
		return "nil"
	}
	q := func(q Quota) string {
		v := func(p *int64) string {
			if p == nil {
				return "-"
			}
			return fmt.Sprint(*p)
		}
		return fmt.Sprintf("{limit %s remaining %s reset %s}", v(q.Limit), v(q.Remaining), q.Reset)
	}
	return fmt.Sprintf("status %d retry-after %s requests %s tokens %s", r.Status, r.RetryAfter, q(r.Requests), q(r.Tokens))
}

func TestQuotaSignals(t *testing.T) {
	for _, c := range []struct {
		q      Quota
		nearly bool
		refill time.Duration
	}{
		{Quota{}, false, 0},
		{Quota{Limit: i64(60), Remaining: i64(59), Reset: time.Second}, false, time.Second},
		{Quota{Limit: i64(60), Remaining: i64(5), Reset: 55 * time.Second}, true, time.Second},
		{Quota{Limit: i64(60), Remaining: i64(6)}, false, 0},
		{Quota{Remaining: i64(0)}, true, 0},
		{Quota{Limit: i64(8), Remaining: i64(0), Reset: 400 * time.Millisecond}, true, 50 * time.Millisecond},
	} {
		if got := c.q.NearlySpent(); got != c.nearly {
			t.Errorf("%s: nearly spent %v", rlString(&RateLimit{Requests: c.q}), got)
		}
		if got := c.q.Refill(); got != c.refill {
			t.Errorf("%s: refill %v, want %v", rlString(&RateLimit{Requests: c.q}), got, c.refill)
		}
	}
	spent := &RateLimit{Requests: Quota{Limit: i64(8), Remaining: i64(0), Reset: 400 * time.Millisecond}}
	if spent.Refill() != 50*time.Millisecond || spent.Wait() != 50*time.Millisecond {
		t.Errorf("a spent budget refills in %v and a retry waits %v, want one unit's refill, 50ms", spent.Refill(), spent.Wait())
	}
	// A retry waits the Retry-After asked for.
	spent.RetryAfter = 2 * time.Second
	if spent.Wait() != 2*time.Second || spent.Refill() != 50*time.Millisecond {
		t.Errorf("wait %v, refill %v", spent.Wait(), spent.Refill())
	}
	var none *RateLimit
	if none.Refill() != 0 || none.Wait() != 0 || none.Refused() || none.NearlySpent() {
		t.Error("nil says nothing")
	}
}

// testPacer records what the HTTP path tells it and frees every refusal's
// retry until free runs out.
type testPacer struct {
	mu       sync.Mutex
	free     int
	answered []*RateLimit
	refused  []*RateLimit
	waits    []time.Duration
}

func (p *testPacer) Answered(rl *RateLimit) {
	p.mu.Lock()
	p.answered = append(p.answered, rl)
	p.mu.Unlock()
}
func (p *testPacer) Refused(rl *RateLimit) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.refused = append(p.refused, rl)
	if p.free > 0 {
		p.free--
		return true
	}
	return false
}
func (p *testPacer) Wait(ctx context.Context, d time.Duration) error {
	p.mu.Lock()
	p.waits = append(p.waits, d)
	p.mu.Unlock()
	return nil
}

// On every HTTP kind, the cell's pacer hears each refusal (429 and 529,
// with what their headers said) and the accepted answer's headers, holds
// every retry, and the refusals it frees do not count against max_retries
// (2 here: four refusals are retried); the response keeps the last
// answer's signals.
func TestHTTPPacer(t *testing.T) {
	refuse := answer{status: 429, header: map[string]string{"Retry-After-Ms": "5", "X-Ratelimit-Remaining-Requests": "0", "X-Ratelimit-Limit-Requests": "8"},
		body: `{"error":{"message":"slow down"}}`}
	overloaded := answer{status: 529, body: `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`}
	ok := answer{header: map[string]string{"X-Ratelimit-Remaining-Requests": "7", "X-Ratelimit-Limit-Requests": "8", "X-Ratelimit-Reset-Requests": "125ms"}}
	forEachHTTPKind(t, func(t *testing.T, k httpKind) {
		srv := newScriptServer(t, k, refuse, overloaded, refuse, overloaded, ok)
		p := &testPacer{free: 2}
		rec := &recorder{}
		resp, err := newHTTPKind(t, k, srv.URL).Stream(WithPacer(context.Background(), p), Request{Model: "scripted", Prompt: "x"}, rec.emit)
		if err != nil || resp.Retries != 4 || srv.count() != 5 {
			t.Fatalf("err %v, %d retries, %d requests: want success after 4 retries (2 free)", err, resp.Retries, srv.count())
		}
		if len(p.refused) != 4 || p.refused[0].Status != 429 || p.refused[1].Status != 529 || *p.refused[0].Requests.Remaining != 0 {
			t.Errorf("refusals heard %v", p.refused)
		}
		if len(p.waits) != 4 || p.waits[0] != 5*time.Millisecond {
			t.Errorf("waits %v: the first is the server's 5 ms", p.waits)
		}
		if len(p.answered) != 1 || p.answered[0] == nil || *p.answered[0].Requests.Remaining != 7 || p.answered[0].Requests.Reset != 125*time.Millisecond {
			t.Errorf("answered %v", p.answered)
		}
		if resp.RateLimit == nil || *resp.RateLimit.Requests.Remaining != 7 {
			t.Errorf("response's signals %v", resp.RateLimit)
		}
		n := 0
		for _, e := range rec.events {
			if e.Kind == EventRetry {
				if !e.RateLimit.Refused() {
					t.Errorf("retry event %d without its refusal: %+v", n, e)
				}
				n++
			}
		}
		if n != 4 {
			t.Errorf("%d retry events", n)
		}
	})
}

// Without free retries a 529 storm ends, after max_retries, as
// rate_limited/http_529 on every kind.
func TestHTTP529Storm(t *testing.T) {
	overloaded := answer{status: 529, body: `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`}
	forEachHTTPKind(t, func(t *testing.T, k httpKind) {
		srv := newScriptServer(t, k, overloaded, overloaded, overloaded, overloaded)
		p := &testPacer{}
		resp, err := newHTTPKind(t, k, srv.URL).Stream(WithPacer(context.Background(), p), Request{Model: "scripted", Prompt: "x"}, func(Event) {})
		var f *Failure
		if !errors.As(err, &f) || f.Status != results.StatusRateLimited || f.Type != results.FailHTTP529 || f.HTTPStatus != 529 {
			t.Fatalf("err %v, want rate_limited/http_529", err)
		}
		if srv.count() != 3 || resp.Retries != 2 || len(p.refused) != 3 {
			t.Errorf("%d requests, %d retries, %d refusals heard: want 3, 2, 3", srv.count(), resp.Retries, len(p.refused))
		}
		if !resp.RateLimit.Refused() {
			t.Errorf("the last answer's signals: %v", resp.RateLimit)
		}
	})
}

// An exhausted quota is no refusal for rate: the pacer does not hear it,
// and it is not retried.
func TestHTTPQuotaIsNoRefusal(t *testing.T) {
	quota := answer{status: 429, body: `{"error":{"code":"insufficient_quota","message":"no credit"}}`}
	forEachHTTPKind(t, func(t *testing.T, k httpKind) {
		srv := newScriptServer(t, k, quota, quota)
		p := &testPacer{free: 5}
		_, err := newHTTPKind(t, k, srv.URL).Stream(WithPacer(context.Background(), p), Request{Model: "scripted", Prompt: "x"}, func(Event) {})
		if err == nil || srv.count() != 1 || len(p.refused) != 0 {
			t.Errorf("err %v, %d requests, refusals heard %d", err, srv.count(), len(p.refused))
		}
	})
}

// max_retries: 0 asks for no retry: the pacer hears the refusal, and it is
// recorded as it came, free or not.
func TestHTTPNoRetriesMeansNone(t *testing.T) {
	refuse := answer{status: 429, header: map[string]string{"Retry-After-Ms": "5"}, body: `{"error":{"message":"slow down"}}`}
	k := httpKinds[0]
	srv := newScriptServer(t, k, refuse, refuse)
	p := newHTTPKind(t, k, srv.URL).(*OllamaOpenAI)
	p.http.maxRetries = 0
	pacer := &testPacer{free: 5}
	_, err := p.Stream(WithPacer(context.Background(), pacer), Request{Model: "scripted", Prompt: "x"}, func(Event) {})
	var f *Failure
	if !errors.As(err, &f) || f.Type != results.FailHTTP429 || srv.count() != 1 || len(pacer.refused) != 1 {
		t.Errorf("err %v, %d requests, %d refusals heard: want http_429 at once, heard", err, srv.count(), len(pacer.refused))
	}
}

func TestBackoffBounded(t *testing.T) {
	if backoff(time.Second, 0) != time.Second || backoff(time.Second, 3) != 8*time.Second || backoff(time.Second, 80) != maxBackoff {
		t.Errorf("backoff %v %v %v", backoff(time.Second, 0), backoff(time.Second, 3), backoff(time.Second, 80))
	}
}

// BenchmarkParseRateLimit is reading one answer's OpenAI rate-limit
// headers, done for every answer of every HTTP kind.
func BenchmarkParseRateLimit(b *testing.B) {
	h := http.Header{}
	h.Set("x-ratelimit-limit-requests", "5000")
	h.Set("x-ratelimit-remaining-requests", "4999")
	h.Set("x-ratelimit-reset-requests", "12ms")
	h.Set("x-ratelimit-limit-tokens", "800000")
	h.Set("x-ratelimit-remaining-tokens", "799750")
	h.Set("x-ratelimit-reset-tokens", "18ms")
	now := time.Now()
	b.ReportAllocs()
	for b.Loop() {
		if ParseRateLimit(h, http.StatusOK, now) == nil {
			b.Fatal("nothing read")
		}
	}
}
