package runner

import (
	"context"
	"net/http"
	"testing"
	"time"

	"bench/providers"
)

// BenchmarkLimiterCell is the limiter's cost per cell, outside every
// figure the cell records but on the path of every cell: admitted (no
// wait), its answer heard with rate-limit headers parsed, its slot given
// back, eight cells at once as in the rate-limit Done-when. Run with
// go test ./run/runner -run '^$' -bench LimiterCell -benchmem.
func BenchmarkLimiterCell(b *testing.B) {
	l := newLimiter(8, nil)
	h := http.Header{}
	h.Set("x-ratelimit-limit-requests", "5000")
	h.Set("x-ratelimit-remaining-requests", "4999")
	h.Set("x-ratelimit-reset-requests", "12ms")
	h.Set("x-ratelimit-limit-tokens", "800000")
	h.Set("x-ratelimit-remaining-tokens", "799750")
	h.Set("x-ratelimit-reset-tokens", "18ms")
	ctx := context.Background()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			epoch, _, _, ok := l.acquire(ctx, nil, false)
			if !ok {
				b.Error("not admitted")
				return
			}
			now := time.Now()
			l.answered(epoch, now, providers.ParseRateLimit(h, http.StatusOK, now))
			l.release()
		}
	})
}
