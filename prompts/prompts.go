// Package prompts holds the built-in prompt suite and the loader for prompt
// files.
package prompts

import "bench/validators"

// Tool is a native tool a prompt offers the model.
type Tool struct {
	Name        string         `yaml:"name" json:"name"`
	Description string         `yaml:"description" json:"description,omitempty"`
	Parameters  map[string]any `yaml:"parameters" json:"parameters,omitempty"`
}

// Prompt is one benchmark prompt with the checks its answer must pass.
type Prompt struct {
	ID     string `yaml:"id" json:"id"`
	Name   string `yaml:"name" json:"name"`
	System string `yaml:"system" json:"system,omitempty"`
	Prompt string `yaml:"prompt" json:"prompt"`
	Tools  []Tool `yaml:"tools" json:"tools,omitempty"`
	// Validator is the single-check form; Validators the all-must-pass form.
	Validator  *validators.Spec  `yaml:"validator" json:"validator,omitempty"`
	Validators []validators.Spec `yaml:"validators" json:"validators,omitempty"`
	// Source is the file the prompt came from ("builtin:..." for the suite).
	Source string `yaml:"-" json:"source,omitempty"`
	// Line is where the prompt starts in Source.
	Line int `yaml:"-" json:"-"`
}

// Checks returns every validator spec of the prompt, single form first.
func (p *Prompt) Checks() []validators.Spec {
	var out []validators.Spec
	if p.Validator != nil {
		out = append(out, *p.Validator)
	}
	return append(out, p.Validators...)
}

// ExpectedTools returns the union of expected_tools over the prompt's
// tool_invocation checks; empty means the prompt expects no tool use.
func (p *Prompt) ExpectedTools() []string {
	var out []string
	seen := map[string]bool{}
	for _, c := range p.Checks() {
		for _, t := range c.ExpectedTools {
			if !seen[t] {
				seen[t] = true
				out = append(out, t)
			}
		}
	}
	return out
}
