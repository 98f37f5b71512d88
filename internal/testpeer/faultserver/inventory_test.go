package faultserver

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/ollama/ollama/api"
)

// The Ollama endpoints decode with Ollama's own API types.
func TestInventoryOK(t *testing.T) {
	s := Start(t)
	s.AddModels("flood:50000")
	get := func(path string, v any) {
		t.Helper()
		resp, err := do(t, context.Background(), http.MethodGet, s.URL()+path, "", nil)
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/json; charset=utf-8" {
			t.Fatalf("%s: %d %s", path, resp.StatusCode, resp.Header.Get("Content-Type"))
		}
		b, _ := io.ReadAll(resp.Body)
		if err := strictJSON(b, v); err != nil {
			t.Fatalf("%s: %v: %s", path, err, b)
		}
	}
	var tags api.ListResponse
	get("/api/tags", &tags)
	var names []string
	for _, m := range tags.Models {
		names = append(names, m.Name)
		if m.Model != m.Name || m.Digest == "" || m.Details.Family != "llama" {
			t.Errorf("tag entry %+v", m)
		}
	}
	for _, want := range []string{"ok:latest", "http401:latest", "http429:2", "stall_headers:latest", "echo_key:latest", "flood:50000", "comment_flood:301"} {
		if !slices.Contains(names, want) {
			t.Errorf("/api/tags lacks %s: %v", want, names)
		}
	}
	var v struct{ Version string }
	get("/api/version", &v)
	if v.Version != "0.9.6" {
		t.Errorf("version %q", v.Version)
	}
	var ps api.ProcessResponse
	get("/api/ps", &ps)
	if len(ps.Models) != 1 || ps.Models[0].Name != "ok:latest" {
		t.Errorf("ps %+v", ps)
	}
	resp, err := do(t, context.Background(), http.MethodPost, s.URL()+"/api/show", `{"model":"ok"}`, nil)
	if err != nil {
		t.Fatal(err)
	}
	var show api.ShowResponse
	if b, _ := io.ReadAll(resp.Body); strictJSON(b, &show) != nil || show.Details.Family != "llama" || !strings.Contains(show.Modelfile, "FROM") {
		t.Errorf("show: %s", b)
	}
	resp, err = do(t, context.Background(), http.MethodPost, s.URL()+"/api/pull", `{"model":"ok"}`, nil)
	if err != nil {
		t.Fatal(err)
	}
	var statuses []string
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		var p api.ProgressResponse
		if err := json.Unmarshal(sc.Bytes(), &p); err != nil {
			t.Fatalf("pull line %q: %v", sc.Text(), err)
		}
		statuses = append(statuses, p.Status)
	}
	if len(statuses) != 5 || statuses[0] != "pulling manifest" || statuses[4] != "success" {
		t.Errorf("pull statuses %q", statuses)
	}
	resp, _ = do(t, context.Background(), http.MethodGet, s.URL()+"/", "", nil)
	if b, _ := io.ReadAll(resp.Body); string(b) != "Ollama is running" {
		t.Errorf("root: %q", b)
	}
}

// Calls that name no model misbehave when asked by Override, by header or
// by a /fault/<behaviour> base URL; a stall lasts until the client leaves.
func TestInventoryStall(t *testing.T) {
	s := Start(t)
	s.Override("/api/tags", StallHeaders)
	cases := []struct {
		name, url string
		header    http.Header
		endpoint  string
	}{
		{"override", s.URL() + "/api/tags", nil, EndpointTags},
		{"header", s.URL() + "/api/version", http.Header{"X-Fault-Behaviour": {StallHeaders}}, EndpointVersion},
		{"url", s.BehaviourURL(StallHeaders) + "/api/ps", nil, EndpointPS},
	}
	for _, c := range cases {
		ctx, cancel := context.WithCancel(context.Background())
		got := make(chan error, 1)
		go func() {
			_, err := do(t, ctx, http.MethodGet, c.url, "", c.header)
			got <- err
		}()
		if st := <-s.Stalled(); st.Endpoint != c.endpoint {
			t.Errorf("%s: stall at %+v", c.name, st)
		}
		select {
		case err := <-got:
			t.Fatalf("%s: answered (%v) while stalling", c.name, err)
		default:
		}
		cancel()
		if err := <-got; !errors.Is(err, context.Canceled) {
			t.Errorf("%s: %v", c.name, err)
		}
		waitIdle(t, s)
	}
	s.Override("/api/tags", "")
	if resp, err := do(t, context.Background(), http.MethodGet, s.URL()+"/api/tags", "", nil); err != nil || resp.StatusCode != 200 {
		t.Errorf("after removing the override: %v", err)
	}
	// A /fault/ URL wins over the model, for every endpoint under it.
	resp, err := do(t, context.Background(), http.MethodPost, s.BehaviourURL("http401")+"/v1/chat/completions", protocols[0].body("ok", true), nil)
	if err != nil || resp.StatusCode != 401 {
		t.Errorf("behaviour URL over model: %v %v", resp.StatusCode, err)
	}
	if r := s.Requests(); r[len(r)-1].Path != "/fault/http401/v1/chat/completions" || r[len(r)-1].Behaviour != "http401" || r[len(r)-1].Model != "ok" {
		t.Errorf("recorded %+v", r[len(r)-1])
	}
}

// The fault behaviours apply to one JSON body too.
func TestInventoryFaults(t *testing.T) {
	s := Start(t)
	key := newKey()
	get := func(b string) (*http.Response, error) {
		h := bearer(key)
		h.Set("X-Fault-Behaviour", b)
		return do(t, context.Background(), http.MethodGet, s.URL()+"/api/version", "", h)
	}
	decode := func(b string) (string, error) {
		resp, err := get(b)
		if err != nil {
			return "", err
		}
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			return "", err
		}
		var v struct{ Version string }
		err = strictJSON(body, &v)
		return v.Version, err
	}
	if _, err := decode(Cut); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("cut: %v", err)
	}
	if _, err := decode(Malformed); err == nil {
		t.Errorf("malformed decoded")
	}
	if _, err := decode(Die); !errors.Is(err, syscall.ECONNRESET) && !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("die: %v", err)
	}
	if v, err := decode("long_line:100000"); err != nil || len(v) != len("0.9.6")+100000 {
		t.Errorf("long_line: %d bytes, %v", len(v), err)
	}
	if v, err := decode("flood:3"); err != nil || v != "0.9.6flood flood flood " {
		t.Errorf("flood:3: %q, %v", v, err)
	}
	if v, err := decode("comment_flood:3"); err != nil || v != "0.9.6" {
		t.Errorf("comment_flood:3: %q, %v", v, err)
	}
	resp, _ := get("http500")
	if b, _ := io.ReadAll(resp.Body); resp.StatusCode != 500 || !strings.Contains(string(b), `"error":`) {
		t.Errorf("http500: %d %s", resp.StatusCode, b)
	}
	resp, _ = get(EchoKey)
	if b, _ := io.ReadAll(resp.Body); resp.StatusCode != 401 || !strings.Contains(string(b), key) {
		t.Errorf("echo_key: %d %s", resp.StatusCode, b)
	}

	// An endless body: 8 MiB and no end in sight, until the client leaves.
	for _, b := range []string{Flood, EndlessLine, CommentFlood} {
		ctx, cancel := context.WithCancel(context.Background())
		h := http.Header{"X-Fault-Behaviour": {b}}
		resp, err := do(t, ctx, http.MethodGet, s.URL()+"/api/tags", "", h)
		if err != nil {
			t.Fatal(err)
		}
		if n, err := io.CopyN(io.Discard, resp.Body, 8<<20); err != nil {
			t.Errorf("%s: ended after %d bytes: %v", b, n, err)
		}
		cancel()
		waitIdle(t, s)
	}

	// stall_body: half the body, then nothing until the client leaves.
	ctx, cancel := context.WithCancel(context.Background())
	resp, err := do(t, ctx, http.MethodGet, s.URL()+"/api/version", "", http.Header{"X-Fault-Behaviour": {StallBody}})
	if err != nil {
		t.Fatal(err)
	}
	<-s.Stalled()
	half := make([]byte, 100)
	n, err := resp.Body.Read(half)
	if err != nil || !strings.HasPrefix(`{"version":"0.9.6"}`, string(half[:n])) || n == 0 {
		t.Errorf("stall_body sent %q (%v)", half[:n], err)
	}
	cancel()
	if _, err := io.ReadAll(resp.Body); !errors.Is(err, context.Canceled) {
		t.Errorf("stall_body read: %v", err)
	}
	waitIdle(t, s)
}
