package testmodel

import (
	"fmt"
	"strings"
)

// Template renders the messages one after another, so the rendered prompt
// ends with the last message's last word (the script's trigger), and renders
// tool calls as <tool_call>{"name": ..., "arguments": ...}</tool_call>. From
// that section Ollama learns the tool-call format, so a scripted reply
// "<tool_call>{...}</tool_call>" comes back as native tool_calls when the
// request offers tools. A system message is rendered too, glued to the next
// message, so it never changes the last word.
const Template = `{{- if .Tools }}[TOOLS]{{ .Tools }}[/TOOLS]{{ end }}` +
	`{{- range .Messages }}{{ if eq .Role "tool" }}[RESULT]{{ .Content }}[/RESULT]{{ else }}{{ .Content }}{{ end }}` +
	`{{ if .ToolCalls }}<tool_call>{{ range .ToolCalls }}{"name": "{{ .Function.Name }}", "arguments": {{ .Function.Arguments }}}{{ end }}</tool_call>{{ end }}{{ end }}`

// ThinkingTemplate is Template plus a .Thinking section, which makes Ollama
// (0.9.6) report the "thinking" capability with <think>...</think> tags: with
// "think": true, a scripted reply "<think>", ..., "</think>", ... comes back
// as message.thinking followed by the content. Without it the server rejects
// "think": true with a 400 "does not support thinking".
const ThinkingTemplate = `{{- if .Tools }}[TOOLS]{{ .Tools }}[/TOOLS]{{ end }}` +
	`{{- range .Messages }}{{ if eq .Role "tool" }}[RESULT]{{ .Content }}[/RESULT]{{ else }}` +
	`{{ if .Thinking }}<think>{{ .Thinking }}</think>{{ end }}{{ .Content }}{{ end }}` +
	`{{ if .ToolCalls }}<tool_call>{{ range .ToolCalls }}{"name": "{{ .Function.Name }}", "arguments": {{ .Function.Arguments }}}{{ end }}</tool_call>{{ end }}{{ end }}`

// Model parameters of a scripted model: greedy sampling and a small context
// (the runner truncates long prompts from the front, which keeps the trigger).
const (
	Temperature = 0
	NumCtx      = 512
)

// Modelfile returns an Ollama Modelfile for the GGUF at path, for
// `ollama create NAME -f Modelfile`.
func Modelfile(path string, thinking bool) string {
	tmpl := Template
	if thinking {
		tmpl = ThinkingTemplate
	}
	var b strings.Builder
	fmt.Fprintf(&b, "FROM %s\n", path)
	fmt.Fprintf(&b, "TEMPLATE \"\"\"%s\"\"\"\n", tmpl)
	fmt.Fprintf(&b, "PARAMETER temperature %d\n", Temperature)
	fmt.Fprintf(&b, "PARAMETER num_ctx %d\n", NumCtx)
	return b.String()
}
