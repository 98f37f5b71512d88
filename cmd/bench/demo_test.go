package main

import (
	"encoding/json"
	"encoding/xml"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jstemmer/go-junit-report/v2/junit"

	"bench/internal/testpeer/browsertest"
	"bench/internal/testpeer/junitschema"
	"bench/internal/testpeer/testmodel"
	"bench/prompts"
	"bench/results"
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
	if len(recs) != 2*len(builtin) {
		t.Fatalf("%d records, want 2 providers × %d built-in prompts", len(recs), len(builtin))
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

	b := browsertest.New(t)
	p := b.NewPage(t)
	if err := p.Load(filepath.Join(runDir, "report.html")); err != nil {
		t.Fatal(err)
	}
	if errs, err := p.Errors(); err != nil || len(errs) > 0 {
		t.Errorf("console errors (%v):\n%s", err, strings.Join(errs, "\n"))
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
