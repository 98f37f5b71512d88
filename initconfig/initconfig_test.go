package initconfig

import "testing"

func TestOllamaBase(t *testing.T) {
	cases := []struct{ env, flag, want string }{
		{"", "", "http://127.0.0.1:11434"},
		{"0.0.0.0:12345", "", "http://127.0.0.1:12345"},
		{"http://gpu-box:11434", "", "http://gpu-box:11434"},
		{"x", "http://other:1/", "http://other:1"},
	}
	for _, c := range cases {
		t.Setenv("OLLAMA_HOST", c.env)
		if got := Base(c.flag); got != c.want {
			t.Errorf("OLLAMA_HOST=%q --ollama %q: %q, want %q", c.env, c.flag, got, c.want)
		}
	}
}
