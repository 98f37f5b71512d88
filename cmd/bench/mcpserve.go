package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"bench/internal/exitcode"
	"bench/providers/mcpserve"
)

// mcpServeCmd is the hidden `bench mcp-serve TASKFILE CALLLOG`: bench's
// MCP server of an agentic task's scripted tools, which a claude_code_cli
// cell names in the CLI's --mcp-config, so the CLI starts it and talks to
// it over stdin/stdout. Only the protocol goes to stdout; a failure is one
// line on stderr and exit 1. The CLI ends it by closing stdin; a signal
// ends it too.
func mcpServeCmd(args []string, stdout, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := mcpserve.Run(ctx, args, os.Stdin, stdout); err != nil {
		fmt.Fprintf(stderr, "bench mcp-serve: %v\n", err)
		return exitcode.IO
	}
	return exitcode.OK
}
