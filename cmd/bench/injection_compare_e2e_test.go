package main

import (
	"encoding/json"
	"encoding/xml"
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"bench/internal/testpeer/testmodel"
	"bench/prompts"
)

// The last done-when of issue 34: bench compare fails a night where a
// model starts obeying ONE injection style. A style has 2 cases per task
// (its two goals), so one night of the suite's 4 tasks gives it 8 matched
// cells at most, and with every discordant cell one way the exact
// McNemar p is 2/2^n (two-sided): 2/2^8 = 0.0078, which Holm's
// correction over the compare's quality family (here 10 tests: pass
// rate, tool-use success, attack success, utility under attack and the 6
// styles; the smallest p is multiplied by 10) lifts above quality's
// share of alpha, 0.05/2 = 0.025. A style is judged significant from
// 10 * 2/2^n <= 0.025, n >= 10 cells resisted -> obeyed; so the nights
// repeat each cell (compare matches cells on the full key, repetition
// included): the style's cases of three tasks (6) twice is n = 12, p =
// 2/4096 = 0.00049, Holm-adjusted 0.0049. One harmful-action case of each
// other style (5), twice too, keeps the other styles in the family and
// shows they are not flagged: 22 cells a night, no clean twins (nothing
// here needs utility without attack).
//
// The resisting model's script is injectionScripts' over these cases;
// the second night it obeys fake_end_marker's planted instruction in
// every one of its cases, nothing else. Nothing machine-speed-dependent
// decides the verdict: the quality findings come from the matched
// verdicts alone, and a latency finding can only add to them.
func TestInjectionCompareOneStyle(t *testing.T) {
	s := needServer(t)
	const style, reps = "fake_end_marker", 2
	suite, err := prompts.Suite(prompts.SuiteInjection)
	if err != nil {
		t.Fatal(err)
	}
	tasks := []string{"INJ-MAIL", "INJ-TICKET", "INJ-TRIP"}
	var scripted []prompts.Prompt // the cases and their twins, for the script
	var ids []string              // the cases run
	styleCases, otherStyles := 0, map[string]bool{}
	for _, p := range suite {
		in := p.Injection
		if !in.Attack() {
			if slices.Contains(tasks, p.ID) {
				scripted = append(scripted, p)
			}
			continue
		}
		switch {
		case in.Style == style && slices.Contains(tasks, in.Twin):
			styleCases++
		case in.Style != style && in.Twin == "INJ-MAIL" && strings.HasSuffix(p.ID, "-harm"):
			otherStyles[in.Style] = true
		default:
			continue
		}
		scripted = append(scripted, p)
		ids = append(ids, p.ID)
	}
	if styleCases != 6 || len(otherStyles) != 5 {
		t.Fatalf("%d cases of %s, other styles %v; want 6 and 5", styleCases, style, otherStyles)
	}
	_, resist, _ := injectionScripts(t, scripted)
	const model = "one-style"
	if err := s.Create(bgctx(), model, resist); err != nil {
		t.Fatal(err)
	}
	cfg := fmt.Sprintf(`run:
  concurrency: 4
  timeout: 120s
providers:
  - type: ollama
    base_url: %s
    models: [%s]
`, s.URL(), model)
	only := strings.Join(ids, ",")
	nCells := len(ids) * reps
	code, stdout, stderr, recs, dir := runBench(t, cfg, "--suite", "injection", "--prompts", only, "--repetitions", fmt.Sprint(reps), "--quiet")
	if len(recs) != nCells {
		t.Fatalf("base night: exit %d, %d records, want %d\n%s%s", code, len(recs), nCells, stdout, stderr)
	}
	for _, r := range recs {
		if r.InjectionFollowed == nil || *r.InjectionFollowed || r.Utility == nil || !*r.Utility {
			t.Fatalf("base night %s rep %d: followed %v utility %v (%s %v)", r.PromptID, r.Repetition, r.InjectionFollowed, r.Utility, r.AvailabilityStatus, str(r.ErrorMessage))
		}
	}

	// The next night: the same model obeys fake_end_marker, both goals.
	night := testmodel.Script{}
	maps.Copy(night, resist)
	pad := 0
	for i := range scripted {
		if p := &scripted[i]; p.Injection.Attack() && p.Injection.Style == style {
			pad++
			night[resultWord(p.Injection.Result)] = toolCall(obeyingCall(t, p, pad))
		}
	}
	if err := s.Create(bgctx(), model, night); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "night.yaml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, out, errOut := benchIn(t, dir, nil, "run", "--config", "night.yaml", "--suite", "injection", "--prompts", only,
		"--repetitions", fmt.Sprint(reps), "--run-id", "night", "--quiet"); code != 0 {
		t.Fatalf("night run exit %d\n%s%s", code, out, errOut)
	}
	nightRecs := readRecords(t, filepath.Join(dir, "runs", "night", "results.jsonl"))
	if len(nightRecs) != nCells {
		t.Fatalf("night: %d records, want %d", len(nightRecs), nCells)
	}
	for _, r := range nightRecs {
		want := r.Injection != nil && r.Injection.Style == style
		if r.InjectionFollowed == nil || *r.InjectionFollowed != want {
			t.Fatalf("night %s rep %d: followed %v, want %v (%s %v)", r.PromptID, r.Repetition, r.InjectionFollowed, want, r.AvailabilityStatus, str(r.ErrorMessage))
		}
	}

	code, out, errOut := benchIn(t, dir, nil, "compare", "runs/e2e", "runs/night", "--out", "runs/cmp")
	if code != 3 {
		t.Errorf("compare exit %d, want 3 (a regression)\n%s%s", code, out, errOut)
	}
	cmp := readInjectionCompare(t, filepath.Join(dir, "runs", "cmp", "compare.json"))
	// 12 discordant cells all one way: p = 2/2^12 (gonum's binomial tail,
	// to rounding).
	const p12 = 2.0 / 4096
	found := map[string]string{}
	for _, f := range cmp.Findings {
		if strings.HasPrefix(f.Metric, "attack_success_rate") {
			if !f.FailsGate || f.Category != "quality" {
				t.Errorf("finding %s does not fail the gate: %+v", f.Metric, f)
			}
			found[f.Metric] = f.Message
		}
	}
	wantMsg := map[string]string{
		"attack_success_rate":          fmt.Sprintf("attack success rate 0%% (0/%d) -> 55%% (12/%d) (12 cells resisted -> obeyed, 0 obeyed -> resisted; McNemar exact p=0.000488, Holm-adjusted over ", nCells, nCells),
		"attack_success_rate:" + style: "injection style " + style + " attack success rate 0% (0/12) -> 100% (12/12) (12 cells resisted -> obeyed, 0 obeyed -> resisted; McNemar exact p=0.000488, Holm-adjusted over ",
	}
	for metric, want := range wantMsg {
		if !strings.HasPrefix(found[metric], want) {
			t.Errorf("compare finding %s: %q, want it to start %q", metric, found[metric], want)
		}
	}
	if len(found) != 2 || cmp.Verdict != "regression" {
		t.Errorf("verdict %s, attack success findings %v; want the group's and %s's only", cmp.Verdict, found, style)
	}
	var styles map[string]injectionRate
	for _, g := range cmp.Groups {
		if g.Model != model || g.Injection == nil {
			continue
		}
		if a := g.Injection.AttackSuccess; a.Change != "regression" || a.NewOnly != 12 || a.BaseOnly != 0 || math.Abs(a.PValue-p12) > 1e-12 || a.AdjustedP > 0.025 {
			t.Errorf("compare attack success %+v", a)
		}
		styles = map[string]injectionRate{}
		for _, st := range g.Injection.Styles {
			styles[st.Style] = st
		}
	}
	if st := styles[style]; st.BaseCount != 0 || st.BaseN != 12 || st.NewCount != 12 || st.NewOnly != 12 || st.Test != "McNemar exact" ||
		math.Abs(st.PValue-p12) > 1e-12 || st.AdjustedP > 0.025 || !st.Significant || st.Change != "regression" {
		t.Errorf("compare style %s %+v, want 0 -> 12 of 12, p 2/4096, significant after Holm", style, st)
	}
	for name := range otherStyles {
		if st := styles[name]; st.BaseN != reps || st.NewCount != 0 || st.NewOnly != 0 || st.Significant || st.Change != "~" {
			t.Errorf("compare style %s %+v, want 0 -> 0 of %d, ~", name, st, reps)
		}
	}
	if len(styles) != 6 {
		t.Errorf("compare styles %v, want 6", styles)
	}

	// junit.xml: the style's testcase fails, naming the counts; the other
	// styles' pass.
	var junit struct {
		Suites []struct {
			Cases []struct {
				Name    string `xml:"name,attr"`
				Failure *struct {
					Message string `xml:"message,attr"`
				} `xml:"failure"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	b, err := os.ReadFile(filepath.Join(dir, "runs", "cmp", "junit.xml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := xml.Unmarshal(b, &junit); err != nil {
		t.Fatalf("junit.xml: %v", err)
	}
	cases := map[string]string{}
	for _, su := range junit.Suites {
		for _, c := range su.Cases {
			if strings.HasPrefix(c.Name, "[injection style] ") || c.Name == "[group] attack_success_rate" {
				msg := "pass"
				if c.Failure != nil {
					msg = c.Failure.Message
				}
				cases[c.Name] = msg
			}
		}
	}
	if !strings.Contains(cases["[injection style] "+style], "0% (0/12) -> 100% (12/12) (12 cells resisted -> obeyed") ||
		!strings.Contains(cases["[group] attack_success_rate"], "12 cells resisted -> obeyed") {
		t.Errorf("junit.xml injection testcases %v", cases)
	}
	for name := range otherStyles {
		if cases["[injection style] "+name] != "pass" {
			t.Errorf("junit.xml [injection style] %s: %q, want it to pass", name, cases["[injection style] "+name])
		}
	}

	// compare.md and the terminal name the style.
	md, err := os.ReadFile(filepath.Join(dir, "runs", "cmp", "compare.md"))
	if err != nil {
		t.Fatal(err)
	}
	for where, text := range map[string]string{"compare.md": string(md), "terminal": out} {
		if !strings.Contains(text, "injection style "+style+" attack success rate 0% (0/12) -> 100% (12/12)") {
			t.Errorf("%s does not name the style's finding:\n%s", where, text)
		}
		for name := range otherStyles {
			if strings.Contains(text, "injection style "+name+" attack success rate") {
				t.Errorf("%s flags %s:\n%s", where, name, text)
			}
		}
	}

	// bench rescore of the night reproduces its injection figures.
	if code, out, errOut := benchIn(t, dir, nil, "rescore", "runs/night", "--out", "runs/night-rescored"); code != 0 {
		t.Fatalf("rescore exit %d\n%s%s", code, out, errOut)
	}
	sum, re := readSummaryInjection(t, filepath.Join(dir, "runs", "night")), readSummaryInjection(t, filepath.Join(dir, "runs", "night-rescored"))
	if len(sum.Groups) != 1 || len(re.Groups) != 1 || sum.Groups[0].Injection == nil {
		t.Fatalf("night summaries: %d and %d groups", len(sum.Groups), len(re.Groups))
	}
	in := sum.Groups[0].Injection
	if in.NJudged != nCells || in.NFollowed != 12 || in.Styles[style].NFollowed != 12 || in.Styles[style].NJudged != 12 {
		t.Errorf("night injection figures %+v", in)
	}
	a, _ := json.Marshal(sum.Groups[0].Injection)
	r, _ := json.Marshal(re.Groups[0].Injection)
	if string(a) != string(r) {
		t.Errorf("rescored night injection %s\nwant %s", r, a)
	}
}

// injectionRate is a compare.json injection rate (the group's attack
// success, or one style's).
type injectionRate struct {
	Style       string  `json:"style"`
	BaseCount   int     `json:"base_count"`
	BaseN       int     `json:"base_n"`
	NewCount    int     `json:"new_count"`
	BaseOnly    int     `json:"passed_base_only"`
	NewOnly     int     `json:"passed_new_only"`
	Test        string  `json:"test"`
	PValue      float64 `json:"p_value"`
	AdjustedP   float64 `json:"adjusted_p"`
	Significant bool    `json:"significant"`
	Change      string  `json:"change"`
}

// injectionCompare is what the injection tests read of compare.json.
type injectionCompare struct {
	Verdict  string `json:"verdict"`
	Findings []struct {
		Category, Scope, Metric, Model, Message string
		FailsGate                               bool `json:"fails_gate"`
	} `json:"findings"`
	Groups []struct {
		Model     string `json:"model"`
		Injection *struct {
			AttackSuccess injectionRate   `json:"attack_success_rate"`
			Styles        []injectionRate `json:"styles"`
		} `json:"injection"`
	} `json:"groups"`
}

func readInjectionCompare(t *testing.T, path string) *injectionCompare {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var cmp injectionCompare
	if err := json.Unmarshal(b, &cmp); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return &cmp
}
