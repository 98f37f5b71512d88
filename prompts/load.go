package prompts

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"bench/internal/yamlerr"
	"bench/scripted"
)

//go:embed default.yaml
var builtin embed.FS

// BuiltinName is how the embedded suite is named in errors and records.
const BuiltinName = "builtin:prompts/default.yaml"

// Builtin returns the embedded default suite.
func Builtin() ([]Prompt, error) {
	data, err := builtin.ReadFile("default.yaml")
	if err != nil {
		return nil, fmt.Errorf("read built-in prompts: %w", err)
	}
	return Parse(BuiltinName, data)
}

// LoadFile reads a prompt file.
func LoadFile(path string) ([]Prompt, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read prompt file: %w", err)
	}
	return Parse(path, data)
}

type file struct {
	Prompts []Prompt `yaml:"prompts"`
}

// Parse decodes a prompt file strictly and checks every prompt; errors are
// file:line: field: what is wrong.
func Parse(name string, data []byte) ([]Prompt, error) {
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return nil, yamlerr.Wrap(name, &root, err)
	}
	var f file
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&f); err != nil {
		return nil, yamlerr.Wrap(name, &root, err)
	}
	var list *yaml.Node
	if len(root.Content) > 0 && root.Content[0].Kind == yaml.MappingNode {
		m := root.Content[0]
		for i := 0; i+1 < len(m.Content); i += 2 {
			if m.Content[i].Value == "prompts" {
				list = m.Content[i+1]
			}
		}
	}
	if list == nil || len(f.Prompts) == 0 {
		return nil, &yamlerr.Error{File: name, Line: 1, Field: "prompts", Msg: "no prompts; the file needs a top-level 'prompts:' list"}
	}
	var errs []error
	seen := map[string]int{}
	for i := range f.Prompts {
		p := &f.Prompts[i]
		p.Source = name
		if i < len(list.Content) {
			p.Line = list.Content[i].Line
		}
		at := func(field, msg string) {
			errs = append(errs, &yamlerr.Error{File: name, Line: p.Line, Field: fmt.Sprintf("prompts[%d].%s", i, field), Msg: msg})
		}
		if strings.TrimSpace(p.ID) == "" {
			at("id", "missing")
		} else if j, dup := seen[p.ID]; dup {
			at("id", fmt.Sprintf("duplicate prompt id %q (also prompts[%d])", p.ID, j))
		} else {
			seen[p.ID] = i
		}
		if p.Name == "" {
			p.Name = p.ID
		}
		if strings.TrimSpace(p.Prompt) == "" {
			at("prompt", "missing")
		}
		if p.Validator == nil && len(p.Validators) == 0 {
			at("validator", "missing; use {type: noop} for a prompt that is only timed")
		}
		var pn *yaml.Node
		if i < len(list.Content) {
			pn = list.Content[i]
		}
		errs = append(errs, checkTask(name, i, p, pn)...)
		errs = append(errs, checkForbidden(name, i, p, pn)...)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return f.Prompts, nil
}

// checkTask checks the agentic parts of a prompt: max_turns, and that
// scripted tools and trajectory checks appear only on a task whose tools
// they name.
func checkTask(file string, i int, p *Prompt, pn *yaml.Node) []error {
	var errs []error
	at := func(line int, field, msg string) {
		errs = append(errs, &yamlerr.Error{File: file, Line: line, Field: fmt.Sprintf("prompts[%d].%s", i, field), Msg: msg})
	}
	if kn, vn := key(pn, "max_turns"); kn != nil {
		if p.MaxTurns < 1 || p.MaxTurns > MaxTurnsLimit {
			at(vn.Line, "max_turns", fmt.Sprintf("want an integer from 1 to %d, got %s", MaxTurnsLimit, vn.Value))
			return errs
		}
	}
	specs := p.Checks()
	field := func(k int) string {
		if p.Validator != nil {
			if k == 0 {
				return "validator"
			}
			k--
		}
		return fmt.Sprintf("validators[%d]", k)
	}
	if !p.Agentic() {
		for j, t := range p.Tools {
			if strings.TrimSpace(t.Name) == "" {
				at(p.Line, fmt.Sprintf("tools[%d].name", j), "missing")
			}
			if t.Scripted() {
				at(t.Line, fmt.Sprintf("tools[%d]", j), "scripted results (rules, on_unmatched, fail_first, mode) need max_turns on the prompt")
			}
		}
		for k := range specs {
			if specs[k].Trajectory() {
				at(specs[k].Line, field(k), specs[k].Type+" judges a task's tool calls across turns and needs max_turns on the prompt (max_turns: 1 for a single reply)")
			}
		}
		return errs
	}
	for _, e := range scripted.CheckTask(p.Tools) {
		at(e.Line, e.Field, e.Msg)
	}
	names := p.ToolNames()
	for k := range specs {
		for m, c := range specs[k].Calls {
			if !slices.Contains(names, c.Name) {
				at(c.Line, fmt.Sprintf("%s.calls[%d].name", field(k), m), fmt.Sprintf("tool %q is not one of the task's tools [%s]", c.Name, strings.Join(names, ", ")))
			}
		}
	}
	return errs
}

// checkForbidden checks forbidden_tools: each names one of the prompt's
// tools, once, and none is also one the checks ask for (a task cannot both
// require and forbid a call).
func checkForbidden(file string, i int, p *Prompt, pn *yaml.Node) []error {
	if len(p.ForbiddenTools) == 0 {
		return nil
	}
	var errs []error
	_, list := key(pn, "forbidden_tools")
	line := func(j int) int {
		if list != nil && j < len(list.Content) {
			return list.Content[j].Line
		}
		return p.Line
	}
	names, asked := p.ToolNames(), p.AskedTools()
	for j, f := range p.ForbiddenTools {
		at := func(msg string) {
			errs = append(errs, &yamlerr.Error{File: file, Line: line(j), Field: fmt.Sprintf("prompts[%d].forbidden_tools[%d]", i, j), Msg: fmt.Sprintf("prompt %s: %s", p.ID, msg)})
		}
		switch {
		case !slices.Contains(names, f):
			at(fmt.Sprintf("tool %q is not one of the prompt's tools [%s]", f, strings.Join(names, ", ")))
		case slices.Index(p.ForbiddenTools, f) < j:
			at(fmt.Sprintf("tool %q is listed twice", f))
		case slices.Contains(asked, f):
			at(fmt.Sprintf("tool %q is also one the prompt's checks expect; a task cannot require and forbid the same call", f))
		}
	}
	return errs
}

// key returns a mapping's key and value nodes for name, or nils.
func key(m *yaml.Node, name string) (*yaml.Node, *yaml.Node) {
	if m == nil || m.Kind != yaml.MappingNode {
		return nil, nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == name {
			return m.Content[i], m.Content[i+1]
		}
	}
	return nil, nil
}
