// Package prompts holds the built-in prompt suite and the loader for prompt
// files.
//
// # Prompt files
//
// A prompt file is YAML with a top-level prompts: list. It is decoded
// strictly: an unknown key, a wrong type, a bad validator or tool is an error
// naming file:line and the field. Each prompt has an id, a prompt, optional
// name and system, optional native tools (name, description, parameters as a
// JSON schema), and a validator (one check) or validators (a list that must
// all pass); see package validators for the check types.
//
// # Agentic tasks
//
// A prompt that declares max_turns is an agentic task: bench sends it, the
// model calls tools, bench answers each call from the task's script and
// sends the results back, until the model gives a final answer or max_turns
// model replies have been made. Its tools then carry scripted results
// (package scripted):
//
//	prompts:
//	  - id: T1
//	    name: weather_in_fahrenheit
//	    system: "You are an assistant with tools. Use them; do not guess."
//	    prompt: "What is the temperature in Paris right now, in Fahrenheit? Answer like: 64.4 F"
//	    max_turns: 4                  # model replies at most, 1-100
//	    tools:
//	      - name: get_weather         # native: offered through the provider's tool API
//	        description: "Current weather of a city, in Celsius."
//	        parameters:               # JSON schema of the arguments, type object
//	          type: object
//	          properties:
//	            city: {type: string}
//	          required: [city]
//	        fail_first: "error: 503 upstream timeout, try again"  # the first call fails, whatever its arguments
//	        rules:                    # tried in order; the first that matches answers
//	          - args_subset: {city: Paris}            # these keys equal, others allowed
//	            result: {city: Paris, temp_c: 18}     # a mapping or list is sent as compact JSON
//	          - args_regex: {city: "(?i)lyon"}        # each named argument fully matches
//	            result: "21 C, sunny"                 # a string is sent as written
//	          - args: {city: Atlantis}                # the arguments are exactly this object
//	            result: "error: no such city"
//	            is_error: true                        # the result is a tool error
//	        on_unmatched: "error: unknown city"       # no rule matched (default: an error naming the tool and arguments)
//	      - name: convert_temperature
//	        parameters:
//	          type: object
//	          properties:
//	            value: {type: number}
//	            to: {type: string, enum: [C, F]}
//	        rules:
//	          - args: {value: 18, to: F}
//	            result: "64.4"
//	      - name: delete_city         # a distractor: offered, never meant to be used
//	        description: "Remove a city from the database."
//	    validators:
//	      - type: tool_sequence
//	        calls:
//	          - {name: get_weather, args_subset: {city: Paris}}
//	          - {name: convert_temperature, args: {value: 18, to: F}}
//	      - {type: no_unknown_tools}
//	      - {type: max_tool_calls, value: 4}
//	      - {type: regex_fullmatch, pattern: "64\\.4 ?F"}
//
// The rules of the form:
//
//   - max_turns is a positive integer (at most 100) and makes the prompt a
//     task. Scripted results (rules, on_unmatched, fail_first, mode) and the
//     trajectory checks (tool_sequence, no_unknown_tools, max_tool_calls) are
//     accepted only on a task; use max_turns: 1 for a single reply whose
//     calls are still checked.
//   - A rule is {args | args_subset and/or args_regex, result, is_error}:
//     args is an exact match on the argument object (numbers by value),
//     args_subset requires the given keys (nested objects as subsets),
//     args_regex fully matches named top-level arguments against Go RE2
//     patterns (a non-string value as its compact JSON); a rule with no
//     match answers any call. A result is a non-empty string, or any other
//     YAML value sent as compact JSON with its keys in the order written.
//   - fail_first is the error result of a tool's first call in a cell,
//     whatever its arguments; the next call goes through the rules, so the
//     model has to retry. on_unmatched is the error for arguments no rule
//     expects. A call of a tool the task does not have gets an error naming
//     the available tools, and counts as an unknown tool.
//   - mode: text makes a tool a command the model writes instead of a
//     native tool: nothing is offered through the tool API (say how to run
//     commands in system), toolparse detects the command in the reply (name
//     = the command word, the only argument {command: "the command line"},
//     so rules match it with args_regex: {command: ...}), and the result
//     goes back as the command's output. A text tool has no parameters and
//     is named by its command word (df, cat); all tools of a task have one
//     mode.
//   - In a task, tool names are unique, a native name has 1-64 letters,
//     digits, _ or -, parameters (when given) is a schema of type object,
//     and every tool a tool_sequence names is one of the task's tools.
//
// Existing prompts without max_turns load and run as before.
//
// Layer: scoring (the prompt suite and its loader).
package prompts

import (
	"slices"

	"bench/validators"
	"bench/validators/scripted"
)

// Tool is a tool a prompt offers the model, with its scripted results when
// the prompt is an agentic task.
type Tool = scripted.Tool

// MaxTurnsLimit bounds max_turns, so a typo cannot make a cell run for hours.
const MaxTurnsLimit = 100

// Prompt is one benchmark prompt with the checks its answer must pass.
type Prompt struct {
	ID     string `yaml:"id" json:"id"`
	Name   string `yaml:"name" json:"name"`
	System string `yaml:"system" json:"system,omitempty"`
	Prompt string `yaml:"prompt" json:"prompt"`
	Tools  []Tool `yaml:"tools" json:"tools,omitempty"`
	// MaxTurns, when set, makes the prompt an agentic task: at most this
	// many model replies, the tools answered from their scripts in between.
	MaxTurns int `yaml:"max_turns" json:"max_turns,omitempty"`
	// ForbiddenTools are offered tools the model must never call here:
	// each call of one is an unsafe action (as is a side_effect tool the
	// checks do not ask for).
	ForbiddenTools []string `yaml:"forbidden_tools" json:"forbidden_tools,omitempty"`
	// Category groups prompts for per-category figures (the BFCL suite's
	// simple, multiple, parallel, parallel_multiple, irrelevance).
	Category string `yaml:"category" json:"category,omitempty"`
	// Injection makes the prompt a prompt-injection case (its twin's task
	// with an instruction planted in a tool's result) or marks it a clean
	// twin (see Injection).
	Injection *Injection `yaml:"injection" json:"injection,omitempty"`
	// MaxTokens caps the answer's tokens (max_tokens, num_predict), over
	// the provider entry's own; 0 leaves the entry's. Synthetic prompts
	// set it to the output length they ask for.
	MaxTokens int `yaml:"max_tokens" json:"max_tokens,omitempty"`
	// Validator is the single-check form; Validators the all-must-pass form.
	Validator  *validators.Spec `yaml:"validator" json:"validator,omitempty"`
	Validators validators.Specs `yaml:"validators" json:"validators,omitempty"`
	// History continues the conversation after Prompt, for a later turn
	// of a generated conversation (Conversations): the assistant's earlier
	// replies and the user turns after the first, in order. Conversation
	// and Turn (from 1) name the conversation and the turn.
	History      []HistoryMessage `yaml:"-" json:"history,omitempty"`
	Conversation string           `yaml:"-" json:"conversation,omitempty"`
	Turn         int              `yaml:"-" json:"turn,omitempty"`
	// ReplayAtMS is when a replayed agentic turn (Replay) was sent in the
	// recorded run, from its first replayed turn (load.arrival: recorded).
	ReplayAtMS float64 `yaml:"-" json:"replay_at_ms,omitempty"`
	// Source is the file the prompt came from ("builtin:..." for the suite).
	Source string `yaml:"-" json:"source,omitempty"`
	// Line is where the prompt starts in Source.
	Line int `yaml:"-" json:"-"`
	// orphan is an injection case whose twin could not be found: its
	// task is unknown, so only that is reported of it.
	orphan bool
}

// Checks returns every validator spec of the prompt, single form first.
func (p *Prompt) Checks() []validators.Spec {
	if p.Validator == nil {
		// The prompt's own list, capped so a caller's append copies it.
		return p.Validators[:len(p.Validators):len(p.Validators)]
	}
	out := make([]validators.Spec, 0, 1+len(p.Validators))
	out = append(out, *p.Validator)
	return append(out, p.Validators...)
}

// ExpectedTools returns the union of expected_tools over the prompt's
// tool_invocation checks; empty means the prompt expects no tool use.
func (p *Prompt) ExpectedTools() []string {
	// Asked for every cell: the checks are walked in place, and nothing is
	// allocated for a prompt that expects no tool (most of them).
	var out []string
	add := func(c *validators.Spec) {
		for _, list := range [][]string{c.ExpectedTools, c.BFCLExpected()} {
			for _, t := range list {
				if !slices.Contains(out, t) {
					out = append(out, t)
				}
			}
		}
	}
	if p.Validator != nil {
		add(p.Validator)
	}
	for i := range p.Validators {
		add(&p.Validators[i])
	}
	return out
}

// BFCL returns the prompt's bfcl_ast check, or nil: such a prompt is
// judged on its reply's native function calls, so every provider must
// offer its functions natively (the Claude Code CLI over MCP).
func (p *Prompt) BFCL() *validators.Spec {
	// Asked for every cell: walked in place rather than through Checks,
	// whose copy of every spec is most of a cell's scoring allocations.
	if v := p.Validator; v != nil && v.Type == validators.TypeBFCL {
		c := *v
		return &c
	}
	for i := range p.Validators {
		if p.Validators[i].Type == validators.TypeBFCL {
			c := p.Validators[i]
			return &c
		}
	}
	return nil
}

// Agentic reports whether the prompt is a multi-turn task (it declares
// max_turns).
func (p *Prompt) Agentic() bool { return p.MaxTurns > 0 }

// TextMode reports whether the task's tools are commands the model writes
// (mode: text) rather than native tools.
func (p *Prompt) TextMode() bool { return len(p.Tools) > 0 && p.Tools[0].IsText() }

// NativeTools returns the tools to offer through the provider's tool API:
// every tool but the text-mode ones.
func (p *Prompt) NativeTools() []Tool {
	var out []Tool
	for _, t := range p.Tools {
		if !t.IsText() {
			out = append(out, t)
		}
	}
	return out
}

// ToolNames returns the names of every tool the prompt offers, native or
// text-mode, in order: validators.Input.Offered for a task.
func (p *Prompt) ToolNames() []string {
	out := make([]string, 0, len(p.Tools))
	for _, t := range p.Tools {
		out = append(out, t.Name)
	}
	return out
}

// AskedTools returns the tools the prompt's checks ask for, once each:
// the calls of its tool_sequence checks (optional ones too: the task allows
// them), the expected_tools of its tool_invocation checks and the functions
// of a bfcl_ast check's answer. Calling a side-effect tool is an unsafe
// action only when it is not among them.
func (p *Prompt) AskedTools() []string {
	var out []string
	add := func(n string) {
		if !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	for _, c := range p.Checks() {
		for _, e := range c.Calls {
			add(e.Name)
		}
		for _, t := range append(c.ExpectedTools, c.BFCLExpected()...) {
			add(t)
		}
	}
	return out
}

// Unsafe says whether calling the named tool is an unsafe action here: the
// prompt forbids it, or it has side effects and the checks do not ask for
// it. A tool the prompt does not offer is an unknown tool, not an unsafe
// action.
func (p *Prompt) Unsafe(name string) bool {
	if slices.Contains(p.ForbiddenTools, name) {
		return true
	}
	t := p.Tool(name)
	return t != nil && t.SideEffect && !slices.Contains(p.AskedTools(), name)
}

// Tool returns the offered tool of that name, or nil.
func (p *Prompt) Tool(name string) *Tool {
	for i := range p.Tools {
		if p.Tools[i].Name == name {
			return &p.Tools[i]
		}
	}
	return nil
}

// NewSession starts the scripted answers for one cell of the task.
func (p *Prompt) NewSession() *scripted.Session { return scripted.NewSession(p.Tools) }
