package answers

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"bench/internal/record/results"
	"bench/internal/record/rundir"
	"bench/internal/testpeer/browsertest"
	"bench/report"
)

func ptr[T any](v T) *T { return &v }

// hostile are answers that must render as text and break nothing.
var hostile = map[string]string{
	"html":      `<b>bold?</b> <img src=x onerror="window.pwned=1"> & done`,
	"script":    `</script><script>window.pwned=2</script>`,
	"separator": "line one\u2028line two\u2029end",
	"json":      "{\"name\": \"Mars\", \"moons\": 2, \"has_rings\": false}",
}

// fixtureRun writes a run directory: two groups, prompts P0-P3 with the
// hostile answers, P4 with a 4 MB answer, P5 with invalid UTF-8 written
// raw into the file, and an agentic task A1, two repetitions each; then
// the summary and answers.html, as bench report would.
func fixtureRun(t testing.TB) (dir string, recs map[string]results.Record) {
	t.Helper()
	dir = t.TempDir()
	recs = map[string]results.Record{}
	var buf bytes.Buffer
	line := 0
	put := func(r results.Record) {
		line++
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		buf.Write(b)
		buf.WriteByte('\n')
		recs[fmt.Sprintf("%s/%s/%d", r.Provider, r.PromptID, r.Repetition)] = r
	}
	yes, no := true, false
	for _, prov := range []string{"ollama", "ollama_openai"} {
		for rep := 0; rep < 2; rep++ {
			base := results.Record{RecordType: "result", RunID: "fx", Provider: prov, ProviderType: prov, Model: "demo", Repetition: rep,
				AvailabilityStatus: "ok", Success: true, E2EMS: 120, TTFTMS: ptr(int64(40)), OutputTokens: ptr(12)}
			for i, k := range []string{"html", "script", "separator", "json"} {
				r := base
				r.PromptID, r.PromptName = fmt.Sprintf("P%d", i), k
				r.RawOutput, r.RawOutputBytes = hostile[k], len(hostile[k])
				r.ObjectivePass = &yes
				if prov == "ollama" && k == "json" {
					r.ObjectivePass, r.Violation = &no, ptr(`missing key "moons" <script>window.pwned=3</script>`)
				}
				put(r)
			}
			big := base
			big.PromptID, big.PromptName = "P4", "long"
			big.RawOutput = strings.Repeat("0123456789abcdef", 4<<20/16)
			big.RawOutputBytes = len(big.RawOutput)
			put(big)
			agent := base
			agent.PromptID, agent.PromptName, agent.Turns = "A1", "two_dependent_calls", 3
			agent.RawOutput, agent.RawOutputBytes = "64.4 °F", 7
			agent.ObjectivePass = &yes
			agent.TurnDetails = []results.Turn{
				{Calls: []results.TurnCall{{Name: "get_weather", Arguments: json.RawMessage(`{"city":"Paris"}`), Result: `{"temp_c": 18}`, Rule: 0}}},
				{Calls: []results.TurnCall{{Name: "convert_temperature", Arguments: json.RawMessage(`{"value":81,"to":"F"}`), Result: "no rule for these arguments", IsError: true, WrongArgs: true, Rule: -1},
					{Name: "delete_everything", Arguments: json.RawMessage(`{}`), Unknown: true, Rule: -1}}},
				{Text: "64.4 °F"},
			}
			put(agent)
			// P6: judged where the judge answered, a check error where
			// it did not (ollama's).
			judged := base
			judged.PromptID, judged.PromptName = "P6", "judged"
			judged.RawOutput, judged.RawOutputBytes = "Sorry for the wait.", 19
			judged.ObjectivePass = &yes
			if prov == "ollama" {
				judged.ObjectivePass = nil
				judged.CheckErrors = []results.CheckError{{Type: results.JudgeError, Check: "llm_judge", Index: 0, Message: "connection_refused: the judge is down"}}
			}
			put(judged)
			// P5: invalid UTF-8 inside the JSON string, as a broken
			// writer might leave it.
			line++
			fmt.Fprintf(&buf, `{"record_type":"result","run_id":"fx","provider":%q,"provider_type":%q,"model":"demo","thinking_level":null,"prompt_id":"P5","prompt_name":"bytes","repetition":%d,"availability_status":"ok","started_at_ms":0,"ended_at_ms":0,"e2e_ms":5,"ttft_ms":null,"success":true,"failure_type":null,"objective_pass":null,"violation":null,"input_tokens":null,"output_tokens":null,"raw_output":"%s","parsed_output":null,"tool_calls":[],"tool_call_count":0,"tool_use_success":null}`+"\n", prov, prov, rep, "bad \xff\xfe bytes")
		}
	}
	if err := os.WriteFile(filepath.Join(dir, rundir.ResultsFile), buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, rundir.ConfigFile), []byte(fixtureConfig), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := report.LoadEach(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if s.NSkippedLines != 0 {
		t.Fatalf("fixture lines skipped: %v", s.SkippedLines)
	}
	if err := Start(dir, s).Finish(); err != nil {
		t.Fatal(err)
	}
	return dir, recs
}

// fixtureConfig is the fixture's config.json: the prompt_set entries of
// P0 (hostile text in the question too), P3 (a check with keys) and A1
// (a system prompt, tools offered, one forbidden, a turn limit). P1, P2,
// P4 and P5 have none.
const fixtureConfig = `{"run": {"id": "fx"}, "prompt_set": [
 {"id": "P0", "name": "html", "prompt": "What is <b>2+2</b>? <img src=x onerror=\"window.pwned=4\">", "validator": {"type": "exact", "value": "4"}},
 {"id": "P3", "name": "json", "prompt": "Describe Mars as JSON.", "validators": [{"type": "json_keys", "keys": ["name", "moons"]}, {"type": "max_words", "value": 40}]},
 {"id": "A1", "name": "two_dependent_calls", "system": "You are a weather agent.", "prompt": "What is the temperature in Paris in °F?", "max_turns": 4,
  "forbidden_tools": ["delete_everything"],
  "tools": [{"name": "get_weather", "description": "Current weather of a city", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}},
            {"name": "convert_temperature", "parameters": {"type": "object"}}, {"name": "delete_everything"}],
  "validator": {"type": "contains", "value": "64.4"}}
]}`

// questionState is what the question box shows.
type questionState struct {
	Text   string   `json:"text"`
	System string   `json:"system"`
	Labels []string `json:"labels"`
	Tools  []string `json:"tools"`
	Checks []string `json:"checks"`
	Empty  string   `json:"empty"`
}

const questionJS = `(() => { const q = document.getElementById("question"); const t = s => (q.querySelector(s) || {}).textContent || "";
	return { text: t(".q-text pre"), system: t(".q-system pre"), labels: [...q.querySelectorAll(".label")].map(x => x.textContent),
		tools: [...q.querySelectorAll(".q-tools > li")].map(x => x.textContent), checks: [...q.querySelectorAll("ul.checks li")].map(x => x.textContent),
		empty: t(".empty") }; })()`

func question(t *testing.T, p *browsertest.Page) questionState {
	t.Helper()
	var q questionState
	if err := p.Eval(questionJS, &q); err != nil {
		t.Fatal(err)
	}
	return q
}

// The question beside the answers: each prompt's text as config.json has
// it (its HTML shown as text), the system prompt, the tools offered with
// their descriptions and parameters (the forbidden one marked) and the
// checks a pass needed; a prompt config.json does not hold says so.
func TestQuestionInChromium(t *testing.T) {
	b := browsertest.New(t)
	dir, _ := fixtureRun(t)
	p := b.NewPage(t)
	if err := p.Load(filepath.Join(dir, rundir.AnswersHTML)); err != nil {
		t.Fatal(err)
	}
	show(t, p, "P0", 0)
	q := question(t, p)
	if q.Text != `What is <b>2+2</b>? <img src=x onerror="window.pwned=4">` || q.System != "" || strings.Join(q.Checks, "|") != `exact: value "4"` {
		t.Errorf("P0's question: %+v", q)
	}
	show(t, p, "P3", 0)
	if q := question(t, p); strings.Join(q.Checks, "|") != `json_keys: keys ["name","moons"]|max_words: value 40` {
		t.Errorf("P3's checks: %q", q.Checks)
	}
	show(t, p, "A1", 0)
	q = question(t, p)
	if q.System != "You are a weather agent." || q.Text != "What is the temperature in Paris in °F?" || len(q.Tools) != 3 ||
		!strings.Contains(q.Tools[0], "get_weather") || !strings.Contains(q.Tools[0], "Current weather of a city") ||
		!strings.Contains(q.Tools[0], `{"type":"object","properties":{"city":{"type":"string"}}}`) ||
		!strings.Contains(q.Tools[2], "delete_everything") || !strings.Contains(q.Tools[2], "forbidden") ||
		strings.Contains(q.Tools[0], "forbidden") || strings.Join(q.Checks, "|") != `contains: value "64.4"` {
		t.Errorf("A1's question: %+v", q)
	}
	if !slices.Contains(q.Labels, "task (at most 4 turns)") || !slices.Contains(q.Labels, "tools offered") || !slices.Contains(q.Labels, "to pass") {
		t.Errorf("A1's labels: %q", q.Labels)
	}
	// The trajectory is still there under the question.
	if cards := show(t, p, "A1", 0); len(cards) != 2 || len(cards[0].Turns) != 3 {
		t.Errorf("A1's cards: %+v", cards)
	}
	show(t, p, "P1", 0)
	if q := question(t, p); q.Text != "" || !strings.Contains(q.Empty, "no entry for this prompt") {
		t.Errorf("P1 (not in prompt_set): %+v", q)
	}
	var pwned bool
	if err := p.Eval(`!!window.pwned`, &pwned); err != nil || pwned {
		t.Errorf("a question's text ran as HTML (pwned %v, %v)", pwned, err)
	}
	if errs, err := p.Errors(); err != nil || len(errs) > 0 {
		t.Errorf("console errors (%v):\n%s", err, strings.Join(errs, "\n"))
	}
	shot := filepath.Join(t.ArtifactDir(), "answers-question.png")
	if err := p.Screenshot(shot); err != nil {
		t.Fatal(err)
	}

	// Without config.json the page says why there is no question.
	if err := os.Remove(filepath.Join(dir, rundir.ConfigFile)); err != nil {
		t.Fatal(err)
	}
	s, err := report.LoadEach(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := Start(dir, s).Finish(); err != nil {
		t.Fatal(err)
	}
	if err := p.Load(filepath.Join(dir, rundir.AnswersHTML)); err != nil {
		t.Fatal(err)
	}
	show(t, p, "P0", 0)
	if q := question(t, p); !strings.Contains(q.Empty, "has no config.json") {
		t.Errorf("without config.json: %+v", q)
	}
}

// cardState is what a card shows.
type cardState struct {
	Group    string   `json:"group"`
	Verdict  string   `json:"verdict"`
	Answer   *string  `json:"answer"`
	Cut      []string `json:"cut"`
	Why      []string `json:"why"`
	Figures  string   `json:"figures"`
	Turns    []string `json:"turns"`
	Marks    []string `json:"marks"`
	CallArgs []string `json:"callArgs"`
}

const cardsJS = `[...document.querySelectorAll("#cards .card")].map(c => ({
	group: c.dataset.group, verdict: c.dataset.verdict,
	answer: c.querySelector(":scope > pre.answer") ? c.querySelector(":scope > pre.answer").textContent : null,
	cut: [...c.querySelectorAll(".cut")].map(x => x.textContent),
	why: [...c.querySelectorAll(".why")].map(x => x.textContent),
	figures: (c.querySelector(".figures") || {}).textContent || "",
	turns: [...c.querySelectorAll("ol.turns > li")].map(x => x.textContent),
	marks: [...c.querySelectorAll(".mark")].map(x => x.textContent),
	callArgs: [...c.querySelectorAll("ol.turns pre.arguments")].map(x => x.textContent),
}))`

func show(t *testing.T, p *browsertest.Page, prompt string, rep int) []cardState {
	t.Helper()
	var ok bool
	if err := p.Eval(fmt.Sprintf(`window.benchAnswers.show(%q, %d)`, prompt, rep), &ok); err != nil || !ok {
		t.Fatalf("show %s: %v %v", prompt, ok, err)
	}
	var cards []cardState
	if err := p.Eval(cardsJS, &cards); err != nil {
		t.Fatal(err)
	}
	return cards
}

// TestAnswersInChromium opens answers.html from a file:// URL in headless
// Chromium and reads it as a person would: no console error, nothing
// requested, each prompt's answers equal to results.jsonl's (HTML in them
// shown as text, never run), a 4 MB answer cut with the line it is on,
// invalid UTF-8, </script> and U+2028 shown as text, an agentic cell's
// turns with the calls and their marks, and the failed-only filter.
func TestAnswersInChromium(t *testing.T) {
	b := browsertest.New(t)
	dir, recs := fixtureRun(t)
	page := filepath.Join(dir, rundir.AnswersHTML)
	p := b.NewPage(t)
	if err := p.Load(page); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		prompt string
		rep    int
	}{{"P0", 0}, {"P1", 1}, {"P2", 0}, {"P3", 1}} {
		cards := show(t, p, c.prompt, c.rep)
		if len(cards) != 2 {
			t.Fatalf("%s: %d cards, want 2", c.prompt, len(cards))
		}
		for _, cs := range cards {
			r := recs[fmt.Sprintf("%s/%s/%d", strings.TrimSuffix(cs.Group, "/demo"), c.prompt, c.rep)]
			if cs.Answer == nil || *cs.Answer != r.RawOutput {
				t.Errorf("%s %s rep %d shows %q, results.jsonl has %q", c.prompt, cs.Group, c.rep, shown(cs.Answer), r.RawOutput)
			}
			want := "pass"
			if r.ObjectivePass != nil && !*r.ObjectivePass {
				want = "fail"
				if len(cs.Why) == 0 || cs.Why[0] != "violation: "+*r.Violation {
					t.Errorf("%s %s: violation shown %q, want %q", c.prompt, cs.Group, cs.Why, *r.Violation)
				}
			}
			if cs.Verdict != want {
				t.Errorf("%s %s: verdict %s, want %s", c.prompt, cs.Group, cs.Verdict, want)
			}
			if !strings.Contains(cs.Figures, "TTFT 40 ms") || !strings.Contains(cs.Figures, "e2e 120 ms") || !strings.Contains(cs.Figures, "12 output tokens") {
				t.Errorf("%s %s: figures %q", c.prompt, cs.Group, cs.Figures)
			}
		}
	}

	// The 4 MB answer: cut at the cap, with where the whole is.
	cards := show(t, p, "P4", 0)
	for _, cs := range cards {
		if cs.Answer == nil || len(*cs.Answer) != MaxTextBytes || len(cs.Cut) == 0 ||
			!strings.Contains(cs.Cut[0], fmt.Sprintf("of %d bytes", 4<<20)) || !strings.Contains(cs.Cut[0], "results.jsonl line ") {
			t.Errorf("4 MB answer of %s: %d bytes shown, notes %q", cs.Group, len(shown(cs.Answer)), cs.Cut)
		}
	}
	// Invalid UTF-8 as replacement characters.
	for _, cs := range show(t, p, "P5", 1) {
		if cs.Answer == nil || *cs.Answer != "bad \uFFFD\uFFFD bytes" || cs.Verdict != "nocheck" {
			t.Errorf("invalid UTF-8 answer of %s shows %q (%s)", cs.Group, shown(cs.Answer), cs.Verdict)
		}
	}
	// A check error is what it is, with its message: not "no check".
	for _, cs := range show(t, p, "P6", 0) {
		want, why := "pass", ""
		if cs.Group == "ollama/demo" {
			want, why = "checkerror", "error: judge_error: connection_refused: the judge is down"
		}
		if cs.Verdict != want || (why != "" && (len(cs.Why) != 1 || cs.Why[0] != why)) {
			t.Errorf("P6 %s: verdict %s, why %q; want %s %q", cs.Group, cs.Verdict, cs.Why, want, why)
		}
	}
	// The agentic task, turn by turn.
	cards = show(t, p, "A1", 0)
	for _, cs := range cards {
		if len(cs.Turns) != 3 || !strings.Contains(cs.Turns[0], "get_weather") || !strings.Contains(cs.Turns[0], `{"temp_c": 18}`) ||
			!strings.Contains(cs.Turns[1], "convert_temperature") || !strings.Contains(cs.Turns[1], "no rule for these arguments") ||
			!strings.Contains(cs.Turns[2], "64.4 °F") {
			t.Errorf("A1 %s turns: %q", cs.Group, cs.Turns)
		}
		if strings.Join(cs.CallArgs, "|") != `{"city":"Paris"}|{"value":81,"to":"F"}|{}` {
			t.Errorf("A1 %s call arguments %q", cs.Group, cs.CallArgs)
		}
		if marks := strings.Join(cs.Marks, ","); marks != "error result,wrong arguments,unknown tool" {
			t.Errorf("A1 %s marks %q", cs.Group, marks)
		}
	}

	// Failed only: P3 shows the one group whose check failed.
	if err := p.Eval(`(() => { const f = document.getElementById("failed"); f.checked = true; f.dispatchEvent(new Event("change")); return true; })()`, nil); err != nil {
		t.Fatal(err)
	}
	cards = show(t, p, "P3", 0)
	if len(cards) != 1 || cards[0].Group != "ollama/demo" || cards[0].Verdict != "fail" {
		t.Errorf("failed only on P3: %+v", cards)
	}
	if cards = show(t, p, "P6", 0); len(cards) != 1 || cards[0].Verdict != "checkerror" {
		t.Errorf("failed only on P6: %+v; want the check error's card", cards)
	}
	var disagree []string
	if err := p.Eval(`(() => { const f = document.getElementById("disagree"); f.checked = true; f.dispatchEvent(new Event("change"));
		return [...document.querySelectorAll("#prompt-list button")].map(b => b.dataset.prompt); })()`, &disagree); err != nil {
		t.Fatal(err)
	}
	if strings.Join(disagree, ",") != "P3,P6" {
		t.Errorf("prompts the groups disagree on: %v, want [P3 P6]", disagree)
	}

	var pwned bool
	if err := p.Eval(`!!window.pwned`, &pwned); err != nil || pwned {
		t.Errorf("model text ran as HTML (pwned %v, %v)", pwned, err)
	}
	if errs, err := p.Errors(); err != nil || len(errs) > 0 {
		t.Errorf("console errors (%v):\n%s", err, strings.Join(errs, "\n"))
	}
	if rr := p.RemoteRequests(); len(rr) > 0 {
		t.Errorf("answers.html requested %v; it must load nothing", rr)
	}
	shot := filepath.Join(t.ArtifactDir(), "answers.png")
	if err := p.Screenshot(shot); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot %s", shot)
}

func shown(s *string) string {
	if s == nil {
		return "<none>"
	}
	return *s
}

// The page's data never holds more than the caps: a 4 MB answer is cut,
// each cut ends on a whole rune, and a large run gets a smaller cap.
func TestCaps(t *testing.T) {
	if TextCap(10) != MaxTextBytes || TextCap(6144) != MaxTextBytes || TextCap(20_000) != BudgetBytes/40_000 || TextCap(100_000) != MinTextBytes {
		t.Errorf("caps %d %d %d %d", TextCap(10), TextCap(6144), TextCap(20_000), TextCap(100_000))
	}
	s := strings.Repeat("é", 2000)
	if c := cut(s, 1001); len(c) != 1000 || !utf8.ValidString(c) {
		t.Errorf("cut at a rune boundary: %d bytes", len(c))
	}
	dir, _ := fixtureRun(t)
	data, err := os.ReadFile(filepath.Join(dir, rundir.AnswersHTML))
	if err != nil {
		t.Fatal(err)
	}
	if len(data) > 200<<10 {
		t.Errorf("answers.html is %d bytes for a 30-cell run with a 4 MB answer", len(data))
	}
	for _, bad := range []string{"</script><script>window.pwned", "<img src=x"} {
		if bytes.Contains(data, []byte(bad)) {
			t.Errorf("answers.html holds %q unescaped", bad)
		}
	}
}
