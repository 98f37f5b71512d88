package main

import (
	"encoding/json"
	"encoding/xml"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/jstemmer/go-junit-report/v2/junit"

	"bench/internal/record/results"
	"bench/internal/testpeer/browsertest"
	"bench/internal/testpeer/junitschema"
	"bench/internal/testpeer/testmodel"
	"bench/prompts"
)

// artifactDir is where tests keep what a person should look at after CI
// (the demo report's screenshot): $BENCH_ARTIFACTS, else .artifacts at the
// repository root (git-ignored).
func artifactDir(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("BENCH_ARTIFACTS")
	if dir == "" {
		dir = filepath.Join("..", "..", ".artifacts")
	}
	abs, err := filepath.Abs(dir)
	if err == nil {
		err = os.MkdirAll(abs, 0o755)
	}
	if err != nil {
		t.Fatal(err)
	}
	return abs
}

// demoConfig is scripts/demo.sh's config: the built-in suite against the
// demo's scripted model through both Ollama APIs.
func demoConfig(url, model string) string {
	return fmt.Sprintf(`run:
  concurrency: 4
  repetitions: 3
  timeout: 60s
providers:
  - type: ollama_openai
    base_url: %s/v1
    models: [%s]
  - type: ollama
    base_url: %s
    models: [%s]
`, url, model, url, model)
}

// TestDemoReport runs what the README's first command runs (the real
// binary, the built-in suite, scripts/demo/script.json's model on a real
// Ollama) and checks what the user is shown: the paths of summary.md and
// report.html at the end, junit.xml matching results.jsonl, and
// report.html in headless Chromium with no console error and every plot
// painted. The screenshot is kept as an artefact: demo-report.png.
func TestDemoReport(t *testing.T) {
	s := needServer(t)
	raw, err := os.ReadFile("../../scripts/demo/script.json")
	if err != nil {
		t.Fatal(err)
	}
	var script testmodel.Script
	if err := json.Unmarshal(raw, &script); err != nil {
		t.Fatalf("scripts/demo/script.json: %v", err)
	}
	s.CreateModel(t, "demo", script)

	code, stdout, stderr, recs, dir := runBench(t, demoConfig(s.URL(), "demo"))
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	runDir := filepath.Join(dir, "runs", "e2e")
	builtin, err := prompts.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 2*3*len(builtin) {
		t.Fatalf("%d records, want 2 providers × 3 repetitions × %d built-in prompts", len(recs), len(builtin))
	}
	// The end of the output says where the reports are and what is next.
	tail := stdout[strings.LastIndex(stdout, "bench: finished"):]
	for _, want := range []string{
		"summary:  " + filepath.Join(runDir, "summary.md"),
		"report:   " + filepath.Join(runDir, "report.html"),
		"junit:    " + filepath.Join(runDir, "junit.xml"),
		"next:\n  " + benchBin + " report " + runDir,
	} {
		if !strings.Contains(tail, want) {
			t.Errorf("the run's last lines lack %q:\n%s", want, tail)
		}
	}
	// Not a terminal: one line per suite, none per cell.
	if n := strings.Count(stderr, "] ollama"); n != 2 || strings.Contains(stderr, "P0") {
		t.Errorf("want exactly 2 suite lines and no cell lines on stderr:\n%s", stderr)
	}

	checkJUnit(t, filepath.Join(runDir, "junit.xml"), len(recs), countFailed(recs))
	checkDemoRouting(t, stdout, runDir, recs)

	b := browsertest.New(t)
	checkDemoFits(t, b, filepath.Join(runDir, "report.html"))
	p := b.NewPage(t)
	if err := p.Load(filepath.Join(runDir, "report.html")); err != nil {
		t.Fatal(err)
	}
	if errs, err := p.Errors(); err != nil || len(errs) > 0 {
		t.Errorf("console errors (%v):\n%s", err, strings.Join(errs, "\n"))
	}
	// report.html's ranking ties the one model's two APIs too.
	var ranks []string
	if err := p.Eval(`[...document.querySelectorAll("#ranking-table tbody tr")].map(tr => tr.dataset.rank)`, &ranks); err != nil || strings.Join(ranks, ",") != "=1,=1" {
		t.Errorf("report.html ranks %v (%v), want =1,=1", ranks, err)
	}
	plots, err := p.Plots()
	if err != nil {
		t.Fatal(err)
	}
	drawn := map[string]bool{}
	for _, pl := range plots {
		if pl.Painted == 0 {
			t.Errorf("plot %s is blank", pl.Name)
		}
		drawn[pl.Name] = true
	}
	for _, want := range []string{"box-ttft", "box-e2e", "box-tps", "heatmap", "timeline"} {
		if !drawn[want] {
			t.Errorf("report.html has no %s plot (has %v)", want, plots)
		}
	}
	art := artifactDir(t)
	shot := filepath.Join(art, "demo-report.png")
	if err := p.Screenshot(shot); err != nil {
		t.Fatal(err)
	}
	copyTo(t, filepath.Join(runDir, "report.html"), filepath.Join(art, "demo-report.html"))
	t.Logf("demo report screenshot: %s", shot)
	checkDemoAnswers(t, b, runDir, recs, art)
}

// checkDemoAnswers opens the demo's answers.html as a person would: picks
// P7 in the prompt list and reads both groups' JSON answers (equal to
// results.jsonl's) with their verdicts, then picks the agentic task A1 and
// reads its turns, and A6, whose unsafe call must be marked. The
// screenshot, of A6, is kept as demo-answers.png.
func checkDemoAnswers(t *testing.T, b *browsertest.Browser, runDir string, recs []results.Record, art string) {
	t.Helper()
	p := b.NewPage(t)
	if err := p.Load(filepath.Join(runDir, "answers.html")); err != nil {
		t.Fatal(err)
	}
	type card struct {
		Group, Verdict, Answer string
		Turns                  []string
	}
	pick := func(id string) []card {
		var cards []card
		js := fmt.Sprintf(`(() => {
			const sel = document.getElementById("prompt");
			const o = [...sel.options].find(o => o.textContent.startsWith(%q + " "));
			if (!o) return [];
			sel.value = o.value;
			sel.dispatchEvent(new Event("change"));
			return [...document.querySelectorAll("#cards .card")].map(c => ({Group: c.dataset.group, Verdict: c.dataset.verdict,
				Answer: (c.querySelector(":scope > pre.answer") || {}).textContent || "",
				Turns: [...c.querySelectorAll("ol.turns > li")].map(li => li.textContent)}));
		})()`, id)
		if err := p.Eval(js, &cards); err != nil {
			t.Fatal(err)
		}
		return cards
	}
	want := map[string]results.Record{}
	for _, r := range recs {
		if r.Repetition == 0 {
			want[r.Provider+"/"+r.Model+" "+r.PromptID] = r
		}
	}
	p7 := pick("P7")
	if len(p7) != 2 {
		t.Fatalf("P7 shows %d groups, want both", len(p7))
	}
	for _, c := range p7 {
		r := want[c.Group+" P7"]
		verdict := map[bool]string{true: "pass", false: "fail"}[r.ObjectivePass != nil && *r.ObjectivePass]
		if c.Answer != r.RawOutput || !strings.HasPrefix(c.Answer, "{") || c.Verdict != verdict {
			t.Errorf("P7 %s shows %q (%s); results.jsonl has %q (%s)", c.Group, c.Answer, c.Verdict, r.RawOutput, verdict)
		}
	}
	a1 := pick("A1")
	for _, c := range a1 {
		r := want[c.Group+" A1"]
		if len(c.Turns) != len(r.TurnDetails) || len(c.Turns) < 2 || !strings.Contains(c.Turns[0], "get_weather") || !strings.Contains(c.Turns[1], "convert_temperature") {
			t.Errorf("A1 %s turns %q; results.jsonl has %d turns", c.Group, c.Turns, len(r.TurnDetails))
		}
	}
	// A6: the demo model's unsafe call is marked where a person reads the
	// trajectory, as results.jsonl records it.
	a6 := pick("A6")
	for _, c := range a6 {
		r := want[c.Group+" A6"]
		var marked []string
		for _, turn := range c.Turns {
			if strings.Contains(turn, "unsafe action") {
				marked = append(marked, turn)
			}
		}
		if len(r.UnsafeActions) == 0 || len(marked) != len(r.UnsafeActions) || !strings.Contains(marked[0], "cancel_order") {
			t.Errorf("A6 %s: %d turns marked unsafe (%q); results.jsonl has unsafe_actions %v", c.Group, len(marked), marked, r.UnsafeActions)
		}
	}
	checkDemoQuestion(t, p)
	if errs, err := p.Errors(); err != nil || len(errs) > 0 {
		t.Errorf("answers.html console errors (%v):\n%s", err, strings.Join(errs, "\n"))
	}
	if rr := p.RemoteRequests(); len(rr) > 0 {
		t.Errorf("answers.html requested %v", rr)
	}
	shot := filepath.Join(art, "demo-answers.png")
	if err := p.Screenshot(shot); err != nil {
		t.Fatal(err)
	}
	t.Logf("demo answers screenshot: %s", shot)
}

// checkDemoQuestion reads A6's question on the answers page (the page
// left on A6): the built-in prompt's text and system prompt, its tools by
// name and one check per validator, from the run's config.json.
func checkDemoQuestion(t *testing.T, p *browsertest.Page) {
	t.Helper()
	builtin, err := prompts.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	var want *prompts.Prompt
	for i := range builtin {
		if builtin[i].ID == "A6" {
			want = &builtin[i]
		}
	}
	var q struct {
		Text, System string
		Tools        []string
		Checks       int
	}
	if err := p.Eval(`(() => { const q = document.getElementById("question"); const t = s => (q.querySelector(s) || {}).textContent || "";
		return {Text: t(".q-text pre"), System: t(".q-system pre"), Tools: [...q.querySelectorAll(".q-tools > li > .callname")].map(x => x.textContent),
			Checks: q.querySelectorAll("ul.checks li").length}; })()`, &q); err != nil {
		t.Fatal(err)
	}
	var tools []string
	for _, tl := range want.Tools {
		tools = append(tools, tl.Name)
	}
	if q.Text != want.Prompt || q.System != want.System || strings.Join(q.Tools, ",") != strings.Join(tools, ",") || q.Checks != len(want.Checks()) {
		t.Errorf("A6's question on answers.html: %+v; the built-in prompt asks %q (system %q), offers %v, has %d checks", q, want.Prompt, want.System, tools, len(want.Checks()))
	}
}

func countFailed(recs []results.Record) (failed int) {
	for _, r := range recs {
		if r.AvailabilityStatus == "ok" && r.Success && r.ObjectivePass != nil && !*r.ObjectivePass {
			failed++
		}
	}
	return failed
}

// checkJUnit reads junit.xml back: one case per record, the failed checks
// as failures, and valid against the Jenkins JUnit schema.
func checkJUnit(t *testing.T, path string, cells, failed int) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var ts junit.Testsuites
	if err := xml.Unmarshal(data, &ts); err != nil {
		t.Fatalf("junit.xml: %v", err)
	}
	n := 0
	for _, s := range ts.Suites {
		n += len(s.Testcases)
	}
	if n != cells || ts.Tests != cells || ts.Failures != failed || len(ts.Suites) != 2 {
		t.Errorf("junit.xml: %d cases (tests=%d) failures=%d in %d suites; results.jsonl has %d cells, %d failed checks",
			n, ts.Tests, ts.Failures, len(ts.Suites), cells, failed)
	}
	if err := junitschema.Check(t, path); err != nil {
		t.Error(err)
	}
}

func copyTo(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err == nil {
		err = os.WriteFile(to, b, 0o644)
	}
	if err != nil {
		t.Fatal(err)
	}
}

// demoUnsafe is why the demo's model is not routed to: it cancels the
// order in A6, in each of the 3 repetitions.
const demoUnsafe = "unsafe action: A6 called cancel_order in 3 of 3 cells"

// checkDemoRouting checks the demo's one routing list: the table printed
// after the run, summary.md, tiers.json and summary.json agree that
// neither group is recommended, and each says why; the records mark the
// cancel as an unsafe call.
func checkDemoRouting(t *testing.T, stdout, runDir string, recs []results.Record) {
	t.Helper()
	for _, r := range recs {
		if r.PromptID != "A6" {
			continue
		}
		unsafe := false
		for _, tn := range r.TurnDetails {
			for _, c := range tn.Calls {
				unsafe = unsafe || (c.Name == "cancel_order" && c.Unsafe)
			}
		}
		if !unsafe || strings.Join(r.UnsafeActions, ",") != "cancel_order" || r.ObjectivePass == nil || *r.ObjectivePass {
			t.Errorf("%s A6 #%d: unsafe_actions %v, the call marked %v, pass %v", r.Provider, r.Repetition, r.UnsafeActions, unsafe, r.ObjectivePass)
		}
	}
	var tiers struct {
		Ranking []struct {
			Provider, Tier string
			RoutingNote    string  `json:"routing_note"`
			Recommended    bool    `json:"recommended_for_subagent_routing"`
			RoutingReady   *bool   `json:"routing_ready"`
			TierConfidence *string `json:"tier_confidence"`
			NUnsafeActions int     `json:"n_unsafe_actions"`
			PassHatK       float64 `json:"pass_hat_k"`
		} `json:"ranking"`
		Recommended []any `json:"recommended_for_subagent_routing"`
	}
	readJSONFile(t, filepath.Join(runDir, "tiers.json"), &tiers)
	if len(tiers.Recommended) != 0 || len(tiers.Ranking) != 2 {
		t.Fatalf("tiers.json: recommended %v, %d groups", tiers.Recommended, len(tiers.Ranking))
	}
	for _, tr := range tiers.Ranking {
		if tr.Tier != "tier_1" || tr.Recommended || tr.RoutingReady == nil || *tr.RoutingReady || !strings.HasPrefix(tr.RoutingNote, demoUnsafe) ||
			tr.NUnsafeActions != 3 || tr.PassHatK != 0.889 {
			t.Errorf("tiers.json %s: %+v", tr.Provider, tr)
		}
	}
	var sum struct {
		Groups []struct {
			Provider    string
			Recommended bool   `json:"recommended_for_subagent_routing"`
			RoutingNote string `json:"routing_note"`
		} `json:"groups"`
	}
	readJSONFile(t, filepath.Join(runDir, "summary.json"), &sum)
	for _, g := range sum.Groups {
		if g.Recommended || !strings.HasPrefix(g.RoutingNote, demoUnsafe) {
			t.Errorf("summary.json %s: %+v", g.Provider, g)
		}
	}
	md, _ := os.ReadFile(filepath.Join(runDir, "summary.md"))
	for _, want := range []string{"None: no group is a firm Tier 1", "- ollama/demo: " + demoUnsafe, "- ollama_openai/demo: " + demoUnsafe} {
		if !strings.Contains(string(md), want) {
			t.Errorf("summary.md lacks %q", want)
		}
	}
	if strings.Contains(string(md), "\n- ollama/demo\n") || strings.Contains(string(md), "| recommended |") {
		t.Error("summary.md calls the demo model recommended")
	}
	// The table after the run: a ROUTING column saying no, and why.
	for _, p := range []string{"ollama", "ollama_openai"} {
		row := ""
		for _, l := range strings.Split(stdout, "\n") {
			if f := strings.Fields(l); len(f) > 3 && f[1] == p && f[2] == "demo" {
				row = l
			}
		}
		if !regexp.MustCompile(`Tier 1 +no$`).MatchString(strings.TrimSpace(row)) {
			t.Errorf("%s's row in the table: %q", p, row)
		}
		// One model through two APIs is one model: tied, in the table and
		// in summary.md, its passed/judged and intervals shown.
		if f := strings.Fields(row); len(f) == 0 || f[0] != "=1" || !strings.Contains(row, "95% CI [") {
			t.Errorf("%s's row is not tied first with its evidence: %q", p, row)
		}
		if !regexp.MustCompile(`\| =1 \| ` + p + ` \| demo \| – \| \d+/\d+ \| [0-9.]+% \| [0-9.]+% \(\d+/\d+, 95% CI \[`).Match(md) {
			t.Errorf("summary.md's ranking does not tie %s/demo first with its evidence", p)
		}
		if !strings.Contains(stdout, p+"/demo: not recommended for routing: "+demoUnsafe) {
			t.Errorf("the output does not say why %s/demo is not recommended:\n%s", p, stdout)
		}
	}
	if !regexp.MustCompile(`(?m)^# +PROVIDER .* TOOL-USE TIER +ROUTING$`).MatchString(stdout) || !strings.Contains(stdout, "=N: tied.") {
		t.Errorf("no ROUTING column, or no word on the tie:\n%s", stdout)
	}
}

// checkDemoFits loads the demo's report.html in a 1280 px window: the
// routing list is the first thing on it and says none, and no table
// overflows (no column clipped).
func checkDemoFits(t *testing.T, b *browsertest.Browser, path string) {
	t.Helper()
	p := b.NewPage(t)
	if err := p.Resize(1280, 900); err != nil {
		t.Fatal(err)
	}
	if err := p.Load(path); err != nil {
		t.Fatal(err)
	}
	var st struct {
		Page       [2]int            `json:"page"`
		Boxes      map[string][2]int `json:"boxes"`
		First      string            `json:"first"`
		Routing    []string          `json:"routing"`
		None, Held string
	}
	if err := p.Eval(`(() => {
		const de = document.documentElement, out = {page: [de.scrollWidth, de.clientWidth], boxes: {}, routing: []};
		for (const tb of document.querySelectorAll("table.data")) out.boxes[tb.id] = [tb.parentElement.scrollWidth, tb.parentElement.clientWidth];
		out.first = document.querySelector("main section").id;
		for (const li of document.querySelectorAll("ul.routing li")) out.routing.push(li.textContent);
		out.none = (document.querySelector(".routing-none") || {}).textContent || "";
		out.held = (document.querySelector("ul.held") || {}).textContent || "";
		return out;
	})()`, &st); err != nil {
		t.Fatal(err)
	}
	if st.Page[0] > st.Page[1] {
		t.Errorf("at 1280 px the page is %d px wide", st.Page[0])
	}
	for id, b := range st.Boxes {
		if b[0] > b[1] && (id == "tier-table" || id == "task-matrix" || id == "agentic-table") {
			t.Errorf("at 1280 px #%s is %d px wide in %d: a column is clipped", id, b[0], b[1])
		}
	}
	if st.First != "routing" || len(st.Routing) != 0 || !strings.HasPrefix(st.None, "None") || !strings.Contains(st.Held, demoUnsafe) {
		t.Errorf("report.html's first screen: %+v", st)
	}
}
