package agentsnap

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "record the agentsnap CLI's answers under testdata/agentsnap (needs BENCH_AGENTSNAP_BIN)")

const goldenDir = "testdata/agentsnap"

// cliAnswer is what `agentsnap diff BASE CURRENT` answered for one pair.
type cliAnswer struct {
	Version string          `json:"agentsnap_version"`
	Exit    int             `json:"exit"`
	Result  json.RawMessage `json:"result"` // its stdout, one JSON object
}

func pairDir(p pair) string { return slug(p.name, 100, false) }

// writePair writes a pair the way bench run does, with Write, into
// dir/base and dir/current, and returns the two files.
func writePair(t testing.TB, dir string, p pair) (basePath, curPath string) {
	t.Helper()
	for _, side := range []struct {
		sub  string
		s    *Snapshot
		path *string
	}{{"base", p.base, &basePath}, {"current", p.cur, &curPath}} {
		d := filepath.Join(dir, side.sub)
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		k := KeyOf(side.s)
		if err := Write(d, k, side.s); err != nil {
			t.Fatal(err)
		}
		*side.path = filepath.Join(d, FileName(k))
	}
	return basePath, curPath
}

// checkAnswer asserts that Diff, on the two files read back with Read,
// agrees with agentsnap's answer: same status, same changes (as JSON
// values), exit 0 exactly for PASSED.
func checkAnswer(t *testing.T, basePath, curPath string, ans cliAnswer) {
	t.Helper()
	base, err := Read(basePath)
	if err != nil {
		t.Fatal(err)
	}
	cur, err := Read(curPath)
	if err != nil {
		t.Fatal(err)
	}
	var theirs struct {
		Status  string          `json:"status"`
		Changes json.RawMessage `json:"changes"`
	}
	if err := json.Unmarshal(ans.Result, &theirs); err != nil {
		t.Fatalf("agentsnap printed %q: %v", ans.Result, err)
	}
	ours := Diff(base, cur)
	if ours.Agentsnap != theirs.Status {
		t.Errorf("Diff says %s, agentsnap says %s (%s)", ours.Agentsnap, theirs.Status, ans.Result)
	}
	if !sameJSONText(t, mustJSON(ours.Changes), theirs.Changes) {
		t.Errorf("Diff changes\n%s\nagentsnap changes\n%s", mustJSON(ours.Changes), theirs.Changes)
	}
	if wantExit := map[bool]int{true: 0, false: 1}[theirs.Status == AgentsnapPassed]; ans.Exit != wantExit {
		t.Errorf("agentsnap exited %d for %s, want %d", ans.Exit, theirs.Status, wantExit)
	}
}

// runCLI runs `agentsnap diff base cur`.
func runCLI(t *testing.T, bin, base, cur string) cliAnswer {
	t.Helper()
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(bin, "diff", base, cur)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	ans := cliAnswer{Result: bytes.TrimSpace(stdout.Bytes())}
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		ans.Exit = ee.ExitCode()
	case err != nil:
		t.Fatalf("run %s: %v", bin, err)
	}
	if ans.Exit > 1 || stderr.Len() > 0 || !json.Valid(ans.Result) {
		t.Fatalf("agentsnap diff exited %d, stdout %q, stderr %q", ans.Exit, stdout.String(), stderr.String())
	}
	return ans
}

// TestAgentsnapCLI writes every pair with Write and has the real agentsnap
// CLI (BENCH_AGENTSNAP_BIN) diff the files: it must read them and report
// what Diff reports. With -update it records its answers as goldens.
func TestAgentsnapCLI(t *testing.T) {
	bin := os.Getenv("BENCH_AGENTSNAP_BIN")
	if bin == "" {
		if *update {
			t.Fatal("-update needs BENCH_AGENTSNAP_BIN, the agentsnap CLI to record")
		}
		// agentsnap is not on the npm registry, so scripts/test.sh has no
		// pinned copy to install; TestAgentsnapGolden checks its recorded
		// answers instead. This stays a skip, not a pass.
		t.Skip("BENCH_AGENTSNAP_BIN not set: the live agentsnap check did not run (agentsnap is not on npm; see testdata/agentsnap/README.md)")
	}
	out, err := exec.Command(bin, "--version").Output()
	if err != nil {
		t.Fatalf("%s --version: %v", bin, err)
	}
	version := strings.TrimSpace(string(out))
	t.Logf("agentsnap %s", version)
	if *update {
		if err := os.RemoveAll(goldenDir); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range pairs() {
		t.Run(p.name, func(t *testing.T) {
			basePath, curPath := writePair(t, t.TempDir(), p)
			ans := runCLI(t, bin, basePath, curPath)
			ans.Version = version
			checkAnswer(t, basePath, curPath, ans)
			if *update {
				saveGolden(t, p, basePath, curPath, ans)
			}
		})
	}
}

func saveGolden(t *testing.T, p pair, basePath, curPath string, ans cliAnswer) {
	dir := filepath.Join(goldenDir, pairDir(p))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for src, dst := range map[string]string{basePath: "base.json", curPath: "current.json"} {
		data, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, dst), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	data, _ := json.MarshalIndent(ans, "", "  ")
	if err := os.WriteFile(filepath.Join(dir, "agentsnap.json"), append(data, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestAgentsnapGolden checks Diff against the answers the real agentsnap
// CLI gave for the same files (recorded by TestAgentsnapCLI -update), and
// that Write still produces exactly those files.
func TestAgentsnapGolden(t *testing.T) {
	want := map[string]bool{}
	for _, p := range pairs() {
		want[pairDir(p)] = true
		t.Run(p.name, func(t *testing.T) {
			dir := filepath.Join(goldenDir, pairDir(p))
			var ans cliAnswer
			data, err := os.ReadFile(filepath.Join(dir, "agentsnap.json"))
			if err != nil {
				t.Fatalf("%v: record it with BENCH_AGENTSNAP_BIN=... go test ./snapshot -run TestAgentsnapCLI -update", err)
			}
			if err := json.Unmarshal(data, &ans); err != nil {
				t.Fatal(err)
			}
			for file, s := range map[string]*Snapshot{"base.json": p.base, "current.json": p.cur} {
				got, err := Marshal(s)
				if err != nil {
					t.Fatal(err)
				}
				recorded, err := os.ReadFile(filepath.Join(dir, file))
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(got, recorded) {
					t.Errorf("%s/%s is not what Write writes now; re-record with -update", dir, file)
				}
			}
			checkAnswer(t, filepath.Join(dir, "base.json"), filepath.Join(dir, "current.json"), ans)
		})
	}
	entries, err := os.ReadDir(goldenDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.IsDir() && !want[e.Name()] {
			t.Errorf("%s/%s belongs to no pair; re-record with -update", goldenDir, e.Name())
		}
	}
}
