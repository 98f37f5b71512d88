package prompts

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"os"
	"strings"

	"gopkg.in/yaml.v3"

	"bench/internal/yamlerr"
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
		for j, t := range p.Tools {
			if strings.TrimSpace(t.Name) == "" {
				at(fmt.Sprintf("tools[%d].name", j), "missing")
			}
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return f.Prompts, nil
}
