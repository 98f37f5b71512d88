package initconfig

import "testing"

func TestOllamaBase(t *testing.T) {
	cases := []struct{ env, flag, want string }{
		{"", "", "http://127.0.0.1:11434"},
		{"0.0.0.0:12345", "", "http://127.0.0.1:12345"},
		{"http://gpu-box:11434", "", "http://gpu-box:11434"},
		{"x", "http://other:1/", "http://other:1"},
		// The flag is read as OLLAMA_HOST is.
		{"", "127.0.0.1:4242", "http://127.0.0.1:4242"},
		{"", "gpu-box", "http://gpu-box:11434"},
		{"", ":4242", "http://127.0.0.1:4242"},
		{"", "0.0.0.0:4242", "http://127.0.0.1:4242"},
		{"", "[::1]:4242", "http://[::1]:4242"},
		{"", "https://gpu-box", "https://gpu-box:443"},
		{"", "http://gpu-box/ollama", "http://gpu-box:80/ollama"},
	}
	for _, c := range cases {
		t.Setenv("OLLAMA_HOST", c.env)
		if got, err := Base(c.flag); got != c.want || err != nil {
			t.Errorf("OLLAMA_HOST=%q --ollama %q: %q (%v), want %q", c.env, c.flag, got, err, c.want)
		}
	}
	for _, bad := range []string{"ftp://x", "x:99999", "x:port", "bob:pw@x:1", "a b:1"} {
		if got, err := Base(bad); err == nil {
			t.Errorf("--ollama %q: %q, want an error", bad, got)
		}
	}
}
