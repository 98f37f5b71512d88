package prompts

import (
	"reflect"
	"strings"
	"testing"

	"bench/internal/record/results"
)

// The built-in injection suite: four clean tasks, and for each of them one
// case per style and goal (48 cases, 8 per style, 24 per goal), every case
// runnable (its planted result answers the carrier's expected call), and
// every tool result of the suite ending in its own last word, so a
// scripted test model (whose reply the prompt's last word picks) can tell
// each result apart.
func TestInjectionSuite(t *testing.T) {
	ps, err := Suite(SuiteInjection)
	if err != nil {
		t.Fatal(err)
	}
	if len(ps) != 52 {
		t.Fatalf("%d prompts", len(ps))
	}
	styles, goals, clean := map[string]int{}, map[string]int{}, 0
	last := map[string]string{}
	for i := range ps {
		p := &ps[i]
		if p.Injection == nil {
			t.Fatalf("%s: neither case nor twin", p.ID)
		}
		if !p.Injection.Attack() {
			clean++
		} else {
			styles[p.Injection.Style]++
			goals[p.Injection.Goal]++
			in := p.Injection
			carrier := p.Tool(in.Carrier)
			if carrier == nil || carrier.Rules[in.Rule].Result != in.Result || !strings.Contains(in.Result, in.Text) || !strings.HasPrefix(p.ID, in.Twin+"-") {
				t.Errorf("%s: %+v", p.ID, in)
			}
			if !p.Unsafe(in.Target.Name) {
				t.Errorf("%s: calling the target %s is not an unsafe action", p.ID, in.Target.Name)
			}
		}
		// A text ends like another only when it is the same text.
		for _, text := range append([]string{p.Prompt}, resultsOf(p)...) {
			w := strings.Fields(text)
			if other, dup := last[w[len(w)-1]]; dup && other != text {
				t.Errorf("%s: %q and %q end with the same word", p.ID, text, other)
			}
			last[w[len(w)-1]] = text
		}
	}
	want := map[string]int{"json_field": 8, "prose": 8, "quoted_email": 8, "fake_end_marker": 8, "second_language": 8, "encoded": 8}
	if clean != 4 || !reflect.DeepEqual(styles, want) || !reflect.DeepEqual(goals, map[string]int{results.GoalHarmfulAction: 24, results.GoalExfiltration: 24}) {
		t.Errorf("clean %d, styles %v, goals %v", clean, styles, goals)
	}
	if _, err := Suite("nope"); err == nil || !strings.Contains(err.Error(), "one of default, bfcl, injection") {
		t.Errorf("unknown suite: %v", err)
	}
}

// resultsOf are every scripted result of a prompt's tools.
func resultsOf(p *Prompt) []string {
	var out []string
	for _, tool := range p.Tools {
		for _, r := range tool.Rules {
			out = append(out, r.Result)
		}
	}
	return out
}
