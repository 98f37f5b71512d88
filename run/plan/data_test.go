package plan_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"bench/config"
	"bench/providers"
	"bench/run/plan"
)

// A CSV of 10,000 rows with a template becomes 10,000 cells, each with the
// id its row's columns give: unique, and the same when the file grows.
func TestTenThousandRowCSV(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	rows := func(from, to int) string {
		var b strings.Builder
		b.WriteString("ticket,lang,body,label\n")
		for i := from; i < to; i++ {
			fmt.Fprintf(&b, "%d,%s,\"Ticket %d: my invoice is wrong, please check\",billing\n", i, []string{"en", "de"}[(i%2+2)%2], i)
		}
		return b.String()
	}
	write("t.yaml", "template:\n  id: \"t{{ticket}}-{{lang}}\"\n  prompt: \"Label this ticket. {{body}}\"\n  validator: {type: exact, value: \"{{label}}\"}\n")
	write("bench.yaml", "providers:\n  - type: ollama\n    models: [m]\nprompts:\n  files: [{path: cases.csv, template: t.yaml}]\n")
	load := func() *plan.Plan {
		c, err := config.Load(filepath.Join(dir, "bench.yaml"), providers.Kinds)
		if err != nil {
			t.Fatal(err)
		}
		return plan.New(c)
	}
	write("cases.csv", rows(0, 10_000))
	pl := load()
	if len(pl.Cells) != 10_000 {
		t.Fatalf("%d cells, want 10,000", len(pl.Cells))
	}
	ids := map[string]string{}
	for i, c := range pl.Cells {
		want := fmt.Sprintf("t%d-%s", i, []string{"en", "de"}[i%2])
		if c.Prompt.ID != want {
			t.Fatalf("cell %d: id %s, want %s", i, c.Prompt.ID, want)
		}
		if _, dup := ids[want]; dup {
			t.Fatalf("id %s twice", want)
		}
		ids[want] = c.Prompt.Prompt
	}
	// Rows added before and after: every earlier row keeps its id and text.
	write("cases.csv", rows(-5, 10_005))
	pl = load()
	if len(pl.Cells) != 10_010 {
		t.Fatalf("%d cells after adding 10 rows", len(pl.Cells))
	}
	found := 0
	for _, c := range pl.Cells {
		if text, ok := ids[c.Prompt.ID]; ok {
			found++
			if text != c.Prompt.Prompt {
				t.Fatalf("%s changed: %q -> %q", c.Prompt.ID, text, c.Prompt.Prompt)
			}
		}
	}
	if found != 10_000 {
		t.Errorf("%d of the 10,000 ids found again", found)
	}
}
