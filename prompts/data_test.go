package prompts

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const ticketTemplate = `# one prompt a row of tickets.csv
template:
  id: "ticket-{{ticket_id}}"
  name: "triage {{ ticket_id }}"
  system: "You triage support tickets."
  prompt: |
    Label this ticket billing, bug or other. Reply with the label only.
    {{body}}
  validators:
    - {type: exact, value: "{{label}}"}
    - {type: max_words, value: 1}
`

const ticketCSV = "ticket_id,body,label\n" +
	"T-1,\"I was charged twice, please refund\",billing\n" +
	"T-2,\"The app crashes\nwhen I log in\",bug\n" +
	"T-3,Where is your office?,other\n" +
	"42,\"Says \"\"hi\"\"\",42\n"

func writeFiles(t testing.TB, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestLoadDataCSV(t *testing.T) {
	dir := writeFiles(t, map[string]string{"tickets.csv": ticketCSV, "tickets.yaml": ticketTemplate})
	ps, err := LoadData(filepath.Join(dir, "tickets.csv"), filepath.Join(dir, "tickets.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(ps) != 4 {
		t.Fatalf("%d prompts, want 4", len(ps))
	}
	p := ps[1]
	if p.ID != "ticket-T-2" || p.Name != "triage T-2" || p.System != "You triage support tickets." {
		t.Errorf("prompt = %+v", p)
	}
	if want := "Label this ticket billing, bug or other. Reply with the label only.\nThe app crashes\nwhen I log in\n"; p.Prompt != want {
		t.Errorf("prompt text = %q", p.Prompt)
	}
	if p.Source != filepath.Join(dir, "tickets.csv") || p.Line != 3 {
		t.Errorf("source %s line %d, want the data file and the row's line 3", p.Source, p.Line)
	}
	if v := p.Checks()[0].Value; v != "bug" {
		t.Errorf("exact value = %v", v)
	}
	// A value that looks like a number is still the string exact wants.
	if v := ps[3].Checks()[0].Value; v != "42" || ps[3].ID != "ticket-42" || !strings.Contains(ps[3].Prompt, `Says "hi"`) {
		t.Errorf("row 4: %+v", ps[3])
	}
	if ps[3].Line != 6 {
		t.Errorf("row 4 starts on line %d, want 6 (row 2 spans two lines)", ps[3].Line)
	}
}

func TestLoadDataJSONL(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"cases.jsonl": `{"id": "a", "q": "2+2?", "want": 4, "strict": true, "meta": {"k": [1, 2]}}` + "\n\n" +
			`{"id": "b", "q": "3+3?", "want": 6.0, "strict": false, "meta": "plain"}` + "\n",
		"t.yaml": "template:\n  id: \"{{id}}\"\n  prompt: \"{{q}} {{meta}}\"\n  validator: {type: one_of, values: [\"{{want}}\", \"{{strict}}\"]}\n",
	})
	ps, err := LoadData(filepath.Join(dir, "cases.jsonl"), filepath.Join(dir, "t.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(ps) != 2 || ps[0].Prompt != `2+2? {"k":[1,2]}` || ps[1].Line != 3 {
		t.Fatalf("prompts = %+v", ps)
	}
	if got := strings.Join(ps[1].Checks()[0].Values, ","); got != "6.0,false" {
		t.Errorf("values = %s (numbers as their JSON text)", got)
	}
}

// A row keeps its id when rows are added before it: ids come from the
// row's columns, never its place.
func TestDataIDsStable(t *testing.T) {
	dir := writeFiles(t, map[string]string{"tickets.yaml": ticketTemplate, "a.csv": ticketCSV,
		"b.csv": strings.Replace(ticketCSV, "T-1,", "T-0,New one,other\nT-1,", 1)})
	load := func(name string) map[string]string {
		ps, err := LoadData(filepath.Join(dir, name), filepath.Join(dir, "tickets.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		m := map[string]string{}
		for _, p := range ps {
			m[p.ID] = p.Prompt
		}
		return m
	}
	a, b := load("a.csv"), load("b.csv")
	if len(b) != len(a)+1 {
		t.Fatalf("%d then %d prompts", len(a), len(b))
	}
	for id, text := range a {
		if b[id] != text {
			t.Errorf("%s changed when a row was added before it: %q -> %q", id, text, b[id])
		}
	}
}

func TestDataErrors(t *testing.T) {
	good := "template:\n  id: \"{{id}}\"\n  prompt: \"Say {{word}}\"\n  validator: {type: exact, value: \"{{word}}\"}\n"
	cases := []struct {
		name, data, ext, template string
		want                      []string
	}{
		{"unknown placeholder", "id,word\n1,a\n", "csv", strings.Replace(good, "{{word}}\"}", "{{wordd}}\"}", 1),
			[]string{"t.yaml:4: template: unknown placeholder {{wordd}}: data.csv has no such column (did you mean \"word\"?) (columns: id, word)"}},
		{"missing column in a row", `{"id": "1", "word": "a"}` + "\n" + `{"id": "2"}` + "\n", "jsonl", good,
			[]string{`data.jsonl:2: row 2: word: no column "word", and the template uses {{word}}`}},
		{"null value", `{"id": "1", "word": null}` + "\n", "jsonl", good, []string{"data.jsonl:1: row 1: word: null, and the template uses {{word}}"}},
		{"not an object", "[1]\n", "jsonl", good, []string{"data.jsonl:1: row 1: not a JSON object"}},
		{"duplicate id", "id,word\n1,a\n2,b\n1,c\n", "csv", good,
			[]string{`data.csv:4: row 3: id: duplicate prompt id "1" (also row 1, line 2)`}},
		{"ragged row", "id,word\n1,a\n2,b,extra\n3\n", "csv", good,
			[]string{"data.csv:3: row 2: a ragged row", "data.csv:4: row 3: a ragged row"}},
		{"bare quote", "id,word\n1,a\"b\n", "csv", good, []string{`data.csv:2: row 1: bare " in non-quoted-field`}},
		{"invalid UTF-8", "id,word\n1,a\n2,b\xff\n", "csv", good, []string{"data.csv:3: not UTF-8 text"}},
		{"invalid UTF-8 in the template", "id,word\n1,a\n", "csv", good + "# \xfe\n", []string{"t.yaml:5: not UTF-8 text"}},
		{"duplicate header", "id,id\n1,2\n", "csv", good, []string{`data.csv:1: header: column "id" is named twice`}},
		{"empty header", "id,,word\n1,2,3\n", "csv", good, []string{"data.csv:1: header: column 2 has no name"}},
		{"no rows", "id,word\n", "csv", good, []string{"data.csv:1: no rows"}},
		{"id from no column", "id,word\n1,a\n", "csv", strings.Replace(good, `"{{id}}"`, "fixed", 1),
			[]string{"t.yaml:2: template.id: must name the columns that identify a row"}},
		{"no id", "id,word\n1,a\n", "csv", "template:\n  prompt: \"Say {{word}}\"\n  validator: {type: noop}\n", []string{"t.yaml:2: template.id: missing"}},
		{"stray braces", "id,word\n1,a\n", "csv", strings.Replace(good, "Say {{word}}", "Say {{word", 1),
			[]string{`t.yaml:3: template.prompt: "{{word" opens no placeholder`}},
		{"placeholder in a key", "id,word\n1,a\n", "csv", good + "  \"{{word}}\": x\n", []string{"t.yaml:5: template.{{word}}: a key holds no placeholder"}},
		{"unknown template key", "id,word\n1,a\n", "csv", good + "  promt: x\n", []string{`t.yaml:5: template.promt: unknown field "promt" (did you mean "prompt"?)`}},
		{"template's own check", "id,word\n1,a\n", "csv", strings.Replace(good, "type: exact", "type: exakt", 1), []string{`t.yaml:4: validator.type: unknown validator type "exakt"`}},
		{"a row's value breaks a check", "id,word\n1,a\n2,(\n", "csv", strings.Replace(good, "type: exact, value", "type: regex_fullmatch, pattern", 1),
			[]string{"data.csv:3: row 2: validator.pattern (template t.yaml:4): bad regex"}},
		{"a row's value empties the id", "id,word\n1,a\n\"\",b\n", "csv", good, []string{"data.csv:3: row 2: id (template t.yaml:2): missing"}},
		{"a row's value empties the answer", "id,word\n1,a\n2,\n", "csv", good, []string{"data.csv:3: row 2: validator.value (template t.yaml:4): empty"}},
		{"number key from a placeholder", "id,word,n\n1,a,3\n", "csv", "template:\n  id: \"{{id}}\"\n  prompt: \"Say {{word}}\"\n  validator: {type: max_words, value: \"{{n}}\"}\n",
			[]string{"t.yaml:4: validator.value: want a positive integer"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := writeFiles(t, map[string]string{"data." + tc.ext: tc.data, "t.yaml": tc.template})
			ps, err := LoadData(filepath.Join(dir, "data."+tc.ext), filepath.Join(dir, "t.yaml"))
			if err == nil {
				t.Fatalf("loaded %d prompts", len(ps))
			}
			msg := strings.ReplaceAll(err.Error(), dir+string(filepath.Separator), "")
			for _, w := range tc.want {
				if !strings.Contains(msg, w) {
					t.Errorf("error:\n%s\nwant it to contain:\n%s", msg, w)
				}
			}
		})
	}
}

// Row errors are bounded: a template mistake over 10,000 rows is not
// 10,000 lines.
func TestDataErrorsBounded(t *testing.T) {
	var b strings.Builder
	b.WriteString("id,word\n")
	for i := range 500 {
		fmt.Fprintf(&b, "%d,\n", i)
	}
	dir := writeFiles(t, map[string]string{"data.csv": b.String(),
		"t.yaml": "template:\n  id: \"{{id}}\"\n  prompt: \"Say it\"\n  validator: {type: exact, value: \"{{word}}\"}\n"})
	_, err := LoadData(filepath.Join(dir, "data.csv"), filepath.Join(dir, "t.yaml"))
	if err == nil {
		t.Fatal("loaded")
	}
	lines := strings.Split(err.Error(), "\n")
	if len(lines) != maxRowErrors+1 || !strings.HasSuffix(lines[len(lines)-1], "and 480 more problems like these") {
		t.Errorf("%d lines, last %q", len(lines), lines[len(lines)-1])
	}
}

// A command validator in a template finds its program relative to the
// template, as a prompt file's does relative to itself.
func TestDataCommandProgram(t *testing.T) {
	dir := writeFiles(t, map[string]string{"data.csv": "id,want\n1,a\n",
		"t.yaml":   "template:\n  id: \"c{{id}}\"\n  prompt: \"Say it\"\n  validator: {type: command, argv: [./check.sh, \"{{want}}\"]}\n",
		"check.sh": "#!/bin/sh\nexit 0\n"})
	if err := os.Chmod(filepath.Join(dir, "check.sh"), 0o755); err != nil {
		t.Fatal(err)
	}
	ps, err := LoadData(filepath.Join(dir, "data.csv"), filepath.Join(dir, "t.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if got := ps[0].Checks()[0].Argv; got[0] != filepath.Join(dir, "check.sh") || got[1] != "a" {
		t.Errorf("argv = %q", got)
	}
}

// 10,000 rows load into 10,000 prompts with unique ids in the file's order.
func TestDataTenThousandRows(t *testing.T) {
	var b strings.Builder
	b.WriteString("ticket_id,body,label\n")
	for i := range 10_000 {
		fmt.Fprintf(&b, "T%05d,\"Body of ticket %d, with a comma\",label%d\n", i, i, i%3)
	}
	dir := writeFiles(t, map[string]string{"tickets.csv": b.String(), "tickets.yaml": ticketTemplate})
	ps, err := LoadData(filepath.Join(dir, "tickets.csv"), filepath.Join(dir, "tickets.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for i, p := range ps {
		if want := fmt.Sprintf("ticket-T%05d", i); p.ID != want || seen[p.ID] {
			t.Fatalf("prompt %d id %s, want %s once", i, p.ID, want)
		}
		seen[p.ID] = true
	}
	if len(ps) != 10_000 {
		t.Fatalf("%d prompts", len(ps))
	}
}

func BenchmarkLoadData(b *testing.B) {
	var sb strings.Builder
	sb.WriteString("ticket_id,body,label\n")
	for i := range 10_000 {
		fmt.Fprintf(&sb, "T%05d,\"Body of ticket %d, with a comma\",label%d\n", i, i, i%3)
	}
	dir := b.TempDir()
	os.WriteFile(filepath.Join(dir, "tickets.csv"), []byte(sb.String()), 0o644)
	os.WriteFile(filepath.Join(dir, "tickets.yaml"), []byte(ticketTemplate), 0o644)
	b.ResetTimer()
	for range b.N {
		if _, err := LoadData(filepath.Join(dir, "tickets.csv"), filepath.Join(dir, "tickets.yaml")); err != nil {
			b.Fatal(err)
		}
	}
}

// A data file's own row errors are bounded as the template's are: the
// first 20, then how many more (issue 31, item 21), for CSV and JSONL.
func TestDataRowErrorsSayHowManyMore(t *testing.T) {
	good := "template:\n  id: \"{{id}}\"\n  prompt: \"Say {{word}}\"\n  validator: {type: exact, value: \"{{word}}\"}\n"
	var csvData, jsonl strings.Builder
	csvData.WriteString("id,word\n")
	for i := range 50 {
		fmt.Fprintf(&csvData, "%d,a,extra\n", i)
		fmt.Fprintf(&jsonl, "[%d]\n", i)
	}
	for name, data := range map[string]string{"data.csv": csvData.String(), "data.jsonl": jsonl.String()} {
		dir := writeFiles(t, map[string]string{name: data, "t.yaml": good})
		_, err := LoadData(filepath.Join(dir, name), filepath.Join(dir, "t.yaml"))
		if err == nil {
			t.Fatalf("%s loaded", name)
		}
		lines := strings.Split(err.Error(), "\n")
		if len(lines) != maxRowErrors+1 || lines[len(lines)-1] != filepath.Join(dir, name)+": and 30 more problems like these" {
			t.Errorf("%s: %d lines, last %q", name, len(lines), lines[len(lines)-1])
		}
	}
}

// countingReader counts what is read of an endless stream of zeros.
type countingReader struct{ n int64 }

func (c *countingReader) Read(p []byte) (int, error) {
	clear(p)
	c.n += int64(len(p))
	return len(p), nil
}

// A data file is streamed, never read whole (issue 31, item 13): a file
// with no line end (a sparse gigabyte of zeros after the header) is
// refused at its first MiB, having read little more; a quoted value that
// never closes stops at MaxDataRecord; a file past MaxDataRows rows is
// refused at the row after the last. The time and memory of refusing a
// real 1 GB sparse file are BenchmarkRefuseSparseDataFile's.
func TestDataFilesAreStreamed(t *testing.T) {
	zeros := &countingReader{}
	lr := newLineReader("big.csv", io.MultiReader(strings.NewReader("id,word\n"), zeros))
	_, err := readCSV("big.csv", lr)
	if err == nil || !strings.Contains(err.Error(), "big.csv:2: a line longer than 1 MiB") {
		t.Errorf("err = %v", err)
	}
	if zeros.n > MaxDataLine+64<<10 {
		t.Errorf("read %d bytes of the endless line to refuse it", zeros.n)
	}
	unclosed := io.MultiReader(strings.NewReader("id,word\n1,\""), strings.NewReader(strings.Repeat("more text\n", MaxDataRecord/10+10)))
	if _, err := readCSV("q.csv", newLineReader("q.csv", unclosed)); err == nil || !strings.Contains(err.Error(), "a record longer than 4 MiB (an unclosed quote?)") {
		t.Errorf("unclosed quote: %v", err)
	}
	if _, err := readJSONL("z.jsonl", newLineReader("z.jsonl", &countingReader{})); err == nil || !strings.Contains(err.Error(), "z.jsonl:1: a line longer than 1 MiB") {
		t.Errorf("jsonl: %v", err)
	}
	// Rows past the cap: refused, not held.
	defer func(n int) { maxDataRows = n }(maxDataRows)
	maxDataRows = 1000
	rows := io.MultiReader(strings.NewReader("id\n"), &repeatReader{line: []byte("1\n"), n: maxDataRows + 5})
	if _, err := readCSV("many.csv", newLineReader("many.csv", rows)); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("many.csv:%d: more than 1000 rows", maxDataRows+2)) {
		t.Errorf("rows past the cap: %v", err)
	}
	maxDataRows = MaxDataRows
	// The real file, through LoadData.
	dir := writeFiles(t, map[string]string{"t.yaml": "template:\n  id: \"{{id}}\"\n  prompt: \"Say {{word}}\"\n  validator: {type: exact, value: \"{{word}}\"}\n"})
	path := sparseDataFile(t, dir, 64<<20)
	if _, err := LoadData(path, filepath.Join(dir, "t.yaml")); err == nil || !strings.Contains(err.Error(), "sparse.csv:2: a line longer than 1 MiB") {
		t.Errorf("sparse file: %v", err)
	}
}

// repeatReader gives line n times.
type repeatReader struct {
	line []byte
	n    int
	rest []byte
}

func (r *repeatReader) Read(p []byte) (int, error) {
	w := 0
	for w < len(p) {
		if len(r.rest) == 0 {
			if r.n == 0 {
				if w == 0 {
					return 0, io.EOF
				}
				break
			}
			r.n--
			r.rest = r.line
		}
		c := copy(p[w:], r.rest)
		r.rest, w = r.rest[c:], w+c
	}
	return w, nil
}

// sparseDataFile writes dir/sparse.csv: a header, then size bytes of
// zeros the file system holds as a hole.
func sparseDataFile(tb testing.TB, dir string, size int64) string {
	tb.Helper()
	path := filepath.Join(dir, "sparse.csv")
	if err := os.WriteFile(path, []byte("id,word\n"), 0o644); err != nil {
		tb.Fatal(err)
	}
	if err := os.Truncate(path, size); err != nil {
		tb.Fatal(err)
	}
	return path
}

// BenchmarkRefuseSparseDataFile is the time and the memory of refusing a
// 1 GB sparse CSV (a header, then a gigabyte of zeros with no line end);
// it was read whole (5.3 GB RSS, 2 min 9 s) before it was streamed.
func BenchmarkRefuseSparseDataFile(b *testing.B) {
	dir := writeFiles(b, map[string]string{"t.yaml": "template:\n  id: \"{{id}}\"\n  prompt: \"Say {{word}}\"\n  validator: {type: exact, value: \"{{word}}\"}\n"})
	path := sparseDataFile(b, dir, 1<<30)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := LoadData(path, filepath.Join(dir, "t.yaml")); err == nil {
			b.Fatal("loaded")
		}
	}
}

// A template's aliases are counted as what they expand to (issue 31,
// item 17): a 716-byte "billion laughs" is refused at once, where
// walking and copying it hung loading past 40 s; a template that uses a
// few aliases loads.
func TestTemplateAliasBudget(t *testing.T) {
	var b strings.Builder
	b.WriteString("template:\n  id: \"{{id}}\"\n  prompt: \"Say {{word}}\"\n  validator: {type: one_of, values: &v0 [\"{{word}}\", \"{{word}}\", \"{{word}}\", \"{{word}}\", \"{{word}}\", \"{{word}}\", \"{{word}}\", \"{{word}}\"]}\n  x:\n")
	for i := 1; i <= 9; i++ {
		fmt.Fprintf(&b, "    - &v%d [*v%d, *v%d, *v%d, *v%d, *v%d, *v%d, *v%d, *v%d]\n", i, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1)
	}
	dir := writeFiles(t, map[string]string{"data.csv": "id,word\n1,a\n", "laughs.yaml": b.String(),
		"ok.yaml": "template:\n  id: \"{{id}}\"\n  prompt: &p \"Say {{word}}\"\n  name: *p\n  validator: {type: exact, value: \"{{word}}\"}\n"})
	_, err := LoadData(filepath.Join(dir, "data.csv"), filepath.Join(dir, "laughs.yaml"))
	if err == nil || !strings.Contains(err.Error(), "laughs.yaml:1: template: more than 10000 YAML nodes once its aliases are followed") {
		t.Errorf("billion laughs (%d bytes): %v", b.Len(), err)
	}
	ps, err := LoadData(filepath.Join(dir, "data.csv"), filepath.Join(dir, "ok.yaml"))
	if err != nil || len(ps) != 1 || ps[0].Name != "Say a" {
		t.Errorf("a template with an alias: %v %+v", err, ps)
	}
}
