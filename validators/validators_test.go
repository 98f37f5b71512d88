package validators

import (
	"encoding/json"
	"math/rand"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"bench/toolparse"
)

// spec decodes one spec from YAML the way prompt files do.
func spec(t testing.TB, src string) Spec {
	t.Helper()
	var s Spec
	if err := yaml.Unmarshal([]byte(src), &s); err != nil {
		t.Fatalf("decode %s: %v", src, err)
	}
	return s
}

type checkCase struct {
	name      string
	spec      string
	text      string
	pass      bool
	violation string // expected violation when !pass ("" = don't care)
	parsed    string // expected JSON of Parsed ("" = don't care)
}

func runCases(t *testing.T, cases []checkCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := spec(t, tc.spec)
			o := s.Check(Input{Text: tc.text})
			if o.Pass == nil {
				t.Fatalf("Pass is nil")
			}
			if *o.Pass != tc.pass {
				t.Fatalf("pass = %v, want %v (violation %q)", *o.Pass, tc.pass, o.Violation)
			}
			if tc.pass && o.Violation != "" {
				t.Errorf("passing check has violation %q", o.Violation)
			}
			if !tc.pass && tc.violation != "" && o.Violation != tc.violation {
				t.Errorf("violation = %q, want %q", o.Violation, tc.violation)
			}
			if tc.parsed != "" {
				b, err := json.Marshal(o.Parsed)
				if err != nil {
					t.Fatal(err)
				}
				if string(b) != tc.parsed {
					t.Errorf("parsed = %s, want %s", b, tc.parsed)
				}
			}
		})
	}
}

func TestExact(t *testing.T) {
	const s = `{type: exact, value: "OK"}`
	runCases(t, []checkCase{
		{"plain", s, "OK", true, "", `{"text":"OK"}`},
		{"trailing newline", s, "OK\n", true, "", ""},
		{"surrounding whitespace", s, "  \t OK \r\n", true, "", ""},
		{"trailing period", s, "OK.", false, `expected exactly "OK", got "OK."`, `{"text":"OK."}`},
		{"case matters", s, "ok", false, `expected exactly "OK", got "ok"`, ""},
		{"inner text", s, "OK, done", false, "", ""},
		{"empty", s, "", false, `expected exactly "OK", got ""`, ""},
		{"long answer shortened", s, strings.Repeat("x", 500), false, `expected exactly "OK", got "` + strings.Repeat("x", 59) + `…"`, ""},
	})
}

func TestOneOf(t *testing.T) {
	const s = `{type: one_of, values: ["Canberra", "Canberra, ACT"]}`
	runCases(t, []checkCase{
		{"first", s, "Canberra", true, "", `{"text":"Canberra"}`},
		{"second", s, "Canberra, ACT\n", true, "", ""},
		{"wrong", s, "Sydney", false, `expected one of ["Canberra", "Canberra, ACT"], got "Sydney"`, ""},
		{"case", s, "canberra", false, "", ""},
		{"punctuation", s, "Canberra.", false, "", ""},
	})
}

func TestRegexFullmatch(t *testing.T) {
	runCases(t, []checkCase{
		{"match", `{type: regex_fullmatch, pattern: "391"}`, "391\n", true, "", `{"text":"391"}`},
		{"partial is not full", `{type: regex_fullmatch, pattern: "391"}`, "The answer is 391", false, `"The answer is 391" does not fully match /391/`, ""},
		{"prefix is not full", `{type: regex_fullmatch, pattern: "391"}`, "3910", false, "", ""},
		{"alternation anchored as group", `{type: regex_fullmatch, pattern: "a|b"}`, "ab", false, "", ""},
		{"alternation ok", `{type: regex_fullmatch, pattern: "a|b"}`, "b", true, "", ""},
		{"case sensitive by default", `{type: regex_fullmatch, pattern: "yes"}`, "Yes", false, "", ""},
		{"inline (?i)", `{type: regex_fullmatch, pattern: "(?i)yes"}`, "Yes", true, "", ""},
		{"dot stops at newline", `{type: regex_fullmatch, pattern: "a.*b"}`, "a\nb", false, "", ""},
		{"inline (?s)", `{type: regex_fullmatch, pattern: "(?s)a.*b"}`, "a\nb", true, "", ""},
		{"(?m) cannot unanchor", `{type: regex_fullmatch, pattern: "(?m)^a$"}`, "a\nb", false, "", ""},
		{"duration", `{type: regex_fullmatch, pattern: "2h 35m"}`, " 2h 35m\n", true, "", ""},
	})
}

func TestMaxWords(t *testing.T) {
	const s = `{type: max_words, value: 3}`
	runCases(t, []checkCase{
		{"under", s, "two words", true, "", `{"words":2}`},
		{"at bound", s, "one two three\n", true, "", `{"words":3}`},
		{"over", s, "one two three four", false, "4 words, expected at most 3", `{"words":4}`},
		{"dash is not a word", s, "one - two — three", true, "", `{"words":3}`},
		{"hyphenated is one", s, "state-of-the-art don't stop", true, "", `{"words":3}`},
		{"newlines separate", s, "one\ntwo\nthree\nfour", false, "", `{"words":4}`},
		{"empty", s, "", true, "", `{"words":0}`},
	})
}

func TestCountSentences(t *testing.T) {
	cases := []struct {
		text string
		want int
	}{
		{"", 0},
		{"One sentence.", 1},
		{"One sentence", 1},
		{"One. Two.", 2},
		{"One. Two", 2},
		{"Is it? Yes! Fine.", 3},
		{"Really?! Yes.", 2},
		{"Wait... what happened.", 2},
		{"Pi is 3.14 roughly. Fine.", 2},
		{"Visit example.com today.", 1},
		{"Dr. Smith arrived. He sat.", 2},
		{"Fruit, e.g. apples, is good. Yes.", 2},
		{"Fruit, i.e., apples. Yes.", 2},
		{"J. R. R. Tolkien wrote it.", 1},
		{"In the U.S. Then more.", 1},
		{"Apples, pears etc. are fruit.", 1},
		{"I like apples, pears etc. They are fruit.", 2},
		{"It was 5 p.m. and late.", 1},
		{"He said \"stop.\" Then left.", 2},
		{"(This is one.) And two.", 2},
		{"**Bold ends.** Next.", 2},
		{"Line one\nLine two", 2},
		{"First line.\n\nSecond paragraph.", 2},
		{"- item one\n- item two\n- item three", 3},
		{"1. Install it\n2. Run it", 2},
		{"---\n***", 0},
		{"The sky is blue because of Rayleigh scattering. Shorter wavelengths scatter more.", 2},
		{"Ends with ellipsis…", 1},
		{"Version 1.2. Next.", 2},
		{"The answer is 42. Next one.", 2},
		{"他来了。她走了。", 2},
	}
	for _, tc := range cases {
		if got := CountSentences(tc.text); got != tc.want {
			t.Errorf("CountSentences(%q) = %d, want %d", tc.text, got, tc.want)
		}
	}
}

func TestMaxSentences(t *testing.T) {
	const s = `{type: max_sentences, value: 2}`
	runCases(t, []checkCase{
		{"two", s, "The sky scatters blue light. We see it everywhere.\n", true, "", `{"sentences":2}`},
		{"three", s, "One. Two! Three?", false, "3 sentences, expected at most 2", `{"sentences":3}`},
		{"list counts per line", s, "- a\n- b\n- c", false, "3 sentences, expected at most 2", ""},
	})
}

func TestCountBullets(t *testing.T) {
	cases := []struct {
		text string
		want int
	}{
		{"- a\n- b", 2},
		{"* a\n* b\n+ c\n• d", 4},
		{"- a\n* b", 2},
		{"  - nested\n- top", 2},
		{"Intro:\n- a\n- b\nOutro.", 2},
		{"1. a\n2. b", 0},
		{"---\n* * *\n- \n-", 0},
		{"**bold**\n*emphasis*", 0},
		{"-no space\n-- double", 0},
		{"```\n- in code\n```\n- out", 1},
		{"\t- tab indented\n-\tafter tab", 2},
		{"- [ ] task\n- [x] done", 2},
	}
	for _, tc := range cases {
		if got := CountBullets(tc.text); got != tc.want {
			t.Errorf("CountBullets(%q) = %d, want %d", tc.text, got, tc.want)
		}
	}
}

func TestExactBullets(t *testing.T) {
	const s = `{type: exact_bullets, value: 5}`
	five := "- Catch regressions\n- Document behaviour\n- Enable refactoring\n- Speed up reviews\n- Give confidence\n"
	runCases(t, []checkCase{
		{"five dash", s, five, true, "", `{"bullets":5}`},
		{"five star", s, strings.ReplaceAll(five, "-", "*"), true, "", ""},
		{"three", s, "- a\n- b\n- c", false, "3 bullets, expected 5", `{"bullets":3}`},
		{"six", s, five + "- Extra", false, "6 bullets, expected 5", ""},
		{"numbered", s, "1. a\n2. b\n3. c\n4. d\n5. e", false, "0 bullets, expected 5", ""},
	})
}

const planet = `{type: json_keys, required_keys: [name, moons, has_rings], key_rules: {name: {enum: ["Mars"]}, moons: {type: integer, enum: [2]}, has_rings: {type: boolean, enum: [false]}}}`

func TestJSONKeys(t *testing.T) {
	const order = `{type: json_keys, required_keys: [customer, items, total], key_rules: {customer: {type: string, enum: ["Dana"]}, items: {type: array, non_empty: true}, total: {type: number, enum: [149.5]}}}`
	good := `{"name": "Mars", "moons": 2, "has_rings": false}`
	runCases(t, []checkCase{
		{"plain", planet, good, true, "", `{"has_rings":false,"moons":2,"name":"Mars"}`},
		{"trailing newline", planet, good + "\n", true, "", ""},
		{"json fence", planet, "```json\n" + good + "\n```", true, "", ""},
		{"bare fence", planet, "```\n" + good + "\n```\n", true, "", ""},
		{"tilde fence", planet, "~~~json\n" + good + "\n~~~", true, "", ""},
		{"prose before", planet, "Here it is:\n" + good, false, "", ""},
		{"prose after fence", planet, "```json\n" + good + "\n```\nHope this helps!", false, "", ""},
		{"two objects", planet, good + good, false, "not JSON: text after the JSON value", ""},
		{"array", planet, `[` + good + `]`, false, "want a JSON object, got array", ""},
		{"not json", planet, "Mars has two moons.", false, "", ""},
		{"empty", planet, "", false, "not JSON: empty answer", ""},
		{"missing key", planet, `{"name": "Mars", "has_rings": false}`, false, "missing key: moons", ""},
		{"missing keys", planet, `{"name": "Mars"}`, false, "missing keys: moons, has_rings", ""},
		{"integer as 2.0", planet, `{"name": "Mars", "moons": 2.0, "has_rings": false}`, true, "", ""},
		{"wrong type", planet, `{"name": "Mars", "moons": "2", "has_rings": false}`, false, `moons: got string "2", want integer`, ""},
		{"not integer", planet, `{"name": "Mars", "moons": 2.5, "has_rings": false}`, false, `moons: got number 2.5, want integer`, ""},
		{"wrong enum", planet, `{"name": "mars", "moons": 2, "has_rings": false}`, false, `name: got "mars", want "Mars"`, ""},
		{"several problems", planet, `{"name": "Venus", "moons": 0}`, false, `missing key: has_rings; moons: got 0, want 2; name: got "Venus", want "Mars"`, ""},
		{"extra keys allowed", planet, `{"name": "Mars", "moons": 2, "has_rings": false, "radius_km": 3389.5}`, true, "", ""},
		{"order", order, `{"customer": "Dana", "items": ["lamp", "rug"], "total": 149.50}`, true, "", ""},
		{"order empty items", order, `{"customer": "Dana", "items": [], "total": 149.5}`, false, "items: empty", ""},
		{"order string total", order, `{"customer": "Dana", "items": ["lamp"], "total": "149.50"}`, false, `total: got string "149.50", want number`, ""},
	})
}

func TestKeyRuleTypes(t *testing.T) {
	cases := []struct {
		rule  string
		value string
		pass  bool
	}{
		{"string", `"x"`, true}, {"string", `1`, false},
		{"number", `1.5`, true}, {"number", `"1"`, false},
		{"integer", `3`, true}, {"integer", `3.5`, false}, {"integer", `1e2`, true},
		{"boolean", `true`, true}, {"boolean", `"true"`, false},
		{"array", `[]`, true}, {"array", `{}`, false},
		{"object", `{}`, true}, {"object", `[]`, false},
		{`"null"`, `null`, true}, {`"null"`, `0`, false},
		{"{type: string, non_empty: true}", `"  "`, false},
		{"{type: string, non_empty: true}", `"a"`, true},
		{"{type: object, non_empty: true}", `{}`, false},
		{"{non_empty: true}", `null`, false},
		{"{non_empty: true}", `0`, true},
		{"[a, b]", `"b"`, true},
		{"[a, b]", `"c"`, false},
		{"[1, 2]", `2.0`, true},
		{"[1, 2]", `"2"`, false},
		{"{enum: [true]}", `true`, true},
		{"{enum: [null]}", `null`, true},
	}
	for _, tc := range cases {
		s := spec(t, `{type: json_keys, required_keys: [k], key_rules: {k: `+tc.rule+`}}`)
		o := s.Check(Input{Text: `{"k": ` + tc.value + `}`})
		if *o.Pass != tc.pass {
			t.Errorf("rule %s on %s: pass = %v, want %v (%s)", tc.rule, tc.value, *o.Pass, tc.pass, o.Violation)
		}
	}
}

func TestToolInvocation(t *testing.T) {
	s := spec(t, `{type: tool_invocation, expected_tools: [ps, top]}`)
	cases := []struct {
		calls     []toolparse.Call
		pass      bool
		violation string
		parsed    string
	}{
		{nil, false, "no tool call, expected one of [ps, top]", `{"matched_tools":[],"tool_calls":[]}`},
		{[]toolparse.Call{{Name: "free", Source: "text"}}, false, "called [free], expected one of [ps, top]", ""},
		{[]toolparse.Call{{Name: "free"}, {Name: "top"}}, true, "", `{"matched_tools":["top"],"tool_calls":["free","top"]}`},
		{[]toolparse.Call{{Name: "ps", Source: "native"}, {Name: "ps"}}, true, "", `{"matched_tools":["ps"],"tool_calls":["ps","ps"]}`},
		{[]toolparse.Call{{Name: "PS"}}, false, "", ""},
	}
	for i, tc := range cases {
		o := s.Check(Input{Text: "whatever", ToolCalls: tc.calls})
		if *o.Pass != tc.pass {
			t.Errorf("%d: pass = %v, want %v", i, *o.Pass, tc.pass)
		}
		if tc.violation != "" && o.Violation != tc.violation {
			t.Errorf("%d: violation = %q, want %q", i, o.Violation, tc.violation)
		}
		if tc.parsed != "" {
			b, _ := json.Marshal(o.Parsed)
			if string(b) != tc.parsed {
				t.Errorf("%d: parsed = %s, want %s", i, b, tc.parsed)
			}
		}
	}
}

func TestCheckAll(t *testing.T) {
	noop := spec(t, `{type: noop}`)
	re := spec(t, `{type: regex_fullmatch, pattern: "2h 35m"}`)
	words := spec(t, `{type: max_words, value: 2}`)
	js := spec(t, planet)

	if o := CheckAll(nil, Input{Text: "x"}); o.Pass != nil || o.Parsed != nil {
		t.Errorf("no specs: %+v", o)
	}
	if o := CheckAll([]Spec{noop}, Input{Text: "x"}); o.Pass != nil || o.Violation != "" {
		t.Errorf("noop: %+v", o)
	}
	o := CheckAll([]Spec{re, words}, Input{Text: "2h 35m\n"})
	if o.Pass == nil || !*o.Pass {
		t.Fatalf("both pass: %+v", o)
	}
	if b, _ := json.Marshal(o.Parsed); string(b) != `{"text":"2h 35m","words":2}` {
		t.Errorf("merged parsed = %s", b)
	}
	o = CheckAll([]Spec{noop, re, words}, Input{Text: "It takes 2h 35m"})
	if o.Pass == nil || *o.Pass {
		t.Fatalf("should fail: %+v", o)
	}
	if want := `"It takes 2h 35m" does not fully match /2h 35m/; 4 words, expected at most 2`; o.Violation != want {
		t.Errorf("violation = %q, want %q", o.Violation, want)
	}
	o = CheckAll([]Spec{words, js}, Input{Text: `{"name":"Mars","moons":2,"has_rings":false}`})
	if b, _ := json.Marshal(o.Parsed); string(b) != `{"json":{"has_rings":false,"moons":2,"name":"Mars"},"words":1}` {
		t.Errorf("json merged parsed = %s", b)
	}
	one := CheckAll([]Spec{js}, Input{Text: `{"name":"Mars","moons":2,"has_rings":false}`})
	if b, _ := json.Marshal(one.Parsed); string(b) != `{"has_rings":false,"moons":2,"name":"Mars"}` {
		t.Errorf("single json parsed = %s", b)
	}
}

// Specs built in Go rather than decoded must not panic when malformed.
func TestInvalidGoSpecs(t *testing.T) {
	for _, s := range []Spec{
		{Type: "exact", Value: 3},
		{Type: "one_of"},
		{Type: "regex_fullmatch", Pattern: "("},
		{Type: "max_words", Value: "ten"},
		{Type: "max_sentences", Value: -1},
		{Type: "exact_bullets", Value: 2.5},
		{Type: "tool_invocation"},
		{Type: "bogus"},
		{},
	} {
		o := s.Check(Input{Text: "x"})
		if o.Pass == nil || *o.Pass || !strings.HasPrefix(o.Violation, "invalid validator: ") {
			t.Errorf("%+v: %+v", s, o)
		}
	}
	// A Go-built spec with a good pattern works without YAML decoding.
	s := Spec{Type: "regex_fullmatch", Pattern: "a+"}
	if o := s.Check(Input{Text: "aaa"}); !*o.Pass {
		t.Errorf("go-built regex spec: %+v", o)
	}
	s = Spec{Type: "max_words", Value: float64(2)} // as decoded from JSON
	if o := s.Check(Input{Text: "a b"}); !*o.Pass {
		t.Errorf("float value: %+v", o)
	}
}

// noise returns n bytes mixing valid text, markdown, JSON and invalid UTF-8.
func noise(seed int64, n int) string {
	r := rand.New(rand.NewSource(seed))
	pieces := []string{"- ", "* ", "```json\n", "```", "{", "}", "\"", ":", ",", "[", "]", ". ", "? ", "!", "…", "\n", " ", "e.g.", "3.14", "Dr.", "\xff", "\xc3", "\xe2\x80", "word", "$ ", "# ", "`", "\t", "\x00"}
	var b strings.Builder
	for b.Len() < n {
		if r.Intn(4) == 0 {
			b.WriteByte(byte(r.Intn(256)))
		} else {
			b.WriteString(pieces[r.Intn(len(pieces))])
		}
	}
	return b.String()
}

func TestNoPanicOnNoise(t *testing.T) {
	specs := []Spec{
		spec(t, `{type: exact, value: "OK"}`),
		spec(t, `{type: one_of, values: [a]}`),
		spec(t, `{type: regex_fullmatch, pattern: "(?s).*x.*"}`),
		spec(t, `{type: max_words, value: 1}`),
		spec(t, `{type: max_sentences, value: 1}`),
		spec(t, `{type: exact_bullets, value: 1}`),
		spec(t, planet),
		spec(t, `{type: tool_invocation, expected_tools: [df]}`),
		spec(t, `{type: noop}`),
	}
	for seed := int64(0); seed < 4; seed++ {
		text := noise(seed, 64<<10)
		o := CheckAll(specs, Input{Text: text, ToolCalls: toolparse.Detect(nil, text)})
		if o.Pass == nil || *o.Pass {
			t.Errorf("seed %d: noise passed all checks: %+v", seed, o.Pass)
		}
		if len(o.Violation) > 2000 {
			t.Errorf("seed %d: violation too long (%d bytes)", seed, len(o.Violation))
		}
		if _, err := json.Marshal(o.Parsed); err != nil {
			t.Errorf("seed %d: parsed not encodable: %v", seed, err)
		}
	}
	bad := "\xff\xfe{\"k\": \"\xff\"}\xc3"
	for _, s := range specs {
		s.Check(Input{Text: bad})
	}
}

func FuzzJSONKeys(f *testing.F) {
	for _, seed := range []string{
		`{"name": "Mars", "moons": 2, "has_rings": false}`,
		"```json\n{\"name\": \"Mars\"}\n```",
		"```\n```",
		"```json```",
		`[1, 2]`,
		`{"moons": 2.0, "name": null}`,
		`{"a": {"b": [1, {"c": "d"}]}} trailing`,
		"\xff{\"name\": \"\xfe\"}",
		"",
		"~~~\n{}\n~~~",
	} {
		f.Add(seed)
	}
	s := spec(f, planet)
	f.Fuzz(func(t *testing.T, text string) {
		o := s.Check(Input{Text: text})
		if o.Pass == nil {
			t.Fatal("json_keys returned nil Pass")
		}
		if !*o.Pass && o.Violation == "" {
			t.Fatal("failure without violation")
		}
		if *o.Pass {
			if _, err := ParseJSONObject(text); err != nil {
				t.Fatalf("passed but does not parse: %v", err)
			}
		}
		if _, err := json.Marshal(o.Parsed); err != nil {
			t.Fatalf("parsed not encodable: %v", err)
		}
	})
}
