package compare

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"bench/internal/record/results"
)

// Answers longer than longSide are held on the Result's tape, not in its
// cells: the cells' sides are nil in memory, yet every output (compare.json
// whole, the one-line and detail forms cut as before) is byte for byte what
// it is with every side in memory, whether the tape keeps them in memory
// or has moved them to its file.
func TestLongSidesOnTheTape(t *testing.T) {
	long := func(s string, n int) string { return strings.Repeat(s, n) }
	baseRecs := []*results.Record{
		rec("P0", 0, withOutput(long("The <free> command & friends. ", 30))),
		rec("P0", 1, withOutput(long("Short base answer, long new one. ", 2))),
		rec("P0", 2, withOutput(long("Unchanged and long. ", 40))),
	}
	curRecs := []*results.Record{
		rec("P0", 0, withOutput(long("Use \"free -h\" — it shows <memory>. ", 40))),
		rec("P0", 1, withOutput(long("ünïcödé "+long("x", 2100), 1)), failing(long("needs four bullets; ", 20))),
		rec("P0", 2, withOutput(long("Unchanged and long. ", 40))),
	}
	dir := t.TempDir()
	base := writeRun(t, dir, runSpec{id: "base", recs: baseRecs})
	cur := writeRun(t, dir, runSpec{id: "new", recs: curRecs})

	outputs := func(name string) (*Result, map[string][]byte) {
		t.Helper()
		opt := DefaultOptions()
		opt.FailOn = []string{Quality, DriftCat}
		res, err := Compare(base, cur, opt)
		if err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(dir, name)
		if err := WriteFiles(out, res); err != nil {
			t.Fatal(err)
		}
		files := map[string][]byte{}
		for _, f := range []string{JSONFile, MDFile, JUnitFile} {
			b, err := os.ReadFile(filepath.Join(out, f))
			if err != nil {
				t.Fatal(err)
			}
			files[f] = b
		}
		var text bytes.Buffer
		if err := WriteText(&text, res); err != nil {
			t.Fatal(err)
		}
		files["stdout"] = text.Bytes()
		return res, files
	}
	defer func(n, m int) { longSide, tapeMem = n, m }(longSide, tapeMem)

	longSide = 1 << 30 // every side in memory, as before the tape
	inMemory, want := outputs("in-memory")
	defer inMemory.Close()
	if inMemory.tape != nil {
		t.Fatal("a tape with no side long enough for it")
	}

	longSide = 256
	for _, mem := range []int{tapeMem, 64} {
		tapeMem = mem
		res, got := outputs("held")
		if res.tape == nil || (mem == 64) != res.tape.Spilled() {
			t.Fatalf("tape %+v with %d bytes in memory", res.tape, mem)
		}
		held := 0
		for _, c := range res.Cells {
			for _, ch := range c.Changes {
				if ch.From == nil || ch.To == nil {
					held++
				}
			}
		}
		// P0 #0's answers; P0 #1's new answer (its base is short) and
		// its 400-byte violation (the "why" change).
		if held != 3 {
			t.Errorf("%d changes with a side held on the tape, want 3", held)
		}
		for name, w := range want {
			if !bytes.Equal(got[name], w) {
				t.Errorf("tape with %d bytes in memory: %s differs:\n%s\nwant:\n%s", mem, name, got[name], w)
			}
		}
		res.Close()
	}

	// compare.json has the answers whole.
	var doc struct {
		Cells []struct {
			PromptID   string `json:"prompt_id"`
			Repetition int    `json:"repetition"`
			Changes    []struct {
				Path string          `json:"path"`
				From json.RawMessage `json:"from"`
			} `json:"changes"`
		} `json:"cells"`
	}
	if err := json.Unmarshal(want[JSONFile], &doc); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, c := range doc.Cells {
		for _, ch := range c.Changes {
			var from string
			if c.Repetition == 0 && ch.Path == "output" && json.Unmarshal(ch.From, &from) == nil && from == baseRecs[0].RawOutput {
				found = true
			}
		}
	}
	if !found || !bytes.Contains(want[JUnitFile], []byte("more bytes)")) {
		t.Errorf("compare.json without P0 #0's whole base answer (%v), or junit.xml without a cut detail", found)
	}
}
