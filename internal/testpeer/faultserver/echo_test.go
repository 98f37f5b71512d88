package faultserver

import (
	"context"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
)

// Each echo_key behaviour puts the request's credential where it says:
// error bodies, error events, answer deltas, and at exact offsets of long
// messages.
func TestEchoKey(t *testing.T) {
	s := Start(t)
	for _, p := range protocols {
		key := newKey()
		headers := []http.Header{bearer(key)}
		if p.name == "messages" {
			headers = append(headers, http.Header{"X-Api-Key": {key}}) // how Anthropic clients send it
		}
		for _, h := range headers {
			// In the 401 body, streamed or not.
			for _, stream := range []bool{true, false} {
				resp, err := do(t, context.Background(), http.MethodPost, s.URL()+p.path, p.body("echo_key", stream), h)
				if err != nil {
					t.Fatal(err)
				}
				b, _ := io.ReadAll(resp.Body)
				msg, err := p.errMessage(b)
				if resp.StatusCode != 401 || err != nil || !strings.Contains(msg, key) {
					t.Errorf("%s echo_key: %d %s", p.name, resp.StatusCode, b)
				}
			}

			// In a mid-stream error event, after a delta.
			_, r := p.stream(t, s, "echo_key_event", h)
			if r.bad != 0 || r.done || len(r.deltas) != 1 || !strings.Contains(r.errMsg, key) {
				t.Errorf("%s echo_key_event: %d bad, done %v, %d deltas, error %q", p.name, r.bad, r.done, len(r.deltas), r.errMsg)
			}

			// Whole in one delta of an answer that ends normally.
			_, r = p.stream(t, s, "echo_key_frame", h)
			if !r.done || r.bad != 0 || !strings.Contains(r.text, key) || !anyContains(r.deltas, key) {
				t.Errorf("%s echo_key_frame: done %v, %d bad, deltas %q", p.name, r.done, r.bad, r.deltas)
			}

			// Split across two deltas: in the answer, in no single delta.
			_, r = p.stream(t, s, "echo_key_split", h)
			if !r.done || r.bad != 0 || !strings.Contains(r.text, key) || anyContains(r.deltas, key) {
				t.Errorf("%s echo_key_split: done %v, %d bad, deltas %q", p.name, r.done, r.bad, r.deltas)
			}
			if !anyContains(r.deltas, key[:len(key)/2]) || !anyContains(r.deltas, key[len(key)/2:]) {
				t.Errorf("%s echo_key_split: halves missing from %q", p.name, r.deltas)
			}
		}

		// At exact offsets of long messages: either side of the cuts
		// clients make (300 bytes, 4 KiB, 64 KiB).
		for _, off := range []int{0, 1, 290, 299, 300, 4090, 4096, 65530, 70000} {
			n := strconv.Itoa(off)
			resp, err := do(t, context.Background(), http.MethodPost, s.URL()+p.path, p.body("echo_key_long:"+n, true), bearer(key))
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			msg, err := p.errMessage(b)
			if resp.StatusCode != 401 || err != nil || strings.Index(msg, key) != off || len(msg) < off+len(key)+1024 {
				t.Errorf("%s echo_key_long:%d: %d, key at %d of %d bytes (%v)", p.name, off, resp.StatusCode, strings.Index(msg, key), len(msg), err)
			}
			_, r := p.stream(t, s, "echo_key_long_event:"+n, bearer(key))
			if r.done || strings.Index(r.errMsg, key) != off {
				t.Errorf("%s echo_key_long_event:%d: key at %d", p.name, off, strings.Index(r.errMsg, key))
			}
			_, r = p.stream(t, s, "echo_key_long_frame:"+n, bearer(key))
			if !r.done || len(r.deltas) != 1 || strings.Index(r.text, key) != off {
				t.Errorf("%s echo_key_long_frame:%d: %d deltas, key at %d", p.name, off, len(r.deltas), strings.Index(r.text, key))
			}
		}
	}
}

// Asked for one JSON body, the echo behaviours still put the key in it.
func TestEchoKeyNotStreamed(t *testing.T) {
	s := Start(t)
	key := newKey()
	for _, p := range protocols {
		for _, model := range []string{"echo_key_event", "echo_key_long_event:300"} {
			resp, err := do(t, context.Background(), http.MethodPost, s.URL()+p.path, p.body(model, false), bearer(key))
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			if msg, err := p.errMessage(b); resp.StatusCode != 500 || err != nil || !strings.Contains(msg, key) {
				t.Errorf("%s %s: %d %s", p.name, model, resp.StatusCode, b)
			}
		}
		for _, model := range []string{"echo_key_frame", "echo_key_split", "echo_key_long_frame:300"} {
			resp, err := do(t, context.Background(), http.MethodPost, s.URL()+p.path, p.body(model, false), bearer(key))
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			if got, err := p.whole(b); resp.StatusCode != 200 || err != nil || !strings.Contains(got, key) {
				t.Errorf("%s %s: %d %q (%v)", p.name, model, resp.StatusCode, got, err)
			}
		}
	}
}

// Without a credential the echo says so rather than echoing nothing, so a
// test that forgot to send a key does not pass vacuously.
func TestEchoWithoutKey(t *testing.T) {
	s := Start(t)
	p := protocols[0]
	resp, err := do(t, context.Background(), http.MethodPost, s.URL()+p.path, p.body("echo_key", true), nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	if msg, _ := p.errMessage(b); !strings.Contains(msg, "no credential was sent") {
		t.Errorf("message %q", msg)
	}
}

// The filler around a long echo has no eight-byte run without a space, so
// a test that greps for pieces of a key finds only the key.
func TestFillerHasNoKeyLikePiece(t *testing.T) {
	f := fill(4096)
	for i := 0; i+8 <= len(f); i++ {
		if !strings.Contains(f[i:i+8], " ") {
			t.Fatalf("filler %q at %d has no space", f[i:i+8], i)
		}
	}
}

func anyContains(pieces []string, sub string) bool {
	for _, p := range pieces {
		if strings.Contains(p, sub) {
			return true
		}
	}
	return false
}
