package rundir

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestTrimPartialLine(t *testing.T) {
	long := strings.Repeat("x", 100<<10) // longer than one read window
	cases := []struct{ in, want string }{
		{"", ""},
		{"a\n", "a\n"},
		{"a\nb\n", "a\nb\n"},
		{"a\n{\"half", "a\n"},
		{"{\"half", ""},
		{"a\n" + long, "a\n"},
		{long + "\nb", long + "\n"},
	}
	for _, tc := range cases {
		p := filepath.Join(t.TempDir(), "results.jsonl")
		os.WriteFile(p, []byte(tc.in), 0o644)
		n, err := TrimPartialLine(p)
		got, _ := os.ReadFile(p)
		if err != nil || string(got) != tc.want || n != int64(len(tc.in)-len(tc.want)) {
			t.Errorf("%.20q: got %.20q, dropped %d, err %v", tc.in, got, n, err)
		}
	}
	if n, err := TrimPartialLine(filepath.Join(t.TempDir(), "none")); n != 0 || err != nil {
		t.Errorf("missing file: %d %v", n, err)
	}
}
