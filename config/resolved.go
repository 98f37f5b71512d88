package config

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"bench/internal/record/rundir"
	"bench/internal/yamlerr"
	"bench/prompts"
)

// LoadResolved reads a run's config.json back into the Config that wrote
// it, so a resumed run plans from what the run was started with rather
// than from today's bench.yaml and flags. config.json is the resolved
// config written flat (Provider.MarshalJSON) with the prompt set; it is
// decoded by the same strict path as bench.yaml (JSON is YAML), so every
// problem names config.json and its line, and each entry's options are
// the kind's own struct again, checked and resolved by the kind. The
// prompt set is read back as prompt files are read.
//
// Values config.json never holds (a CLI's env values) are missing from the
// result; Provider.Unsaved says which entries had some, and Restore takes
// them from the current config.
func LoadResolved(path string, kinds Kinds) (*Config, error) {
	data, err := rundir.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read the run's config: %w", err)
	}
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return nil, yamlerr.Wrap(path, &root, err)
	}
	if len(root.Content) == 0 || root.Content[0].Kind != yaml.MappingNode {
		return nil, &Error{File: path, Line: 1, Msg: "not a run's config.json (want a JSON object)"}
	}
	doc := root.Content[0]
	origPath := ""
	if n := removeKey(doc, "config_path"); n != nil {
		origPath = n.Value
	}
	setNode := removeKey(doc, "prompt_set")
	if setNode == nil || setNode.Kind != yaml.SequenceNode || len(setNode.Content) == 0 {
		return nil, &Error{File: path, Line: doc.Line, Field: "prompt_set", Msg: "missing or empty; config.json records the run's prompts"}
	}
	unsaved := takeUnsaved(doc, kinds)
	c, err := parse(path, &root, kinds, false, nil)
	if err != nil {
		return nil, err
	}
	for i := range c.Providers {
		if i < len(unsaved) {
			c.Providers[i].Unsaved = unsaved[i]
		}
	}
	if c.PromptSet, err = savedPrompts(path, setNode); err != nil {
		return nil, err
	}
	if errs := c.CheckJudges(); len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	if origPath != "" {
		c.Path = origPath
	}
	if n := c.Cells(); n > MaxCells {
		return nil, &Error{File: path, Field: "run.repetitions", Msg: fmt.Sprintf("the plan would have %d cells, more than the limit of %d", n, MaxCells)}
	}
	return c, nil
}

// removeKey takes key out of a mapping node and returns its value.
func removeKey(m *yaml.Node, key string) *yaml.Node {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			v := m.Content[i+1]
			m.Content = slices.Delete(m.Content, i, i+2)
			return v
		}
	}
	return nil
}

// takeUnsaved removes from each provider entry the keys config.json has
// but bench.yaml does not take (what only stands for values never saved,
// such as env_keys), and returns them per entry.
func takeUnsaved(doc *yaml.Node, kinds Kinds) []map[string]json.RawMessage {
	list := resolve(lookupKey(doc, "providers"))
	if list == nil || list.Kind != yaml.SequenceNode {
		return nil
	}
	out := make([]map[string]json.RawMessage, len(list.Content))
	shared := Keys(&Provider{})
	for i, item := range list.Content {
		typ := lookupKey(item, "type")
		if typ == nil || item.Kind != yaml.MappingNode {
			continue
		}
		kind, ok := kinds.Kind(typ.Value)
		if !ok {
			continue // reported by parse
		}
		known := append(slices.Clone(shared), Keys(kind.Options())...)
		for j := 0; j+1 < len(item.Content); {
			k := item.Content[j].Value
			if slices.Contains(known, k) || !jsonOnly(kind.Options(), k) {
				j += 2
				continue
			}
			var v any
			if err := item.Content[j+1].Decode(&v); err == nil {
				if b, err := json.Marshal(v); err == nil {
					if out[i] == nil {
						out[i] = map[string]json.RawMessage{}
					}
					out[i][k] = b
				}
			}
			item.Content = slices.Delete(item.Content, j, j+2)
		}
	}
	return out
}

// jsonOnly says whether key is a json name of a field of the options
// struct that has no YAML key (written to config.json, never read from
// bench.yaml), its inline structs' fields included (the hosted kinds'
// headers: header_names).
func jsonOnly(opts any, key string) bool {
	t := reflect.TypeOf(opts)
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return jsonOnlyIn(t, key)
}

func jsonOnlyIn(t reflect.Type, key string) bool {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == key && f.Tag.Get("yaml") == "-" {
			return true
		}
		if f.Anonymous && f.Type.Kind() == reflect.Struct && name == "" && jsonOnlyIn(f.Type, key) {
			return true
		}
	}
	return false
}

// savedPrompts reads config.json's prompt_set as a prompt file is read,
// keeping each prompt's source.
func savedPrompts(path string, set *yaml.Node) ([]prompts.Prompt, error) {
	sources := make([]string, len(set.Content))
	for i, p := range set.Content {
		if p.Kind == yaml.MappingNode {
			if n := removeKey(p, "source"); n != nil {
				sources[i] = n.Value
			}
		}
	}
	file := &yaml.Node{Kind: yaml.MappingNode, Content: []*yaml.Node{{Kind: yaml.ScalarNode, Tag: "!!str", Value: "prompts"}, set}}
	data, err := yaml.Marshal(file)
	if err != nil {
		return nil, fmt.Errorf("%s: prompt_set: %w", path, err)
	}
	set2, err := prompts.ParseSaved(path+" (prompt_set)", data)
	if err != nil {
		return nil, err
	}
	for i := range set2 {
		if sources[i] != "" {
			set2[i].Source = sources[i]
		}
	}
	return set2, nil
}

// Restore gives each entry read back from config.json that had values
// config.json never holds (Provider.Unsaved) the options of the same
// entry in current: same name and type, and the same in everything
// config.json records. Entries it cannot restore are an error naming each;
// resume with the config file that started the run.
func (c *Config) Restore(current *Config) error {
	var errs []error
	for i := range c.Providers {
		p := &c.Providers[i]
		if len(p.Unsaved) == 0 {
			continue
		}
		var q *Provider
		if current != nil {
			for j := range current.Providers {
				if current.Providers[j].Name == p.Name && current.Providers[j].Type == p.Type {
					q = &current.Providers[j]
				}
			}
		}
		keys := slices.Sorted(maps.Keys(p.Unsaved))
		if q == nil || !sameEntry(p, q) {
			where := "it is not in " + pathOf(current)
			if q != nil {
				where = "its entry in " + pathOf(current) + " differs from the run's"
			}
			errs = append(errs, fmt.Errorf("providers: %s: the run's entry has values config.json never holds (%s), and %s; resume with the config that started the run", p.Name, strings.Join(keys, ", "), where))
			continue
		}
		p.Options = q.Options
		p.Unsaved = nil
	}
	return errors.Join(errs...)
}

func pathOf(c *Config) string {
	if c == nil || c.Path == "" {
		return "the config"
	}
	return c.Path
}

// sameEntry says whether q, as config.json would record it, is the entry
// saved as p (p's options plus what was kept aside as Unsaved).
func sameEntry(p, q *Provider) bool {
	want, got := map[string]any{}, map[string]any{}
	pb, err1 := json.Marshal(p)
	qb, err2 := json.Marshal(q)
	if err1 != nil || err2 != nil || json.Unmarshal(pb, &want) != nil || json.Unmarshal(qb, &got) != nil {
		return false
	}
	for k, raw := range p.Unsaved {
		var v any
		if json.Unmarshal(raw, &v) != nil {
			return false
		}
		want[k] = v
	}
	return reflect.DeepEqual(want, got)
}
