package faultserver

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// The Gemini endpoint takes its behaviour from the model in the path and
// the credential from x-goog-api-key.
func TestGeminiEndpoint(t *testing.T) {
	s := Start(t)
	post := func(model, method string) (int, string) {
		req, _ := http.NewRequest(http.MethodPost, s.URL()+"/v1beta/models/"+model+":"+method+"?alt=sse", strings.NewReader(`{"contents":[{"role":"user","parts":[{"text":"hi"}]}]}`))
		req.Header.Set("X-Goog-Api-Key", "goog-key-0123456789")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}
	code, body := post("ok", "streamGenerateContent")
	if code != 200 || !strings.Contains(body, `"text": "I will run "`) || !strings.Contains(body, `"finishReason": "STOP"`) || !strings.HasSuffix(body, "}\r\n\r\n") {
		t.Errorf("ok: %d %s", code, body)
	}
	if code, body = post("ok", "generateContent"); code != 200 || !strings.HasPrefix(body, `{"candidates"`) {
		t.Errorf("whole: %d %s", code, body)
	}
	if code, body = post("no-such-model", "streamGenerateContent"); code != 404 || !strings.Contains(body, `"status":"NOT_FOUND"`) || !strings.Contains(body, "no-such-model") {
		t.Errorf("404: %d %s", code, body)
	}
	if code, body = post("echo_key", "streamGenerateContent"); code != 401 || !strings.Contains(body, "goog-key-0123456789") {
		t.Errorf("echo: %d %s", code, body)
	}
	r := s.Requests()
	if len(r) != 4 || r[0].Endpoint != EndpointGemini || r[0].Model != "ok" || !r[0].Stream || r[1].Stream || !r[0].SentCredential("goog-key-0123456789") || r[0].Header.Get("X-Goog-Api-Key") != "[redacted]" {
		t.Errorf("requests %+v", r)
	}
}
