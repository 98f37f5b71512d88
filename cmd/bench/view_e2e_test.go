package main

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"bench/internal/exitcode"
	"bench/internal/record/rundir"
	"bench/internal/testpeer/browsertest"
	"bench/internal/testpeer/faultserver"
)

// viewPrompts are the runs' prompts: one whose check the fault server's
// answer passes, one whose check holds hostile HTML (its violation is
// shown on the cells page).
const viewPrompts = `prompts:
  - id: V0
    name: memory
    prompt: "Say the phrase"
    validator: {type: regex_fullmatch, pattern: ".*free -h.*"}
  - id: V1
    name: hostile
    prompt: "Say <b>it</b>"
    validator: {type: exact, value: "<img src=x onerror=window.pwned=1>"}
`

// viewRun runs bench (the built binary) into root/runs/ID against the
// fault server's model, two repetitions of both prompts.
func viewRun(t *testing.T, root, url, model, id string) int {
	t.Helper()
	cfg := fmt.Sprintf("run:\n  repetitions: 2\n  timeout: 60s\nproviders:\n  - type: ollama_openai\n    base_url: %s/v1\n    max_retries: 0\n    models: [%s]\nprompts:\n  files: [prompts.yaml]\n", url, model)
	os.WriteFile(filepath.Join(root, "prompts.yaml"), []byte(viewPrompts), 0o644)
	os.WriteFile(filepath.Join(root, id+".yaml"), []byte(cfg), 0o644)
	code, out, errs := runIn(t, root, "run", "--config", id+".yaml", "--run-id", id, "--quiet")
	if code != exitcode.OK && code != exitcode.Unreached {
		t.Fatalf("bench run %s: exit %d\n%s%s", id, code, out, errs)
	}
	return code
}

// startView starts `bench view` on a free loopback port and returns its
// URL; the process is stopped (SIGINT) at the end of the test.
func startView(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command(benchBin, append([]string{"view", "--addr", "127.0.0.1:0"}, args...)...)
	cmd.Dir = dir
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err := <-done:
			if code := exitCode(err); code != exitcode.OK {
				t.Errorf("bench view ended with %d on Ctrl-C", code)
			}
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			t.Error("bench view did not stop on Ctrl-C")
		}
	})
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("bench view printed %q: %v", line, err)
	}
	m := regexp.MustCompile(`serving on (http://127\.0\.0\.1:\d+)/`).FindStringSubmatch(line)
	if m == nil {
		t.Fatalf("bench view's first line: %q", line)
	}
	go io.Copy(io.Discard, out)
	return m[1]
}

// TestViewInChromium browses real runs as a person does, in headless
// Chromium against the built `bench view`: the list shows two finished
// nights, a run being written (a live `bench run` whose model never
// finishes its answer) as in progress, a run whose run.json is corrupt
// and a folder that is no run; typing in the find box narrows the list;
// a run's cells page filters by verdict and text and opens a cell; two
// runs ticked are compared with bench compare's own verdict. Hostile text
// in a check stays text. Screenshots are kept as artefacts.
func TestViewInChromium(t *testing.T) {
	fs := faultserver.Start(t)
	root := t.TempDir()
	viewRun(t, root, fs.URL(), "ok", "night1")
	viewRun(t, root, fs.URL(), "cut", "night2") // every answer cut: errors
	runs := filepath.Join(root, "runs")
	// A corrupt run: a copy of night1 whose run.json is cut short.
	copyDir(t, filepath.Join(runs, "night1"), filepath.Join(runs, "broken"))
	os.WriteFile(filepath.Join(runs, "broken", rundir.RunFile), []byte(`{"run_id": "broken", "ended_`), 0o644)
	os.MkdirAll(filepath.Join(runs, "notes"), 0o755)
	os.WriteFile(filepath.Join(runs, "notes", "todo.txt"), []byte("not a run"), 0o644)

	// The run being written: a real bench run whose model holds its
	// stream open.
	live := exec.Command(benchBin, "run", "--config", "live.yaml", "--run-id", "live", "--quiet")
	os.WriteFile(filepath.Join(root, "live.yaml"), []byte(fmt.Sprintf("run:\n  timeout: 120s\nproviders:\n  - type: ollama_openai\n    base_url: %s/v1\n    max_retries: 0\n    models: [stall_body]\nprompts:\n  files: [prompts.yaml]\n", fs.URL())), 0o644)
	live.Dir = root
	if err := live.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		live.Process.Signal(syscall.SIGINT)
		live.Process.Signal(syscall.SIGINT)
		live.Wait()
	}()
	deadline := time.Now().Add(60 * time.Second)
	for held := false; !held; held, _ = rundir.Held(filepath.Join(runs, "live")) {
		if time.Now().After(deadline) {
			t.Fatal("the live run never locked its directory")
		}
		time.Sleep(50 * time.Millisecond)
	}

	url := startView(t, root, "runs")
	b := browsertest.New(t)
	p := b.NewPage(t)
	if err := p.Open(url+"/", 20*time.Second); err != nil {
		t.Fatal(err)
	}
	if err := p.WaitFor(`document.documentElement.dataset.ready === "true"`, 20*time.Second); err != nil {
		t.Fatal(err)
	}
	type row struct{ Dir, State, Problem, Gate, Cells, Links string }
	rows := func() map[string]row {
		var rs []row
		if err := p.Eval(`[...document.querySelectorAll("#runs-table tbody tr")].map(tr => ({Dir: tr.querySelector(".dir").textContent,
			State: tr.dataset.state, Problem: (tr.querySelector(".problem") || {}).textContent || "", Cells: tr.children[7].textContent,
			Links: [...tr.querySelectorAll(".links a")].map(a => a.textContent).join(",")}))`, &rs); err != nil {
			t.Fatal(err)
		}
		m := map[string]row{}
		for _, r := range rs {
			m[filepath.Base(r.Dir)] = r
		}
		return m
	}
	m := rows()
	for name, want := range map[string]string{"night1": "finished", "night2": "finished", "live": "in progress", "broken": "corrupt"} {
		if m[name].State != want {
			t.Errorf("%s shown as %q, want %q (%+v)", name, m[name].State, want, m[name])
		}
	}
	if m["night1"].Cells != "4" || m["night1"].Links != "report,answers,summary.md,traces,cells" || !strings.Contains(m["broken"].Problem, "run.json") {
		t.Errorf("night1 %+v, broken %+v", m["night1"], m["broken"])
	}
	if _, listed := m["notes"]; listed {
		t.Error("a folder with no run file is listed among the runs")
	}
	art := artifactDir(t)
	shot(t, p, filepath.Join(art, "view-list.png"))

	// Find narrows the list.
	if err := p.Eval(`(() => { const f = document.getElementById("find"); f.value = "night2"; f.dispatchEvent(new Event("input")); return true; })()`, nil); err != nil {
		t.Fatal(err)
	}
	if m := rows(); len(m) != 1 || m["night2"].State != "finished" {
		t.Errorf("find night2 leaves %v", m)
	}

	// Into night2's cells: every cell an error (the stream was cut).
	var href string
	if err := p.Eval(`[...document.querySelectorAll("#runs-table tbody tr")][0].querySelector(".links a:last-child").href`, &href); err != nil {
		t.Fatal(err)
	}
	if err := p.Open(href, 20*time.Second); err != nil {
		t.Fatal(err)
	}
	if err := p.WaitFor(`window.benchView && window.benchView.ready`, 30*time.Second); err != nil {
		t.Fatal(err)
	}
	setFilter := func(id, value string) int {
		t.Helper()
		var n int
		js := fmt.Sprintf(`(() => { const e = document.getElementById(%q); e.value = %q; window.benchView.ready = false;
			e.dispatchEvent(new Event(e.tagName === "SELECT" ? "change" : "input")); return 1; })()`, id, value)
		if err := p.Eval(js, nil); err != nil {
			t.Fatal(err)
		}
		if err := p.WaitFor(`window.benchView.ready`, 20*time.Second); err != nil {
			t.Fatal(err)
		}
		if err := p.Eval(`document.querySelectorAll("#cells-table tbody tr").length`, &n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	recs := readRecords(t, filepath.Join(runs, "night2", rundir.ResultsFile))
	errs := 0
	for _, r := range recs {
		if r.AvailabilityStatus == "error" {
			errs++
		}
	}
	if n := setFilter("f-verdict", "error"); errs == 0 || n != errs {
		t.Errorf("verdict error: %d rows, results.jsonl has %d errors", n, errs)
	}
	if n := setFilter("f-verdict", "pass"); n != 0 {
		t.Errorf("verdict pass: %d rows of a run whose every stream was cut", n)
	}
	setFilter("f-verdict", "")
	// Text: a word of the cut streams' error, in any case, finds them.
	word := ""
	if recs[0].ErrorMessage != nil {
		word = strings.ToUpper(strings.Fields(*recs[0].ErrorMessage)[0])
	}
	if n := setFilter("f-text", word); word == "" || n != errs {
		t.Errorf("text %q: %d rows, %d errors", word, n, errs)
	}
	setFilter("f-text", "")
	// A cell opened: its whole record, read from its line.
	var detail string
	if err := p.Eval(`document.querySelector("#cells-table tbody tr").click(), 1`, nil); err != nil {
		t.Fatal(err)
	}
	if err := p.WaitFor(`document.getElementById("cell-detail").dataset.line`, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	p.Eval(`document.getElementById("cell-detail").textContent`, &detail)
	if !strings.Contains(detail, "status") || !strings.Contains(detail, "error") {
		t.Errorf("the cell's detail: %q", detail)
	}
	shot(t, p, filepath.Join(art, "view-cells.png"))

	if err := p.Open(url+"/", 20*time.Second); err != nil {
		t.Fatal(err)
	}
	p.WaitFor(`document.documentElement.dataset.ready === "true"`, 20*time.Second)
	// Tick night1 and night2, compare.
	if err := p.Eval(`(() => { for (const tr of document.querySelectorAll("#runs-table tbody tr")) {
		const d = tr.querySelector(".dir").textContent; if (d.endsWith("night1") || d.endsWith("night2")) tr.querySelector("input").click(); }
		document.getElementById("compare").click(); return 1; })()`, nil); err != nil {
		t.Fatal(err)
	}
	// The click navigates: the page is asked again until it is there.
	var verdict string
	for end := time.Now().Add(60 * time.Second); verdict == "" && time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
		p.Eval(`(document.getElementById("verdict") || {dataset: {}}).dataset.verdict || ""`, &verdict)
	}
	code, _, _ := runIn(t, root, "compare", "--out", t.TempDir(), filepath.Join(runs, "night1"), filepath.Join(runs, "night2"))
	want := map[int]string{exitcode.OK: "ok", exitcode.Regression: "regression"}[code]
	if verdict == "" || verdict != want {
		t.Errorf("the page's verdict %q; bench compare exits %d (%s)", verdict, code, want)
	}
	shot(t, p, filepath.Join(art, "view-compare.png"))

	// night1's cells with its hostile violation.
	var id string
	resp, err := http.Get(url + "/api/runs")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if m := regexp.MustCompile(`"id":"([0-9a-f]+)","dir":"runs/night1"`).FindSubmatch(body); m != nil {
		id = string(m[1])
	}
	if err := p.Open(url+"/cells?run="+id+"&prompt=V1", 20*time.Second); err != nil {
		t.Fatal(err)
	}
	if err := p.WaitFor(`window.benchView && window.benchView.ready`, 30*time.Second); err != nil {
		t.Fatal(err)
	}
	var shown string
	p.Eval(`document.querySelector("#cells-table tbody").textContent`, &shown)
	var pwned bool
	if err := p.Eval(`!!window.pwned`, &pwned); err != nil || pwned || !strings.Contains(shown, "<img src=x onerror=window.pwne") {
		t.Errorf("the hostile violation: pwned %v, shown %q", pwned, shown)
	}
	if errs, err := p.Errors(); err != nil || len(errs) > 0 {
		t.Errorf("console errors (%v): %q", err, errs)
	}
	// Nothing was written into the runs by viewing them.
	for _, name := range []string{"night1", "night2", "broken"} {
		if _, err := os.Stat(filepath.Join(runs, name, rundir.CompareDir)); err == nil {
			t.Errorf("%s has a compare/ folder after viewing", name)
		}
	}
}

func shot(t *testing.T, p *browsertest.Page, path string) {
	t.Helper()
	if err := p.Screenshot(path); err != nil {
		t.Error(err)
	}
	t.Logf("screenshot %s", path)
}
