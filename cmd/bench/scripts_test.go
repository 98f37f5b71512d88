package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"bench/internal/testpeer/ollamatest"
)

// scriptBox is a copy of the scripts and go.mod in a temp root (so no
// Ollama the checkout built is found) with a PATH of the named tools
// only, plus fakes written into its bin.
func scriptBox(t *testing.T, tools []string, fakes map[string]string) (root string, env []string) {
	t.Helper()
	root = t.TempDir()
	bin := filepath.Join(root, "bin")
	for _, d := range []string{filepath.Join(root, "scripts"), bin} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"scripts/ollama-test-server.sh", "scripts/demo.sh", "go.mod"} {
		data, err := os.ReadFile(filepath.Join("..", "..", f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, f), data, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, tool := range tools {
		p, err := exec.LookPath(tool)
		if err != nil {
			t.Fatalf("%s: %v", tool, err)
		}
		if err := os.Symlink(p, filepath.Join(bin, tool)); err != nil {
			t.Fatal(err)
		}
	}
	for name, body := range fakes {
		if err := os.WriteFile(filepath.Join(bin, name), []byte("#!/bin/bash\n"+body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return root, []string{"PATH=" + bin, "HOME=" + root, "TMPDIR=" + root}
}

// The tools the scripts use besides the prerequisites.
var shellTools = []string{"bash", "sed", "grep", "sort", "mktemp", "tail", "sleep", "cat", "mkdir", "rm", "dirname", "env", "chmod"}

// fakeGo is a go whose install takes a few seconds, naming a package a
// second, then leaves an ollama binary in GOBIN.
const fakeGo = `case "$1" in
env) case "$2" in GOVERSION) echo go1.26.8 ;; GOPATH) echo "$HOME/gopath" ;; esac ;;
install)
	for p in github.com/ollama/ollama/fs github.com/ollama/ollama/llama github.com/ollama/ollama/server; do sleep 1; echo "$p" >&2; done
	printf '#!/bin/bash\necho ollama\n' >"$GOBIN/ollama"; chmod +x "$GOBIN/ollama" ;;
esac
`

// Building Ollama shows what it builds and the time so far while it runs
// (here every second, BENCH_PROGRESS_EVERY; 15 s by default, so a line
// comes at least every 30 s), the estimate first and the time it took
// last; the binary's path is the one line on stdout.
func TestOllamaBuildShowsProgress(t *testing.T) {
	root, env := scriptBox(t, shellTools, map[string]string{"go": fakeGo, "gcc": "", "curl": ""})
	cmd := exec.Command("bash", "scripts/ollama-test-server.sh", "install")
	cmd.Dir, cmd.Env = root, append(env, "BENCH_PROGRESS_EVERY=1")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("install: %v\n%s", err, stderr.String())
	}
	if got := strings.TrimSpace(string(out)); got != filepath.Join(root, ".tools", "bin", "ollama") {
		t.Errorf("stdout %q, want the binary's path", got)
	}
	errs := stderr.String()
	if !strings.Contains(errs, "building ollama v0.9.6 from the Go module proxy into .tools/bin, once (2-4 minutes on 2 idle cores, 9 or more on busy ones, an hour at load 25") {
		t.Errorf("no estimate before the build:\n%s", errs)
	}
	progress := regexp.MustCompile(`building ollama v0\.9\.6: 0m0\ds so far, \d packages done, last github\.com/ollama/ollama/\w+`).FindAllString(errs, -1)
	if len(progress) == 0 || !regexp.MustCompile(`built ollama v0\.9\.6 in 0m0\ds`).MatchString(errs) {
		t.Errorf("progress lines %q in:\n%s", progress, errs)
	}
}

// Missing prerequisites are named all at once, one line each with how to
// get them, before anything is built, by ollama-test-server.sh and by
// demo.sh (exit 1); with them there, prereqs says so.
func TestScriptsCheckPrerequisites(t *testing.T) {
	root, env := scriptBox(t, shellTools, nil)
	for _, c := range []struct {
		script, prefix string
	}{{"scripts/ollama-test-server.sh", "ollama-test-server"}, {"scripts/demo.sh", "demo"}} {
		args := []string{c.script}
		if c.prefix == "ollama-test-server" {
			args = append(args, "start", "x.json")
		}
		cmd := exec.Command("bash", args...)
		cmd.Dir, cmd.Env = root, env
		out, err := cmd.CombinedOutput()
		if code := exitCode(err); code != 1 {
			t.Errorf("%s with nothing installed: exit %d\n%s", c.script, code, out)
		}
		for _, want := range []string{
			c.prefix + ": missing Go 1.26 or newer: https://go.dev/doc/install",
			c.prefix + ": missing curl: apt-get install -y curl",
			c.prefix + ": missing gcc (Ollama is built with cgo): apt-get install -y gcc g++",
		} {
			if !strings.Contains(string(out), want) {
				t.Errorf("%s does not say %q:\n%s", c.script, want, out)
			}
		}
	}
	root, env = scriptBox(t, shellTools, map[string]string{"go": fakeGo, "gcc": "", "curl": ""})
	cmd := exec.Command("bash", "scripts/ollama-test-server.sh", "prereqs")
	cmd.Dir, cmd.Env = root, env
	if out, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(out), "Go, curl and gcc are there") {
		t.Errorf("prereqs with everything there: %v\n%s", err, out)
	}
}

// docs/scripted-models.md's worked example runs as written, with bash,
// from a root that is the repository (its top-level entries linked into
// a temp dir, so its runs/ is the test's), with the built bench on PATH
// and the test's Ollama: the second model's run regresses against the
// demo's on P1, Canberra → Sydney, and bench compare exits 3.
func TestScriptedModelsPageRuns(t *testing.T) {
	bin, err := ollamatest.Binary()
	ollamatest.Check(t, err)
	d := parseDoc(t, "docs/scripted-models.md")
	var example string
	for _, b := range d.blocks {
		if isShell(b.lang) && strings.Contains(b.text, "bench compare") {
			example = b.text
		}
	}
	if example == "" {
		t.Fatal("docs/scripted-models.md has no shell block with bench compare")
	}
	root := t.TempDir()
	ents, err := os.ReadDir(repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if n := e.Name(); n != "runs" && n != ".tools" && n != ".git" && n != ".artifacts" {
			if err := os.Symlink(mustAbs(t, filepath.Join(repoRoot, n)), filepath.Join(root, n)); err != nil {
				t.Fatal(err)
			}
		}
	}
	cmd := exec.Command("bash", "-c", "set -euo pipefail\n"+example)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "PATH="+filepath.Dir(benchBin)+string(os.PathListSeparator)+os.Getenv("PATH"),
		"BENCH_OLLAMA_BIN="+bin, "BENCH_OLLAMA_STATE="+filepath.Join(root, "ollama.state"), "TMPDIR="+t.TempDir())
	out, err := cmd.CombinedOutput()
	t.Cleanup(func() { exec.Command("bash", filepath.Join(root, "scripts", "ollama-test-server.sh"), "stop").Run() })
	if err != nil {
		t.Fatalf("the example failed: %v\n%s", err, out)
	}
	for _, want := range []string{`P1: output "Canberra" → "Sydney"`, "in 2/2 cells", "bench compare: exit 3"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("the example's output lacks %q:\n%s", want, out)
		}
	}
	if _, err := os.Stat(filepath.Join(root, "runs", "scripted", "worse", "compare", "compare.html")); err != nil {
		t.Errorf("compare.html: %v", err)
	}
}

// The test binary is built without VCS stamping (go build in a test, as
// with GOFLAGS=-buildvcs=false): its version is the checkout's commit,
// not "(devel)", so compare and history tell two builds apart.
func TestVersionFromCheckout(t *testing.T) {
	code, out, _ := runIn(t, ".", "version")
	if code != 0 {
		t.Fatalf("bench version: exit %d", code)
	}
	got := strings.TrimSpace(out)
	if got == "bench (devel)" || !regexp.MustCompile(`^bench (devel\+[0-9a-f]{12}(-dirty|-checkout)?|v\S+)$`).MatchString(got) {
		t.Errorf("bench version: %q", got)
	}
	if head, err := exec.Command("git", "-C", repoRoot, "rev-parse", "HEAD").Output(); err == nil && strings.HasSuffix(got, "-checkout") {
		if want := "bench devel+" + string(head[:12]) + "-checkout"; got != want {
			t.Errorf("bench version %q, the checkout is at %s", got, head[:12])
		}
	}
}

// The repetitions note comes where a gate will judge the plan prompt by
// prompt (--dry-run, --baseline), not on a plain run nor a load profile's;
// a long prompt list is folded in the plan.
func TestRepetitionsNoteWhereItApplies(t *testing.T) {
	dir := t.TempDir()
	plain := "run:\n  repetitions: 1\nproviders:\n  - type: ollama\n    base_url: http://127.0.0.1:9\n    max_retries: 0\n    models: [m]\n"
	os.WriteFile(filepath.Join(dir, "plain.yaml"), []byte(plain), 0o644)
	os.WriteFile(filepath.Join(dir, "load.yaml"), []byte(plain+"load: {sweep: {concurrency: [1, 2]}, requests: 4}\n"), 0o644)
	for _, c := range []struct {
		args []string
		note bool
	}{
		{[]string{"run", "--config", "plain.yaml", "--dry-run"}, true},
		{[]string{"run", "--config", "plain.yaml", "--run-id", "first"}, false},
		{[]string{"run", "--config", "load.yaml", "--dry-run"}, false},
	} {
		_, out, errs := runIn(t, dir, c.args...)
		if got := strings.Contains(errs, "note: repetitions 1"); got != c.note {
			t.Errorf("%v: the note shown %v, want %v\n%s%s", c.args, got, c.note, out, errs)
		}
	}
	_, out, errs := runIn(t, dir, "run", "--config", "plain.yaml", "--suite", "bfcl", "--dry-run")
	for _, l := range strings.Split(out, "\n") {
		if len(l) > 100 {
			t.Errorf("a plan line of %d bytes: %.120s…", len(l), l)
		}
	}
	if !strings.Contains(out, "prompts: 200 prompts × 1 repetition") || !strings.Contains(out, "    simple_python_10,simple_python_14,") {
		t.Errorf("the BFCL plan:\n%s%s", out, errs)
	}
}
