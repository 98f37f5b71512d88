package recorded

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"testing"
)

// Every recording parses, and an httprr file's lengths account for all
// of it (so the copy is whole).
func TestRecordingsParse(t *testing.T) {
	entries, err := files.ReadDir("testdata")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, d := range entries {
		if !d.IsDir() {
			continue
		}
		sub, _ := files.ReadDir("testdata/" + d.Name())
		for _, f := range sub {
			name := d.Name() + "/" + f.Name()
			switch {
			case strings.HasSuffix(name, ".httprr"), strings.HasSuffix(name, ".yaml"):
				for _, e := range Load(t, name) {
					if e.Status == 0 || len(e.Body) == 0 {
						t.Errorf("%s: status %d, %d body bytes", name, e.Status, len(e.Body))
					}
				}
				n++
			case strings.HasSuffix(name, ".chunks.txt"):
				framing := Messages
				if strings.Contains(name, "google") {
					framing = Gemini
				}
				if e := Chunks(t, name, framing); len(SplitEvents(e.Body)) < 2 {
					t.Errorf("%s: fewer than two events", name)
				}
				n++
			}
		}
	}
	if n < 10 {
		t.Errorf("only %d recordings", n)
	}
}

// A recorded httprr body is the bytes its Content-Length announced.
func TestHTTPRRBodyIsWhole(t *testing.T) {
	e := One(t, "langchaingo/TestAnthropic_GenerateContentWithToolAndStreaming.httprr", "/v1/messages")
	if e.Status != 200 || !e.Stream() || len(e.Body) != 3054 {
		t.Fatalf("status %d stream %v, %d bytes", e.Status, e.Stream(), len(e.Body))
	}
}

// The server sends a stream one event at a time, every byte as recorded.
func TestServeStreamsAsRecorded(t *testing.T) {
	e := One(t, "pydantic-ai/test_google_model_stream.yaml", "streamGenerateContent")
	s := Serve(t, func(Request) Exchange { return e })
	res, err := http.Post(s.URL+"/v1beta/models/x:streamGenerateContent?alt=sse", "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	got, _ := io.ReadAll(res.Body)
	if !bytes.Equal(got, e.Body) || res.Header.Get("Content-Type") != "text/event-stream" {
		t.Errorf("served %q (%s), recorded %q", got, res.Header.Get("Content-Type"), e.Body)
	}
	if r := s.Requests(); len(r) != 1 || r[0].Query != "alt=sse" {
		t.Errorf("requests %+v", r)
	}
}
