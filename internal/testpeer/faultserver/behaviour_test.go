package faultserver

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestParseBehaviour(t *testing.T) {
	cases := []struct {
		model  string
		name   string
		status int
		n      int
		hasN   bool
		err    string
	}{
		{model: "ok", name: OK},
		{model: "ok:latest", name: OK},
		{model: "http401", name: "http", status: 401},
		{model: "http429:3", name: "http", status: 429, n: 3, hasN: true},
		{model: "http599:latest", name: "http", status: 599},
		{model: "flood", name: Flood},
		{model: "flood:0", name: Flood, hasN: true},
		{model: "flood:1000", name: Flood, n: 1000, hasN: true},
		{model: "comment_flood:301", name: CommentFlood, n: 301, hasN: true},
		{model: "long_line:65536", name: LongLine, n: 65536, hasN: true},
		{model: "echo_key_long:290", name: EchoKeyLong, n: 290, hasN: true},
		{model: "echo_key_long_frame:16777216", name: EchoKeyLongFrame, n: 16 << 20, hasN: true},
		{model: "echo_key_long_event:16777217", err: "at most"},
		{model: "http200", err: "400 to 599"},
		{model: "http600", err: "400 to 599"},
		{model: "http4O4", err: "400 to 599"},
		{model: "http+40", err: "400 to 599"},
		{model: "long_line", err: "needs a count"},
		{model: "echo_key_long", err: "needs a count"},
		{model: "ok:3", err: "takes no count"},
		{model: "stall_headers:1", err: "takes no count"},
		{model: "flood:-1", err: "not a count"},
		{model: "flood:+1", err: "not a count"},
		{model: "flood:01", err: "not a count"},
		{model: "flood:x", err: "not a count"},
		{model: "flood:99999999999999999999", err: "not a count"},
		{model: "flood:1:2", err: "not a count"},
		{model: "", err: "no such behaviour"},
		{model: "gpt-4o", err: "no such behaviour"},
		{model: "OK", err: "no such behaviour"},
	}
	for _, c := range cases {
		b, err := parseBehaviour(c.model)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) || !strings.Contains(err.Error(), c.model) {
				t.Errorf("%q: err %v, want one naming the model and saying %q", c.model, err, c.err)
			}
			continue
		}
		if err != nil || b.name != c.name || b.status != c.status || b.n != c.n || b.hasN != c.hasN {
			t.Errorf("%q: %+v, %v", c.model, b, err)
		}
	}
}

// Every name /api/tags lists is a behaviour.
func TestCatalogueParses(t *testing.T) {
	for _, n := range catalogue() {
		if _, err := parseBehaviour(n + latestTag); err != nil && !strings.Contains(n, ":") {
			t.Error(err)
		}
		if _, err := parseBehaviour(n); err != nil {
			t.Error(err)
		}
	}
}

func FuzzParseBehaviour(f *testing.F) {
	for _, s := range []string{"ok", "ok:latest", "http429:2", "http5", "flood:", ":", "long_line:65536", "echo_key_long:0", "flood:1099511627777", "comment_flood:300:latest"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, model string) {
		b, err := parseBehaviour(model)
		if err != nil {
			if !strings.Contains(err.Error(), "model") {
				t.Errorf("error %q does not say which model", err)
			}
			return
		}
		if b.full != strings.TrimSuffix(model, latestTag) || b.n < 0 || b.n > maxBehaviourNumber || (strings.HasPrefix(b.name, EchoKeyLong) && b.n > maxEchoOffset) {
			t.Errorf("%q parsed as %+v", model, b)
		}
		if p, ok := behaviours[b.name]; !ok && !(b.name == httpPrefix && b.status >= 400 && b.status <= 599) {
			t.Errorf("%q parsed to unknown %+v", model, b)
		} else if ok && ((p == noParam && b.hasN) || (p == required && !b.hasN)) {
			t.Errorf("%q: parameter rules broken: %+v", model, b)
		}
	})
}

// appendQuoted escapes exactly as encoding/json does, and a repeated text
// streams as the JSON string of the whole. (Pieces of invalid UTF-8 are
// escaped one by one, so their concatenation may differ; the server only
// repeats valid text.)
func FuzzQuote(f *testing.F) {
	for _, s := range []string{"", "flood ", `a"b\c`, "<tag>&", "\x00\x1f\x7f", "é\u2028", "\xff"} {
		f.Add(s, 3)
	}
	f.Fuzz(func(t *testing.T, s string, n int) {
		want, _ := json.Marshal(s)
		if got := appendQuoted(nil, s); !bytes.Equal(got, want) {
			t.Fatalf("appendQuoted(%q) = %s, want %s", s, got, want)
		}
		if !utf8.ValidString(s) {
			return
		}
		n = n % 50
		if n < 0 {
			n = -n
		}
		var out bytes.Buffer
		fr := frames{w: &out}
		var tx text
		tx.add(s, n)
		tx.add(s, 1)
		fr.quoteText(tx)
		fr.spill()
		want, _ = json.Marshal(strings.Repeat(s, n+1))
		if !bytes.Equal(out.Bytes(), want) {
			t.Fatalf("quoteText(%q x %d) = %s, want %s", s, n+1, out.Bytes(), want)
		}
	})
}

// sink is a ResponseWriter that keeps at most 1 MiB and cancels the
// request once that much has been written, so an endless behaviour ends.
type sink struct {
	h       http.Header
	n       int
	status  int
	cancel  context.CancelFunc
	flushes int
}

func (w *sink) Header() http.Header { return w.h }
func (w *sink) WriteHeader(s int) {
	if w.status == 0 {
		w.status = s
	}
}
func (w *sink) Write(b []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	w.n += len(b)
	if w.n > 1<<20 {
		w.cancel()
	}
	return len(b), nil
}
func (w *sink) Flush() { w.flushes++ }

// Any request, whatever its path, body or behaviour, is answered without a
// panic, and the handler returns once the client leaves.
func FuzzServe(f *testing.F) {
	for _, p := range protocols {
		for _, m := range []string{"ok", "flood", "stall_body", "echo_key_long:5", "die", "http429:1", "long_line:2000000"} {
			f.Add(p.path, p.body(m, true), "")
			f.Add(p.path, p.body(m, false), "")
		}
	}
	f.Add("/api/tags", "", "endless_line")
	f.Add("/fault/comment_flood/api/version", "", "")
	f.Add("/api/chat", `{"model":`, "")
	f.Add("/api/chat", `{"model":"ok","stream":"yes"}`, "")
	s := newServer()
	f.Fuzz(func(t *testing.T, path, body, header string) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		req := httptest.NewRequestWithContext(ctx, http.MethodPost, "http://fault.test/", strings.NewReader(body))
		req.URL.Path = path
		if header != "" {
			req.Header["X-Fault-Behaviour"] = []string{header}
		}
		req.Header.Set("Authorization", "Bearer sk-fuzz")
		if strings.HasPrefix(path, "/api/tags") || strings.HasPrefix(path, "/api/version") || strings.HasPrefix(path, "/api/ps") {
			req.Method = http.MethodGet
		}
		w := &sink{h: http.Header{}, cancel: cancel}
		done := make(chan struct{})
		go func() {
			defer close(done)
			s.ServeHTTP(w, req)
		}()
		for {
			select {
			case <-done:
				return
			case <-s.Stalled():
				cancel() // the client gives up on a stall
			}
		}
	})
}
