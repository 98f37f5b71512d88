package anthropictest

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// ClaudeBin finds the real Claude Code CLI for the tests that run it
// against this server: $BENCH_CLAUDE_BIN, else the copy
// scripts/install-claude-cli.sh puts in .tools/ of the module root above
// the working directory, else claude on PATH. Without it the test skips,
// or fails under BENCH_REQUIRE_SERVERS=1 (CI).
func ClaudeBin(tb testing.TB) string {
	tb.Helper()
	if p := os.Getenv("BENCH_CLAUDE_BIN"); p != "" {
		if _, err := os.Stat(p); err != nil {
			tb.Fatalf("BENCH_CLAUDE_BIN: %v", err)
		}
		return p
	}
	if dir, err := os.Getwd(); err == nil {
		for {
			if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
				p := filepath.Join(dir, ".tools", "claude-code", "node_modules", ".bin", "claude")
				if _, err := os.Stat(p); err == nil {
					return p
				}
				break
			}
			parent := filepath.Dir(dir)
			if parent == dir {
				break
			}
			dir = parent
		}
	}
	if p, err := exec.LookPath("claude"); err == nil {
		return p
	}
	msg := "Claude Code CLI not found: run scripts/install-claude-cli.sh or set BENCH_CLAUDE_BIN"
	if os.Getenv("BENCH_REQUIRE_SERVERS") == "1" {
		tb.Fatal(msg)
	}
	tb.Skip(msg)
	return ""
}
