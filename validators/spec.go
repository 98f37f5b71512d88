package validators

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"regexp"
	"slices"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"

	"bench/internal/yamlerr"
	"bench/validators/bfcl"
	"bench/validators/scripted"
)

// The validator types of the results schema.
const (
	TypeNoop           = "noop"
	TypeExact          = "exact"
	TypeOneOf          = "one_of"
	TypeRegexFullmatch = "regex_fullmatch"
	TypeMaxWords       = "max_words"
	TypeMaxSentences   = "max_sentences"
	TypeExactBullets   = "exact_bullets"
	TypeJSONKeys       = "json_keys"
	TypeToolInvocation = "tool_invocation"
)

// The trajectory types, which judge an agentic cell's tool calls across all
// its turns (Input.Calls) rather than the final answer.
const (
	TypeToolSequence   = "tool_sequence"
	TypeNoUnknownTools = "no_unknown_tools"
	TypeMaxToolCalls   = "max_tool_calls"
)

// The external types, whose verdict comes from outside bench after the
// cell has ended: a judge model (llm_judge) or a program (command). The
// runner runs them (package grader); Check does not judge them.
const (
	TypeLLMJudge = "llm_judge"
	TypeCommand  = "command"
)

// allowedKeys lists, per type, the keys a spec may carry besides "type"; the
// first of each list marked required is checked for presence.
var allowedKeys = map[string][]string{
	TypeNoop:           {},
	TypeExact:          {"value"},
	TypeOneOf:          {"values"},
	TypeRegexFullmatch: {"pattern"},
	TypeMaxWords:       {"value"},
	TypeMaxSentences:   {"value"},
	TypeExactBullets:   {"value"},
	TypeJSONKeys:       {"required_keys", "key_rules"},
	TypeToolInvocation: {"expected_tools"},
	TypeToolSequence:   {"calls", "allow_extra"},
	TypeNoUnknownTools: {},
	TypeMaxToolCalls:   {"value"},
	TypeBFCL:           {"category", "functions", "ground_truth"},
	TypeLLMJudge:       {"rubric", "judge", "model", "pass_threshold", "judge_samples"},
	TypeCommand:        {"argv", "timeout", "env", "expected"},
}

// requiredKey is the key each type cannot do without (json_keys may omit
// key_rules, never required_keys).
var requiredKey = map[string]string{
	TypeExact:          "value",
	TypeOneOf:          "values",
	TypeRegexFullmatch: "pattern",
	TypeMaxWords:       "value",
	TypeMaxSentences:   "value",
	TypeExactBullets:   "value",
	TypeJSONKeys:       "required_keys",
	TypeToolInvocation: "expected_tools",
	TypeToolSequence:   "calls",
	TypeMaxToolCalls:   "value",
	TypeBFCL:           "category",
	TypeCommand:        "argv",
}

// trajectoryTypes are the types that read Input.Calls.
var trajectoryTypes = []string{TypeMaxToolCalls, TypeNoUnknownTools, TypeToolSequence}

// externalTypes are the types judged outside bench, after the cell.
var externalTypes = []string{TypeCommand, TypeLLMJudge}

// Types returns the validator type names of the results schema, sorted;
// TrajectoryTypes returns the others.
func Types() []string {
	out := make([]string, 0, len(allowedKeys))
	for t := range allowedKeys {
		if !slices.Contains(trajectoryTypes, t) && !slices.Contains(externalTypes, t) && t != TypeBFCL {
			out = append(out, t)
		}
	}
	sort.Strings(out)
	return out
}

// allTypes lists every type a spec may name, for error messages.
func allTypes() string {
	all := append(append(append(Types(), trajectoryTypes...), externalTypes...), TypeBFCL)
	sort.Strings(all)
	return strings.Join(all, ", ")
}

// The value types a key rule may name.
var ruleTypes = []string{"string", "number", "integer", "boolean", "array", "object", "null"}

// Spec is one validator as written in a prompt file. It is validated when it
// is decoded, so a bad spec is a config error with a line number, never a
// runtime failure.
type Spec struct {
	Type string `yaml:"type" json:"type"`
	// Value is the string of exact, or the integer bound of max_words,
	// max_sentences and exact_bullets.
	Value         any                `yaml:"value" json:"value,omitempty"`
	Values        []string           `yaml:"values" json:"values,omitempty"`
	Pattern       string             `yaml:"pattern" json:"pattern,omitempty"`
	RequiredKeys  []string           `yaml:"required_keys" json:"required_keys,omitempty"`
	KeyRules      map[string]KeyRule `yaml:"key_rules" json:"key_rules,omitempty"`
	ExpectedTools []string           `yaml:"expected_tools" json:"expected_tools,omitempty"`
	// Calls are the expected calls of tool_sequence, in order.
	Calls []ExpectedCall `yaml:"calls" json:"calls,omitempty"`
	// AllowExtra, for tool_sequence, says whether calls other than the
	// expected ones may come before, between and after them (nil: yes).
	AllowExtra *bool `yaml:"allow_extra" json:"allow_extra,omitempty"`
	// Category, Functions and GroundTruth are a bfcl_ast check's BFCL
	// case: its category, its function documents and its possible answers
	// as BFCL writes them (the numbers' int or float form kept).
	Category    string          `yaml:"category" json:"category,omitempty"`
	Functions   json.RawMessage `yaml:"functions" json:"functions,omitempty"`
	GroundTruth json.RawMessage `yaml:"ground_truth" json:"ground_truth,omitempty"`

	// Rubric, Judge and Model are an llm_judge's: what the answer is
	// graded against, the provider entry that grades it and the model it
	// asks. PassThreshold, when set, makes the judge give a score (0 to
	// 1) that passes at or above it; JudgeSamples is how many times the
	// judge is asked (the majority wins; 0 means 1).
	Rubric        string   `yaml:"rubric" json:"rubric,omitempty"`
	Judge         string   `yaml:"judge" json:"judge,omitempty"`
	Model         string   `yaml:"model" json:"model,omitempty"`
	PassThreshold *float64 `yaml:"pass_threshold" json:"pass_threshold,omitempty"`
	JudgeSamples  int      `yaml:"judge_samples" json:"judge_samples,omitempty"`

	// Argv is a command validator's program and arguments (run directly,
	// no shell; the prompt loader makes argv[0] an absolute path), Timeout
	// its time limit (0 means DefaultCommandTimeout), Env the names of the
	// environment variables it gets, and Expected any value it is handed
	// as "expected".
	Argv     []string `yaml:"argv" json:"argv,omitempty"`
	Timeout  Duration `yaml:"timeout" json:"timeout,omitempty"`
	Env      []string `yaml:"env" json:"env,omitempty"`
	Expected any      `yaml:"expected" json:"expected,omitempty"`

	// Line is where the spec starts in its prompt file.
	Line int `yaml:"-" json:"-"`

	// re is Pattern compiled and anchored, set when decoded from YAML.
	re *regexp.Regexp
	// bfcl is a bfcl_ast check's case, parsed.
	bfcl *bfcl.Case
	// invalid: the spec did not decode (see Invalid).
	invalid bool
}

// KeyRule constrains one top-level key of a json_keys answer. Every field
// that is set must hold; a rule applies only when the key is present
// (required_keys decides presence).
type KeyRule struct {
	// Type is one of string, number, integer, boolean, array, object, null.
	Type string `json:"type,omitempty"`
	// Enum lists the allowed values (strings, numbers, booleans, null).
	Enum []any `json:"enum,omitempty"`
	// NonEmpty rejects "", whitespace-only strings, [], {} and null.
	NonEmpty bool `json:"non_empty,omitempty"`
}

// UnmarshalYAML decodes a spec strictly: an unknown type, an unknown,
// missing or wrongly typed key, or a regex that does not compile is a
// *yamlerr.Error carrying the line and the field. Every problem of the
// spec is found, not only the first, and they come back through
// yamlerr.Continue, so the decoding of the prompt file goes on and its
// other problems come in the same round (yamlerr.Wrap gives each back);
// the spec is then Invalid, and the loader checks nothing more of it.
func (s *Spec) UnmarshalYAML(n *yaml.Node) error {
	errs := s.decode(n)
	if len(errs) == 0 {
		return nil
	}
	s.invalid = true
	return yamlerr.Continue(errs...)
}

// Invalid says the spec did not decode (its problems were reported).
func (s *Spec) Invalid() bool { return s.invalid }

// Specs is a list of checks (a prompt's validators:). A spec that does not
// decode keeps its place in the list, Invalid, so the loader's messages
// name the right index and its problems come with the rest of the
// file's: yaml.v3 drops an element whose decoding failed.
type Specs []Spec

// UnmarshalYAML decodes each spec of the list (see Spec.UnmarshalYAML).
func (l *Specs) UnmarshalYAML(n *yaml.Node) error {
	n = yamlerr.Resolve(n)
	if n.Kind != yaml.SequenceNode {
		var plain []Spec
		return n.Decode(&plain)
	}
	out := make(Specs, len(n.Content))
	var errs []error
	for i, c := range n.Content {
		if err := c.Decode(&out[i]); err != nil {
			errs = append(errs, err)
		}
	}
	*l = out
	if len(errs) > 0 {
		return yamlerr.Continue(errs...)
	}
	return nil
}

// decode is UnmarshalYAML's work: every problem of the spec.
func (s *Spec) decode(n *yaml.Node) []error {
	n = yamlerr.Resolve(n)
	*s = Spec{Line: n.Line}
	if n.Kind != yaml.MappingNode {
		return []error{yamlerr.At(n, "validator", "want a mapping like {type: exact, value: \"OK\"}")}
	}
	vals := map[string]*yaml.Node{}
	var order []string
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := n.Content[i]
		vals[k.Value] = yamlerr.Resolve(n.Content[i+1])
		order = append(order, k.Value)
	}
	tn, ok := vals["type"]
	if !ok {
		return []error{yamlerr.At(n, "validator.type", "missing; one of: "+allTypes())}
	}
	typ, err := str(tn, "validator.type")
	if err != nil {
		return []error{err}
	}
	allowed, ok := allowedKeys[typ]
	if !ok {
		return []error{yamlerr.At(tn, "validator.type", fmt.Sprintf("unknown validator type %q; one of: %s", typ, allTypes()))}
	}
	s.Type = typ
	var errs []error
	for i, k := range order {
		if k != "type" && !slices.Contains(allowed, k) {
			msg := fmt.Sprintf("unknown key for type %s", typ)
			if len(allowed) > 0 {
				msg += " (allowed: " + strings.Join(allowed, ", ") + ")"
			}
			errs = append(errs, yamlerr.At(n.Content[2*i], "validator."+k, msg))
			delete(vals, k)
		}
	}
	if rk := requiredKey[typ]; rk != "" {
		if _, ok := vals[rk]; !ok {
			return append(errs, yamlerr.At(n, "validator."+rk, "missing (required by type "+typ+")"))
		}
	}
	if err := s.decodeType(n, vals); err != nil {
		errs = append(errs, err)
	}
	return errs
}

// decodeType decodes the keys of s.Type (present, when required).
func (s *Spec) decodeType(n *yaml.Node, vals map[string]*yaml.Node) error {
	typ := s.Type
	switch typ {
	case TypeExact:
		v, err := str(vals["value"], "validator.value")
		if err != nil {
			return err
		}
		if err := answerString(vals["value"], "validator.value", v); err != nil {
			return err
		}
		s.Value = v
	case TypeOneOf:
		vs, err := strList(vals["values"], "validator.values")
		if err != nil {
			return err
		}
		for i, v := range vs {
			if err := answerString(vals["values"].Content[i], fmt.Sprintf("validator.values[%d]", i), v); err != nil {
				return err
			}
		}
		s.Values = vs
	case TypeRegexFullmatch:
		p, err := str(vals["pattern"], "validator.pattern")
		if err != nil {
			return err
		}
		re, err := compileFull(p)
		if err != nil {
			return yamlerr.At(vals["pattern"], "validator.pattern", err.Error())
		}
		s.Pattern, s.re = p, re
	case TypeMaxWords, TypeMaxSentences, TypeExactBullets:
		v, err := posInt(vals["value"], "validator.value")
		if err != nil {
			return err
		}
		s.Value = v
	case TypeJSONKeys:
		ks, err := strList(vals["required_keys"], "validator.required_keys")
		if err != nil {
			return err
		}
		s.RequiredKeys = ks
		if rn, ok := vals["key_rules"]; ok {
			rules, err := keyRules(rn)
			if err != nil {
				return err
			}
			s.KeyRules = rules
		}
	case TypeToolInvocation:
		ts, err := strList(vals["expected_tools"], "validator.expected_tools")
		if err != nil {
			return err
		}
		s.ExpectedTools = ts
	case TypeToolSequence:
		cs, err := expectedCalls(vals["calls"])
		if err != nil {
			return err
		}
		s.Calls = cs
		if an, ok := vals["allow_extra"]; ok {
			var b bool
			if an.Kind != yaml.ScalarNode || an.Tag != "!!bool" || an.Decode(&b) != nil {
				return yamlerr.At(an, "validator.allow_extra", "want true or false, got "+yamlerr.Describe(an))
			}
			s.AllowExtra = &b
		}
		if s.allowExtra() && !slices.ContainsFunc(s.Calls, func(c ExpectedCall) bool { return !c.Optional }) {
			return yamlerr.At(vals["calls"], "validator.calls", "every call is optional and extra calls are allowed, so any trajectory passes; make one required or set allow_extra: false")
		}
	case TypeBFCL:
		if err := s.bfclSpec(vals); err != nil {
			return err
		}
	case TypeMaxToolCalls:
		var v int
		vn := vals["value"]
		if vn.Kind != yaml.ScalarNode || vn.Tag != "!!int" || vn.Decode(&v) != nil || v < 0 {
			return yamlerr.At(vn, "validator.value", "want an integer >= 0, got "+yamlerr.Describe(vn))
		}
		s.Value = v
	case TypeLLMJudge:
		return errors.Join(s.decodeJudge(n, vals)...)
	case TypeCommand:
		return errors.Join(s.decodeCommand(vals)...)
	}
	return nil
}

func (s *Spec) allowExtra() bool { return s.AllowExtra == nil || *s.AllowExtra }

// External reports whether the spec is judged outside bench after the
// cell has ended (llm_judge, command): Check leaves it to the runner.
func (s *Spec) External() bool { return slices.Contains(externalTypes, s.Type) }

// Trajectory reports whether the spec judges the calls of an agentic task
// (Input.Calls) rather than the final answer.
func (s *Spec) Trajectory() bool { return slices.Contains(trajectoryTypes, s.Type) }

// ExpectedCall is one call a tool_sequence expects: the tool's name and how
// its arguments must match (see scripted.Match).
type ExpectedCall struct {
	Name  string
	Match scripted.Match
	// Optional calls may be left out of the trajectory.
	Optional bool
	// Line is where the call starts in its prompt file.
	Line int
}

// MarshalJSON writes the call in its file form, e.g. {"name": "get_weather",
// "args_subset": {"city": "Paris"}}.
func (c ExpectedCall) MarshalJSON() ([]byte, error) {
	m := c.Match.JSONFields()
	m["name"] = c.Name
	if c.Optional {
		m["optional"] = true
	}
	return json.Marshal(m)
}

// String renders the call for violations: name, then its argument match.
func (c *ExpectedCall) String() string {
	if c.Match.IsZero() {
		return c.Name
	}
	return c.Name + " " + shorten(c.Match.String())
}

var callKeys = append([]string{"name"}, append(scripted.MatchKeys, "optional")...)

func expectedCalls(n *yaml.Node) ([]ExpectedCall, error) {
	if n.Kind != yaml.SequenceNode || len(n.Content) == 0 {
		return nil, yamlerr.At(n, "validator.calls", "want a non-empty list of calls like {name: get_weather, args_subset: {city: Paris}}, got "+yamlerr.Describe(n))
	}
	var out []ExpectedCall
	for i, cn := range n.Content {
		c, err := DecodeCall(cn, fmt.Sprintf("validator.calls[%d]", i))
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}

// DecodeCall reads one expected call, {name: get_weather, args_subset:
// {city: Paris}, optional: true}, as a tool_sequence lists them (and a
// prompt-injection case names the call its instruction asks for). Errors
// are *yamlerr.Error with the line and field (prefixed by field).
func DecodeCall(cn *yaml.Node, field string) (ExpectedCall, error) {
	cn = yamlerr.Resolve(cn)
	if cn.Kind != yaml.MappingNode {
		return ExpectedCall{}, yamlerr.At(cn, field, "want a mapping like {name: get_weather, args_subset: {city: Paris}}, got "+yamlerr.Describe(cn))
	}
	c := ExpectedCall{Line: cn.Line}
	var nameNode *yaml.Node
	for j := 0; j+1 < len(cn.Content); j += 2 {
		k, v := cn.Content[j], yamlerr.Resolve(cn.Content[j+1])
		if !slices.Contains(callKeys, k.Value) {
			return c, yamlerr.At(k, field+"."+k.Value, "unknown key (allowed: "+strings.Join(callKeys, ", ")+")")
		}
		switch k.Value {
		case "name":
			nameNode = v
		case "optional":
			if v.Kind != yaml.ScalarNode || v.Tag != "!!bool" || v.Decode(&c.Optional) != nil {
				return c, yamlerr.At(v, field+".optional", "want true or false, got "+yamlerr.Describe(v))
			}
		}
	}
	if nameNode == nil {
		return c, yamlerr.At(cn, field+".name", "missing")
	}
	name, err := str(nameNode, field+".name")
	if err != nil {
		return c, err
	}
	if strings.TrimSpace(name) == "" {
		return c, yamlerr.At(nameNode, field+".name", "empty")
	}
	c.Name = name
	if c.Match, err = scripted.DecodeMatch(cn, field); err != nil {
		return c, err
	}
	return c, nil
}

// compileFull compiles a regex_fullmatch pattern anchored at both ends of
// the text (\A, \z, so an inline (?m) cannot turn them into line anchors).
func compileFull(p string) (*regexp.Regexp, error) {
	if _, err := regexp.Compile(p); err != nil {
		return nil, fmt.Errorf("bad regex: %w", err)
	}
	re, err := regexp.Compile(`\A(?:` + p + `)\z`)
	if err != nil {
		return nil, fmt.Errorf("bad regex: %w", err)
	}
	return re, nil
}

func keyRules(n *yaml.Node) (map[string]KeyRule, error) {
	if n.Kind != yaml.MappingNode {
		return nil, yamlerr.At(n, "validator.key_rules", "want a mapping of key name to rule, like {moons: {type: integer}}")
	}
	out := map[string]KeyRule{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], yamlerr.Resolve(n.Content[i+1])
		field := "validator.key_rules." + k.Value
		var r KeyRule
		switch v.Kind {
		case yaml.ScalarNode:
			t, err := str(v, field)
			if err != nil {
				return nil, err
			}
			r.Type = t
		case yaml.SequenceNode:
			enum, err := enumList(v, field)
			if err != nil {
				return nil, err
			}
			r.Enum = enum
		case yaml.MappingNode:
			for j := 0; j+1 < len(v.Content); j += 2 {
				rk, rv := v.Content[j], yamlerr.Resolve(v.Content[j+1])
				var err error
				switch rk.Value {
				case "type":
					r.Type, err = str(rv, field+".type")
				case "enum":
					r.Enum, err = enumList(rv, field+".enum")
				case "non_empty":
					if rv.Kind != yaml.ScalarNode || rv.Tag != "!!bool" {
						err = yamlerr.At(rv, field+".non_empty", "want true or false")
					} else {
						err = rv.Decode(&r.NonEmpty)
					}
				default:
					err = yamlerr.At(rk, field+"."+rk.Value, "unknown key (allowed: type, enum, non_empty)")
				}
				if err != nil {
					return nil, err
				}
			}
			if r.Type == "" && r.Enum == nil && !r.NonEmpty {
				return nil, yamlerr.At(v, field, "empty rule; give type, enum or non_empty")
			}
		default:
			return nil, yamlerr.At(v, field, "want a type name, a list of allowed values, or {type, enum, non_empty}")
		}
		if r.Type != "" && !slices.Contains(ruleTypes, r.Type) {
			return nil, yamlerr.At(v, field+".type", fmt.Sprintf("unknown type %q; one of: %s", r.Type, strings.Join(ruleTypes, ", ")))
		}
		if r.NonEmpty && r.Type != "" && r.Type != "string" && r.Type != "array" && r.Type != "object" {
			return nil, yamlerr.At(v, field+".non_empty", "applies to string, array or object, not "+r.Type)
		}
		for _, e := range r.Enum {
			if r.Type != "" && !hasType(normalizeYAML(e), r.Type) {
				return nil, yamlerr.At(v, field+".enum", fmt.Sprintf("enum value %s is not of type %s", show(e), r.Type))
			}
		}
		out[k.Value] = r
	}
	return out, nil
}

func enumList(n *yaml.Node, field string) ([]any, error) {
	if n.Kind != yaml.SequenceNode || len(n.Content) == 0 {
		return nil, yamlerr.At(n, field, "want a non-empty list of allowed values")
	}
	out := make([]any, 0, len(n.Content))
	for i, c := range n.Content {
		c = yamlerr.Resolve(c)
		if c.Kind != yaml.ScalarNode {
			return nil, yamlerr.At(c, fmt.Sprintf("%s[%d]", field, i), "want a string, number, boolean or null")
		}
		var v any
		if err := c.Decode(&v); err != nil {
			return nil, yamlerr.At(c, fmt.Sprintf("%s[%d]", field, i), err.Error())
		}
		switch v.(type) {
		case string, int, int64, uint64, float64, bool, nil:
		default:
			return nil, yamlerr.At(c, fmt.Sprintf("%s[%d]", field, i), "want a string, number, boolean or null")
		}
		out = append(out, v)
	}
	return out, nil
}

func str(n *yaml.Node, field string) (string, error) {
	if n.Kind != yaml.ScalarNode || n.Tag != "!!str" {
		msg := "want a string, got " + yamlerr.Describe(n)
		if n.Kind == yaml.ScalarNode && n.Tag != "!!null" {
			msg += fmt.Sprintf(" (quote it: \"%s\")", n.Value)
		}
		return "", yamlerr.At(n, field, msg)
	}
	return n.Value, nil
}

// answerString rejects strings that can never equal a trimmed answer.
func answerString(n *yaml.Node, field, v string) error {
	if v == "" {
		return yamlerr.At(n, field, "empty; an empty answer is never a success")
	}
	if strings.TrimSpace(v) != v {
		return yamlerr.At(n, field, "has surrounding whitespace; answers are trimmed before comparing, so it could never match")
	}
	return nil
}

func posInt(n *yaml.Node, field string) (int, error) {
	var v int
	if n.Kind != yaml.ScalarNode || n.Tag != "!!int" || n.Decode(&v) != nil || v <= 0 {
		return 0, yamlerr.At(n, field, "want a positive integer, got "+yamlerr.Describe(n))
	}
	return v, nil
}

func strList(n *yaml.Node, field string) ([]string, error) {
	if n.Kind != yaml.SequenceNode || len(n.Content) == 0 {
		return nil, yamlerr.At(n, field, "want a non-empty list of strings, got "+yamlerr.Describe(n))
	}
	out := make([]string, 0, len(n.Content))
	for i, c := range n.Content {
		v, err := str(yamlerr.Resolve(c), fmt.Sprintf("%s[%d]", field, i))
		if err != nil {
			return nil, err
		}
		if strings.TrimSpace(v) == "" {
			return nil, yamlerr.At(c, fmt.Sprintf("%s[%d]", field, i), "empty")
		}
		out = append(out, v)
	}
	return out, nil
}

// normalizeYAML turns YAML-decoded numbers into float64, the form JSON
// comparisons use.
func normalizeYAML(v any) any {
	switch x := v.(type) {
	case int:
		return float64(x)
	case int64:
		return float64(x)
	case uint64:
		return float64(x)
	}
	return v
}

// hasType reports whether a normalized value (float64 numbers) is of a rule
// type. An integral number is an integer, as in JSON Schema.
func hasType(v any, typ string) bool {
	switch typ {
	case "string":
		_, ok := v.(string)
		return ok
	case "number":
		_, ok := v.(float64)
		return ok
	case "integer":
		f, ok := v.(float64)
		return ok && !math.IsInf(f, 0) && f == math.Trunc(f)
	case "boolean":
		_, ok := v.(bool)
		return ok
	case "array":
		_, ok := v.([]any)
		return ok
	case "object":
		_, ok := v.(map[string]any)
		return ok
	case "null":
		return v == nil
	}
	return false
}
