package main

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"bench/config"
	"bench/internal/exitcode"
	"bench/prompts"
	"bench/providers"
)

// fakeTags is an Ollama's /api/tags with two chat models and an embedding
// model.
const fakeTags = `{"models":[
 {"name":"qwen3:4b","model":"qwen3:4b","details":{"family":"qwen3","families":["qwen3"]}},
 {"name":"nomic-embed-text:latest","model":"nomic-embed-text:latest","details":{"family":"nomic-bert","families":["nomic-bert"]}},
 {"name":"hf.co/org/model, odd:Q4","model":"x","details":{"family":"llama"}}]}`

// initGolden runs bench init and compares its output and the file it wrote
// (the date masked) with testdata/golden/NAME.txt.
func initGolden(t *testing.T, name, url string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "bench.yaml")
	code, stdout, stderr := runCLI("init", "--ollama", url, "--config", path)
	if code != exitcode.OK {
		t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
	}
	written, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// What init wrote loads, and plans what it says.
	cfg, err := config.Load(path, providers.Kinds)
	if err != nil {
		t.Fatalf("the written file does not load: %v", err)
	}
	out := "$ bench init\n--- stdout\n" + stdout + "--- stderr\n" + stderr + "--- bench.yaml\n" + string(written)
	out = strings.ReplaceAll(out, path, "BENCH_YAML")
	out = strings.ReplaceAll(out, url, "OLLAMA_URL")
	out = regexp.MustCompile(`on \d{4}-\d\d-\d\d\.`).ReplaceAllString(out, "on DATE.")
	golden(t, name, out)
	// Every count of prompts in the file is the built-in suite's (issue
	// 35: "25 built-in prompts" and "16 prompts" in one file).
	builtin, err := prompts.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	counts := regexp.MustCompile(`(\d+) (?:built-in )?prompts`).FindAllStringSubmatch(string(written), -1)
	if len(counts) < 2 {
		t.Errorf("bench.yaml counts its prompts %d times; the check means nothing", len(counts))
	}
	for _, c := range counts {
		if c[1] != strconv.Itoa(len(builtin)) {
			t.Errorf("bench.yaml says %q; the built-in suite has %d prompts", c[0], len(builtin))
		}
	}

	// A second init never overwrites.
	code, _, stderr = runCLI("init", "--ollama", url, "--config", path)
	again, _ := os.ReadFile(path)
	if code != exitcode.Usage || !strings.Contains(stderr, "exists; not overwriting") || string(again) != string(written) {
		t.Errorf("second init: exit %d, %s", code, stderr)
	}
	return strings.Join(cfg.Providers[0].Models, "|")
}

func TestInitFindsOllamaModels(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/api/tags" {
			http.NotFound(w, r)
			return
		}
		w.Write([]byte(fakeTags))
	}))
	defer srv.Close()
	if got := initGolden(t, "init-found.txt", srv.URL); got != "qwen3:4b|hf.co/org/model, odd:Q4" {
		t.Errorf("models %q: want the chat models, the embedding model left out", got)
	}
}

func TestInitNoOllama(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close() // nothing listens there now
	if got := initGolden(t, "init-none.txt", url); got != "llama3.2:3b|qwen3:4b" {
		t.Errorf("models %q: want the two defaults", got)
	}
}

// A real Ollama: init lists what it has.
func TestInitRealOllama(t *testing.T) {
	s := needServer(t)
	path := filepath.Join(t.TempDir(), "bench.yaml")
	code, stdout, stderr := runCLI("init", "--ollama", s.URL(), "--config", path)
	if code != exitcode.OK {
		t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
	}
	cfg, err := config.Load(path, providers.Kinds)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(cfg.Providers[0].Models, ","), "scripted") || !strings.Contains(stdout, "Found an Ollama at "+s.URL()) {
		t.Errorf("models %v\n%s", cfg.Providers[0].Models, stdout)
	}
}

// bench init --ollama 127.0.0.1:PORT (OLLAMA_HOST's form, no scheme) finds
// the server there and writes a file that loads; a value it cannot use is
// exit 2 with no file written, so the next init is not refused.
func TestInitHostPort(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(fakeTags)) }))
	defer srv.Close()
	hostport := strings.TrimPrefix(srv.URL, "http://")
	path := filepath.Join(t.TempDir(), "bench.yaml")
	code, stdout, stderr := runCLI("init", "--ollama", hostport, "--config", path)
	if code != exitcode.OK || !strings.Contains(stdout, "Found an Ollama at "+srv.URL) {
		t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
	}
	if _, err := config.Load(path, providers.Kinds); err != nil {
		t.Fatalf("the written file does not load: %v", err)
	}
	if b, _ := os.ReadFile(path); !strings.Contains(string(b), "base_url: "+srv.URL+"/v1\n") {
		t.Errorf("no base_url %s/v1 in\n%s", srv.URL, b)
	}
	bad := filepath.Join(t.TempDir(), "bench.yaml")
	code, _, stderr = runCLI("init", "--ollama", "127.0.0.1:notaport", "--config", bad)
	if _, err := os.Stat(bad); code != exitcode.Usage || !strings.Contains(stderr, "not a number") || err == nil {
		t.Errorf("bad --ollama: exit %d, file %v, %s", code, err, stderr)
	}
}

// `bench run` where there is no bench.yaml says how to get one.
func TestRunWithoutConfig(t *testing.T) {
	var code int
	var stdout, stderr string
	t.Run("in an empty directory", func(t *testing.T) {
		t.Chdir(t.TempDir()) // undone when the subtest ends
		code, stdout, stderr = runCLI("run")
	})
	if code != exitcode.Usage {
		t.Errorf("exit %d", code)
	}
	golden(t, "no-config.txt", "$ bench run\n--- stdout\n"+stdout+"--- stderr\n"+stderr)
}

// bench init --detect and bench run --dry-run --detect say how many
// repetitions bench compare needs to see a latency change of that size:
// init in bench.yaml's comment beside run.repetitions and on stdout, the
// dry run from a baseline's measured spread when given one; a bad
// percentage, or --detect without --dry-run, is a usage error.
func TestDetectRepetitions(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	path := filepath.Join(t.TempDir(), "bench.yaml")
	code, stdout, stderr := runCLI("init", "--ollama", url, "--config", path, "--detect", "25%")
	written, _ := os.ReadFile(path)
	want := "to detect a 25 % latency change at 80 % power (25 prompts × 2 groups, cell-to-cell spread assumed 20 % (no baseline to measure it in)): per prompt 49 repetitions; per group, across its 25 prompts, 4 repetitions"
	if code != exitcode.OK || !strings.Contains(stdout, want) || !strings.Contains(string(written), "  # bench init --detect: "+want+"\n  repetitions: ") {
		t.Errorf("init --detect: exit %d\n%s%s\n%s", code, stdout, stderr, written)
	}
	code, stdout, stderr = runCLI("run", "--config", path, "--dry-run", "--detect", "25%")
	if code != exitcode.OK || !strings.Contains(stdout, "bench: "+want+"; the config has ") {
		t.Errorf("dry run --detect: exit %d\n%s%s", code, stdout, stderr)
	}
	base := filepath.Join("testdata", "compare", "base")
	code, stdout, stderr = runCLI("run", "--config", path, "--dry-run", "--detect", "25%", "--baseline", base)
	if code != exitcode.OK || !strings.Contains(stdout, "cell-to-cell spread assumed 20 % (no baseline to measure it in); the baseline "+base+" has no prompt with 4 warm latencies") {
		t.Errorf("dry run --detect --baseline: exit %d\n%s%s", code, stdout, stderr)
	}
	for _, args := range [][]string{{"run", "--config", path, "--detect", "25%"}, {"run", "--config", path, "--dry-run", "--detect", "lots"},
		{"init", "--config", path + "2", "--detect", "0%"}} {
		if code, _, stderr := runCLI(args...); code != exitcode.Usage || !strings.Contains(stderr, "--detect") {
			t.Errorf("%v: exit %d %s", args, code, stderr)
		}
	}
}
