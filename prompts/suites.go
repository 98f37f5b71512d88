package prompts

import (
	"fmt"
	"strings"

	"bench/validators"
	"bench/validators/bfcl"
)

// The built-in suites a config or --suite names.
const (
	// SuiteDefault is prompts/default.yaml, the suite when nothing else is
	// named.
	SuiteDefault = "default"
	// SuiteBFCL is the Berkeley Function Calling Leaderboard sample
	// (package bfcl): 40 cases of each of its single-turn categories.
	SuiteBFCL = "bfcl"
	// SuiteInjection is prompts/injection.yaml, the prompt-injection
	// suite: four agentic tasks, clean and with an instruction planted in
	// a tool's result in six styles and two goals (prompts/injection.md).
	SuiteInjection = "injection"
)

// Suites are the built-in suites' names.
var Suites = []string{SuiteDefault, SuiteBFCL, SuiteInjection}

// Suite loads a built-in suite by name.
func Suite(name string) ([]Prompt, error) {
	switch name {
	case SuiteDefault:
		return Builtin()
	case SuiteBFCL:
		return BFCL()
	case SuiteInjection:
		return builtinFile(InjectionName, "injection.yaml")
	}
	return nil, fmt.Errorf("unknown suite %q; one of %s", name, strings.Join(Suites, ", "))
}

// BFCL is the BFCL sample as prompts: per case, the question (its system
// message, if any, and the user's), the functions as native tools
// (converted as BFCL's handlers do), the category, and one bfcl_ast check
// holding the function documents and the possible answers. The prompt id
// is BFCL's case id.
func BFCL() ([]Prompt, error) {
	cases, err := bfcl.Builtin()
	if err != nil {
		return nil, err
	}
	out := make([]Prompt, len(cases))
	line := map[string]int{}
	file := map[string]string{}
	for _, c := range bfcl.Categories {
		file[c.Name] = c.File
	}
	for i := range cases {
		c := &cases[i]
		tools := c.Tools()
		for j := range tools {
			if err := tools[j].CompileSchema(); err != nil {
				return nil, fmt.Errorf("%s: case %s: function %s: %w", bfcl.DataName, c.ID, tools[j].Name, err)
			}
		}
		check := validators.NewBFCL(c)
		line[c.Category]++
		out[i] = Prompt{ID: c.ID, Name: "bfcl_" + c.Category, System: c.System, Prompt: c.User, Tools: tools, Category: c.Category,
			Validator: &check, Source: bfcl.DataName + "/" + file[c.Category], Line: line[c.Category]}
	}
	return out, nil
}
