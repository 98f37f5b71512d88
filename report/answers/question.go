package answers

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"sort"
	"strings"

	"bench/internal/record/rundir"
)

// promptDef is the part of one config.json prompt_set entry the page
// shows. The checks are read as JSON objects, not as the validators
// package's specs (this package reads run directories only): each is
// shown as its type and its keys.
type promptDef struct {
	ID     string `json:"id"`
	System string `json:"system"`
	Prompt string `json:"prompt"`
	Tools  []struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		Parameters  json.RawMessage `json:"parameters"`
	} `json:"tools"`
	MaxTurns       int                          `json:"max_turns"`
	ForbiddenTools []string                     `json:"forbidden_tools"`
	Validator      map[string]json.RawMessage   `json:"validator"`
	Validators     []map[string]json.RawMessage `json:"validators"`
	// Injection is a prompt-injection case's block (role attack), or a
	// clean twin's mark.
	Injection *struct {
		Role, Style, Goal, Carrier, Text string
		Target                           struct{ Name string }
	} `json:"injection"`
}

// Questions reads dir's config.json and gives each prompt of the page the
// question its prompt_set entry holds. Without one (a run directory
// from before config.json, a foreign one) or with one that does not parse,
// the page says why in NoQuestions and shows the answers alone: the
// answers are results.jsonl's and stand without it.
func (b *Builder) Questions(dir string) {
	path := rundir.Path(dir, rundir.ConfigFile)
	data, err := rundir.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		b.page.NoQuestions = "the run directory has no " + rundir.ConfigFile + ", which holds the prompts"
		return
	} else if err != nil {
		b.page.NoQuestions = err.Error()
		return
	}
	var cfg struct {
		PromptSet []promptDef `json:"prompt_set"`
	}
	if err := json.Unmarshal(data, &cfg); err != nil {
		b.page.NoQuestions = fmt.Sprintf("%s: %v", path, err)
		return
	}
	if len(cfg.PromptSet) == 0 {
		b.page.NoQuestions = path + " has no prompt_set"
		return
	}
	b.page.NoQuestions = ""
	for i := range cfg.PromptSet {
		d := &cfg.PromptSet[i]
		p, ok := b.prompt[d.ID]
		if !ok {
			continue
		}
		q := &Question{Text: b.text(d.Prompt, MaxTextBytes), System: b.text(d.System, MaxTextBytes), MaxTurns: d.MaxTurns}
		for _, t := range d.Tools {
			q.Tools = append(q.Tools, [3]int32{b.text(t.Name, 200), b.text(t.Description, MaxTextBytes), b.text(argsText(t.Parameters), MaxTextBytes)})
		}
		checks := d.Validators
		if d.Validator != nil {
			checks = append([]map[string]json.RawMessage{d.Validator}, checks...)
		}
		for _, c := range checks {
			q.Checks = append(q.Checks, b.text(checkText(c), MaxTextBytes))
		}
		if in := d.Injection; in != nil && in.Role != "clean" && in.Text != "" {
			q.Injection = []int32{b.text(in.Text, MaxTextBytes), b.text(in.Style, 200), b.text(in.Goal, 200), b.text(in.Carrier, 200), b.text(in.Target.Name, 200)}
		}
		for _, f := range d.ForbiddenTools {
			q.Forbidden = append(q.Forbidden, b.text(f, 200))
		}
		b.page.Prompts[p].Q = q
	}
}

// checkText is one check as a line: its type, then each other key with
// its value as compact JSON, keys sorted ("exact: value \"4\"").
func checkText(c map[string]json.RawMessage) string {
	var typ string
	_ = json.Unmarshal(c["type"], &typ)
	keys := make([]string, 0, len(c))
	for k := range c {
		if k != "type" {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		var v bytes.Buffer
		if json.Compact(&v, c[k]) != nil {
			v.Reset()
			v.Write(c[k])
		}
		parts = append(parts, k+" "+v.String())
	}
	if typ == "" {
		typ = "(no type)"
	}
	if len(parts) == 0 {
		return typ
	}
	return typ + ": " + strings.Join(parts, ", ")
}
