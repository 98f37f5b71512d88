package agentsnap

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
)

// seedSnapshots adds every recorded snapshot file and a few broken ones.
func seedSnapshots(f *testing.F) [][]byte {
	files, _ := filepath.Glob(filepath.Join(goldenDir, "*", "*.json"))
	var seeds [][]byte
	for _, file := range files {
		if data, err := os.ReadFile(file); err == nil {
			seeds = append(seeds, data)
		}
	}
	return append(seeds,
		[]byte(``),
		[]byte(`{}`),
		[]byte(`null`),
		[]byte(`{"version":1,"model":"m","input":"","output":"","tools":null,"error":null}`),
		[]byte(`{"version":1,"model":"m","input":"","output":"","tools":[{"name":"a","args":{"x":[1e400,-0]},"result_hash":"sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"}],"error":"e","fingerprint":{"thinking_level":"high","repetition":-3}}`),
		[]byte(`{"version":1,"model":"m","input":"","output":"","tools":[{"name":"a","args":[],"result_hash":"x"}],"error":null}`),
		[]byte(`{"version":1.5}`),
		[]byte(`{"version":1,"model":"m","input":"\ud800","output":"\xff","tools":[],"error":""}`),
		[]byte("{\"version\":1,\n\"model\":"),
		[]byte(`{"version":1,"model":"a","MODEL":"b","input":"","output":"","tools":[],"error":null}`),
		[]byte(`{"version":1,"model":"a","mod\u0065l":"b","input":"","output":"","tools":[{"name":"x","NAME":"y","args":{},"result_hash":"sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"}],"error":null,"fingerprint":null}`),
	)
}

// FuzzRead: Parse never panics; whatever it accepts writes back to a file
// it reads again unchanged, and diffs as a match against itself.
func FuzzRead(f *testing.F) {
	for _, s := range seedSnapshots(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		// The one-pass decoder must agree with the field-by-field one on
		// everything it accepts.
		if fast, ok := parseFast(data); ok {
			checked, err := parseChecked(data)
			if err != nil {
				t.Fatalf("parseFast accepted what parseChecked rejects: %v", err)
			}
			if !reflect.DeepEqual(fast, checked) {
				t.Fatalf("parseFast and parseChecked differ:\n%+v\n%+v", fast, checked)
			}
		}
		s, err := Parse(data)
		if err != nil {
			if err.Error() == "" {
				t.Error("empty error")
			}
			return
		}
		out, err := Marshal(s)
		if err != nil {
			t.Fatalf("Marshal of a parsed snapshot: %v", err)
		}
		again, err := Parse(out)
		if err != nil {
			t.Fatalf("re-Parse of %s: %v", out, err)
		}
		if s.Tools == nil {
			s.Tools = []Tool{}
		}
		if !reflect.DeepEqual(s, again) {
			t.Errorf("round trip changed the snapshot:\n%+v\n%+v", s, again)
		}
		if d := Diff(s, again); d.Status != StatusMatch || len(d.Changes) != 0 || len(d.Ignored) != 0 {
			t.Errorf("Diff with itself = %+v", d)
		}
	})
}

// FuzzDiff: any two snapshots Parse accepts diff without panicking, to one
// of the five agentsnap statuses and its bench status, with changes only
// when the status is not PASSED.
func FuzzDiff(f *testing.F) {
	seeds := seedSnapshots(f)
	for i := range seeds {
		f.Add(seeds[i], seeds[(i+1)%len(seeds)])
	}
	kinds := []string{AgentsnapPassed, AgentsnapOutputDrift, AgentsnapToolsReordered, AgentsnapToolsChanged, AgentsnapRegression}
	f.Fuzz(func(t *testing.T, a, b []byte) {
		base, err := Parse(a)
		if err != nil {
			return
		}
		cur, err := Parse(b)
		if err != nil {
			return
		}
		r := Diff(base, cur)
		if !slices.Contains(kinds, r.Agentsnap) || r.Status != statusOf(r.Agentsnap) {
			t.Errorf("Diff = %+v", r)
		}
		if (r.Agentsnap == AgentsnapPassed) != (len(r.Changes) == 0) {
			t.Errorf("status %s with %d changes", r.Agentsnap, len(r.Changes))
		}
		for _, c := range r.Changes {
			if !json.Valid(c.From) || !json.Valid(c.To) || len(c.From) == 0 || len(c.To) == 0 {
				t.Errorf("change %+v holds no JSON value", c)
			}
		}
	})
}
