package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"bench/internal/exitcode"
	"bench/internal/record/rundir"
)

func TestShardSpec(t *testing.T) {
	tests := []struct {
		name          string
		flag          string
		flagSet       bool
		env           map[string]string
		wantI, wantN  int
		wantErrSubstr string
	}{
		{name: "not sharded"},
		{name: "flag", flag: "2/4", flagSet: true, wantI: 2, wantN: 4},
		{name: "flag beats the environment", flag: "1/2", flagSet: true, env: map[string]string{envShardCount: "4", envJobIndex: "3"}, wantI: 1, wantN: 2},
		{name: "indexed job: index 0 is shard 1", env: map[string]string{envShardCount: "4", envJobIndex: "0"}, wantI: 1, wantN: 4},
		{name: "indexed job: last index", env: map[string]string{envShardCount: "4", envJobIndex: "3"}, wantI: 4, wantN: 4},
		{name: "job index alone shards nothing", env: map[string]string{envJobIndex: "2"}},
		{name: "bad flag", flag: "4/3", flagSet: true, wantErrSubstr: "--shard: \"4/3\" is not a shard"},
		{name: "empty flag", flag: "", flagSet: true, wantErrSubstr: "--shard"},
		{name: "count without index", env: map[string]string{envShardCount: "4"}, wantErrSubstr: "JOB_COMPLETION_INDEX is not"},
		{name: "count not a number", env: map[string]string{envShardCount: "four", envJobIndex: "0"}, wantErrSubstr: `BENCH_SHARD_COUNT="four"`},
		{name: "count zero", env: map[string]string{envShardCount: "0", envJobIndex: "0"}, wantErrSubstr: "BENCH_SHARD_COUNT"},
		{name: "index past the count", env: map[string]string{envShardCount: "4", envJobIndex: "4"}, wantErrSubstr: "want 0 to 3"},
		{name: "negative index", env: map[string]string{envShardCount: "4", envJobIndex: "-1"}, wantErrSubstr: "want 0 to 3"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			i, n, err := shardSpec(tt.flag, tt.flagSet, func(k string) string { return tt.env[k] })
			if tt.wantErrSubstr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErrSubstr) {
					t.Fatalf("err %v, want one containing %q", err, tt.wantErrSubstr)
				}
				return
			}
			if err != nil || i != tt.wantI || n != tt.wantN {
				t.Errorf("got %d/%d, %v; want %d/%d", i, n, err, tt.wantI, tt.wantN)
			}
		})
	}
}

// The dry run of a shard shows only its suites; the Indexed Job's
// environment shards like the flag; a shard past the suites says so.
func TestShardDryRun(t *testing.T) {
	code, stdout, stderr := runCLI("run", "--config", "testdata/cli/bench.yaml", "--dry-run", "--shard", "2/2")
	if code != exitcode.OK || !strings.Contains(stdout, "shard 2/2: 2 of 5 suites (ollama_openai/llama3.2:3b/high, ollama_openai/qwen3:4b/high)") ||
		!strings.Contains(stdout, "12 cells") || strings.Contains(stdout, "sonnet") {
		t.Errorf("exit %d\n%s%s", code, stdout, stderr)
	}
	t.Setenv(envShardCount, "2")
	t.Setenv(envJobIndex, "1")
	_, envOut, _ := runCLI("run", "--config", "testdata/cli/bench.yaml", "--dry-run")
	if envOut != stdout {
		t.Errorf("JOB_COMPLETION_INDEX=1 of 2 differs from --shard 2/2:\n%s\nvs\n%s", envOut, stdout)
	}
	code, stdout, _ = runCLI("run", "--config", "testdata/cli/bench.yaml", "--dry-run", "--shard", "6/6")
	if code != exitcode.OK || !strings.Contains(stdout, "shard 6/6 has no suites: the plan has 5") || !strings.Contains(stdout, "0 cells") {
		t.Errorf("exit %d\n%s", code, stdout)
	}
	t.Setenv(envJobIndex, "")
	code, _, stderr = runCLI("run", "--config", "testdata/cli/bench.yaml", "--dry-run")
	if code != exitcode.Usage || !strings.Contains(stderr, "JOB_COMPLETION_INDEX is not") {
		t.Errorf("count without index: exit %d, %s", code, stderr)
	}
}

// A shard's directory resumes only as the same shard.
func TestResumeKeepsTheShard(t *testing.T) {
	parent := t.TempDir()
	dir := filepath.Join(parent, "nightly")
	os.MkdirAll(dir, 0o755)
	os.WriteFile(filepath.Join(dir, "results.jsonl"), nil, 0o644)
	rundir.WriteJSON(filepath.Join(dir, "run.json"), &rundir.RunInfo{RunID: "nightly", EndReason: "interrupted", Shard: &rundir.Shard{Index: 1, Count: 2}})
	for _, args := range [][]string{{"--shard", "2/2"}, {"--shard", "1/3"}, {}} {
		code, _, stderr := runCLI(append([]string{"run", "--config", "testdata/cli/bench.yaml", "--out", parent, "--run-id", "nightly", "--resume", "--quiet"}, args...)...)
		if code != exitcode.Usage || !strings.Contains(stderr, "holds a run that was shard 1/2; it cannot be resumed") {
			t.Errorf("resume %v: exit %d\n%s", args, code, stderr)
		}
	}
}
