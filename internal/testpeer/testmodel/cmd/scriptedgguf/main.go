// Command scriptedgguf writes a scripted test model:
//
//	go run ./internal/testpeer/testmodel/cmd/scriptedgguf [-modelfile Modelfile] [-thinking] script.json out.gguf
//
// script.json maps trigger words to reply pieces, e.g.
// {"OK": ["OK"], "memory": ["<tool_call>{\"name\": \"get_memory_usage\", \"arguments\": {\"unit\": \"MB\"}}</tool_call>"]}.
// With -modelfile it also writes a Modelfile for `ollama create` whose
// template turns a scripted <tool_call> reply into native tool calls.
//
// Layer: test peers (the command scripts/ollama-test-server.sh makes models
// with).
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"bench/internal/testpeer/testmodel"
)

func main() {
	if err := run(os.Args[1:], os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "scriptedgguf:", err)
		os.Exit(1)
	}
}

func run(args []string, stderr io.Writer) error {
	fs := flag.NewFlagSet("scriptedgguf", flag.ContinueOnError)
	fs.SetOutput(stderr)
	modelfile := fs.String("modelfile", "", "also write a Modelfile for the model to this path")
	thinking := fs.Bool("thinking", false, "give the Modelfile the thinking-capable template")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: scriptedgguf [-modelfile PATH] [-thinking] SCRIPT.json OUT.gguf")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 2 {
		fs.Usage()
		return fmt.Errorf("want 2 arguments, got %d", fs.NArg())
	}
	in, out := fs.Arg(0), fs.Arg(1)
	b, err := os.ReadFile(in)
	if err != nil {
		return fmt.Errorf("read script: %w", err)
	}
	var s testmodel.Script
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("parse script %s: %w", in, err)
	}
	if err := testmodel.WriteFile(out, s); err != nil {
		return err
	}
	if *modelfile != "" {
		abs, err := filepath.Abs(out)
		if err != nil {
			return fmt.Errorf("modelfile: %w", err)
		}
		if err := os.WriteFile(*modelfile, []byte(testmodel.Modelfile(abs, *thinking)), 0o644); err != nil {
			return fmt.Errorf("write modelfile: %w", err)
		}
	}
	return nil
}
