package junitxml

import (
	"bytes"
	"encoding/xml"
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jstemmer/go-junit-report/v2/junit"

	"bench/internal/record/results"
	"bench/internal/record/rundir"
	"bench/internal/testpeer/junitschema"
)

var update = flag.Bool("update", false, "rewrite testdata/golden.xml")

func str(s string) *string { return &s }
func yes() *bool           { t := true; return &t }
func no() *bool            { f := false; return &f }
func ms(v int64) *int64    { return &v }

// records covers every outcome, two thinking levels, repetitions, and text
// that XML cannot carry as it is.
func records() []results.Record {
	base := func(provider, model string, level *string, prompt string, rep int) results.Record {
		return results.Record{RecordType: "result", RunID: "20260214_101500", Provider: provider, ProviderType: "ollama_openai",
			Model: model, ThinkingLevel: level, PromptID: prompt, PromptName: "name_" + prompt, Repetition: rep,
			StartedAtMS: 1771064100000 + int64(rep)*1000, EndedAtMS: 1771064100000 + int64(rep)*1000 + 850, E2EMS: 850}
	}
	var recs []results.Record
	ok := func(r results.Record, pass *bool, violation *string) results.Record {
		r.AvailabilityStatus, r.Success, r.ObjectivePass, r.Violation, r.TTFTMS = "ok", true, pass, violation, ms(120)
		return r
	}
	// P10 before P2 in the file: the output orders prompts naturally.
	recs = append(recs,
		ok(base("ollama", "llama3.2:3b", nil, "P10", 0), yes(), nil),
		ok(base("ollama", "llama3.2:3b", nil, "P2", 0), no(), str("expected exactly \"4\", got <b>four</b> & ]]> \x1b[31mred\x00")),
		ok(base("ollama", "llama3.2:3b", nil, "P1", 0), nil, nil), // noop check
	)
	empty := base("ollama", "llama3.2:3b", nil, "P3", 0)
	empty.AvailabilityStatus, empty.FailureType, empty.ErrorMessage = "ok", str("empty_response"), str("no text and no tool call")
	recs = append(recs, empty)
	timeout := base("ollama", "llama3.2:3b", nil, "P4", 0)
	timeout.AvailabilityStatus, timeout.FailureType, timeout.ErrorMessage, timeout.E2EMS = "error", str("timeout"), str("no complete answer within run.timeout"), 120000
	recs = append(recs, timeout)
	for _, p := range []string{"P1", "P2"} {
		r := base("ollama", "missing", nil, p, 0)
		r.AvailabilityStatus, r.FailureType, r.ErrorMessage, r.E2EMS = "skipped_unavailable", str("model_not_found"), str(`model "missing" not found; run ollama pull missing`), 3
		recs = append(recs, r)
	}
	high := str("high")
	for rep := range 2 {
		recs = append(recs, ok(base("claude", "sonnet", high, "P1", rep), yes(), nil))
		r := base("claude", "sonnet", high, "P2", rep)
		r.AvailabilityStatus, r.FailureType, r.ErrorMessage, r.HTTPStatus = "rate_limited", str("http_429"), str("HTTP 429: slow down"), new(429)
		recs = append(recs, r)
	}
	auth := base("openai", "gpt-5-mini", str("low"), "P1", 0)
	auth.AvailabilityStatus, auth.FailureType, auth.ErrorMessage = "auth_error", str("http_401"), str("HTTP 401: invalid API key (OPENAI_API_KEY)")
	recs = append(recs, auth)
	return recs
}

func build(recs []results.Record) *Builder {
	b := New()
	for i := range recs {
		b.Add(&recs[i])
	}
	return b
}

func TestBuild(t *testing.T) {
	var buf bytes.Buffer
	if err := build(records()).Write(&buf); err != nil {
		t.Fatal(err)
	}
	var got junit.Testsuites
	if err := xml.Unmarshal(buf.Bytes(), &got); err != nil {
		t.Fatalf("not XML: %v\n%s", err, buf.String())
	}
	type counts struct{ tests, failures, errors, skipped int }
	want := []struct {
		name string
		counts
		cases []string
	}{
		{"claude/sonnet (high)", counts{4, 0, 2, 0}, []string{"P1 name_P1 #0", "P1 name_P1 #1", "P2 name_P2 #0", "P2 name_P2 #1"}},
		{"ollama/llama3.2:3b", counts{5, 1, 2, 0}, []string{"P1 name_P1", "P2 name_P2", "P3 name_P3", "P4 name_P4", "P10 name_P10"}},
		{"ollama/missing", counts{2, 0, 0, 2}, []string{"P1 name_P1", "P2 name_P2"}},
		{"openai/gpt-5-mini (low)", counts{1, 0, 1, 0}, []string{"P1 name_P1"}},
	}
	if len(got.Suites) != len(want) {
		t.Fatalf("%d suites, want %d", len(got.Suites), len(want))
	}
	if got.Tests != 12 || got.Failures != 1 || got.Errors != 5 || got.Name != "bench 20260214_101500" {
		t.Errorf("testsuites: %d tests %d failures %d errors, name %q", got.Tests, got.Failures, got.Errors, got.Name)
	}
	for i, w := range want {
		s := got.Suites[i]
		c := counts{s.Tests, s.Failures, s.Errors, s.Skipped}
		if s.Name != w.name || c != w.counts || s.ID != i {
			t.Errorf("suite %d: %s %+v id %d, want %s %+v", i, s.Name, c, s.ID, w.name, w.counts)
		}
		var names []string
		for _, tc := range s.Testcases {
			names = append(names, tc.Name)
			if tc.Classname != s.Name {
				t.Errorf("%s: classname %q", tc.Name, tc.Classname)
			}
		}
		if strings.Join(names, "|") != strings.Join(w.cases, "|") {
			t.Errorf("%s: cases %q, want %q", s.Name, names, w.cases)
		}
	}
	llama := got.Suites[1]
	if f := llama.Testcases[1].Failure; f == nil || f.Type != "check_failed" ||
		f.Message != "expected exactly \"4\", got <b>four</b> & ]]> \uFFFD[31mred\uFFFD" || !strings.Contains(f.Data, "]]>") {
		t.Errorf("failed check: %+v", f)
	}
	if e := llama.Testcases[2].Error; e == nil || e.Type != "empty_response" || e.Message != "empty_response: no text and no tool call" {
		t.Errorf("empty answer: %+v", e)
	}
	if e := llama.Testcases[3].Error; e == nil || e.Type != "timeout" || llama.Testcases[3].Time != "120.000" {
		t.Errorf("timeout: %+v time %s", e, llama.Testcases[3].Time)
	}
	if tc := llama.Testcases[0]; tc.Failure != nil || tc.Error != nil || tc.Skipped != nil {
		t.Errorf("a cell without a check is a plain testcase: %+v", tc)
	}
	if s := got.Suites[2].Testcases[0].Skipped; s == nil || s.Type != "model_not_found" || !strings.HasPrefix(s.Message, "model_not_found: model \"missing\"") {
		t.Errorf("unavailable: %+v", s)
	}
	if e := got.Suites[0].Testcases[2].Error; e == nil || e.Type != "http_429" || !strings.Contains(e.Data, "(HTTP 429)") {
		t.Errorf("rate limited: %+v", e)
	}
	if llama.Timestamp != "2026-02-14T10:15:00Z" || llama.Time != "0.850" || llama.Package != "20260214_101500" {
		t.Errorf("suite timestamp %q time %q package %q", llama.Timestamp, llama.Time, llama.Package)
	}
	props := map[string]string{}
	for _, p := range *got.Suites[0].Properties {
		props[p.Name] = p.Value
	}
	if props["thinking_level"] != "high" || props["provider"] != "claude" || props["run_id"] != "20260214_101500" {
		t.Errorf("properties %v", props)
	}

	golden := filepath.Join("testdata", "golden.xml")
	if *update {
		os.WriteFile(golden, buf.Bytes(), 0o644)
	}
	wantXML, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if buf.String() != string(wantXML) {
		t.Errorf("differs from %s (go test ./report/junitxml -update if intended):\n%s", golden, buf.String())
	}
}

// The order cells finished in does not change the file.
func TestOrderIndependent(t *testing.T) {
	recs := records()
	var a, b bytes.Buffer
	build(recs).Write(&a)
	for i, j := 0, len(recs)-1; i < j; i, j = i+1, j-1 {
		recs[i], recs[j] = recs[j], recs[i]
	}
	build(recs).Write(&b)
	if a.String() != b.String() {
		t.Error("reversed records give another junit.xml")
	}
}

// validate checks the file against the Jenkins JUnit schema.
func validate(t *testing.T, path string) {
	t.Helper()
	if err := junitschema.Check(t, path); err != nil {
		t.Error(err)
	}
}

func TestValidAgainstSchema(t *testing.T) {
	if junitschema.Xmllint(t) == "" {
		t.Skip("no xmllint; run scripts/install-xmllint.sh")
	}
	dir := t.TempDir()
	path := rundir.Path(dir, rundir.JUnitFile)
	if err := build(records()).WriteFile(path); err != nil {
		t.Fatal(err)
	}
	validate(t, path)
	// An empty run is a valid, empty report too.
	empty := filepath.Join(dir, "empty.xml")
	if err := New().WriteFile(empty); err != nil {
		t.Fatal(err)
	}
	validate(t, empty)
	// The schema check itself can fail: a testsuites skipped count is not
	// in the schema.
	bad := filepath.Join(dir, "bad.xml")
	os.WriteFile(bad, []byte(`<testsuites skipped="1"><testsuite name="x" tests="0" failures="0" errors="0"></testsuite></testsuites>`), 0o644)
	if junitschema.Check(t, bad) == nil {
		t.Error("xmllint accepted an invalid file")
	}
}

// Any text a model or a server sends ends up as well-formed XML, and the
// message keeps what XML can carry.
func FuzzText(f *testing.F) {
	for _, s := range []string{"", "ok", "<a>&</a>", "]]>", "\x00\x1b[0m", "\xff\xfe", "\uFFFE", "line\nbreak\ttab", strings.Repeat("é", 400)} {
		f.Add(s, s)
	}
	f.Fuzz(func(t *testing.T, violation, errText string) {
		recs := []results.Record{
			{Provider: "p", Model: violation, PromptID: errText, AvailabilityStatus: "ok", Success: true, ObjectivePass: no(), Violation: &violation},
			{Provider: "p", Model: "m", PromptID: "P1", AvailabilityStatus: "error", FailureType: &errText, ErrorMessage: &violation},
		}
		var buf bytes.Buffer
		if err := build(recs).Write(&buf); err != nil {
			t.Fatal(err)
		}
		var got junit.Testsuites
		if err := xml.Unmarshal(buf.Bytes(), &got); err != nil {
			t.Fatalf("not XML: %v\n%q", err, buf.String())
		}
		for _, s := range got.Suites {
			for _, tc := range s.Testcases {
				if tc.Failure != nil {
					want := message(violation)
					if want == "" {
						want = "failed its check"
					}
					if tc.Failure.Message != want {
						t.Errorf("message %q, want %q", tc.Failure.Message, want)
					}
				}
			}
		}
	})
}

// Write streams one suite at a time; its bytes are exactly those of the
// whole tree marshalled at once (go-junit-report's own WriteXML), for a
// run with passes, failures, errors and skips over several suites, and
// for an empty run.
func TestWriteStreamsTheSameDocument(t *testing.T) {
	for _, b := range []*Builder{build(records()), New()} {
		var got, want bytes.Buffer
		if err := b.Write(&got); err != nil {
			t.Fatal(err)
		}
		ts, err := testsuites(b)
		if err != nil {
			t.Fatal(err)
		}
		want.WriteString(xmlHeader)
		if err := ts.WriteXML(&want); err != nil {
			t.Fatal(err)
		}
		if got.String() != want.String() {
			t.Errorf("streamed:\n%s\nwhole:\n%s", got.String(), want.String())
		}
	}
}

// Past tapeMem the texts go to a temporary file, unlinked at once: the
// document is the same byte for byte, it can be written twice, and after
// Close the file is gone. A tape whose file cannot be made fails Write
// with the reason rather than writing testcases without their texts.
func TestTextsSpillToATemporaryFile(t *testing.T) {
	var inMemory bytes.Buffer
	if err := build(records()).Write(&inMemory); err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	spilling := func() *Builder {
		b := New()
		b.tape.Mem = 64
		recs := records()
		for i := range recs {
			b.Add(&recs[i])
		}
		return b
	}
	b := spilling()
	if !b.tape.Spilled() {
		t.Fatalf("nothing spilled past %d bytes", b.tape.Mem)
	}
	if left, _ := os.ReadDir(tmp); len(left) != 0 {
		t.Errorf("the tape's file is still named in %s: %v", tmp, left)
	}
	for range 2 {
		var spilled bytes.Buffer
		if err := b.Write(&spilled); err != nil {
			t.Fatal(err)
		}
		if spilled.String() != inMemory.String() {
			t.Errorf("spilled:\n%s\nin memory:\n%s", spilled.String(), inMemory.String())
		}
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}

	t.Setenv("TMPDIR", filepath.Join(tmp, "missing"))
	b = spilling()
	defer b.Close()
	err := b.Write(io.Discard)
	if err == nil || !strings.Contains(err.Error(), "junit texts") || !strings.Contains(err.Error(), "missing") {
		t.Errorf("tape without a file: %v", err)
	}
}

// testsuites is the document Write streams, built whole in memory with
// go-junit-report's own types: what Write is checked against.
func testsuites(b *Builder) (junit.Testsuites, error) {
	keys := b.sortedKeys()
	var out junit.Testsuites
	out.Name = "bench"
	var total float64
	for i, k := range keys {
		s := b.suites[k]
		ts := s.header(i)
		// AddTestcase counts them again.
		ts.Tests, ts.Failures, ts.Errors, ts.Skipped = 0, 0, 0, 0
		if err := b.testcases(s, func(tc *junit.Testcase) error { ts.AddTestcase(*tc); return nil }); err != nil {
			return out, err
		}
		total += float64(s.last-s.first) / 1000
		out.AddSuite(ts)
	}
	if len(keys) > 0 {
		out.Name = "bench " + b.suites[keys[0]].runID
	}
	out.Time = seconds(total)
	// The Jenkins schema has no skipped count on <testsuites>; each
	// <testsuite> keeps its own.
	out.Skipped = 0
	return out, nil
}

// A cell whose judge gave no verdict is an error of its testcase, typed
// judge_error, never a pass.
func TestCheckErrorIsAnError(t *testing.T) {
	b := New()
	defer b.Close()
	r := results.Record{RecordType: "result", RunID: "r", Provider: "p", ProviderType: "ollama", Model: "m", PromptID: "J1", PromptName: "judged",
		AvailabilityStatus: "ok", Success: true, StartedAtMS: 1, EndedAtMS: 2,
		CheckErrors: []results.CheckError{{Type: results.JudgeError, Check: "llm_judge", Message: "not a verdict: not a JSON object"}}}
	b.Add(&r)
	var out bytes.Buffer
	if err := b.Write(&out); err != nil {
		t.Fatal(err)
	}
	var ts junit.Testsuites
	if err := xml.Unmarshal(out.Bytes(), &ts); err != nil {
		t.Fatal(err)
	}
	c := ts.Suites[0].Testcases[0]
	if ts.Errors != 1 || c.Error == nil || c.Error.Type != "judge_error" || !strings.Contains(c.Error.Message, "judge_error: llm_judge: not a verdict") {
		t.Errorf("errors %d, case %+v", ts.Errors, c)
	}
}
