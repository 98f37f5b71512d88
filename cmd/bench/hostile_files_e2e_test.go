package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"bench/internal/exitcode"
	"bench/internal/testpeer/faultserver"
)

// Issue 31, item 8: a FIFO or a symlink to /dev/zero (or any device) in a
// run directory made history, compare, report, merge and rescore hang,
// spin or die out of memory. Every file of a real run directory (and of a
// shard) is replaced, one at a time, by a FIFO nobody writes, a symlink
// to /dev/zero, and (for what is read whole) a 3 GiB sparse file; each
// reader is run over it. None may hang (a command still running after
// hangAfter is one that would never end) and none may crash; a command
// that reads the file refuses it naming it (or, for a file it may do
// without, warns naming it). The largest RSS any of them reached is
// logged (go test -v): the figure the issue asks for.

// hangAfter is far past what any of these commands takes on a busy
// machine: a command still running then waits on a FIFO or reads an
// endless device, and would never end.
const hangAfter = 3 * time.Minute

type hostileRun struct {
	code   int
	out    string
	maxRSS int64 // KiB
}

// runHostile runs bench in dir, killing it after hangAfter.
func runHostile(t *testing.T, dir string, args ...string) hostileRun {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), hangAfter)
	defer cancel()
	cmd := exec.CommandContext(ctx, benchBin, args...)
	cmd.Dir = dir
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("bench %s did not end within %s: it hangs\n%s", strings.Join(args, " "), hangAfter, out.String())
	}
	r := hostileRun{code: exitCode(err), out: out.String()}
	if cmd.ProcessState != nil {
		if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
			r.maxRSS = ru.Maxrss
		}
		if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			t.Fatalf("bench %s was killed by %s\n%s", strings.Join(args, " "), ws.Signal(), r.out)
		}
	}
	if strings.Contains(r.out, "panic:") || strings.Contains(r.out, "fatal error:") {
		t.Fatalf("bench %s crashed:\n%s", strings.Join(args, " "), r.out)
	}
	return r
}

func TestHostileFilesInARunDirectory(t *testing.T) {
	s := faultserver.Start(t)
	work := t.TempDir()
	os.WriteFile(filepath.Join(work, "prompts.yaml"), []byte(agenticPrompt+`  - id: T
    prompt: "Say the phrase: alpha"
    validator: {type: noop}
`), 0o644)
	os.WriteFile(filepath.Join(work, "bench.yaml"), []byte(fmt.Sprintf(`run:
  warmup: false
providers:
  - type: ollama_openai
    base_url: %s/v1
    max_retries: 0
    models: [ok, echo_key_args]
prompts:
  files: [prompts.yaml]
`, s.URL())), 0o644)
	for _, args := range [][]string{
		{"run", "--config", "bench.yaml", "--run-id", "base", "--quiet"},
		{"run", "--config", "bench.yaml", "--run-id", "s", "--out", "shards/1", "--shard", "1/2", "--quiet"},
		{"run", "--config", "bench.yaml", "--run-id", "s", "--out", "shards/2", "--shard", "2/2", "--quiet"},
	} {
		if code, stdout, stderr := runIn(t, work, args...); code != exitcode.OK {
			t.Fatalf("%v: exit %d\n%s%s", args, code, stdout, stderr)
		}
	}
	base := filepath.Join(work, "runs", "base")
	shard := filepath.Join(work, "shards", "1", "s")

	// The files to replace: every one of the run's (one of each folder's).
	files := func(dir string) []string {
		var out []string
		seenDir := map[string]bool{}
		filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() || d.Name() == ".lock" {
				return err
			}
			rel, _ := filepath.Rel(dir, p)
			if sub := filepath.Dir(rel); sub != "." {
				if seenDir[sub] {
					return nil
				}
				seenDir[sub] = true
			}
			out = append(out, rel)
			return nil
		})
		sort.Strings(out)
		return out
	}
	type command struct {
		name string
		dir  string // the run directory whose file is replaced
		args func(scratch string) []string
		// reads are files the command reads: replaced, it must name them,
		// refusing (exit 2 or 1) or, for history, which skips a run it
		// cannot read, warning; a sparse results.jsonl (one line of 3 GiB)
		// is a line skipped, warned about.
		reads []string
	}
	commands := []command{
		{"report", base, func(string) []string { return []string{"report", "runs/base"} }, []string{"results.jsonl"}},
		{"compare", base, func(sc string) []string { return []string{"compare", "runs/base", "runs/base", "--out", sc} },
			[]string{"results.jsonl", "config.json", "run.json", "inventory.json"}},
		{"history", base, func(sc string) []string { return []string{"history", "--out", sc, "runs/base"} }, []string{"run.json", "summary.json", "tiers.json"}},
		{"merge", shard, func(sc string) []string { return []string{"merge", sc, "shards/1/s", "shards/2/s"} },
			[]string{"results.jsonl", "run.json", "config.json"}},
		{"rescore", base, func(sc string) []string { return []string{"rescore", "runs/base", "--out", sc} },
			[]string{"results.jsonl", "config.json", "inventory.json"}},
	}
	kinds := []struct {
		name  string
		plant func(t *testing.T, path string)
		some  bool // only for the files in sparse
	}{
		{"a FIFO", func(t *testing.T, path string) {
			if err := syscall.Mkfifo(path, 0o644); err != nil {
				t.Fatal(err)
			}
		}, false},
		{"a symlink to /dev/zero", func(t *testing.T, path string) {
			if err := os.Symlink("/dev/zero", path); err != nil {
				t.Fatal(err)
			}
		}, false},
		{"a 3 GiB sparse file", func(t *testing.T, path string) {
			f, err := os.Create(path)
			if err != nil {
				t.Fatal(err)
			}
			f.Truncate(3 << 30)
			f.Close()
		}, true},
	}
	// sparse are the files a 3 GiB sparse file replaces: those read whole
	// (refused by their size before a byte is read) and results.jsonl,
	// streamed one line at a time (a 3 GiB line is skipped as too long,
	// in bounded memory).
	sparse := []string{"results.jsonl", "config.json", "run.json", "inventory.json", "summary.json", "tiers.json"}
	maxRSS := map[string]int64{}
	worst := map[string]string{}
	n := 0
	for _, c := range commands {
		for _, rel := range files(c.dir) {
			path := filepath.Join(c.dir, rel)
			saved, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			for _, k := range kinds {
				if k.some && !slices.Contains(sparse, rel) {
					continue
				}
				os.Remove(path)
				k.plant(t, path)
				scratch := filepath.Join(work, fmt.Sprintf("out%d", n))
				n++
				r := runHostile(t, work, c.args(scratch)...)
				os.Remove(path)
				os.WriteFile(path, saved, 0o644)
				if r.maxRSS > maxRSS[c.name] {
					maxRSS[c.name], worst[c.name] = r.maxRSS, rel+" as "+k.name
				}
				named := strings.Contains(r.out, rel) || strings.Contains(r.out, filepath.Base(rel))
				if slices.Contains(c.reads, rel) && !named {
					t.Errorf("bench %s over %s as %s: exit %d, and nothing names the file:\n%s", c.name, rel, k.name, r.code, r.out)
				}
				if slices.Contains(c.reads, rel) && r.code == exitcode.OK && k.name != "a 3 GiB sparse file" && c.name != "history" {
					t.Errorf("bench %s over %s as %s: exit 0, want a refusal:\n%s", c.name, rel, k.name, r.out)
				}
				if r.code != exitcode.OK && !named {
					t.Errorf("bench %s over %s as %s: exit %d without naming it:\n%s", c.name, rel, k.name, r.code, r.out)
				}
				if r.code != exitcode.OK && r.code != exitcode.Usage && r.code != exitcode.IO {
					t.Errorf("bench %s over %s as %s: exit %d\n%s", c.name, rel, k.name, r.code, r.out)
				}
				os.RemoveAll(scratch)
			}
		}
	}
	var lines []string
	for _, c := range commands {
		lines = append(lines, fmt.Sprintf("%-8s %6.1f MiB (%s)", c.name, float64(maxRSS[c.name])/1024, worst[c.name]))
	}
	t.Logf("largest RSS of each reader over %d hostile inputs:\n%s", n, strings.Join(lines, "\n"))
}

// Hung on a FIFO, bench rescore ignored SIGINT and SIGTERM (issue 31,
// item 8). A FIFO is now refused at once (above); a rescore reading a
// long results.jsonl stops reading when told to: a 1 TiB sparse file,
// which would take hours to read, is interrupted once rescore has it
// open, and the command ends as an interrupted one, writing nothing. (The
// rescore of before read on to the end of the file, ignoring the signal
// until then.)
func TestRescoreInterruptedWhileReading(t *testing.T) {
	s := faultserver.Start(t)
	work := t.TempDir()
	os.WriteFile(filepath.Join(work, "prompts.yaml"), []byte(promptFile), 0o644)
	os.WriteFile(filepath.Join(work, "bench.yaml"), []byte(fmt.Sprintf("run:\n  warmup: false\nproviders:\n  - type: ollama_openai\n    base_url: %s/v1\n    models: [ok]\nprompts:\n  files: [prompts.yaml]\n  only: [T0]\n", s.URL())), 0o644)
	if code, stdout, stderr := runIn(t, work, "run", "--config", "bench.yaml", "--run-id", "big", "--quiet"); code != exitcode.OK {
		t.Fatalf("run: exit %d\n%s%s", code, stdout, stderr)
	}
	results := filepath.Join(work, "runs", "big", "results.jsonl")
	f, err := os.OpenFile(results, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	st, _ := f.Stat()
	f.Truncate(st.Size() + 1<<40)
	f.Close()
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		cmd := exec.Command(benchBin, "rescore", "runs/big", "--out", "runs/big_rescored")
		cmd.Dir = work
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// Once rescore has results.jsonl open, it is reading it.
		for deadline := time.Now().Add(hangAfter); !holdsOpen(cmd.Process.Pid, results); time.Sleep(10 * time.Millisecond) {
			if time.Now().After(deadline) {
				cmd.Process.Kill()
				cmd.Wait()
				t.Fatalf("%s: rescore never opened results.jsonl\n%s", sig, out.String())
			}
		}
		cmd.Process.Signal(sig)
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		var werr error
		select {
		case werr = <-done:
		case <-time.After(hangAfter):
			cmd.Process.Kill()
			<-done
			t.Fatalf("%s: rescore did not stop reading\n%s", sig, out.String())
		}
		if code := exitCode(werr); code != exitcode.Interrupted || !strings.Contains(out.String(), "was not written") {
			t.Errorf("%s: exit %d, want %d (interrupted)\n%s", sig, code, exitcode.Interrupted, out.String())
		}
		if _, err := os.Stat(filepath.Join(work, "runs", "big_rescored")); err == nil {
			t.Errorf("%s: an interrupted rescore left runs/big_rescored", sig)
		}
	}
}

// holdsOpen says whether process pid has path open.
func holdsOpen(pid int, path string) bool {
	fds, _ := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	for _, fd := range fds {
		if l, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", pid, fd.Name())); err == nil && l == path {
			return true
		}
	}
	return false
}
