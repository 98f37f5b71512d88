package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"bench/internal/testpeer/faultserver"
)

// checkPrintable fails when text could drive a terminal or a CI log: a
// control character other than tab and newline (ESC of a clear screen, the
// BEL that ends a window title or an OSC 52 clipboard write, a C1 CSI), a
// line whose first non-blank characters are "::" (a GitHub Actions
// command), or "##vso[" / "##[" anywhere (Azure Pipelines, GitHub's legacy
// commands).
func checkPrintable(t *testing.T, name, text string) {
	t.Helper()
	for i, r := range text {
		if (r < 0x20 && r != '\t' && r != '\n') || r == 0x7f || (r >= 0x80 && r <= 0x9f) {
			t.Errorf("%s holds control character %U at %d: %q", name, r, i, text[max(0, i-60):min(len(text), i+60)])
			break
		}
	}
	for n, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(strings.TrimLeft(line, " \t\u00a0"), "::") {
			t.Errorf("%s line %d is a GitHub Actions command: %q", name, n+1, line)
		}
		if l := strings.ToLower(line); strings.Contains(l, "##vso[") || strings.Contains(l, "##[") {
			t.Errorf("%s line %d is a workflow command: %q", name, n+1, line)
		}
	}
}

// A server whose error body is made to attack the terminal and the CI log
// (faultserver's hostile: "\n::error title=pwned::...", clear screen,
// window title, OSC 52, ##vso[...]) reaches stderr through the warm-up's
// and the cells' messages, and summary.md through the failures table:
// every byte of it is shown, none of it acts.
func TestHostileServerTextIsShownNotObeyed(t *testing.T) {
	s := faultserver.Start(t)
	provs := `providers:
  - type: ollama_openai
    base_url: ` + s.URL() + `/v1
    max_retries: 0
    warmup: true
    models: [hostile]
  - type: ollama
    base_url: ` + s.URL() + `
    max_retries: 0
    warmup: true
    models: [hostile]
`
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "prompts.yaml"), []byte(promptFile), 0o644)
	os.WriteFile(filepath.Join(dir, "bench.yaml"), []byte("run:\n  timeout: 30s\n"+provs+"prompts:\n  files: [prompts.yaml]\n  only: [T0]\n"), 0o644)
	// Not --quiet: the failed cells' messages are printed too.
	_, stdout, stderr := runIn(t, dir, "run", "--config", "bench.yaml", "--run-id", "hostile")
	runDir := filepath.Join(dir, "runs", "hostile")
	if !strings.Contains(stderr, "warm-up") || !strings.Contains(stderr, "pwned") {
		t.Fatalf("the hostile message did not reach stderr (the test means nothing):\n%s", stderr)
	}
	// Shown: the escape and the command are visible as text.
	for _, want := range []string{`\x1b[2J`, `\x07`, `:\x3aerror title=pwned`, `##vso\x5btask.setvariable`} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr does not show %q:\n%s", want, stderr)
		}
	}
	checkPrintable(t, "stderr", stderr)
	checkPrintable(t, "stdout", stdout)
	_, rstdout, rstderr := runIn(t, dir, "report", runDir)
	checkPrintable(t, "bench report's stdout", rstdout)
	checkPrintable(t, "bench report's stderr", rstderr)
	md, err := os.ReadFile(filepath.Join(runDir, "summary.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(md), `\x1b]52;c;cHduZWQ=`) {
		t.Errorf("summary.md does not show the OSC 52 sequence as text:\n%s", md)
	}
	checkPrintable(t, "summary.md", string(md))
	_, cstdout, cstderr := runIn(t, dir, "compare", runDir, runDir)
	checkPrintable(t, "bench compare's stdout", cstdout)
	checkPrintable(t, "bench compare's stderr", cstderr)
	cmd, err := os.ReadFile(filepath.Join(runDir, "compare", "compare.md"))
	if err != nil {
		t.Fatal(err)
	}
	checkPrintable(t, "compare.md", string(cmd))
}

// A password in base_url is used (requests carry it as Basic auth) and
// never written: not in config.json (which keeps the host, and that the
// URL had userinfo), inventory.json, any other file, stdout or stderr,
// including the connection errors that quote the URL. A resume takes the
// URL from the config it is given.
func TestBaseURLPasswordIsNeverWritten(t *testing.T) {
	s := faultserver.Start(t)
	const user, pass = "bob", "pw-0f9e8d7c6b5a"
	withAuth := func(u string) string { return strings.Replace(u, "http://", "http://"+user+":"+pass+"@", 1) }
	provs := `providers:
  - type: ollama_openai
    base_url: ` + withAuth(s.URL()) + `/v1
    max_retries: 0
    models: [ok]
  - name: down
    type: ollama
    base_url: ` + withAuth(s.ClosedURL()) + `
    max_retries: 0
    models: [ok]
  - type: openai_responses
    base_url: ` + withAuth(s.ClosedURL()) + `/v1
    max_retries: 0
    models: [ok]
`
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "prompts.yaml"), []byte(promptFile), 0o644)
	os.WriteFile(filepath.Join(dir, "bench.yaml"), []byte("run:\n  timeout: 30s\n  warmup: false\n"+provs+"prompts:\n  files: [prompts.yaml]\n  only: [T0]\n"), 0o644)
	args := []string{"run", "--config", "bench.yaml", "--run-id", "userinfo", "--allow-unavailable"}
	_, dstdout, dstderr := runIn(t, dir, append(args, "--dry-run")...)
	code, stdout, stderr := runIn(t, dir, args...)
	runDir := filepath.Join(dir, "runs", "userinfo")
	recs := readRecords(t, filepath.Join(runDir, "results.jsonl"))
	if len(recs) != 3 || recs[0].Provider != "ollama_openai" && recs[1].Provider != "ollama_openai" {
		t.Fatalf("exit %d, %d records\n%s%s", code, len(recs), stdout, stderr)
	}
	basic := 0
	for _, r := range s.Requests() {
		if strings.HasPrefix(r.Endpoint, "chat") && r.Header.Get("Authorization") == "[redacted]" {
			basic++
		}
	}
	if basic == 0 {
		t.Error("no chat request carried base_url's userinfo: the password was not used")
	}
	_, rstdout, rstderr := runIn(t, dir, append(args, "--resume")...)
	where := map[string]string{"dry-run stdout": dstdout, "dry-run stderr": dstderr, "stdout": stdout, "stderr": stderr,
		"resume stdout": rstdout, "resume stderr": rstderr}
	readTree(t, where, "", runDir)
	if strings.Contains(rstderr, "never holds") || strings.Contains(rstderr, "bad config") {
		t.Errorf("the resume could not restore base_url:\n%s", rstderr)
	}
	for name, text := range where {
		for _, bad := range []string{pass, user + ":", user + "@"} {
			if i := strings.Index(text, bad); i >= 0 {
				t.Errorf("%s holds %q: %q", name, bad, text[max(0, i-80):min(len(text), i+40)])
			}
		}
	}
	cfg := where["config.json"]
	if !strings.Contains(cfg, `"base_url": "`+s.URL()+`/v1"`) || !strings.Contains(cfg, `"base_url_userinfo": true`) {
		t.Errorf("config.json should keep the host and say the URL had userinfo:\n%s", cfg)
	}
	if !strings.Contains(where["inventory.json"], s.URL()+"/v1") {
		t.Errorf("inventory.json lacks the base URL without userinfo:\n%s", where["inventory.json"])
	}
}
