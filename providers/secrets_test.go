package providers

import "testing"

func TestStripUserinfo(t *testing.T) {
	u := "http://bob:s3cr3t-pass@127.0.0.1:11434/v1"
	if got := StripUserinfo(u); got != "http://127.0.0.1:11434/v1" {
		t.Errorf("StripUserinfo = %q", got)
	}
	for _, plain := range []string{"http://127.0.0.1:1/v1", "not a url", ""} {
		if got := StripUserinfo(plain); got != plain {
			t.Errorf("StripUserinfo(%q) = %q", plain, got)
		}
	}
}
