package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"bench/internal/exitcode"
	"bench/internal/record/results"
	"bench/internal/testpeer/bucketserver"
)

// The bad input "a 529 storm", with the real binary and one of the
// new hosted kinds (anthropic, whose rate limits come through the one
// HTTP path like every other kind's): a server that answers every request
// 529 overloaded_error with Anthropic's real rate-limit headers and
// Retry-After. The entry's limit comes down to one cell at a time, then
// each cell spends its max_retries and is recorded rate_limited/http_529
// with its refusals and retry waits; nothing hangs, every cell has a
// record, the run ends as one that reached no model (exit 4), summary.md
// says how the group was throttled, and the key is in no file the run
// wrote nor in its output.
func TestRun529Storm(t *testing.T) {
	const key = "sk-ant-" + "storm-0123456789abcdefSECRET" // a planted key, split so it is not a key in the source
	t.Setenv("BENCH_STORM_KEY", key)
	bucket := &bucketserver.Bucket{Capacity: 4, Rate: 1000}
	srv := httptest.NewServer(&bucketserver.Server{Bucket: bucket, Next: http.NotFoundHandler(), Style: bucketserver.Anthropic, Status: 529, Storm: true})
	defer srv.Close()
	cfg := fmt.Sprintf(`run: {warmup: false, timeout: 60s, concurrency: 4, repetitions: 4}
prompts:
  synthetic: {input_tokens: [16], output_tokens: 16}
providers:
  - name: claude
    type: anthropic
    base_url: %s/v1
    api_key_env: BENCH_STORM_KEY
    max_retries: 1
    models: [claude-sonnet-4-5]
`, srv.URL)
	code, stdout, stderr, recs, dir := runBench(t, cfg)
	if code != exitcode.Unreached || len(recs) != 4 {
		t.Fatalf("exit %d (want %d), %d records\n%s\n%s", code, exitcode.Unreached, len(recs), stdout, stderr)
	}
	refusals, lowest := 0, 4
	for _, r := range recs {
		if r.AvailabilityStatus != results.StatusRateLimited || r.FailureType == nil || *r.FailureType != results.FailHTTP529 {
			t.Errorf("rep %d: %s %v, want rate_limited http_529", r.Repetition, r.AvailabilityStatus, r.FailureType)
		}
		if r.HTTPStatus == nil || *r.HTTPStatus != 529 || r.RateLimitRefusals != r.Retries+1 || r.Retries < 1 || r.RetryWaitMS <= 0 {
			t.Errorf("rep %d: http %v, %d refusals for %d retries, retry wait %v ms", r.Repetition, r.HTTPStatus, r.RateLimitRefusals, r.Retries, r.RetryWaitMS)
		}
		if r.TTFTMS != nil || r.Success {
			t.Errorf("rep %d: a refused cell has ttft %v, success %v", r.Repetition, r.TTFTMS, r.Success)
		}
		refusals += r.RateLimitRefusals
		if r.ConcurrencyLimit != nil {
			lowest = min(lowest, *r.ConcurrencyLimit)
		}
	}
	t.Logf("%d requests, all refused, for %d cells; lowest limit %d", len(bucket.Log()), len(recs), lowest)
	// Every request the server saw was refused and recorded as a refusal:
	// none was lost, none sent behind the records' backs.
	if n := len(bucket.Log()); n != refusals || lowest != 1 {
		t.Errorf("%d requests, %d refusals recorded, lowest limit %d: want equal counts and a limit of 1", n, refusals, lowest)
	}
	run := filepath.Join(dir, "runs", "e2e")
	md, err := os.ReadFile(filepath.Join(run, "summary.md"))
	if err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("- claude/claude-sonnet-4-5: %d refusal", refusals); !strings.Contains(string(md), "## Rate limits") || !strings.Contains(string(md), want) ||
		!strings.Contains(string(md), "concurrency down to 1 of 4") {
		t.Errorf("summary.md lacks %q:\n%s", want, md)
	}
	if strings.Contains(stdout+stderr, key) {
		t.Error("the key is in bench's output")
	}
	err = filepath.Walk(run, func(p string, fi os.FileInfo, err error) error {
		if err != nil || fi.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err == nil && strings.Contains(string(b), key) {
			t.Errorf("the key is in %s", p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}
