package rundir

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func sp(s string) *string { return &s }

func TestCreateUnique(t *testing.T) {
	parent := t.TempDir()
	var ids []string
	for range 3 {
		d, err := Create(parent, "20260101_000000", true)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, d.ID)
		d.Close()
	}
	if strings.Join(ids, " ") != "20260101_000000 20260101_000000_2 20260101_000000_3" {
		t.Errorf("ids %v", ids)
	}
}

func TestCreateRefusesARun(t *testing.T) {
	parent := t.TempDir()
	d, err := Create(parent, "nightly", false)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(d.File(ResultsFile), []byte("{}\n"), 0o644)
	d.Close()
	if _, err := Create(parent, "nightly", false); !errors.Is(err, ErrExists) || !strings.Contains(err.Error(), "--resume") {
		t.Errorf("err %v, want ErrExists pointing at --resume", err)
	}
	// An empty directory of that name (made by hand) is fine.
	os.Mkdir(filepath.Join(parent, "empty"), 0o755)
	if d, err := Create(parent, "empty", false); err != nil {
		t.Errorf("empty dir: %v", err)
	} else {
		d.Close()
	}
}

func TestResumeTrimsAndNeedsResults(t *testing.T) {
	dir := t.TempDir()
	if _, _, err := Resume(dir); err == nil || !strings.Contains(err.Error(), "without --resume") {
		t.Errorf("no results: %v", err)
	}
	os.WriteFile(Path(dir, ResultsFile), []byte("{\"a\":1}\n{\"half"), 0o644)
	d, dropped, err := Resume(dir)
	if err != nil || dropped != 6 {
		t.Fatalf("dropped %d, %v", dropped, err)
	}
	d.Close()
	if b, _ := os.ReadFile(Path(dir, ResultsFile)); string(b) != "{\"a\":1}\n" {
		t.Errorf("results now %q", b)
	}
	// Killed after config.json, before the first result: it resumes.
	early := t.TempDir()
	os.WriteFile(Path(early, ConfigFile), []byte("{}"), 0o644)
	d, dropped, err = Resume(early)
	if err != nil || dropped != 0 {
		t.Fatalf("no results yet: %d, %v", dropped, err)
	}
	d.Close()
}

// TestMain lets the test binary act as a second bench process holding a
// run directory's lock: BENCH_RUNDIR_HOLD=dir locks it, says so, and waits.
func TestMain(m *testing.M) {
	if dir := os.Getenv("BENCH_RUNDIR_HOLD"); dir != "" {
		d, err := Create(filepath.Dir(dir), filepath.Base(dir), false)
		if err != nil {
			fmt.Println("error:", err)
			os.Exit(1)
		}
		fmt.Println("locked")
		bufio.NewReader(os.Stdin).ReadString('\n') // until the parent lets go
		d.Close()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// Two processes on one run directory: the second is refused with the
// holder's pid, and once the holder is killed (-9) the lock is free.
func TestLockAcrossProcesses(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "BENCH_RUNDIR_HOLD="+dir)
	stdin, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	line, _ := bufio.NewReader(out).ReadString('\n')
	if line != "locked\n" {
		t.Fatalf("holder said %q", line)
	}
	for name, open := range map[string]func() error{
		"create": func() error { _, err := Create(filepath.Dir(dir), "run", false); return err },
		"resume": func() error {
			os.WriteFile(Path(dir, ResultsFile), nil, 0o644)
			_, _, err := Resume(dir)
			return err
		},
	} {
		err := open()
		if !errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), fmt.Sprintf("(pid %d)", cmd.Process.Pid)) {
			t.Errorf("%s while held: %v", name, err)
		}
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	d, _, err := Resume(dir)
	if err != nil {
		t.Fatalf("after the holder died: %v", err)
	}
	d.Close()
}

// On a full disk an atomic write fails with one clear error and leaves the
// old file whole: never a 0-byte run.json, never a stray temporary file.
func TestWriteFileFullDisk(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("mounting a small tmpfs needs root")
	}
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size=64k"); err != nil {
		t.Fatalf("mount tmpfs: %v", err)
	}
	defer syscall.Unmount(dir, 0)
	path := filepath.Join(dir, RunFile)
	if err := WriteJSON(path, &RunInfo{RunID: "r", EndReason: "finished"}); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(path)
	fill, _ := os.Create(filepath.Join(dir, "fill"))
	fill.Write(make([]byte, 1<<20)) // fails once the 64k are gone
	fill.Close()
	err := WriteJSON(path, &RunInfo{RunID: strings.Repeat("x", 8<<10), EndReason: "interrupted"})
	if err == nil || !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("err %v, want ENOSPC", err)
	}
	if strings.Count(err.Error(), dir) != 1 || strings.Contains(err.Error(), ".tmp") {
		t.Errorf("error names the file once and not the temporary one: %v", err)
	}
	after, _ := os.ReadFile(path)
	if string(after) != string(before) || len(after) == 0 {
		t.Errorf("run.json changed to %q", after)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 2 {
		t.Errorf("left behind: %v", entries)
	}
}

func TestReadSuite(t *testing.T) {
	dir := t.TempDir()
	if rec, err := ReadSuite(dir, "nobody", "nothing", nil); rec != nil || err != nil {
		t.Errorf("missing suite: %v, %v; want nil, nil", rec, err)
	}
	WriteJSON(Path(dir, FileBase("claude", "sonnet", nil)+".json"), &SuiteRecord{Provider: "claude", Model: "sonnet"})
	if rec, err := ReadSuite(dir, "claude", "sonnet", nil); err != nil || rec.Model != "sonnet" {
		t.Errorf("read: %+v, %v", rec, err)
	}
	// sonnet:x maps to the same file name as sonnet_x; a file that belongs
	// to another suite is refused rather than read as this one's.
	WriteJSON(Path(dir, FileBase("claude", "sonnet:x", nil)+".json"), &SuiteRecord{Provider: "claude", Model: "sonnet_x"})
	if _, err := ReadSuite(dir, "claude", "sonnet:x", nil); err == nil {
		t.Error("ReadSuite accepted another suite's file")
	}
}
func TestFileBase(t *testing.T) {
	tests := []struct {
		provider, model string
		thinking        *string
		want            string
	}{
		{"ollama_openai", "llama3.2:3b", nil, "resources_ollama_openai_llama3.2_3b_b9075604"},
		{"claude", "claude-opus-4/1", sp("high"), "resources_claude_claude-opus-4_1_high_565663c2"},
		{"p", "../../etc/passwd", nil, "resources_p_.._.._etc_passwd_1d381e66"},
		{"p q", "", sp("low"), "resources_p_q___low_e9ba8275"},
	}
	for _, tt := range tests {
		if got := FileBase(tt.provider, tt.model, tt.thinking); got != tt.want {
			t.Errorf("FileBase(%q, %q) = %q, want %q", tt.provider, tt.model, got, tt.want)
		}
		if strings.ContainsAny(FileBase(tt.provider, tt.model, tt.thinking), "/\\: ") {
			t.Errorf("unsafe file name for %q", tt.model)
		}
	}
}

// Names that read alike get files of their own, and a 250-character
// model (or provider, or level) still gets its resource files: every file
// made from the stem, and its temporary name, fits in 255 bytes, and the
// suite reads back.
func TestFileBaseCollisionsAndLength(t *testing.T) {
	seen := map[string]string{}
	long := strings.Repeat("m", 250)
	for _, s := range []struct {
		p, m string
		th   *string
	}{
		{"plain", "plain:1", nil}, {"plain", "plain/1", nil}, {"plain", "plain_1", nil},
		{"a_b", "c", nil}, {"a", "b_c", nil}, {"a", "b", sp("c")}, {"a", "b_c", sp("")}, {"a", "b", sp("")},
		{"p", long, nil}, {"p", long + "x", nil}, {long, long, sp(long)}, {"p", strings.Repeat("é", 200), nil},
	} {
		base := FileBase(s.p, s.m, s.th)
		key := s.p + "|" + s.m + "|" + fmt.Sprint(s.th != nil)
		if s.th != nil {
			key += *s.th
		}
		if other, ok := seen[base]; ok {
			t.Errorf("%s and %s share %s", key, other, base)
		}
		seen[base] = key
		if n := len("." + base + "_samples.jsonl.1234567890.tmp"); n > 255 {
			t.Errorf("%s: a temporary name of %d bytes", base, n)
		}
	}
	dir := t.TempDir()
	rec := &SuiteRecord{Provider: long, Model: long, ThinkingLevel: sp(long)}
	if err := WriteJSON(filepath.Join(dir, FileBase(long, long, sp(long))+".json"), rec); err != nil {
		t.Fatal(err)
	}
	got, err := ReadSuite(dir, long, long, sp(long))
	if err != nil || got == nil || got.Model != long {
		t.Errorf("read back: %v, %v", got, err)
	}
	if got, err := ReadSuite(dir, long+"x", long, sp(long)); got != nil || err != nil {
		t.Errorf("another long suite: %v, %v", got, err)
	}
}

// A run written before the hash was added keeps its resource files under
// the old names; reports rebuilt today still find them.
func TestReadSuiteLegacyName(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "resources_ollama_openai_llama3.2_3b.json"), []byte(`{"provider":"ollama_openai","model":"llama3.2:3b","thinking_level":null}`), 0o644)
	if got, err := ReadSuite(dir, "ollama_openai", "llama3.2:3b", nil); err != nil || got == nil {
		t.Errorf("legacy file: %v, %v", got, err)
	}
}

// A streamed atomic file appears under its name only on Commit; Abort leaves
// the old file and no temporary one.
func TestAtomicFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, ResultsFile)
	os.WriteFile(path, []byte("old\n"), 0o644)
	a, err := CreateAtomic(path)
	if err != nil {
		t.Fatal(err)
	}
	a.Write([]byte("new "))
	if b, _ := os.ReadFile(path); string(b) != "old\n" {
		t.Errorf("before Commit the file reads %q", b)
	}
	a.Write([]byte("lines\n"))
	if err := a.Commit(); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); string(b) != "new lines\n" {
		t.Errorf("after Commit the file reads %q", b)
	}
	b, err := CreateAtomic(path)
	if err != nil {
		t.Fatal(err)
	}
	b.Write([]byte("dropped"))
	b.Abort()
	if got, _ := os.ReadFile(path); string(got) != "new lines\n" {
		t.Errorf("after Abort the file reads %q", got)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("left behind: %v", entries)
	}
}
