package grader

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"bench/internal/record/results"
	"bench/prompts"
	"bench/validators"
)

// script writes an executable shell script into dir.
func script(t *testing.T, dir, name, body string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// commandPrompt is a prompt with one exact check and one command check,
// loaded as a prompt file is (so the program is found and made absolute).
func commandPrompt(t *testing.T, dir, spec string) *prompts.Prompt {
	t.Helper()
	src := "prompts:\n  - id: C1\n    system: Be brief.\n    prompt: \"Say OK\"\n    validators:\n      - {type: max_words, value: 3}\n      - " + spec + "\n"
	ps, err := prompts.Parse(filepath.Join(dir, "p.yaml"), []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	return &ps[0]
}

// answered is a successful cell's record scored by its other checks, as
// the runner leaves it before the external ones.
func answered(p *prompts.Prompt, text string) *results.Record {
	rec := &results.Record{Success: true, RawOutput: text, PromptID: p.ID, AvailabilityStatus: results.StatusOK,
		ToolCallDetails: []results.ToolCall{{Name: "df", Arguments: json.RawMessage(`{"command":"df -h"}`), Source: results.SourceText}},
		ExpectedTools:   []string{"df"}}
	out := validators.CheckAll(p.Checks(), validators.Input{Text: text})
	rec.ObjectivePass = out.Pass
	if out.Pass != nil && !*out.Pass {
		rec.Violation = &out.Violation
	}
	if out.Parsed != nil {
		rec.ParsedOutput, _ = json.Marshal(out.Parsed)
	}
	return rec
}

func TestCommandVerdicts(t *testing.T) {
	dir := t.TempDir()
	script(t, dir, "says_ok.sh", `input=$(cat)
case "$input" in
*'"answer":"OK"'*) echo '{"pass": true, "reason": "it says OK", "score": 1}' ;;
*) echo '{"pass": false, "reason": "it does not say OK"}'; exit 1 ;;
esac
`)
	script(t, dir, "exit_code.sh", `cat >/dev/null; [ "$1" = yes ]`)
	g := New(Options{Concurrency: 2})
	p := commandPrompt(t, dir, "{type: command, argv: [./says_ok.sh], timeout: 5s}")
	rec := answered(p, "OK")
	g.Grade(context.Background(), p, rec, "")
	if rec.ObjectivePass == nil || !*rec.ObjectivePass || rec.CheckErrors != nil {
		t.Fatalf("OK: pass %v errors %+v", rec.ObjectivePass, rec.CheckErrors)
	}
	if got := string(rec.ParsedOutput); got != `{"command":{"pass":true,"score":1,"reason":"it says OK","exit_code":0},"words":1}` {
		t.Errorf("parsed_output = %s", got)
	}
	rec = answered(p, "Nope")
	g.Grade(context.Background(), p, rec, "")
	if rec.ObjectivePass == nil || *rec.ObjectivePass || *rec.Violation != "command: it does not say OK" {
		t.Errorf("Nope: pass %v violation %v", rec.ObjectivePass, rec.Violation)
	}
	// The other check's failure and the command's are both told.
	rec = answered(p, "no no no no")
	g.Grade(context.Background(), p, rec, "")
	if *rec.Violation != "4 words, expected at most 3; command: it does not say OK" {
		t.Errorf("violation = %q", *rec.Violation)
	}
	for _, tc := range []struct {
		arg  string
		pass bool
	}{{"yes", true}, {"no", false}} {
		p := commandPrompt(t, dir, "{type: command, argv: [./exit_code.sh, "+tc.arg+"]}")
		rec := answered(p, "OK")
		g.Grade(context.Background(), p, rec, "")
		if rec.ObjectivePass == nil || *rec.ObjectivePass != tc.pass {
			t.Errorf("exit code verdict %s: %v %+v", tc.arg, rec.ObjectivePass, rec.CheckErrors)
		}
	}
}

// The program reads one JSON object: the prompt, the answer as recorded,
// the tool calls, the expected values; and gets only the environment the
// spec names.
func TestCommandInputAndEnv(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "seen")
	script(t, dir, "record.sh", `cat >"$1"; env | sort >"$1.env"`)
	p := commandPrompt(t, dir, "{type: command, argv: [./record.sh, "+out+"], env: [ALLOWED, UNSET_ONE], expected: {label: billing, n: 2}}")
	g := New(Options{Getenv: func(k string) (string, bool) {
		v, ok := map[string]string{"ALLOWED": "yes", "SECRET_TOKEN": "sk-nope", "PATH": "/bin"}[k]
		return v, ok
	}})
	rec := answered(p, "OK")
	g.Grade(context.Background(), p, rec, "")
	if rec.ObjectivePass == nil || !*rec.ObjectivePass {
		t.Fatalf("pass %v errors %+v", rec.ObjectivePass, rec.CheckErrors)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"prompt_id":"C1","system":"Be brief.","prompt":"Say OK","answer":"OK","tool_calls":[{"name":"df","arguments":{"command":"df -h"},"source":"text"}],"expected":{"label":"billing","n":2},"expected_tools":["df"]}` + "\n"
	if string(b) != want {
		t.Errorf("stdin:\n%s\nwant\n%s", b, want)
	}
	env, _ := os.ReadFile(out + ".env")
	// sh itself may set PWD, SHLVL and _; nothing of bench's is there but ALLOWED.
	for _, line := range strings.Split(strings.TrimSpace(string(env)), "\n") {
		k, _, _ := strings.Cut(line, "=")
		switch k {
		case "ALLOWED", "PWD", "SHLVL", "_", "OLDPWD":
		default:
			t.Errorf("the command got %s", line)
		}
	}
	if !strings.Contains(string(env), "ALLOWED=yes") {
		t.Errorf("env:\n%s", env)
	}
}

// A program that fails, hangs, floods, dies or prints garbage is a
// validator_error with its stderr's tail: never a pass, never a crash,
// and bounded in time.
func TestCommandFailures(t *testing.T) {
	dir := t.TempDir()
	cases := []struct {
		name, body, timeout, want string
	}{
		{"exit 2", "echo 'traceback: KeyError label' >&2; exit 2", "", "exit status 2 (0 passes, 1 fails; anything else is an error); stderr: traceback: KeyError label"},
		{"garbage", "echo 'looks fine to me'", "", `stdout is not a verdict object`},
		{"unknown key", `echo '{"pass": true, "override": 1}'`, "", `stdout: unknown key "override"`},
		{"pass null", `echo '{"pass": null, "reason": "no idea"}'`, "", `stdout: "pass" must be true or false, got null`},
		// 2 s: the program's first line must have run before its timeout
		// (under the reaper, on a machine at a load of 20).
		{"hangs", "echo started >&2; sleep 30", "2s", "did not finish within its timeout (2s); it was stopped; stderr: started"},
		{"hangs with a child holding stdout", "sleep 30 & sleep 30", "300ms", "did not finish within its timeout (300ms)"},
		{"floods stdout", "yes", "", "printed more than 65536 bytes on stdout"},
		{"prints a gigabyte", "head -c 1073741824 /dev/zero | tr '\\0' a", "", "printed more than 65536 bytes on stdout"},
		{"killed", "kill -9 $$", "", "was killed by killed"},
		{"floods stderr", "yes 'noise' | head -c 10000000 >&2; exit 3", "", "exit status 3"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			name := strings.ReplaceAll(tc.name, " ", "_") + ".sh"
			script(t, dir, name, tc.body+"\n")
			spec := "{type: command, argv: [./" + name + "]"
			if tc.timeout != "" {
				spec += ", timeout: " + tc.timeout
			}
			p := commandPrompt(t, dir, spec+"}")
			rec := answered(p, "OK")
			start := time.Now()
			New(Options{}).Grade(context.Background(), p, rec, "")
			if took := time.Since(start); took > 10*time.Second {
				t.Errorf("took %s", took)
			}
			if rec.ObjectivePass != nil {
				t.Errorf("objective_pass = %v, want null: a check error is never a verdict", *rec.ObjectivePass)
			}
			if len(rec.CheckErrors) != 1 || rec.CheckErrors[0].Type != results.ValidatorError || rec.CheckErrors[0].Check != "command" || rec.CheckErrors[0].Index != 1 {
				t.Fatalf("check errors = %+v", rec.CheckErrors)
			}
			if msg := rec.CheckErrors[0].Message; !strings.Contains(msg, tc.want) {
				t.Errorf("message %q\nwant it to contain %q", msg, tc.want)
			}
			if msg := rec.CheckErrors[0].Message; len(msg) > StderrTail+1024 {
				t.Errorf("message of %d bytes", len(msg))
			}
		})
	}
	// A program removed after the prompt file loaded.
	gone := script(t, dir, "gone.sh", "exit 0\n")
	p := commandPrompt(t, dir, "{type: command, argv: [./gone.sh]}")
	os.Remove(gone)
	rec := answered(p, "OK")
	New(Options{}).Grade(context.Background(), p, rec, "")
	if len(rec.CheckErrors) != 1 || !strings.Contains(rec.CheckErrors[0].Message, "did not start") {
		t.Errorf("gone: %+v", rec.CheckErrors)
	}
}

// A failed cell is not judged by any check: nothing runs.
func TestNothingForFailedCells(t *testing.T) {
	dir := t.TempDir()
	marker := filepath.Join(dir, "ran")
	script(t, dir, "touch.sh", "touch "+marker+"\n")
	p := commandPrompt(t, dir, "{type: command, argv: [./touch.sh]}")
	rec := &results.Record{Success: false, AvailabilityStatus: results.StatusError}
	New(Options{}).Grade(context.Background(), p, rec, "")
	if _, err := os.Stat(marker); err == nil || rec.CheckErrors != nil || rec.ObjectivePass != nil {
		t.Errorf("a failed cell was graded: %+v", rec)
	}
}

func TestCappedAndTail(t *testing.T) {
	over := 0
	c := &capped{max: 5, over: func() { over++ }}
	c.Write([]byte("abc"))
	c.Write([]byte("de"))
	if over != 0 || string(c.Bytes()) != "abcde" {
		t.Errorf("exactly the cap: %q, over %d", c.Bytes(), over)
	}
	c.Write([]byte("f"))
	c.Write([]byte("gh"))
	if over != 1 || string(c.Bytes()) != "abcde" {
		t.Errorf("past the cap: %q, over %d", c.Bytes(), over)
	}
	tb := &tailBuffer{max: 4}
	for _, s := range []string{"hello ", "wor", "ld"} {
		tb.Write([]byte(s))
	}
	if got := tb.String(); got != "…orld" {
		t.Errorf("tail = %q", got)
	}
}

// alive lists the processes whose command line holds marker.
func alive(t *testing.T, marker string) []string {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Skip("no /proc")
	}
	var out []string
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && strings.Contains(string(b), marker) {
			out = append(out, e.Name()+": "+strings.ReplaceAll(string(b), "\x00", " "))
		}
	}
	return out
}

// Children that leave the program's process group (setsid, a double
// fork) are killed with it (issue 31, item 10): after a program that
// exits at once, one that times out and one that floods, none of its
// sleepers is alive, and the verdicts are as without them.
func TestCommandEscapedChildrenAreKilled(t *testing.T) {
	if _, err := exec.LookPath("setsid"); err != nil {
		t.Skip("no setsid")
	}
	dir := t.TempDir()
	for i, tc := range []struct {
		name, tail, timeout, want string
	}{
		{"exits", `echo '{"pass": true, "reason": "fine"}'`, "", ""},
		{"hangs", "sleep 30", "300ms", "did not finish within its timeout (300ms)"},
		{"floods", "yes", "", "printed more than 65536 bytes on stdout"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			marker := fmt.Sprintf("%d", 7100+i+100*os.Getpid()%1000)
			// A setsid'ed sleeper, a double-forked one, and one that
			// keeps stdout open: none is in the program's group.
			body := fmt.Sprintf("cat >/dev/null\n(setsid sleep 3%s &)\n(sh -c 'sleep 4%s &' &)\nsetsid sh -c 'sleep 5%s' &\n%s\n", marker, marker, marker, tc.tail)
			name := tc.name + ".sh"
			script(t, dir, name, body)
			spec := "{type: command, argv: [./" + name + "]"
			if tc.timeout != "" {
				spec += ", timeout: " + tc.timeout
			}
			p := commandPrompt(t, dir, spec+"}")
			rec := answered(p, "OK")
			New(Options{Getenv: func(k string) (string, bool) { return map[string]string{"PATH": os.Getenv("PATH")}[k], k == "PATH" }}).Grade(context.Background(), p, rec, "")
			if left := alive(t, marker); len(left) > 0 {
				t.Errorf("alive after the check:\n%s", strings.Join(left, "\n"))
				for _, l := range left {
					pid, _, _ := strings.Cut(l, ":")
					if n, err := strconv.Atoi(pid); err == nil {
						syscall.Kill(n, syscall.SIGKILL)
					}
				}
			}
			if tc.want == "" {
				if rec.ObjectivePass == nil || !*rec.ObjectivePass || rec.CheckErrors != nil {
					t.Errorf("pass %v, errors %+v", rec.ObjectivePass, rec.CheckErrors)
				}
			} else if len(rec.CheckErrors) != 1 || !strings.Contains(rec.CheckErrors[0].Message, tc.want) {
				t.Errorf("errors %+v, want %q", rec.CheckErrors, tc.want)
			}
		})
	}
}
