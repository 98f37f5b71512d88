package mcpserve

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"gopkg.in/yaml.v3"

	"bench/internal/yamlerr"
	"bench/validators/scripted"
)

// taskFile is what `bench mcp-serve` reads: the task's tools in the prompt
// file's form, as YAML or JSON ({"tools": [...]}).
type taskFile struct {
	Tools []scripted.Tool `yaml:"tools"`
}

// ParseTask decodes a task file strictly (YAML, or JSON, which YAML reads):
// errors name the file, line and field.
func ParseTask(name string, data []byte) ([]scripted.Tool, error) {
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return nil, yamlerr.Wrap(name, &root, err)
	}
	if len(root.Content) == 0 || root.Content[0].Kind != yaml.MappingNode {
		return nil, &yamlerr.Error{File: name, Line: 1, Msg: `want a mapping {"tools": [...]}`}
	}
	found := false
	m := root.Content[0]
	for i := 0; i+1 < len(m.Content); i += 2 {
		found = found || m.Content[i].Value == "tools"
	}
	if !found {
		return nil, &yamlerr.Error{File: name, Line: 1, Field: "tools", Msg: "missing"}
	}
	var f taskFile
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&f); err != nil {
		return nil, yamlerr.Wrap(name, &root, err)
	}
	var errs []error
	for _, e := range scripted.CheckTask(f.Tools) {
		e.File = name
		errs = append(errs, e)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return f.Tools, nil
}

// LoadTask reads a task file.
func LoadTask(path string) ([]scripted.Tool, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read task file: %w", err)
	}
	return ParseTask(path, data)
}

// MarshalTask writes tools as a task file (JSON) that LoadTask reads back
// unchanged.
func MarshalTask(tools []scripted.Tool) ([]byte, error) {
	if tools == nil {
		tools = []scripted.Tool{}
	}
	return json.MarshalIndent(map[string]any{"tools": tools}, "", "  ")
}

// Run is `bench mcp-serve TASKFILE CALLLOG`: it serves the task file's tools
// on stdin/stdout and appends each call to CALLLOG (created if needed).
// Nothing but the protocol is written to stdout; the caller reports a
// returned error on stderr.
func Run(ctx context.Context, args []string, stdin io.Reader, stdout io.Writer) error {
	if len(args) != 2 {
		return fmt.Errorf("usage: bench mcp-serve TASKFILE CALLLOG")
	}
	tools, err := LoadTask(args[0])
	if err != nil {
		return err
	}
	f, err := os.OpenFile(args[1], os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("open call log: %w", err)
	}
	serr := Serve(ctx, tools, stdin, stdout, f)
	if err := f.Close(); err != nil && serr == nil {
		serr = fmt.Errorf("close call log: %w", err)
	}
	return serr
}

// ToolName is the name an MCP client such as Claude Code gives a served
// tool: mcp__<server>__<tool>, the form --allowedTools takes
// (mcp__<server> alone allows the whole server).
func ToolName(server, tool string) string { return "mcp__" + server + "__" + tool }

// CLIConfig is the --mcp-config JSON that makes Claude Code start command
// with args as the stdio MCP server named server. command must be an
// absolute path.
func CLIConfig(server, command string, args ...string) (string, error) {
	if args == nil {
		args = []string{}
	}
	b, err := json.Marshal(map[string]any{"mcpServers": map[string]any{
		server: map[string]any{"type": "stdio", "command": command, "args": args},
	}})
	if err != nil {
		return "", err
	}
	return string(b), nil
}
