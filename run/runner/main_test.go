package runner

import (
	"context"
	"os"
	"testing"

	"bench/internal/testpeer/apartserver"
	"bench/providers/mcpserve"
)

// TestMain lets the test binary stand in for `bench mcp-serve TASKFILE
// CALLLOG`: a claude_code_cli cell names the running executable as its MCP
// server (MCPServeCommand), and here that is the test binary. It also stops
// the shared Ollama server of the real-server tests, and serves a
// benchmark's fixed answer from a process of its own (apartserver).
func TestMain(m *testing.M) {
	apartserver.Serve()
	if len(os.Args) > 1 && os.Args[1] == MCPServeCommand {
		if err := mcpserve.Run(context.Background(), os.Args[2:], os.Stdin, os.Stdout); err != nil {
			os.Stderr.WriteString("mcp-serve: " + err.Error() + "\n")
			os.Exit(1)
		}
		os.Exit(0)
	}
	code := m.Run()
	stopOllama()
	os.Exit(code)
}
