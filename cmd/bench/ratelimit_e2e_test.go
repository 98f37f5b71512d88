package main

import (
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"bench/cmd/fakellm/loadserver"
	"bench/internal/record/results"
	"bench/internal/testpeer/bucketserver"
)

// rateLimitedConfig is a sweep of one entry, eight cells at once, of the
// synthetic prompt (16 tokens out) repeated n times.
func rateLimitedConfig(url string, n int) string {
	return fmt.Sprintf(`run: {warmup: false, timeout: 30s, concurrency: 8, repetitions: %d}
prompts:
  synthetic: {input_tokens: [16], output_tokens: 16}
providers:
  - name: api
    type: ollama_openai
    base_url: %s/v1
    models: [fake]
`, n, url)
}

// latencies are the medians of a run's ttft_ms and e2e_ms.
func latencies(recs []results.Record) (ttft, e2e float64) {
	var ts, es []float64
	for _, r := range recs {
		if r.TTFTMS != nil {
			ts = append(ts, float64(*r.TTFTMS))
		}
		es = append(es, float64(r.E2EMS))
	}
	return p50(ts), p50(es)
}

// The Done-when, with the real bench binary: a fake model server
// of known timing (20 ms to the first token, 15 more tokens 5 ms apart)
// behind a token bucket with OpenAI's real headers, refilling at 70 % of
// the rate eight cells at once get from the server alone (measured on
// this machine by an unthrottled run of the same server), so that a
// client holding its eight has 30 % of its requests refused or more
// (checked below with one that retries when told, as bench did before).
// The sweep then finishes with no rate_limited cell, with the limit
// lowered on the way and never above eight; it gets at least 85 % of what
// the bucket allowed over the sweep (its burst plus its refill, on the
// bucket's own clock); and its latency medians equal the unthrottled
// run's within 5 ms or 10 % for TTFT and 10 ms or 10 % for e2e (two
// processes on a shared 2-core machine, as TestLoadSweepMatchesServer
// states its error), the waits being recorded apart (limit_wait_ms,
// retry_wait_ms). summary.md and the progress lines say by how much the
// entry was throttled.
func TestLoadRateLimitedSweep(t *testing.T) {
	serialTest(t)
	fake := loadserver.New(loadserver.Service{TTFT: 20 * time.Millisecond, Gap: 5 * time.Millisecond, Tokens: 16}, nil)
	plain := httptest.NewServer(fake)
	defer plain.Close()
	code, stdout, stderr, free, _ := runBench(t, rateLimitedConfig(plain.URL, 120))
	if code != 0 || len(free) != 120 {
		t.Fatalf("unthrottled run: exit %d, %d records\n%s\n%s", code, len(free), stdout, stderr)
	}
	var service float64
	log := fake.Log()
	for _, e := range log {
		service += e.ServiceMS()
	}
	service /= float64(len(log))
	rate := 0.7 * 8 / (service / 1000)

	// The bucket bites: eight clients that retry what it refuses after
	// its Retry-After get 30 % of their requests refused or more.
	probe := &bucketserver.Bucket{Capacity: 8, Rate: rate}
	if share := refusedShare(t, &bucketserver.Server{Bucket: probe, Next: fake}, 8, 80); share < 0.3 {
		t.Fatalf("at eight at once the bucket refuses %.0f %% of the requests, want 30 %% or more", 100*share)
	}

	bucket := &bucketserver.Bucket{Capacity: 8, Rate: rate}
	limited := httptest.NewServer(&bucketserver.Server{Bucket: bucket, Next: fake})
	defer limited.Close()
	before := len(fake.Log())
	code, stdout, stderr, recs, dir := runBench(t, rateLimitedConfig(limited.URL, 300))
	if code != 0 || len(recs) != 300 {
		t.Fatalf("throttled run: exit %d, %d records\n%s\n%s", code, len(recs), stdout, stderr)
	}
	refusals, retried, waited, lowest := 0, 0, 0, 8
	var retryWait []float64
	var retriedCells, waitedCells []results.Record
	for _, r := range recs {
		if r.AvailabilityStatus != results.StatusOK || !r.Success {
			t.Errorf("%s rep %d: %s %v", r.PromptID, r.Repetition, r.AvailabilityStatus, r.FailureType)
		}
		refusals += r.RateLimitRefusals
		if r.Retries > 0 {
			retried++
			retryWait = append(retryWait, float64(r.RetryWaitMS))
			retriedCells = append(retriedCells, r)
		}
		if r.LimitWaitMS != nil {
			waited++
			waitedCells = append(waitedCells, r)
		}
		if l := r.ConcurrencyLimit; l != nil {
			if *l > 8 || *l < 1 {
				t.Errorf("concurrency limit %d", *l)
			}
			lowest = min(lowest, *l)
		}
	}
	if refusals == 0 || lowest == 8 || waited == 0 {
		t.Errorf("%d refusals, lowest limit %d, %d cells waited for it: the bucket did not throttle the run", refusals, lowest, waited)
	}

	// Throughput on the bucket's clock: from its first decision to the
	// server's last answer.
	served := fake.Log()[before:]
	var end time.Time
	for _, e := range served {
		end = maxTime(end, time.Unix(0, e.EndNS))
	}
	taken := 0
	for _, d := range bucket.Log() {
		if d.Taken {
			taken++
		}
	}
	allowed := bucket.Allowed(end)
	share := float64(taken) / allowed
	ttft0, e2e0 := latencies(free)
	ttft1, e2e1 := latencies(recs)
	t.Logf("service %.1f ms, bucket %.1f/s; %d refusals, %d cells retried (retry wait p50 %.0f ms), %d waited for the limit, lowest limit %d; %d of %.0f allowed (%.1f %%); TTFT p50 %.1f vs %.1f ms unthrottled, e2e p50 %.1f vs %.1f",
		service, rate, refusals, retried, p50OrZero(retryWait), waited, lowest, taken, allowed, 100*share, ttft1, ttft0, e2e1, e2e0)
	if taken != len(served) || taken != 300 {
		t.Errorf("the bucket let %d requests through, the server answered %d", taken, len(served))
	}
	if share < 0.85 {
		t.Errorf("the sweep got %.1f %% of what the bucket allowed, want 85 %% or more", 100*share)
	}
	if math.Abs(ttft1-ttft0) > max(5, 0.1*ttft0) {
		t.Errorf("TTFT p50 %.1f ms throttled, %.1f unthrottled", ttft1, ttft0)
	}
	if math.Abs(e2e1-e2e0) > max(10, 0.1*e2e0) {
		t.Errorf("e2e p50 %.1f ms throttled, %.1f unthrottled", e2e1, e2e0)
	}
	// The cells that waited, to retry or for the limit, are timed from
	// the request that was answered: their waits are not in their figures.
	for name, cells := range map[string][]results.Record{"retried": retriedCells, "limit-waiting": waitedCells} {
		if len(cells) == 0 {
			continue
		}
		ttft, e2e := latencies(cells)
		if math.Abs(ttft-ttft0) > max(5, 0.1*ttft0) || math.Abs(e2e-e2e0) > max(10, 0.1*e2e0) {
			t.Errorf("the %d %s cells: TTFT p50 %.1f ms, e2e p50 %.1f; unthrottled %.1f and %.1f", len(cells), name, ttft, e2e, ttft0, e2e0)
		}
	}

	md, err := os.ReadFile(filepath.Join(dir, "runs", "e2e", "summary.md"))
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("- api/fake: %d refusal", refusals)
	if !strings.Contains(string(md), "## Rate limits") || !strings.Contains(string(md), want) || !strings.Contains(string(md), fmt.Sprintf("concurrency down to %d of 8", lowest)) {
		t.Errorf("summary.md lacks the rate-limit line %q…:\n%s", want, md)
	}
	if !strings.Contains(stderr, fmt.Sprintf("rate-limited: down to %d of 8 at once", lowest)) {
		t.Errorf("the progress line does not say the limit:\n%s", stderr)
	}
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

func p50OrZero(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	return p50(xs)
}

// refusedShare sends n requests from c clients at once, each retrying a
// refusal after its Retry-After (retry-after-ms) as a client of fixed
// concurrency does, and returns the share of requests refused.
func refusedShare(t *testing.T, h http.Handler, c, n int) float64 {
	t.Helper()
	srv := httptest.NewServer(h)
	defer srv.Close()
	var mu sync.Mutex
	sent, refused, left := 0, 0, n
	var wg sync.WaitGroup
	for range c {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				mu.Lock()
				if left == 0 {
					mu.Unlock()
					return
				}
				left--
				mu.Unlock()
				for {
					res, err := http.Post(srv.URL+"/v1/chat/completions", "application/json",
						strings.NewReader(`{"model":"fake","stream":true,"messages":[{"role":"user","content":"x"}]}`))
					if err != nil {
						t.Error(err)
						return
					}
					io.Copy(io.Discard, res.Body)
					res.Body.Close()
					mu.Lock()
					sent++
					if res.StatusCode == http.StatusTooManyRequests {
						refused++
					}
					mu.Unlock()
					if res.StatusCode != http.StatusTooManyRequests {
						break
					}
					var ms int
					fmt.Sscan(res.Header.Get("Retry-After-Ms"), &ms)
					time.Sleep(time.Duration(ms) * time.Millisecond)
				}
			}
		}()
	}
	wg.Wait()
	return float64(refused) / float64(sent)
}
