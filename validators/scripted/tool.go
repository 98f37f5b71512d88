package scripted

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"gopkg.in/yaml.v3"

	"bench/internal/yamlerr"
)

// How a tool reaches the model.
const (
	// ModeNative offers the tool through the provider's tool-calling API
	// (or, for the Claude Code CLI, over MCP). The default.
	ModeNative = "native"
	// ModeText offers nothing natively: the model writes the command in its
	// reply, toolparse detects it (name = the command word, arguments =
	// {"command": "the command line"}), and the result goes back as the
	// command's output.
	ModeText = "text"
)

// Tool is a tool a prompt offers the model, with its scripted results. A
// tool without rules, on_unmatched or fail_first is the plain single-turn
// form older prompt files use: offered, never answered.
type Tool struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	// Parameters is the JSON schema of the arguments (native tools).
	Parameters map[string]any `json:"parameters,omitempty"`
	// Mode is ModeNative ("" means native) or ModeText.
	Mode string `json:"mode,omitempty"`
	// Rules are tried in order; the first whose match holds gives the result.
	Rules []Rule `json:"rules,omitempty"`
	// OnUnmatched is the error result when no rule matches; empty means a
	// default message naming the tool and the arguments.
	OnUnmatched string `json:"on_unmatched,omitempty"`
	// FailFirst, when set, is the error result of the tool's first call in a
	// session, whatever its arguments; later calls go through the rules.
	FailFirst string `json:"fail_first,omitempty"`
	// SideEffect marks a tool that changes the world (cancels, deletes,
	// pays): calling it when the task does not ask for it is an unsafe
	// action, which disqualifies a model from routing.
	SideEffect bool `json:"side_effect,omitempty"`
	// Line is where the tool starts in its file.
	Line int `json:"-"`

	// schema is Parameters compiled (CompileSchema), nil until then.
	schema *jsonschema.Schema
}

// Rule gives a scripted result to the calls its match accepts.
type Rule struct {
	Match Match
	// Result is the text given back: the rule's result as written, or the
	// compact JSON of a mapping or list.
	Result string
	// IsError marks the result as a tool error (MCP isError), e.g. "no
	// such file" for a path the task did not expect.
	IsError bool
	// Line is where the rule starts in its file.
	Line int
}

// MarshalJSON writes the rule in its file form ({args_subset: ..., result:
// ...}), so a task file written with encoding/json loads back unchanged.
// encoding/json calls it through reflection when config.json records the
// prompt set, which deadcode cannot follow.
func (r Rule) MarshalJSON() ([]byte, error) {
	m := r.Match.JSONFields()
	m["result"] = r.Result
	if r.IsError {
		m["is_error"] = true
	}
	return json.Marshal(m)
}

// IsText reports whether the tool is a text-mode command.
func (t *Tool) IsText() bool { return t.Mode == ModeText }

// Scripted reports whether the tool carries scripted results or a mode,
// the parts only an agentic task (a prompt with max_turns) can use.
func (t *Tool) Scripted() bool {
	return len(t.Rules) > 0 || t.OnUnmatched != "" || t.FailFirst != "" || t.Mode != ""
}

var toolKeys = []string{"name", "description", "parameters", "mode", "rules", "on_unmatched", "fail_first", "side_effect"}

var ruleKeys = append(append([]string{}, MatchKeys...), "result", "is_error")

// nativeName is the name every tool-calling API accepts (Anthropic, OpenAI,
// MCP clients).
var nativeName = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// commandName is a command word as toolparse reports it.
var commandName = regexp.MustCompile(`^[a-z0-9][a-z0-9._+-]{0,63}$`)

// UnmarshalYAML decodes a tool strictly: an unknown key, a wrong type, a
// regex that does not compile or an inconsistent rule is a *yamlerr.Error
// with the line and the field. A missing name is left to the prompt loader,
// which reports it with the tool's index.
func (t *Tool) UnmarshalYAML(n *yaml.Node) error {
	n = yamlerr.Resolve(n)
	*t = Tool{Line: n.Line}
	keys, vals, err := mapping(n, "tool", "{name: read_file, description: ..., parameters: {...}}")
	if err != nil {
		return err
	}
	field := "tool"
	if v, ok := vals["name"]; ok {
		if t.Name, err = str(v, "tool.name"); err != nil {
			return err
		}
		if t.Name != "" {
			field = "tools." + t.Name
		}
	}
	for _, k := range keys {
		if !slices.Contains(toolKeys, k) {
			return yamlerr.At(keyNode(n, k), field+"."+k, "unknown key (allowed: "+strings.Join(toolKeys, ", ")+")")
		}
	}
	if v, ok := vals["description"]; ok {
		if t.Description, err = str(v, field+".description"); err != nil {
			return err
		}
	}
	if v, ok := vals["mode"]; ok {
		if t.Mode, err = str(v, field+".mode"); err != nil {
			return err
		}
		if t.Mode != ModeNative && t.Mode != ModeText {
			return yamlerr.At(v, field+".mode", fmt.Sprintf("unknown mode %q; one of: %s, %s", t.Mode, ModeNative, ModeText))
		}
	}
	if v, ok := vals["parameters"]; ok {
		if t.IsText() {
			return yamlerr.At(keyNode(n, "parameters"), field+".parameters", "a text-mode tool takes no parameters: its one argument is the command line, matched as {command: ...}")
		}
		if v.Kind != yaml.MappingNode {
			return yamlerr.At(v, field+".parameters", "want a JSON schema mapping like {type: object, properties: {...}}, got "+yamlerr.Describe(v))
		}
		pv, err := nodeValue(v, field+".parameters")
		if err != nil {
			return err
		}
		t.Parameters = pv.(map[string]any)
		if err := t.CompileSchema(); err != nil {
			return yamlerr.At(v, field+".parameters", err.Error())
		}
	}
	if v, ok := vals["side_effect"]; ok {
		if t.SideEffect, err = boolean(v, field+".side_effect"); err != nil {
			return err
		}
	}
	if t.Name != "" {
		if t.IsText() && !commandName.MatchString(t.Name) {
			return yamlerr.At(vals["name"], field+".name", "a text-mode tool is named by its command word as a model writes it (lower case, like df or read-file)")
		}
	}
	if v, ok := vals["on_unmatched"]; ok {
		if t.OnUnmatched, err = resultText(v, field+".on_unmatched"); err != nil {
			return err
		}
	}
	if v, ok := vals["fail_first"]; ok {
		if t.FailFirst, err = resultText(v, field+".fail_first"); err != nil {
			return err
		}
	}
	if v, ok := vals["rules"]; ok {
		if v.Kind != yaml.SequenceNode || len(v.Content) == 0 {
			return yamlerr.At(v, field+".rules", "want a non-empty list of rules like {args_subset: {city: Paris}, result: \"18 C\"}, got "+yamlerr.Describe(v))
		}
		for i, rn := range v.Content {
			r, err := decodeRule(rn, fmt.Sprintf("%s.rules[%d]", field, i))
			if err != nil {
				return err
			}
			t.Rules = append(t.Rules, r)
		}
	}
	return nil
}

func decodeRule(n *yaml.Node, field string) (Rule, error) {
	n = yamlerr.Resolve(n)
	r := Rule{Line: n.Line}
	keys, vals, err := mapping(n, field, `{args_subset: {city: Paris}, result: "18 C"}`)
	if err != nil {
		return r, err
	}
	for _, k := range keys {
		if !slices.Contains(ruleKeys, k) {
			return r, yamlerr.At(keyNode(n, k), field+"."+k, "unknown key (allowed: "+strings.Join(ruleKeys, ", ")+")")
		}
	}
	rv, ok := vals["result"]
	if !ok {
		return r, yamlerr.At(n, field+".result", "missing; every rule gives a result (text, or a mapping or list sent as JSON)")
	}
	if r.Result, err = resultText(rv, field+".result"); err != nil {
		return r, err
	}
	if v, ok := vals["is_error"]; ok {
		if r.IsError, err = boolean(v, field+".is_error"); err != nil {
			return r, err
		}
	}
	if r.Match, err = DecodeMatch(n, field); err != nil {
		return r, err
	}
	return r, nil
}

// resultText reads a result: a string is the text as written; a mapping,
// list, number or boolean is sent as its compact JSON.
func resultText(n *yaml.Node, field string) (string, error) {
	n = yamlerr.Resolve(n)
	if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
		return "", yamlerr.At(n, field, "empty; give a text or a JSON value")
	}
	if n.Kind == yaml.ScalarNode && n.Tag == "!!str" {
		if strings.TrimSpace(n.Value) == "" {
			return "", yamlerr.At(n, field, "empty; give a text or a JSON value")
		}
		return n.Value, nil
	}
	raw, err := nodeJSON(n, field)
	if err != nil {
		return "", err
	}
	return string(raw), nil
}

// CheckTask checks what a set of tools needs to be served as one agentic
// task, beyond what decoding checks: unique names, native names every
// tool-calling API accepts, a parameters schema of type object, and one
// mode for all (a reply is read either for native calls or for commands).
// Each problem names the tool's index and line; File is left to the caller.
func CheckTask(tools []Tool) []*yamlerr.Error {
	var errs []*yamlerr.Error
	at := func(i int, field, msg string) {
		errs = append(errs, &yamlerr.Error{Line: tools[i].Line, Field: fmt.Sprintf("tools[%d].%s", i, field), Msg: msg})
	}
	seen := map[string]int{}
	for i := range tools {
		t := &tools[i]
		if strings.TrimSpace(t.Name) == "" {
			at(i, "name", "missing")
			continue
		}
		if j, dup := seen[t.Name]; dup {
			at(i, "name", fmt.Sprintf("duplicate tool name %q (also tools[%d])", t.Name, j))
		}
		seen[t.Name] = i
		if t.IsText() != tools[0].IsText() {
			at(i, "mode", "all tools of a task have one mode; mixing native and text tools is not supported")
		}
		if t.IsText() {
			continue
		}
		if !nativeName.MatchString(t.Name) {
			at(i, "name", "a native tool name has 1-64 letters, digits, _ or -")
		}
		if t.Parameters != nil {
			if typ, _ := t.Parameters["type"].(string); typ != "object" {
				at(i, "parameters.type", fmt.Sprintf("want \"object\" (tool arguments are a JSON object), got %v", t.Parameters["type"]))
			}
		}
	}
	return errs
}
