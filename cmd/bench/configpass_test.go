package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// opens counts the times any process opens path while run runs, from the
// kernel's inotify events: the real binary's reads, with no hook in it.
func opens(t *testing.T, path string, run func()) int {
	t.Helper()
	fd, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	// Closes are watched too: the kernel merges identical events in a row
	// that were not read yet, and an open, close, open is no such row.
	if _, err := unix.InotifyAddWatch(fd, path, unix.IN_OPEN|unix.IN_CLOSE); err != nil {
		t.Fatal(err)
	}
	run()
	n := 0
	buf := make([]byte, 64<<10)
	for {
		k, err := unix.Read(fd, buf)
		if k <= 0 || err != nil {
			return n
		}
		for off := 0; off+unix.SizeofInotifyEvent <= k; {
			ev := (*unix.InotifyEvent)(unsafe.Pointer(&buf[off]))
			if ev.Mask&unix.IN_OPEN != 0 {
				n++
			}
			off += unix.SizeofInotifyEvent + int(ev.Len)
		}
	}
}

// bench run merges bench.yaml and its flags once, before the prompt set is
// loaded: with --suite and --prompts over a prompt file and a data file,
// each file is read once (the flags were applied after a first load, and
// the prompt files read three times).
func TestRunReadsPromptFilesOnce(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"prompts.yaml":  promptFile,
		"rows.csv":      "city,answer\nParis,France\nLima,Peru\n",
		"template.yaml": "template:\n  id: \"city_{{city}}\"\n  prompt: \"Which country is {{city}} in?\"\n  validator: {type: exact, value: \"{{answer}}\"}\n",
		"bench.yaml": `providers:
  - type: ollama_openai
    base_url: http://127.0.0.1:9/v1
    models: [m]
prompts:
  files: [prompts.yaml, {path: rows.csv, template: template.yaml}]
  only: [T0]
`,
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"prompts.yaml", "rows.csv", "template.yaml"} {
		var out, errb bytes.Buffer
		n := opens(t, filepath.Join(dir, name), func() {
			cmd := exec.Command(benchBin, "run", "--config", filepath.Join(dir, "bench.yaml"), "--dry-run",
				"--suite", "default", "--prompts", "T0,T1,city_Lima", "--concurrency", "2", "--repetitions", "2")
			cmd.Stdout, cmd.Stderr = &out, &errb
			if err := cmd.Run(); err != nil {
				t.Fatalf("bench run --dry-run: %v\n%s%s", err, out.String(), errb.String())
			}
		})
		if n != 1 {
			t.Errorf("%s was opened %d times by one bench run; want once", name, n)
		}
		if !strings.Contains(out.String(), "T1") || !strings.Contains(out.String(), "city_Lima") {
			t.Fatalf("the plan lacks the prompts --prompts widened prompts.only to:\n%s", out.String())
		}
	}
}

// A bad flag value is a config error like the file's, naming the key the
// flag sets, and every bad one comes in the same round as the file's.
func TestBadFlagValueNamesItsKey(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "bench.yaml")
	if err := os.WriteFile(cfg, []byte("run:\n  max_output_bytes: 0\nproviders:\n  - type: ollama_openai\n    models: [m]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	cmd := exec.Command(benchBin, "run", "--config", cfg, "--dry-run", "--concurrency", "0", "--repetitions", "-1", "--timeout", "-5s", "--suite", "nosuch", "--run-id", "a/b")
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 {
		t.Fatalf("exit %v, want 2\n%s", err, errb.String())
	}
	for _, want := range []string{
		cfg + ":2: run.max_output_bytes: must be from 1",
		"--concurrency 0: run.concurrency: must be at least 1",
		"--repetitions -1: run.repetitions: must be at least 1",
		"--timeout -5s: run.timeout: must be more than 0",
		`--suite nosuch: prompts.suites[0]: unknown suite "nosuch"`,
		`--run-id "a/b": run.id: `,
	} {
		if !strings.Contains(errb.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, errb.String())
		}
	}
}
