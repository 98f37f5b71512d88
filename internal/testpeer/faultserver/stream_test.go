package faultserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestOK(t *testing.T) {
	s := Start(t)
	for _, p := range protocols {
		t.Run(p.name, func(t *testing.T) {
			_, r := p.stream(t, s, "ok", nil)
			if r.err != nil || r.bad != 0 || !r.done {
				t.Fatalf("err %v, %d bad frames, done %v", r.err, r.bad, r.done)
			}
			if r.text != p.okText || len(r.deltas) != 3 {
				t.Errorf("text %q in %d deltas, want %q in 3", r.text, len(r.deltas), p.okText)
			}
			if p.name != "pull" && r.outTokens != 4 {
				t.Errorf("output tokens %d, want 4", r.outTokens)
			}
			// An Ollama client sends the name it listed, with :latest.
			if p.name == "ollama" {
				if _, r := p.stream(t, s, "ok:latest", nil); !r.done || r.text != answerText {
					t.Errorf("ok:latest: %+v", r)
				}
			}
		})
	}
}

// A request that asks for one JSON body gets the answer whole.
func TestOKNotStreamed(t *testing.T) {
	s := Start(t)
	for _, p := range protocols {
		t.Run(p.name, func(t *testing.T) {
			resp, err := do(t, context.Background(), http.MethodPost, s.URL()+p.path, p.body("ok", false), nil)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
				t.Fatalf("status %d, %s", resp.StatusCode, resp.Header.Get("Content-Type"))
			}
			want := answerText
			if p.name == "pull" {
				want = ""
			}
			if got, err := p.whole(b); err != nil || got != want {
				t.Errorf("answer %q (%v), want %q; body %s", got, err, want, b)
			}
		})
	}
}

func TestHTTPStatus(t *testing.T) {
	s := Start(t)
	statuses := []int{400, 401, 403, 404, 429, 500, 502, 503, 529}
	for _, p := range protocols {
		for _, st := range statuses {
			for _, stream := range []bool{true, false} {
				model := "http" + strconv.Itoa(st)
				resp, err := do(t, context.Background(), http.MethodPost, s.URL()+p.path, p.body(model, stream), nil)
				if err != nil {
					t.Fatal(err)
				}
				b, _ := io.ReadAll(resp.Body)
				if resp.StatusCode != st {
					t.Errorf("%s %s: status %d", p.name, model, resp.StatusCode)
				}
				msg, err := p.errMessage(b)
				if err != nil || msg == "" {
					t.Errorf("%s %s: error body %s: %v", p.name, model, b, err)
				}
				if st == 404 && !strings.Contains(msg, model) {
					t.Errorf("%s: a 404 must name the model (bench tells a missing model from a wrong URL by it): %q", p.name, msg)
				}
				wantRetry := st == 429 || st == 503
				if got := resp.Header.Get("Retry-After"); (got == "1") != wantRetry {
					t.Errorf("%s %s: Retry-After %q", p.name, model, got)
				}
				if got := resp.Header.Get("Retry-After-Ms"); (got == "1000") != wantRetry {
					t.Errorf("%s %s: retry-after-ms %q", p.name, model, got)
				}
			}
		}
	}
}

func TestRetryAfterSetting(t *testing.T) {
	s := Start(t)
	s.SetRetryAfter(20 * time.Millisecond)
	resp, err := do(t, context.Background(), http.MethodPost, s.URL()+"/v1/responses", protocols[1].body("http429", true), nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Header.Get("Retry-After") != "1" || resp.Header.Get("Retry-After-Ms") != "20" {
		t.Errorf("headers %v", resp.Header)
	}
	s.SetRetryAfter(2500 * time.Millisecond)
	resp, _ = do(t, context.Background(), http.MethodPost, s.URL()+"/v1/responses", protocols[1].body("http503", true), nil)
	if resp.Header.Get("Retry-After") != "3" || resp.Header.Get("Retry-After-Ms") != "2500" {
		t.Errorf("headers %v", resp.Header)
	}
}

// httpNNN:N fails N times, then answers; each name counts on its own.
func TestStatusThenOK(t *testing.T) {
	s := Start(t)
	for _, p := range protocols {
		model := "http429:2"
		if p.name == "chat" {
			model = "http503:2"
		}
		var got []int
		for range 4 {
			resp, err := do(t, context.Background(), http.MethodPost, s.URL()+p.path, p.body(model, true), nil)
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, resp.StatusCode)
			if resp.StatusCode == 200 {
				if r := p.readAll(resp.Body); !r.done || r.text != p.okText {
					t.Errorf("%s: answer after the failures: %+v", p.name, r)
				}
			}
		}
		want := []int{429, 429, 200, 200}
		if p.name == "chat" {
			want = []int{503, 503, 200, 200}
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s %s: statuses %v, want %v", p.name, model, got, want)
		}
		s.mu.Lock()
		s.attempts = map[string]int{} // the next protocol starts afresh
		s.mu.Unlock()
	}
	if n := s.Count("http429:2"); n != 16 {
		t.Errorf("Count(http429:2) = %d, want 16", n)
	}
}

func TestUnknown(t *testing.T) {
	s := Start(t)
	for _, p := range protocols {
		resp, err := do(t, context.Background(), http.MethodPost, s.URL()+p.path, p.body("no-such-model", true), nil)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		msg, err := p.errMessage(b)
		if resp.StatusCode != 404 || err != nil || !strings.Contains(msg, "no-such-model") {
			t.Errorf("%s unknown model: %d %s", p.name, resp.StatusCode, b)
		}
		resp, _ = do(t, context.Background(), http.MethodPost, s.URL()+p.path, `{"stream":true}`, nil)
		if b, _ := io.ReadAll(resp.Body); resp.StatusCode != 400 {
			t.Errorf("%s without a model: %d %s", p.name, resp.StatusCode, b)
		}
		resp, _ = do(t, context.Background(), http.MethodGet, s.URL()+p.path, "", nil)
		if resp.StatusCode != 405 {
			t.Errorf("%s GET: %d", p.name, resp.StatusCode)
		}
	}
	resp, _ := do(t, context.Background(), http.MethodPost, s.URL()+"/v1/nothing", `{"model":"ok"}`, nil)
	if b, _ := io.ReadAll(resp.Body); resp.StatusCode != 404 || string(b) != "404 page not found\n" {
		t.Errorf("unknown path: %d %q", resp.StatusCode, b)
	}
	resp, _ = do(t, context.Background(), http.MethodPost, s.URL()+"/api/chat", `{"model":"ok"}`, http.Header{"X-Fault-Behaviour": {"bogus"}})
	if b, _ := io.ReadAll(resp.Body); resp.StatusCode != 400 || !strings.Contains(string(b), "bogus") {
		t.Errorf("bad behaviour header: %d %q", resp.StatusCode, b)
	}
}

func TestCut(t *testing.T) {
	s := Start(t)
	for _, p := range protocols {
		_, r := p.stream(t, s, "cut", nil)
		want := strings.Join(responsesAnswer(p)[:2], "")
		if r.err != nil || r.done || r.bad != 0 || r.text != want {
			t.Errorf("%s cut: err %v, done %v, %d bad, text %q (want %q, a clean end without a terminator)", p.name, r.err, r.done, r.bad, r.text, want)
		}
		_, r = p.stream(t, s, "cut_frame", nil)
		if !errors.Is(r.err, io.ErrUnexpectedEOF) || r.done || r.bad != 1 || len(r.deltas) != 1 {
			t.Errorf("%s cut_frame: err %v, done %v, %d bad, %d deltas (want a half frame at the end)", p.name, r.err, r.done, r.bad, len(r.deltas))
		}
	}
}

// responsesAnswer is the ok answer's deltas for a protocol.
func responsesAnswer(p protocol) []string {
	if p.name == "pull" {
		return pullAnswer
	}
	return answer
}

func TestMalformed(t *testing.T) {
	s := Start(t)
	for _, p := range protocols {
		_, r := p.stream(t, s, "malformed", nil)
		if r.err != nil || r.bad != 1 || !r.done || r.text != p.okText {
			t.Errorf("%s: err %v, %d bad frames (want 1), done %v, text %q", p.name, r.err, r.bad, r.done, r.text)
		}
	}
}

func TestStreamError(t *testing.T) {
	s := Start(t)
	for _, p := range protocols {
		_, r := p.stream(t, s, "stream_error", nil)
		if r.err != nil || r.bad != 0 || r.done || r.errMsg == "" || r.text != responsesAnswer(p)[0] {
			t.Errorf("%s: err %v, %d bad, done %v, error %q, text %q", p.name, r.err, r.bad, r.done, r.errMsg, r.text)
		}
	}
}

// die resets the connection: the client sees ECONNRESET (or a body cut
// short), never a clean end; die_headers resets before any byte.
func TestDie(t *testing.T) {
	s := Start(t)
	for _, p := range protocols {
		resp, err := do(t, context.Background(), http.MethodPost, s.URL()+p.path, p.body("die", true), nil)
		if err != nil {
			t.Fatalf("%s die: headers should arrive: %v", p.name, err)
		}
		r := p.readAll(resp.Body)
		if !errors.Is(r.err, syscall.ECONNRESET) && !errors.Is(r.err, io.ErrUnexpectedEOF) {
			t.Errorf("%s die: read error %v, want a reset", p.name, r.err)
		}
		if r.done || r.bad != 0 {
			t.Errorf("%s die: %+v", p.name, r)
		}
		_, err = do(t, context.Background(), http.MethodPost, s.URL()+p.path, p.body("die_headers", true), nil)
		if !errors.Is(err, syscall.ECONNRESET) && !errors.Is(err, io.EOF) {
			t.Errorf("%s die_headers: %v, want a reset before the response", p.name, err)
		}
	}
}

func TestFloodFinite(t *testing.T) {
	s := Start(t)
	const n = 5000
	flood := strings.Repeat(floodUnit, n)
	for _, p := range protocols {
		_, r := p.stream(t, s, "flood:"+strconv.Itoa(n), nil)
		if r.err != nil || r.bad != 0 || !r.done || r.text != flood || len(r.deltas) != n {
			t.Errorf("%s flood:%d: err %v, %d bad, done %v, %d bytes in %d deltas", p.name, n, r.err, r.bad, r.done, len(r.text), len(r.deltas))
		}
		if p.name != "pull" && r.outTokens != n+1 {
			t.Errorf("%s flood: usage %d", p.name, r.outTokens)
		}
		if p.name == "pull" {
			continue // progress lines have no reasoning or tool calls
		}
		_, r = p.stream(t, s, "flood_reasoning:"+strconv.Itoa(n), nil)
		if r.err != nil || r.bad != 0 || !r.done || r.reasoning != flood || r.text != "" {
			t.Errorf("%s flood_reasoning: err %v, %d bad, done %v, %d reasoning bytes", p.name, r.err, r.bad, r.done, len(r.reasoning))
		}
		_, r = p.stream(t, s, "flood_tool:"+strconv.Itoa(n), nil)
		want := `{"data":"` + flood + `"}`
		if p.name == "ollama" {
			want = flood // n whole calls
		}
		if r.err != nil || r.bad != 0 || !r.done || r.tool != want {
			t.Errorf("%s flood_tool: err %v, %d bad, done %v, %d argument bytes", p.name, r.err, r.bad, r.done, len(r.tool))
		}
		if p.name != "ollama" && !json.Valid([]byte(r.tool)) {
			t.Errorf("%s flood_tool: arguments are not JSON", p.name)
		}
		if want := map[string]string{"chat": "tool_calls", "responses": "completed", "messages": "tool_use"}[p.name]; want != "" && r.finish != want {
			t.Errorf("%s flood_tool: finish %q, want %q", p.name, r.finish, want)
		}
	}
}

// An endless flood keeps streaming valid deltas until the client leaves;
// the server then stops.
func TestFloodEndless(t *testing.T) {
	s := Start(t)
	for _, p := range protocols {
		for _, model := range []string{"flood", "flood_reasoning", "flood_tool"} {
			if p.name == "pull" && model != "flood" {
				continue
			}
			ctx, cancel := context.WithCancel(context.Background())
			resp, err := do(t, ctx, http.MethodPost, s.URL()+p.path, p.body(model, true), nil)
			if err != nil {
				t.Fatal(err)
			}
			fr := newFrameReader(resp.Body, p.sse)
			var r result
			for fr.bytes < 4<<20 {
				f, err := fr.next()
				if err != nil {
					t.Fatalf("%s %s: stream ended after %d bytes: %v", p.name, model, fr.bytes, err)
				}
				r.frames++
				if p.decode(f, &r) != nil {
					r.bad++
				}
			}
			r.join()
			got := len(r.text) + len(r.reasoning) + len(r.tool)
			if r.bad != 0 || r.done || got < 64<<10 || r.frames < 10000 {
				t.Errorf("%s %s: %d bad frames, done %v, %d content bytes in %d frames", p.name, model, r.bad, r.done, got, r.frames)
			}
			cancel()
			waitIdle(t, s)
		}
	}
}

func waitIdle(t *testing.T, s *Server) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := s.WaitIdle(ctx); err != nil {
		t.Fatalf("server still answering %d requests after the clients left", s.InFlight())
	}
}

func TestEndlessLine(t *testing.T) {
	s := Start(t)
	for _, p := range protocols {
		ctx, cancel := context.WithCancel(context.Background())
		resp, err := do(t, ctx, http.MethodPost, s.URL()+p.path, p.body("endless_line", true), nil)
		if err != nil {
			t.Fatal(err)
		}
		fr := newFrameReader(resp.Body, p.sse)
		fr.max = 8 << 20
		var r result
		for {
			f, err := fr.next()
			if errors.Is(err, errLineTooLong) {
				break
			}
			if err != nil {
				t.Fatalf("%s: %v after %d bytes", p.name, err, fr.bytes)
			}
			_ = p.decode(f, &r)
		}
		if fr.bytes < 8<<20 || r.text != "" {
			t.Errorf("%s: a line of %d bytes, text before it %q", p.name, fr.bytes, r.text)
		}
		cancel()
		waitIdle(t, s)

		const n = 1 << 20
		_, r = p.stream(t, s, "long_line:"+strconv.Itoa(n), nil)
		if r.err != nil || r.bad != 0 || !r.done || len(r.deltas) != 1 || r.text != strings.Repeat("x", n) {
			t.Errorf("%s long_line: err %v, %d bad, done %v, %d deltas, %d bytes", p.name, r.err, r.bad, r.done, len(r.deltas), len(r.text))
		}
	}
}

func TestCommentFlood(t *testing.T) {
	s := Start(t)
	for _, p := range protocols {
		_, r := p.stream(t, s, "comment_flood:5", nil)
		if r.err != nil || r.bad != 0 || !r.done || r.text != p.okText || r.keepAlives != 5 {
			t.Errorf("%s comment_flood:5: err %v, %d bad, done %v, text %q, %d keep-alives", p.name, r.err, r.bad, r.done, r.text, r.keepAlives)
		}

		ctx, cancel := context.WithCancel(context.Background())
		resp, err := do(t, ctx, http.MethodPost, s.URL()+p.path, p.body("comment_flood", true), nil)
		if err != nil {
			t.Fatal(err)
		}
		fr := newFrameReader(resp.Body, p.sse)
		for fr.keepAlives < 200000 {
			l, err := fr.line()
			if err != nil {
				t.Fatalf("%s: %v", p.name, err)
			}
			want := ""
			if p.sse {
				want = ": keep-alive"
			}
			if l != want {
				t.Fatalf("%s: line %q, want only keep-alives", p.name, l)
			}
			fr.keepAlives++
		}
		cancel()
		waitIdle(t, s)
	}
}

func TestStallHeaders(t *testing.T) {
	s := Start(t)
	for _, p := range protocols {
		ctx, cancel := context.WithCancel(context.Background())
		got := make(chan error, 1)
		go func() {
			_, err := do(t, ctx, http.MethodPost, s.URL()+p.path, p.body("stall_headers", true), nil)
			got <- err
		}()
		st := <-s.Stalled()
		if st.Endpoint != p.endpoint || st.Behaviour != StallHeaders {
			t.Errorf("stall notice %+v", st)
		}
		select {
		case err := <-got:
			t.Fatalf("%s: the request returned (%v) before the client gave up", p.name, err)
		default:
		}
		cancel()
		if err := <-got; !errors.Is(err, context.Canceled) {
			t.Errorf("%s: %v, want the client's cancellation", p.name, err)
		}
		waitIdle(t, s)
	}
}

func TestStallBody(t *testing.T) {
	s := Start(t)
	for _, p := range protocols {
		ctx, cancel := context.WithCancel(context.Background())
		resp, err := do(t, ctx, http.MethodPost, s.URL()+p.path, p.body("stall_body", true), nil)
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("%s: headers should come: %v", p.name, err)
		}
		<-s.Stalled()
		var r result
		fr := newFrameReader(resp.Body, p.sse)
		for len(r.deltas) == 0 {
			f, err := fr.next()
			if err != nil {
				t.Fatalf("%s: %v before the first delta", p.name, err)
			}
			_ = p.decode(f, &r)
		}
		got := make(chan error, 1)
		go func() {
			_, err := fr.next()
			got <- err
		}()
		cancel()
		if err := <-got; !errors.Is(err, context.Canceled) {
			t.Errorf("%s: read after the stall gave %v, want only the client's cancellation", p.name, err)
		}
		r.join()
		if r.text != responsesAnswer(p)[0] || r.done {
			t.Errorf("%s: before the stall %+v", p.name, r)
		}
		waitIdle(t, s)
	}
}
