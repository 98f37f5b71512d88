package prompts

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"bench/internal/yamlerr"
	"bench/validators"
	"bench/validators/scripted"
)

//go:embed default.yaml injection.yaml
var builtin embed.FS

// BuiltinName and InjectionName are how the embedded suites are named in
// errors and records.
const (
	BuiltinName   = "builtin:prompts/default.yaml"
	InjectionName = "builtin:prompts/injection.yaml"
)

// Builtin returns the embedded default suite.
func Builtin() ([]Prompt, error) { return builtinFile(BuiltinName, "default.yaml") }

// builtinFile loads an embedded suite.
func builtinFile(name, file string) ([]Prompt, error) {
	data, err := builtin.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("read built-in prompts: %w", err)
	}
	return Parse(name, data)
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
// file:line: field: what is wrong. Every problem of the file comes at
// once: a value that does not decode (a wrong type, a check's bad key,
// see yamlerr.Continue) does not stop the others' decoding, and the
// prompts are checked as far as they decoded. With an error, the prompts
// are returned too, as far as they decoded (their Invalid checks
// reported), so the config can check what they name in the same round.
func Parse(name string, data []byte) ([]Prompt, error) { return parse(name, data, false) }

// ParseSaved is Parse for a prompt set read back from a run's
// config.json: the same checks, except that an injection case, which
// carries its task there, may have lost its clean twin to prompts.only.
func ParseSaved(name string, data []byte) ([]Prompt, error) { return parse(name, data, true) }

func parse(name string, data []byte, saved bool) ([]Prompt, error) {
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return nil, yamlerr.Wrap(name, &root, err)
	}
	var f file
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	var decodeErrs []error
	if err := dec.Decode(&f); err != nil {
		var te *yaml.TypeError
		if !errors.As(err, &te) {
			return nil, yamlerr.Wrap(name, &root, err)
		}
		decodeErrs = yamlerr.Flatten(yamlerr.Wrap(name, &root, err))
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
		if len(decodeErrs) > 0 {
			return nil, errors.Join(decodeErrs...)
		}
		return nil, &yamlerr.Error{File: name, Line: 1, Field: "prompts", Msg: "no prompts; the file needs a top-level 'prompts:' list"}
	}
	nodes := make([]*yaml.Node, len(f.Prompts))
	for i := range f.Prompts {
		if i < len(list.Content) {
			nodes[i] = list.Content[i]
			f.Prompts[i].Line = list.Content[i].Line
		}
	}
	errs := decodeErrs
	for _, e := range resolveInjections(f.Prompts, saved) {
		e.File = name
		errs = append(errs, e)
	}
	faulted := map[string]bool{}
	for _, e := range decodeErrs {
		var ye *yamlerr.Error
		if errors.As(e, &ye) {
			faulted[ye.Field] = true
		}
	}
	for _, e := range check(name, f.Prompts, nodes, filepath.Dir(name), nil) {
		// A field whose value did not decode is reported once, by the
		// decoding (a wrong type is not also "missing").
		var ye *yamlerr.Error
		if errors.As(e, &ye) && faulted[ye.Field] {
			continue
		}
		errs = append(errs, e)
	}
	if len(errs) > 0 {
		slices.SortStableFunc(errs, func(a, b error) int { return errLine(a) - errLine(b) })
		return f.Prompts, errors.Join(errs...)
	}
	return f.Prompts, nil
}

// errLine is an error's line (0 for one without).
func errLine(err error) int {
	var ye *yamlerr.Error
	if errors.As(err, &ye) {
		return ye.Line
	}
	return 0
}

// check checks decoded prompts (pn their nodes, nil when not at hand):
// ids present and unique, a prompt, a check, the agentic parts, the
// external checks (one llm_judge a prompt; a command's program found,
// relative to dir). at places each problem: nil names the prompt file's
// field (prompts[i].field), a data file names its row instead.
func check(file string, ps []Prompt, pn []*yaml.Node, dir string, at func(i, line int, field, msg string) error) []error {
	if at == nil {
		at = func(i, line int, field, msg string) error {
			return &yamlerr.Error{File: file, Line: line, Field: fmt.Sprintf("prompts[%d].%s", i, field), Msg: msg}
		}
	}
	var errs []error
	seen := map[string]int{}
	for i := range ps {
		p := &ps[i]
		p.Source = file
		add := func(field, msg string) { errs = append(errs, at(i, p.Line, field, msg)) }
		if strings.TrimSpace(p.ID) == "" {
			add("id", "missing")
		} else if j, dup := seen[p.ID]; dup {
			add("id", fmt.Sprintf("duplicate prompt id %q (also prompts[%d])", p.ID, j))
		} else {
			seen[p.ID] = i
		}
		if p.Name == "" {
			p.Name = p.ID
		}
		if p.orphan {
			continue // its task is its twin's, which is not there (reported)
		}
		if strings.TrimSpace(p.Prompt) == "" {
			add("prompt", "missing")
		}
		if p.Validator == nil && len(p.Validators) == 0 {
			add("validator", "missing; use {type: noop} for a prompt that is only timed")
		}
		var n *yaml.Node
		if i < len(pn) {
			n = pn[i]
		}
		for _, e := range checkTask(p, n) {
			errs = append(errs, at(i, e.Line, e.Field, e.Msg))
		}
		for _, e := range checkExternal(p, dir) {
			errs = append(errs, at(i, e.Line, e.Field, e.Msg))
		}
		for _, e := range checkForbidden(p, n) {
			errs = append(errs, at(i, e.Line, e.Field, e.Msg))
		}
		for _, e := range checkInjection(p) {
			errs = append(errs, at(i, e.Line, e.Field, e.Msg))
		}
	}
	return errs
}

// checkExternal checks a prompt's external checks: at most one llm_judge
// (the record has one judge object), and each command's program found:
// argv[0] with a slash is a path (relative to dir, the prompt file's
// folder), without one it is looked up in PATH; either way it becomes an
// absolute path, so config.json names the program the run ran.
func checkExternal(p *Prompt, dir string) []*yamlerr.Error {
	var errs []*yamlerr.Error
	judges := 0
	specs := p.specs()
	for k, s := range specs {
		if s.Invalid() {
			continue // its problems were reported
		}
		switch s.Type {
		case validators.TypeLLMJudge:
			judges++
			if judges > 1 {
				errs = append(errs, &yamlerr.Error{Line: s.Line, Field: p.checkField(k), Msg: "a second llm_judge: a prompt has at most one (put both criteria in one rubric)"})
			}
		case validators.TypeCommand:
			path, err := findProgram(s.Argv[0], dir)
			if err != nil {
				errs = append(errs, &yamlerr.Error{Line: s.Line, Field: p.checkField(k) + ".argv[0]", Msg: err.Error()})
				continue
			}
			s.Argv[0] = path
		}
	}
	return errs
}

// specs are pointers to the prompt's checks, single form first (as Checks
// lists them), so a loader can complete them in place.
func (p *Prompt) specs() []*validators.Spec {
	var out []*validators.Spec
	if p.Validator != nil {
		out = append(out, p.Validator)
	}
	for i := range p.Validators {
		out = append(out, &p.Validators[i])
	}
	return out
}

// checkField names the k-th check of Checks as the prompt file writes it.
func (p *Prompt) checkField(k int) string {
	if p.Validator != nil {
		if k == 0 {
			return "validator"
		}
		k--
	}
	return fmt.Sprintf("validators[%d]", k)
}

// findProgram finds a command validator's program, as an absolute path.
func findProgram(name, dir string) (string, error) {
	if !strings.Contains(name, "/") {
		path, err := exec.LookPath(name)
		if err != nil {
			return "", fmt.Errorf("program %q not found in PATH (give its path, like ./check.py, relative to the prompt file)", name)
		}
		return filepath.Abs(path)
	}
	path := name
	if !filepath.IsAbs(path) {
		path = filepath.Join(dir, path)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	st, err := os.Stat(abs)
	switch {
	case err != nil:
		return "", fmt.Errorf("program %s does not exist (a path is relative to the prompt file's folder)", abs)
	case st.IsDir():
		return "", fmt.Errorf("program %s is a directory", abs)
	case st.Mode()&0o111 == 0:
		return "", fmt.Errorf("program %s is not executable (chmod +x it)", abs)
	}
	return abs, nil
}

// checkTask checks the agentic parts of a prompt: max_turns, and that
// scripted tools and trajectory checks appear only on a task whose tools
// they name.
func checkTask(p *Prompt, pn *yaml.Node) []*yamlerr.Error {
	var errs []*yamlerr.Error
	at := func(line int, field, msg string) {
		errs = append(errs, &yamlerr.Error{Line: line, Field: field, Msg: msg})
	}
	if kn, vn := key(pn, "max_turns"); kn != nil {
		if p.MaxTurns < 1 || p.MaxTurns > MaxTurnsLimit {
			at(vn.Line, "max_turns", fmt.Sprintf("want an integer from 1 to %d, got %s", MaxTurnsLimit, vn.Value))
			return errs
		}
	}
	specs := p.Checks()
	field := p.checkField
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
			if specs[k].Trajectory() && !specs[k].Invalid() {
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
func checkForbidden(p *Prompt, pn *yaml.Node) []*yamlerr.Error {
	if len(p.ForbiddenTools) == 0 {
		return nil
	}
	var errs []*yamlerr.Error
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
			errs = append(errs, &yamlerr.Error{Line: line(j), Field: fmt.Sprintf("forbidden_tools[%d]", j), Msg: fmt.Sprintf("prompt %s: %s", p.ID, msg)})
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
