package bfcl

import (
	"encoding/json"
	"io/fs"
	"strconv"
	"strings"
	"testing"
	"testing/fstest"
)

// sourceCases is how many cases each source file holds (data/SOURCE.md).
var sourceCases = map[string]int{Simple: 400, Multiple: 200, Parallel: 200, ParallelMultiple: 200, Irrelevance: 240}

// The embedded files are exactly the draw SOURCE.md describes: per
// category, the cases whose ids (BFCL numbers them by line) are
// Pick(category, cases in the source file), each with its possible answer.
func TestSampleIsTheDraw(t *testing.T) {
	all, err := Builtin()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]int{}
	for _, c := range all {
		n, err := strconv.Atoi(c.ID[strings.LastIndex(c.ID, "_")+1:])
		if err != nil {
			t.Fatalf("id %s", c.ID)
		}
		got[c.Category] = append(got[c.Category], n)
		if c.Category != Irrelevance && len(c.Answers) == 0 {
			t.Errorf("%s: no possible answer", c.ID)
		}
		if c.User == "" || len(c.Functions) == 0 {
			t.Errorf("%s: no question or no function", c.ID)
		}
	}
	for i, cat := range Categories {
		want := Pick(i, sourceCases[cat.Name])
		if len(want) != PerCategory || !equalInts(got[cat.Name], want) {
			t.Errorf("%s: ids %v, want the draw %v", cat.Name, got[cat.Name], want)
		}
	}
	if len(all) != 5*PerCategory {
		t.Errorf("%d cases", len(all))
	}
	for _, f := range []string{"data/LICENSE", "data/SOURCE.md"} {
		b, err := data.ReadFile(f)
		if err != nil || len(b) < 100 {
			t.Errorf("%s: %v", f, err)
		}
	}
	if b, _ := data.ReadFile("data/LICENSE"); !strings.Contains(string(b), "Apache License") {
		t.Error("LICENSE is not gorilla's Apache License 2.0")
	}
	if b, _ := data.ReadFile("data/SOURCE.md"); !strings.Contains(string(b), "6ea57973c7a6097fd7c5915698c54c17c5b1b6c8") {
		t.Error("SOURCE.md does not name the commit")
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// Functions are offered as BFCL's FC handlers offer them, and each schema
// compiles (the runner validates every call against it).
func TestTools(t *testing.T) {
	all, err := Builtin()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for i := range all {
		for _, tool := range all[i].Tools() {
			n++
			if strings.Contains(tool.Name, ".") || !strings.HasSuffix(tool.Description, pythonHint) || tool.Parameters["type"] != "object" {
				t.Errorf("%s: %s %q %v", all[i].ID, tool.Name, tool.Description, tool.Parameters["type"])
			}
			if err := tool.CompileSchema(); err != nil {
				t.Errorf("%s: %s: %v", all[i].ID, tool.Name, err)
			}
		}
	}
	// One function with every conversion: float, tuple, any, dict with
	// properties, an array of dicts, a missing type.
	fns, err := ParseFunctions(json.RawMessage(`[{"name": "geo.route", "description": "Route.", "parameters": {"type": "dict", "properties": {
		"speed": {"type": "float", "description": "Speed."},
		"point": {"type": "tuple", "items": {"type": "float"}, "description": "A point."},
		"hint": {"type": "any", "description": "Anything."},
		"opts": {"type": "dict", "properties": {"fast": {"type": "boolean"}, "limit": {"type": "float", "description": "Limit."}}},
		"stops": {"type": "array", "items": {"type": "dict", "properties": {"name": {"type": "string"}, "wait": {"type": "float"}}}}
	}, "required": ["speed"]}}]`))
	if err != nil {
		t.Fatal(err)
	}
	got, _ := json.Marshal(fns[0].Tool())
	want := `{"name":"geo_route","description":"Route. Note that the provided function is in Python 3 syntax.","parameters":{"properties":{` +
		`"hint":{"description":"Anything.","type":"string"},` +
		`"opts":{"properties":{"fast":{"type":"boolean"},"limit":{"description":"Limit. This is a float type value.","format":"float","type":"number"}},"type":"object"},` +
		`"point":{"description":"A point.","items":{"type":"number"},"type":"array"},` +
		`"speed":{"description":"Speed. This is a float type value.","format":"float","type":"number"},` +
		`"stops":{"items":{"properties":{"name":{"type":"string"},"wait":{"description":" This is a float type value.","format":"float","type":"number"}},"type":"object"},"type":"array"}` +
		`},"required":["speed"],"type":"object"}}`
	if string(got) != want {
		t.Errorf("converted\n got %s\nwant %s", got, want)
	}
	if n < 200 {
		t.Errorf("%d tools", n)
	}
}

// Bad input: a case line that does not parse, a possible answer for a
// function the case does not offer, and an answer on the wrong line are
// errors naming the file, the line and the case id, all at once.
func TestLoadErrors(t *testing.T) {
	sub, err := fs.Sub(data, "data")
	if err != nil {
		t.Fatal(err)
	}
	read := func(name string) []string {
		b, err := fs.ReadFile(sub, name)
		if err != nil {
			t.Fatal(err)
		}
		return strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	}
	m := fstest.MapFS{}
	for _, c := range Categories {
		m[c.File] = &fstest.MapFile{Data: []byte(strings.Join(read(c.File), "\n"))}
		if c.Name != Irrelevance {
			m[AnswerDir+"/"+c.File] = &fstest.MapFile{Data: []byte(strings.Join(read(AnswerDir+"/"+c.File), "\n"))}
		}
	}
	edit := func(name string, line int, f func(string) string) {
		ls := strings.Split(string(m[name].Data), "\n")
		ls[line-1] = f(ls[line-1])
		m[name].Data = []byte(strings.Join(ls, "\n"))
	}
	edit("BFCL_v4_simple_python.json", 3, func(s string) string { return s[:len(s)-9] }) // cut short
	edit("possible_answer/BFCL_v4_parallel.json", 1, func(s string) string { return strings.Replace(s, "parallel_1", "parallel_5", 1) })
	_, err = Load(m, "x")
	if err == nil {
		t.Fatal("no error")
	}
	msg := err.Error()
	for _, want := range []string{
		"x/BFCL_v4_simple_python.json:3: case simple_python_15: not a BFCL case: unexpected end of JSON input",
		`x/possible_answer/BFCL_v4_parallel.json:1: case parallel_1: possible answer of case "parallel_5" on the line of case "parallel_1"`,
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("error lacks %q:\n%s", want, msg)
		}
	}
	// A possible answer naming a function the case does not offer.
	fns, _ := ParseFunctions(json.RawMessage(`[{"name": "a.b", "parameters": {"type": "dict", "properties": {}}}]`))
	if _, err := ParseAnswers(json.RawMessage(`[{"c.d": {}}]`), fns); err == nil || err.Error() != `ground_truth[0]: possible answer for function "c.d", which the case does not offer [a.b]` {
		t.Errorf("answer for a function not offered: %v", err)
	}
	m2 := fstest.MapFS{}
	for k, v := range m {
		m2[k] = &fstest.MapFile{Data: append([]byte(nil), v.Data...)}
	}
	m = m2
	for _, c := range Categories {
		m[c.File].Data = []byte(strings.Join(read(c.File), "\n"))
		if c.Name != Irrelevance {
			m[AnswerDir+"/"+c.File].Data = []byte(strings.Join(read(AnswerDir+"/"+c.File), "\n"))
		}
	}
	edit("possible_answer/BFCL_v4_simple_python.json", 1, func(s string) string { return strings.Replace(s, `"calculate_area"`, `"calculate_volume"`, 1) })
	edit("BFCL_v4_multiple.json", 1, func(s string) string { return strings.Replace(s, `"type": "integer"`, `"type": "int32"`, 1) })
	_, err = Load(m, "x")
	for _, want := range []string{
		`x/possible_answer/BFCL_v4_simple_python.json:1: case simple_python_10: ground_truth[0]: possible answer for function "calculate_volume", which the case does not offer [calculate_area]`,
		`x/BFCL_v4_multiple.json:1: case multiple_1: function "math.triangle_area_heron": parameter "side1": type "int32" is not one BFCL's checker knows`,
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
}
