package results

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const strictGood = `{"record_type":"result","provider":"p","provider_type":"ollama","model":"m","prompt_id":"P0","repetition":0,"availability_status":"ok"}`

// A strict scan stops at the first unusable line with a *LineError that
// names it and says what is wrong in words, after handing fn every line
// before it; whichever decoder read the line.
func TestStrictScan(t *testing.T) {
	for _, cs := range []struct {
		name, line, want string
	}{
		{"syntax", `{"record_type": "result", oops}`, "not a results record: column 27: invalid character 'o'"},
		{"wrong type", `{"record_type":"result","provider":"p","provider_type":"t","model":"m","prompt_id":"P","repetition":"one","availability_status":"ok"}`,
			"field repetition: a JSON string, want an integer"},
		{"a float latency", `{"record_type":"result","provider":"p","provider_type":"t","model":"m","prompt_id":"P","repetition":0,"availability_status":"ok","ttft_ms":12.5}`,
			"field ttft_ms: a JSON number 12.5, want an integer"},
		{"another record", `{"record_type":"summary"}`, `record_type is "summary"`},
		{"another schema", `{"record_type":"result","schema_version":2,"provider":"p","provider_type":"t","model":"m","prompt_id":"P","repetition":0,"availability_status":"ok"}`,
			"schema_version is 2"},
		{"another schema, slow path", `{"Provider":"p","record_type":"result","schema_version":"v2","provider_type":"t","model":"m","prompt_id":"P","repetition":0,"availability_status":"ok"}`,
			`schema_version is "v2"`},
		{"no provider_type", `{"record_type":"result","provider":"p","model":"m","prompt_id":"P","repetition":0,"availability_status":"ok"}`,
			"no provider_type: written by a bench older than results schema 1"},
		{"no repetition", `{"record_type":"result","provider":"p","provider_type":"t","model":"m","prompt_id":"P","availability_status":"ok"}`,
			"repetition is missing"},
		{"null repetition", `{"record_type":"result","provider":"p","provider_type":"t","model":"m","prompt_id":"P","repetition":null,"availability_status":"ok"}`,
			"repetition is missing"},
		{"null repetition, slow path", `{"MODEL":"m","record_type":"result","provider":"p","provider_type":"t","prompt_id":"P","repetition":null,"availability_status":"ok"}`,
			"repetition is missing"},
	} {
		t.Run(cs.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "results.jsonl")
			os.WriteFile(path, []byte(strictGood+"\n\n"+cs.line+"\n"+strictGood+"\n"), 0o644)
			for detail := range nDetails {
				var seen []int
				_, _, err := Scan(path, ScanOptions{Strict: true, Detail: detail}, func(line int, _ *Record) error {
					seen = append(seen, line)
					return nil
				})
				var le *LineError
				if !errors.As(err, &le) || le.Line != 3 || !strings.Contains(le.Err.Error(), cs.want) {
					t.Fatalf("detail %d: error %v, want line 3: %q", detail, err, cs.want)
				}
				if len(seen) != 1 || seen[0] != 1 {
					t.Errorf("detail %d: fn saw lines %v before the bad one, want [1]", detail, seen)
				}
			}
			// Not strict, the line is a problem and the scan goes on
			// (unless every reading could use it).
			problems, n, err := Scan(path, ScanOptions{}, func(int, *Record) error { return nil })
			if err != nil || n != len(problems) || n > 1 {
				t.Errorf("not strict: %v, %d problems %v", err, n, problems)
			}
		})
	}
}

func TestStrictScanCutAndLongLines(t *testing.T) {
	dir := t.TempDir()
	cut := filepath.Join(dir, "cut.jsonl")
	os.WriteFile(cut, []byte(strictGood+"\n"+strictGood[:40]), 0o644)
	_, _, err := Scan(cut, ScanOptions{Strict: true}, func(int, *Record) error { return nil })
	if want := "line 2: the last line is cut short, with no newline (was the run killed while writing it?): not a results record: the JSON ends too early"; err == nil || err.Error() != want {
		t.Errorf("cut line: %v, want %s", err, want)
	}
	long := filepath.Join(dir, "long.jsonl")
	f, _ := os.Create(long)
	fmt.Fprintf(f, "%s\n{\"raw_output\":\"%s\"}\n", strictGood, strings.Repeat("x", MaxLineBytes))
	f.Close()
	_, _, err = Scan(long, ScanOptions{Strict: true}, func(int, *Record) error { return nil })
	var le *LineError
	if !errors.As(err, &le) || le.Line != 2 || !strings.Contains(err.Error(), "line longer than") {
		t.Errorf("long line: %v", err)
	}
}

// Lines picks the lines decoded: the others are never handed to fn, and
// line numbers still count every line, blank ones included.
func TestScanPicksLines(t *testing.T) {
	var b strings.Builder
	for i := range 3000 {
		if i%10 == 5 {
			b.WriteString("\n")
			continue
		}
		fmt.Fprintf(&b, `{"record_type":"result","provider":"p","provider_type":"t","model":"m","prompt_id":"P%d","repetition":0,"availability_status":"ok"}`+"\n", i)
	}
	b.WriteString("{garbage on a line not picked\n")
	path := filepath.Join(t.TempDir(), "results.jsonl")
	os.WriteFile(path, []byte(b.String()), 0o644)
	want := map[int]bool{1: true, 7: true, 6: true, 2999: true, 3000: true}
	var got []string
	_, n, err := Scan(path, ScanOptions{Strict: true, Detail: Answers, Lines: func(line int) bool { return want[line] }}, func(line int, r *Record) error {
		got = append(got, fmt.Sprintf("%d:%s", line, r.PromptID))
		return nil
	})
	if err != nil || n != 0 {
		t.Fatal(err, n)
	}
	// Line 6 is blank (i=5): not handed to fn though picked.
	if strings.Join(got, " ") != "1:P0 7:P6 2999:P2998 3000:P2999" {
		t.Errorf("got %v", got)
	}
}
