package loadserver

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"bench/run/servermetrics"
)

// chat sends one streamed chat completion of the given messages and
// returns the answer's stream.
func chat(t *testing.T, url string, messages ...string) string {
	t.Helper()
	var parts []string
	for _, m := range messages {
		parts = append(parts, fmt.Sprintf(`{"role":"user","content":%q}`, m))
	}
	resp, err := http.Post(url+"/v1/chat/completions", "application/json",
		strings.NewReader(`{"model":"fake","stream":true,"max_tokens":3,"messages":[`+strings.Join(parts, ",")+`]}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

func words(n int, w string) string { return strings.TrimSpace(strings.Repeat(w+" ", n)) }

// The prefix cache holds leading blocks of 16 words: a second prompt
// sharing 40 words with the first reads two blocks from the cache, one
// that differs from the first word reads none, and the usage says so.
// /metrics serves the template with the live counts, which the scraper
// maps back to what the log says, in both shapes.
func TestPrefixCacheAndMetrics(t *testing.T) {
	for _, shape := range Expositions {
		srv := New(Service{Tokens: 3, PrefixCache: true, Metrics: shape}, nil)
		hs := httptest.NewServer(srv)
		shared := words(40, "sys")
		chat(t, hs.URL, shared, words(10, "a"))
		second := chat(t, hs.URL, shared, words(10, "b"))
		chat(t, hs.URL, words(50, "other"))
		if !strings.Contains(second, `"prompt_tokens_details":{"cached_tokens":32}`) {
			t.Errorf("%s: second answer's usage: %s", shape, second)
		}
		log := srv.Log()
		if log[0].CachedTokens != 0 || log[1].CachedTokens != 32 || log[2].CachedTokens != 0 {
			t.Errorf("%s: cached %d %d %d", shape, log[0].CachedTokens, log[1].CachedTokens, log[2].CachedTokens)
		}
		got, notes, err := servermetrics.New(hs.URL + "/metrics").Scrape(context.Background())
		hs.Close()
		if err != nil || len(notes) > 0 || got.Server != shape {
			t.Fatalf("%s: scrape: %+v %v %v", shape, got, notes, err)
		}
		if *got.PrefixCacheQueries != 150 || *got.PrefixCacheHits != 32 || *got.GeneratedTokens != 9 || *got.Running != 0 || *got.Waiting != 0 {
			t.Errorf("%s: mapped %+v", shape, got)
		}
	}
}
