package compare

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"bench/internal/record/results"
)

var update = flag.Bool("update", false, "rewrite testdata/golden")

// scenario is two runs with one of everything: regressions of quality and
// availability, drift, an improvement, a changed prompt, missing and new
// cells, two groups, a changed model digest, and text that XML and
// Markdown must escape.
func scenario(t *testing.T) (base, cur string) {
	t.Helper()
	dir := t.TempDir()
	memCall := call("get_memory_usage", `{"unit":"MB"}`)
	tool := withCalls([]string{"get_memory_usage"}, memCall)
	m2 := func(r *results.Record) { r.Model = "org/m2:7b" }
	baseRecs := []*results.Record{
		rec("P0", 0), rec("P0", 1), rec("P1", 0, tool), rec("P1", 1, tool), rec("P2", 0), rec("P2", 1, failing("no df")),
		rec("P0", 0, m2), rec("P0", 1, m2), rec("P1", 0, m2, tool), rec("P2", 0, m2),
	}
	changed := defaultPrompts()
	changed[2].Prompt = "Which command shows disk space? gamma"
	curRecs := []*results.Record{
		rec("P0", 0, withOutput("wrong ]]> \x01 <tag> | pipe"), failing(`want "answer P0"`)),
		rec("P0", 1, withOutput("answer P0, said differently")),
		rec("P1", 0, withCalls([]string{"get_memory_usage"}), withOutput("I think 2 GB")),
		rec("P1", 1, tool, status(results.StatusSkippedUnavailable, results.FailConnectionRefused, "connection refused")),
		rec("P2", 0, withOutput("x")), rec("P2", 1),
		rec("P0", 0, m2), rec("P1", 0, m2, tool), rec("P1", 1, m2, tool), rec("P2", 0, m2),
	}
	return writeRun(t, dir, runSpec{id: "base", recs: baseRecs}),
		writeRun(t, dir, runSpec{id: "new", recs: curRecs, prompts: changed, digest: "sha256:" + strings.Repeat("ab", 32), serverVersion: "0.9.7"})
}

// Every junit.xml is valid against the Jenkins xUnit JUnit schema (with
// xmllint), has one testsuite per group and one testcase per cell key, and
// fails exactly the gating findings.
func TestJUnitValidates(t *testing.T) {
	base, cur := scenario(t)
	for _, failOn := range [][]string{DefaultOptions().FailOn, {DriftCat}, {Latency}} {
		opt := DefaultOptions()
		opt.FailOn = failOn
		res, err := Compare(base, cur, opt)
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if err := WriteJUnit(&buf, res); err != nil {
			t.Fatal(err)
		}
		if err := validJUnit(t, buf.Bytes()); err != nil {
			t.Fatalf("fail-on %v: %v\n%s", failOn, err, buf.String())
		}
		var doc struct {
			Tests    int `xml:"tests,attr"`
			Failures int `xml:"failures,attr"`
			Suites   []struct {
				Name  string `xml:"name,attr"`
				Cases []struct {
					Name    string    `xml:"name,attr"`
					Failure *struct{} `xml:"failure"`
					Skipped *struct{} `xml:"skipped"`
				} `xml:"testcase"`
			} `xml:"testsuite"`
		}
		if err := xml.Unmarshal(buf.Bytes(), &doc); err != nil {
			t.Fatal(err)
		}
		if len(doc.Suites) != 2 || doc.Suites[0].Name != "ollama/m" || doc.Suites[1].Name != "ollama/org/m2:7b" {
			t.Fatalf("suites %+v", doc.Suites)
		}
		cells, failures, skipped := 0, 0, 0
		for _, s := range doc.Suites {
			for _, c := range s.Cases {
				if !strings.HasPrefix(c.Name, "[") {
					cells++
				}
				if c.Failure != nil {
					failures++
				}
				if c.Skipped != nil {
					skipped++
				}
			}
		}
		gating := 0
		for _, f := range res.Findings {
			if f.FailsGate {
				gating++
			}
		}
		// Skipped: the cells not judged, and every metric of a group or a
		// prompt that was not judged (each has a testcase).
		notJudged := 0
		for _, j := range res.Judgement {
			notJudged += j.Total() - j.Judged
		}
		if notJudged == 0 {
			t.Fatal("the case has no metric left unjudged: the skipped count tests nothing")
		}
		if cells != len(res.Cells) || failures != gating || doc.Failures != gating || skipped != res.Counts[Changed]+res.Counts[Missing]+res.Counts[New]+res.Counts[Unavailable]+notJudged {
			t.Errorf("fail-on %v: %d cell cases for %d cells, %d failures (attr %d) for %d gating findings, %d skipped for %v",
				failOn, cells, len(res.Cells), failures, doc.Failures, gating, skipped, res.Counts)
		}
	}
}

// compare.md and compare.json of the scenario, against golden files
// (go test ./report/compare -run Golden -update rewrites them).
func TestOutputGolden(t *testing.T) {
	base, cur := scenario(t)
	res, err := Compare(base, cur, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	var md, text bytes.Buffer
	if err := WriteMarkdown(&md, res); err != nil {
		t.Fatal(err)
	}
	if err := WriteText(&text, res); err != nil {
		t.Fatal(err)
	}
	var js bytes.Buffer
	if err := WriteJSON(&js, res); err != nil {
		t.Fatal(err)
	}
	// The streamed compare.json is the result, value for value.
	var streamed, whole any
	plain, _ := json.Marshal(res)
	if err := json.Unmarshal(js.Bytes(), &streamed); err != nil {
		t.Fatalf("compare.json does not parse: %v", err)
	}
	json.Unmarshal(plain, &whole)
	if !reflect.DeepEqual(streamed, whole) {
		t.Error("compare.json differs from the result")
	}
	root := filepath.Dir(base)
	for name, got := range map[string]string{"compare.md": md.String(), "compare.txt": text.String(), "compare.json": js.String()} {
		got = strings.ReplaceAll(got, root, "RUNS")
		path := filepath.Join("testdata", "golden", name)
		if *update {
			os.MkdirAll(filepath.Dir(path), 0o755)
			if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (go test ./report/compare -run Golden -update creates it)", err)
		}
		if got != string(want) {
			t.Errorf("%s differs from the golden file (rerun with -update if intended)\n--- got\n%s", name, got)
		}
	}
	// The verdicts the golden files show, asserted.
	want := map[[2]string]string{
		{"m", "P0 rep 0"}: Regression, {"m", "P0 rep 1"}: Drift, {"m", "P1 rep 0"}: Regression, {"m", "P1 rep 1"}: Regression,
		{"m", "P2 rep 0"}: Changed, {"org/m2:7b", "P1 rep 1"}: New, {"org/m2:7b", "P0 rep 1"}: Missing, {"org/m2:7b", "P0 rep 0"}: Match,
	}
	for _, c := range res.Cells {
		k := [2]string{c.Model, c.PromptID + " rep " + itoa(c.Repetition)}
		if v, ok := want[k]; ok && v != c.Verdict {
			t.Errorf("%v: %s, want %s", k, c.Verdict, v)
		}
	}
	if !res.Regressed() || res.Failing[Quality] != 3 || res.Failing[Availability] != 1 {
		t.Errorf("failing %v", res.Failing)
	}
	diffs := 0
	for _, s := range res.Setup {
		if !s.Same {
			diffs++
			if s.Name != "ollama server version" && s.Name != "ollama/m model digest" {
				t.Errorf("unexpected setup difference %+v", s)
			}
		}
	}
	if diffs != 2 {
		t.Errorf("%d setup differences: %+v", diffs, res.Setup)
	}
}

func itoa(i int) string { b, _ := json.Marshal(i); return string(b) }
