package faultserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
)

// serverGoroutines lists goroutines running the server's handlers.
func serverGoroutines() []string {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	var out []string
	for _, g := range strings.Split(string(buf), "\n\n") {
		if strings.Contains(g, "faultserver.(*Server).ServeHTTP") || strings.Contains(g, "faultserver.(*player)") {
			out = append(out, g)
		}
	}
	return out
}

// Close releases every stall, stops every flood (even one whose client
// stopped reading), returns, and leaves no handler behind.
func TestCloseReleasesEverything(t *testing.T) {
	s := New()
	type call struct {
		name string
		err  chan error
	}
	var calls []call
	start := func(name, path, body string, read bool) {
		c := call{name, make(chan error, 1)}
		calls = append(calls, c)
		go func() {
			req, _ := http.NewRequest(http.MethodPost, s.URL()+path, strings.NewReader(body))
			resp, err := client.Do(req)
			if err != nil {
				c.err <- err
				return
			}
			defer resp.Body.Close()
			if !read {
				// Read nothing: the server's writes fill the socket and block.
				<-s.done
			}
			_, err = io.Copy(io.Discard, resp.Body)
			c.err <- err
		}()
	}
	stalls := 0
	for _, p := range protocols {
		start(p.name+" stall_headers", p.path, p.body(StallHeaders, true), true)
		start(p.name+" stall_body", p.path, p.body(StallBody, true), true)
		stalls += 2
		start(p.name+" flood", p.path, p.body(Flood, true), true)
		start(p.name+" flood unread", p.path, p.body(Flood, true), false)
		start(p.name+" endless_line", p.path, p.body(EndlessLine, true), true)
		start(p.name+" comment_flood", p.path, p.body(CommentFlood, true), true)
	}
	for range stalls {
		<-s.Stalled()
	}
	for s.InFlight() < len(calls) {
		runtime.Gosched()
	}

	closed := make(chan struct{})
	go func() {
		s.Close()
		close(closed)
	}()
	select {
	case <-closed:
	case <-time.After(60 * time.Second):
		t.Fatalf("Close has not returned; handlers still running:\n%s", strings.Join(serverGoroutines(), "\n\n"))
	}
	for _, c := range calls {
		if err := <-c.err; err == nil {
			t.Errorf("%s ended cleanly after Close; want the dropped connection", c.name)
		}
	}
	if g := serverGoroutines(); len(g) > 0 || s.InFlight() != 0 {
		t.Errorf("%d handlers left after Close:\n%s", len(g), strings.Join(g, "\n\n"))
	}
	s.Close() // twice is fine
}

// A flood costs the server constant memory however long it runs: the heap
// after 40 MiB of it is what it was after the first 8 MiB.
func TestFloodMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("streams 40 MiB per case")
	}
	s := Start(t)
	heap := func() uint64 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	for _, p := range protocols {
		for _, model := range []string{Flood, FloodReasoning, FloodTool, EndlessLine, CommentFlood} {
			ctx, cancel := context.WithCancel(context.Background())
			resp, err := do(t, ctx, http.MethodPost, s.URL()+p.path, p.body(model, true), nil)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := io.CopyN(io.Discard, resp.Body, 8<<20); err != nil {
				t.Fatal(err)
			}
			before := heap()
			if _, err := io.CopyN(io.Discard, resp.Body, 32<<20); err != nil {
				t.Fatal(err)
			}
			after := heap()
			t.Logf("%s %s: heap %d -> %d KiB", p.name, model, before>>10, after>>10)
			if after > before+256<<10 {
				t.Errorf("%s %s: heap grew from %d to %d KiB over 32 MiB of stream", p.name, model, before>>10, after>>10)
			}
			cancel()
			waitIdle(t, s)
		}
	}
}

func TestRequestsRecorded(t *testing.T) {
	s := Start(t)
	key := newKey()
	h := bearer(key)
	h.Set("X-Api-Key", key)
	h.Set("Anthropic-Version", "2023-06-01")
	p := protocols[2]
	_, r := p.stream(t, s, "ok", h)
	if !r.done {
		t.Fatal("no answer")
	}
	if _, err := do(t, context.Background(), http.MethodGet, s.URL()+"/api/tags", "", nil); err != nil {
		t.Fatal(err)
	}
	reqs := s.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests", len(reqs))
	}
	m := reqs[0]
	if m.Method != "POST" || m.Path != "/v1/messages" || m.Endpoint != EndpointMessages || m.Model != "ok" || m.Behaviour != "ok" || !m.Stream {
		t.Errorf("recorded %+v", m)
	}
	if string(m.Body) != p.body("ok", true) {
		t.Errorf("body %s", m.Body)
	}
	if m.Header.Get("Authorization") != "[redacted]" || m.Header.Get("X-Api-Key") != "[redacted]" || m.Header.Get("Anthropic-Version") != "2023-06-01" {
		t.Errorf("headers %v", m.Header)
	}
	if !m.SentCredential(key) || m.SentCredential(newKey()) || m.SentCredential("") {
		t.Error("SentCredential is wrong")
	}
	j, _ := json.Marshal(reqs)
	if strings.Contains(string(j), key) || strings.Contains(fmt.Sprintf("%+v %#v", reqs, reqs), key) {
		t.Error("a recorded request prints the key")
	}
	if reqs[1].Endpoint != EndpointTags || reqs[1].Model != "" || reqs[1].Behaviour != "ok" {
		t.Errorf("tags request %+v", reqs[1])
	}
	if s.Count("ok") != 1 || s.Count("") != 0 {
		t.Errorf("counts %d %d", s.Count("ok"), s.Count(""))
	}
}

func TestClosedURL(t *testing.T) {
	s := Start(t)
	u := s.ClosedURL()
	if u != s.ClosedURL() || u == s.URL() {
		t.Fatalf("ClosedURL %q", u)
	}
	for range 2 {
		_, err := do(t, context.Background(), http.MethodGet, u+"/api/tags", "", nil)
		if !errors.Is(err, syscall.ECONNREFUSED) {
			t.Errorf("GET %s: %v, want connection refused", u, err)
		}
	}
}
