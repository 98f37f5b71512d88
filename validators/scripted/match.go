package scripted

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"gopkg.in/yaml.v3"

	"bench/internal/jsonvalue"
	"bench/internal/yamlerr"
)

// The keys that say how a call's arguments are matched, shared by scripted
// rules and the tool_sequence validator.
const (
	KeyArgs   = "args"
	KeySubset = "args_subset"
	KeyRegex  = "args_regex"
)

// MatchKeys lists the matching keys in the order they are documented.
var MatchKeys = []string{KeyArgs, KeySubset, KeyRegex}

// Match says which arguments a call must carry. Every part that is set must
// hold; a zero Match matches any call. Arguments are a JSON object; a call
// without arguments counts as {}.
//
//   - Args (args): the arguments equal this object exactly: the same keys,
//     equal values (numbers by value, so 21 == 21.0; strings byte for byte).
//   - Subset (args_subset): every key given is present with an equal value;
//     a nested object is matched as a subset too, a list must be equal.
//     Other keys may be present.
//   - Regex (args_regex): each named top-level argument is present and its
//     value fully matches the Go RE2 pattern (anchored like
//     regex_fullmatch; (?i) for case-insensitive). A string is matched as
//     is, any other value as its compact JSON text (21 as "21").
//
// Args excludes the other two; Subset and Regex combine.
type Match struct {
	Args   map[string]any
	Subset map[string]any
	Regex  map[string]string

	// re holds the compiled Regex patterns.
	re map[string]*regexp.Regexp
}

// IsZero reports whether the match accepts any arguments.
func (m *Match) IsZero() bool {
	return m.Args == nil && m.Subset == nil && m.Regex == nil
}

// DecodeMatch reads the args, args_subset and args_regex keys of a YAML
// mapping; other keys are the caller's business. Errors are *yamlerr.Error
// with the line and field (prefixed by field).
func DecodeMatch(n *yaml.Node, field string) (Match, error) {
	var m Match
	_, vals, err := mapping(n, field, "{args_subset: {city: Paris}}")
	if err != nil {
		return m, err
	}
	if v, ok := vals[KeyArgs]; ok {
		if m.Args, err = argsObject(v, field+"."+KeyArgs); err != nil {
			return m, err
		}
		for _, k := range []string{KeySubset, KeyRegex} {
			if _, both := vals[k]; both {
				return m, yamlerr.At(keyNode(n, k), field+"."+k, "args already fixes the arguments exactly; give args alone, or args_subset and/or args_regex")
			}
		}
	}
	if v, ok := vals[KeySubset]; ok {
		if m.Subset, err = argsObject(v, field+"."+KeySubset); err != nil {
			return m, err
		}
	}
	if v, ok := vals[KeyRegex]; ok {
		keys, pats, err := mapping(v, field+"."+KeyRegex, `{city: "(?i)paris"}`)
		if err != nil {
			return m, err
		}
		if len(keys) == 0 {
			return m, yamlerr.At(v, field+"."+KeyRegex, "empty; name at least one argument and its pattern")
		}
		m.Regex = map[string]string{}
		m.re = map[string]*regexp.Regexp{}
		for _, k := range keys {
			f := field + "." + KeyRegex + "." + k
			p, err := str(pats[k], f)
			if err != nil {
				return m, err
			}
			re, err := compileFull(p)
			if err != nil {
				return m, yamlerr.At(pats[k], f, err.Error())
			}
			m.Regex[k], m.re[k] = p, re
		}
	}
	return m, nil
}

// argsObject reads an argument object: a mapping of argument names to values.
func argsObject(n *yaml.Node, field string) (map[string]any, error) {
	n = yamlerr.Resolve(n)
	if n.Kind != yaml.MappingNode {
		return nil, yamlerr.At(n, field, "want a mapping of argument names to values, got "+yamlerr.Describe(n))
	}
	v, err := nodeValue(n, field)
	if err != nil {
		return nil, err
	}
	return v.(map[string]any), nil
}

// compileFull compiles a pattern anchored at both ends (\A, \z, so an inline
// (?m) cannot turn them into line anchors).
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

// errNotObject is why arguments that are not a JSON object match nothing
// but a zero Match.
var errNotObject = errors.New("arguments are not a JSON object")

// ParseArgs decodes a call's arguments. Empty, whitespace or null arguments
// are {} (a call without arguments); anything but a JSON object is an error.
func ParseArgs(raw json.RawMessage) (map[string]any, error) {
	t := bytes.TrimSpace(raw)
	if len(t) == 0 || string(t) == "null" {
		return map[string]any{}, nil
	}
	var v any
	if err := json.Unmarshal(t, &v); err != nil {
		return nil, fmt.Errorf("arguments are not valid JSON: %w", err)
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, errNotObject
	}
	return obj, nil
}

// Matches reports whether raw call arguments satisfy the match. Arguments
// that are not a JSON object satisfy only a zero Match.
func (m *Match) Matches(raw json.RawMessage) bool {
	args, err := ParseArgs(raw)
	if err != nil {
		return m.IsZero()
	}
	return m.MatchesArgs(args)
}

// MatchesArgs is Matches on arguments already decoded by ParseArgs (or
// json.Unmarshal). Nil args (not an object) satisfy only a zero Match.
func (m *Match) MatchesArgs(args map[string]any) bool {
	if m.IsZero() {
		return true
	}
	if args == nil {
		return false
	}
	if m.Args != nil && !jsonvalue.Equal(args, m.Args) {
		return false
	}
	if m.Subset != nil && !subset(m.Subset, args) {
		return false
	}
	for k, p := range m.Regex {
		v, ok := args[k]
		if !ok {
			return false
		}
		re := m.re[k]
		if re == nil {
			var err error
			if re, err = compileFull(p); err != nil {
				return false
			}
		}
		if !re.MatchString(text(v)) {
			return false
		}
	}
	return true
}

// text is what a regex sees of a value: a string as is, anything else as
// compact JSON.
func text(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// subset reports whether every key of want is in got with a matching value;
// nested objects are subsets too, anything else must be equal.
func subset(want, got map[string]any) bool {
	for k, wv := range want {
		gv, ok := got[k]
		if !ok {
			return false
		}
		if wm, ok := wv.(map[string]any); ok {
			gm, ok := gv.(map[string]any)
			if !ok || !subset(wm, gm) {
				return false
			}
			continue
		}
		if !jsonvalue.Equal(wv, gv) {
			return false
		}
	}
	return true
}

// String renders the match for violations and logs, e.g.
// args_subset={"city":"Paris"}; "any arguments" for a zero Match.
func (m *Match) String() string {
	if m.IsZero() {
		return "any arguments"
	}
	var parts []string
	for _, k := range MatchKeys {
		if v, ok := m.JSONFields()[k]; ok {
			b, _ := json.Marshal(v)
			parts = append(parts, k+"="+string(b))
		}
	}
	return strings.Join(parts, " ")
}

// JSONFields returns the match as the keys it is written with, for a
// containing type's JSON form; a zero Match has none.
func (m *Match) JSONFields() map[string]any {
	out := map[string]any{}
	if m.Args != nil {
		out[KeyArgs] = m.Args
	}
	if m.Subset != nil {
		out[KeySubset] = m.Subset
	}
	if m.Regex != nil {
		out[KeyRegex] = m.Regex
	}
	return out
}
