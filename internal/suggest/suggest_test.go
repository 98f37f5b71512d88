package suggest

import "testing"

func TestClosest(t *testing.T) {
	keys := []string{"concurrency", "repetitions", "timeout", "out_dir", "id", "max_output_bytes"}
	cases := []struct{ word, want string }{
		{"concurency", "concurrency"},
		{"Concurrency", "concurrency"},
		{"repetitons", "repetitions"},
		{"timout", "timeout"},
		{"ids", "id"},
		{"colour", ""},
		{"x", ""},
		{"outdir", "out_dir"},
		{"timeotu", "timeout"},         // a swap is one edit
		{"cnocurrnecy", "concurrency"}, // two swaps
	}
	for _, c := range cases {
		if got := Closest(c.word, keys); got != c.want {
			t.Errorf("Closest(%q) = %q, want %q", c.word, got, c.want)
		}
	}
	if h := Hint("raport", []string{"run", "report", "version"}); h != ` (did you mean "report"?)` {
		t.Errorf("Hint = %q", h)
	}
	commands := []string{"init", "run", "report", "compare", "merge", "version", "help"}
	for word, want := range map[string]string{"rnu": "run", "nur": "", "ruN": "run", "reprot": "report", "comapre": "compare", "mrege": "merge", "verison": "version", "inti": "init"} {
		if got := Closest(word, commands); got != want {
			t.Errorf("Closest(%q, commands) = %q, want %q", word, got, want)
		}
	}
	if h := Hint("anything", nil); h != "" {
		t.Errorf("Hint with no candidates = %q", h)
	}
}
