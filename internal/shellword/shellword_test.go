package shellword

import (
	"os/exec"
	"testing"
)

// A quoted word reaches a real shell as it was.
func TestQuote(t *testing.T) {
	for _, s := range []string{"plain", "", "my bench.yaml", "it's", `a"b`, "$HOME", "x;rm -rf y", "tab\there", "ünïcode"} {
		out, err := exec.Command("sh", "-c", "printf %s "+Quote(s)).Output()
		if err != nil || string(out) != s {
			t.Errorf("Quote(%q) = %s: the shell read %q (%v)", s, Quote(s), out, err)
		}
	}
	if Quote("a/b:c") != "a/b:c" {
		t.Errorf("a safe word was quoted: %s", Quote("a/b:c"))
	}
}
