package providers

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"bench/internal/testpeer/faultserver"
)

// shortBounds shortens the bounds of calls outside a cell for one test.
func shortBounds(t *testing.T, d time.Duration) {
	t.Helper()
	p, w, u := probeTimeout, warmupTimeout, pullTimeout
	probeTimeout, warmupTimeout, pullTimeout = d, d, d
	t.Cleanup(func() { probeTimeout, warmupTimeout, pullTimeout = p, w, u })
}

// within fails the test if f does not return within a minute: a call that
// ignored its bound would otherwise hang the test until go test's own
// timeout.
func within(t *testing.T, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); f() }()
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatalf("%s ignored its bound", what)
	}
}

func faultOllama(t *testing.T, base string, edit func(*ollamaOptions)) *Ollama {
	t.Helper()
	o := &ollamaOptions{httpOptions: defaultHTTP(base)}
	if edit != nil {
		edit(o)
	}
	return newKind(t, "ollama", o).(*Ollama)
}

// Every call outside a cell ends at its bound when the server accepts and
// never answers, or answers half and stops: the version and model listing
// (both Ollama kinds), the warm-up and the pull.
func TestSideCallsBounded(t *testing.T) {
	shortBounds(t, 200*time.Millisecond)
	s := faultserver.Start(t)
	for _, stall := range []string{faultserver.StallHeaders, faultserver.StallBody} {
		// A silent version call: the listing is not asked after it.
		s.Override("/api/version", stall)
		s.Override("/api/tags", stall)
		for _, typ := range []string{"ollama", "ollama_openai"} {
			base := s.URL()
			if typ == "ollama_openai" {
				base += "/v1"
			}
			var p Provider = faultOllama(t, base, nil)
			if typ == "ollama_openai" {
				p = newKind(t, typ, &ollamaOpenAIOptions{httpOptions: defaultHTTP(base)})
			}
			var pr *Probe
			within(t, typ+" probe", func() { pr = p.Probe(context.Background()) })
			if len(pr.Errors) != 1 || !strings.Contains(pr.Errors[0], "/api/version: no complete answer within 200ms") {
				t.Errorf("%s %s: probe errors %q", typ, stall, pr.Errors)
			}
		}
		// A silent listing alone.
		s.Override("/api/version", "")
		var pr *Probe
		within(t, "listing", func() { pr = faultOllama(t, s.URL(), nil).Probe(context.Background()) })
		if len(pr.Errors) != 1 || !strings.Contains(pr.Errors[0], "/api/tags: no complete answer within 200ms") {
			t.Errorf("%s listing: probe errors %q", stall, pr.Errors)
		}
	}
	if n := countEndpoint(s, faultserver.EndpointTags); n != 2 {
		t.Errorf("the listing was asked %d times, want twice (only when the version answered)", n)
	}

	// Under a shorter bound (the run's timeout) a probe waits that long;
	// the sweep's Prepare does not ask a silent server again.
	s.Override("/api/version", faultserver.StallHeaders)
	o := faultOllama(t, s.URL(), nil)
	ctx := WithProbeBound(context.Background(), 50*time.Millisecond)
	var pr *Probe
	within(t, "bounded probe", func() { pr = o.Probe(ctx) })
	if len(pr.Errors) != 1 || !strings.Contains(pr.Errors[0], "no complete answer within 50ms") {
		t.Errorf("bounded probe errors %q", pr.Errors)
	}
	tags := countEndpoint(s, faultserver.EndpointTags)
	if err := o.Prepare(ctx, []string{"ok"}, io.Discard); err == nil || !strings.Contains(err.Error(), "no complete answer within 50ms") {
		t.Errorf("prepare after a silent probe: %v", err)
	}
	if n := countEndpoint(s, faultserver.EndpointTags); n != tags {
		t.Errorf("prepare asked a silent server for its list again")
	}
	s.Override("/api/version", "")
	s.Override("/api/tags", "")

	// Warm-up of a model that stalls (the runner warms each suite up
	// through Warmer); pull of a model the list lacks.
	s.Override("/api/pull", faultserver.StallBody)
	o = faultOllama(t, s.URL(), func(o *ollamaOptions) { o.Pull = true })
	var werr error
	within(t, "warmup", func() { werr = o.Warmup(context.Background(), Request{Model: faultserver.StallHeaders}) })
	if werr == nil {
		t.Error("a stalled warm-up returned no error")
	}
	var log bytes.Buffer
	var err error
	within(t, "prepare", func() {
		err = o.Prepare(context.Background(), []string{"flood:7"}, &log)
	})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(log.String(), "pull flood:7 failed") {
		t.Errorf("log:\n%s", log.String())
	}
	if _, missing := o.missingReason("flood:7"); !missing {
		t.Error("a model whose pull timed out is not marked missing")
	}
}

// A cancelled context (the first Ctrl-C) ends them at once, whatever their
// bound.
func TestSideCallsObeyCancel(t *testing.T) {
	s := faultserver.Start(t)
	for _, c := range []struct {
		name, path string
		opts       func(*ollamaOptions)
		models     []string
	}{
		{"listing", "/api/tags", nil, []string{"ok"}},
		{"pull", "/api/pull", func(o *ollamaOptions) { o.Pull = true }, []string{"flood:9"}},
	} {
		if c.path != "" {
			s.Override(c.path, faultserver.StallHeaders)
		}
		o := faultOllama(t, s.URL(), c.opts)
		ctx, cancel := context.WithCancel(context.Background())
		go func() { <-s.Stalled(); cancel() }()
		var err error
		within(t, c.name, func() { err = o.Prepare(ctx, c.models, nil) })
		if err == nil || ctx.Err() == nil {
			t.Errorf("%s: Prepare returned %v before the cancel", c.name, err)
		}
		cancel()
		if c.path != "" {
			s.Override(c.path, "")
		}
	}
	// The warm-up the runner sends before a suite, likewise.
	o := faultOllama(t, s.URL(), nil)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { <-s.Stalled(); cancel() }()
	var err error
	within(t, "warm-up", func() { err = o.Warmup(ctx, Request{Model: faultserver.StallHeaders}) })
	if err == nil || ctx.Err() == nil {
		t.Errorf("warm-up returned %v before the cancel", err)
	}
}

// secretPieces fails if any 8-byte piece of secret is in text.
func secretPieces(t *testing.T, where, text, secret string) {
	t.Helper()
	if p := secretPiece(text, secret); p != "" {
		t.Errorf("%s holds %q, a piece of the key", where, p)
	}
}

// What a server or a CLI says of itself is scrubbed before the inventory
// keeps it: a version, a model name, an error body.
func TestProbesScrubbed(t *testing.T) {
	key := "sk-probe-" + strings.Repeat("0123456789abcdef", 3)
	t.Setenv("BENCH_PROBE_KEY", key)
	s := faultserver.Start(t)
	for _, b := range []string{faultserver.EchoKey, faultserver.EchoKeyFrame, "echo_key_long:290", "echo_key_long:3"} {
		s.Override("/api/version", b)
		s.Override("/api/tags", b)
		o := faultOllama(t, s.URL(), func(o *ollamaOptions) { o.APIKeyEnv = "BENCH_PROBE_KEY" })
		pr := o.Probe(context.Background())
		js, _ := json.Marshal(pr)
		secretPieces(t, b+" probe", string(js), key)
		var log bytes.Buffer
		err := o.Prepare(context.Background(), []string{"ok"}, &log)
		if err != nil {
			secretPieces(t, b+" prepare", err.Error(), key)
		}
		secretPieces(t, b+" prepare log", log.String(), key)
	}

	dir := t.TempDir()
	cli := filepath.Join(dir, "claude")
	os.WriteFile(cli, []byte("#!/bin/sh\necho \"Claude Code $MY_TOKEN\"\n"), 0o755)
	c := newKind(t, "claude_code_cli", &claudeCodeOptions{Command: cli, MaxTurns: 1, Env: map[string]string{"MY_TOKEN": "${BENCH_PROBE_KEY}"}})
	pr := c.Probe(context.Background())
	if pr.CLIVersion == nil || *pr.CLIVersion != "Claude Code "+Redacted {
		t.Errorf("cli version %v", pr.CLIVersion)
	}
}

func countEndpoint(s *faultserver.Server, endpoint string) int {
	n := 0
	for _, r := range s.Requests() {
		if r.Endpoint == endpoint {
			n++
		}
	}
	return n
}
