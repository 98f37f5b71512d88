package validators

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"unicode/utf8"

	"bench/internal/jsonvalue"
	"bench/toolparse"
)

// Input is what a check looks at: the answer text and the tool calls found.
type Input struct {
	Text      string
	ToolCalls []toolparse.Call
	// Calls is an agentic cell's trajectory: every tool call the model
	// made, across all turns, in order (native calls, or the commands
	// detected in text mode), each with its arguments. The trajectory
	// types read only this; the others never do.
	Calls []toolparse.Call
	// Offered names the tools the task offered (native and text-mode); a
	// call of any other name is an unknown tool.
	Offered []string
}

// Outcome is a check's verdict. Pass is nil when the check does not judge
// (noop). Parsed is what the check extracted (a JSON-encodable object).
type Outcome struct {
	Pass      *bool
	Violation string
	Parsed    any
}

// CheckAll runs every spec; all must pass. Pass is nil when no spec judges
// (none, or only noop). Violation joins the reasons of the failed checks
// with "; ". Parsed is the one check's extraction when one check judged;
// with several, their objects are merged into one (a json_keys object goes
// under "json"; on a key clash the earlier check wins).
func CheckAll(specs []Spec, in Input) Outcome {
	var out Outcome
	var reasons []string
	var parsed []any
	var kinds []string
	for i := range specs {
		o := specs[i].Check(in)
		if o.Pass == nil {
			continue
		}
		if out.Pass == nil {
			out.Pass = ptr(true)
		}
		if !*o.Pass {
			*out.Pass = false
			reasons = append(reasons, o.Violation)
		}
		if o.Parsed != nil {
			parsed = append(parsed, o.Parsed)
			kinds = append(kinds, specs[i].Type)
		}
	}
	out.Violation = strings.Join(reasons, "; ")
	switch len(parsed) {
	case 0:
	case 1:
		out.Parsed = parsed[0]
	default:
		m := map[string]any{}
		for i, p := range parsed {
			if kinds[i] == TypeJSONKeys {
				if _, clash := m["json"]; !clash {
					m["json"] = p
				}
				continue
			}
			if pm, ok := p.(map[string]any); ok {
				for k, v := range pm {
					if _, clash := m[k]; !clash {
						m[k] = v
					}
				}
			}
		}
		out.Parsed = m
	}
	return out
}

// Check runs one spec. A spec that was not decoded from YAML and is
// malformed fails with an "invalid validator" reason instead of panicking.
func (s *Spec) Check(in Input) Outcome {
	text := strings.TrimSpace(in.Text)
	switch s.Type {
	case TypeNoop, TypeLLMJudge, TypeCommand:
		// An external check's verdict comes after the cell (Combine).
		return Outcome{}
	case TypeExact:
		want, ok := s.Value.(string)
		if !ok {
			return invalid("exact needs a string value")
		}
		if text == want {
			return pass(map[string]any{"text": text})
		}
		return fail(map[string]any{"text": text}, "expected exactly %s, got %s", quote(want), quote(text))
	case TypeOneOf:
		if len(s.Values) == 0 {
			return invalid("one_of needs values")
		}
		for _, v := range s.Values {
			if text == v {
				return pass(map[string]any{"text": text})
			}
		}
		return fail(map[string]any{"text": text}, "expected one of %s, got %s", quoteList(s.Values), quote(text))
	case TypeRegexFullmatch:
		re := s.re
		if re == nil {
			var err error
			if re, err = compileFull(s.Pattern); err != nil {
				return invalid(err.Error())
			}
		}
		if re.MatchString(text) {
			return pass(map[string]any{"text": text})
		}
		return fail(map[string]any{"text": text}, "%s does not fully match /%s/", quote(text), shorten(s.Pattern))
	case TypeMaxWords:
		max, ok := intValue(s.Value)
		if !ok {
			return invalid("max_words needs a positive integer value")
		}
		n := CountWords(text)
		p := map[string]any{"words": n}
		if n <= max {
			return pass(p)
		}
		return fail(p, "%d words, expected at most %d", n, max)
	case TypeMaxSentences:
		max, ok := intValue(s.Value)
		if !ok {
			return invalid("max_sentences needs a positive integer value")
		}
		n := CountSentences(text)
		p := map[string]any{"sentences": n}
		if n <= max {
			return pass(p)
		}
		return fail(p, "%d sentences, expected at most %d", n, max)
	case TypeExactBullets:
		want, ok := intValue(s.Value)
		if !ok {
			return invalid("exact_bullets needs a positive integer value")
		}
		n := CountBullets(text)
		p := map[string]any{"bullets": n}
		if n == want {
			return pass(p)
		}
		return fail(p, "%d bullets, expected %d", n, want)
	case TypeJSONKeys:
		return s.checkJSON(text)
	case TypeToolInvocation:
		if len(s.ExpectedTools) == 0 {
			return invalid("tool_invocation needs expected_tools")
		}
		names := toolparse.Names(in.ToolCalls)
		if names == nil {
			names = []string{}
		}
		matched := []string{}
		for _, n := range names {
			if slices.Contains(s.ExpectedTools, n) && !slices.Contains(matched, n) {
				matched = append(matched, n)
			}
		}
		p := map[string]any{"tool_calls": names, "matched_tools": matched}
		if ok := toolparse.UseSuccess(in.ToolCalls, s.ExpectedTools); ok != nil && *ok {
			return pass(p)
		}
		if len(names) == 0 {
			return fail(p, "no tool call, expected one of [%s]", strings.Join(s.ExpectedTools, ", "))
		}
		return fail(p, "called [%s], expected one of [%s]", shorten(strings.Join(names, ", ")), strings.Join(s.ExpectedTools, ", "))
	case TypeBFCL:
		return s.checkBFCL(in)
	case TypeToolSequence:
		return s.checkSequence(in.Calls)
	case TypeNoUnknownTools:
		return checkUnknown(in.Calls, in.Offered)
	case TypeMaxToolCalls:
		max, ok := s.Value.(int)
		if !ok || max < 0 {
			return invalid("max_tool_calls needs an integer value >= 0")
		}
		n := len(in.Calls)
		p := map[string]any{"tool_call_count": n}
		if n <= max {
			return pass(p)
		}
		return fail(p, "%d tool calls, expected at most %d", n, max)
	}
	return invalid(fmt.Sprintf("unknown validator type %q", s.Type))
}

// checkJSON parses the answer as a JSON object and applies required_keys
// and key_rules. All problems are reported, joined with "; ".
func (s *Spec) checkJSON(text string) Outcome {
	obj, err := ParseJSONObject(text)
	if err != nil {
		return fail(nil, "%s", err.Error())
	}
	var probs []string
	var missing []string
	for _, k := range s.RequiredKeys {
		if _, ok := obj[k]; !ok {
			missing = append(missing, k)
		}
	}
	if len(missing) == 1 {
		probs = append(probs, "missing key: "+missing[0])
	} else if len(missing) > 1 {
		probs = append(probs, "missing keys: "+strings.Join(missing, ", "))
	}
	keys := make([]string, 0, len(s.KeyRules))
	for k := range s.KeyRules {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v, ok := obj[k]
		if !ok {
			continue
		}
		if msg := s.KeyRules[k].check(v); msg != "" {
			probs = append(probs, k+": "+msg)
		}
	}
	if len(probs) > 0 {
		return fail(obj, "%s", strings.Join(probs, "; "))
	}
	return pass(obj)
}

// check returns why v breaks the rule, or "".
func (r KeyRule) check(v any) string {
	if r.Type != "" && !hasType(v, r.Type) {
		return fmt.Sprintf("got %s %s, want %s", jsonKind(v), show(v), r.Type)
	}
	if r.NonEmpty && isEmpty(v) {
		return "empty"
	}
	if len(r.Enum) > 0 {
		for _, e := range r.Enum {
			if jsonvalue.Equal(v, normalizeYAML(e)) {
				return ""
			}
		}
		if len(r.Enum) == 1 {
			return fmt.Sprintf("got %s, want %s", show(v), show(r.Enum[0]))
		}
		parts := make([]string, len(r.Enum))
		for i, e := range r.Enum {
			parts[i] = show(e)
		}
		return fmt.Sprintf("got %s, want one of [%s]", show(v), strings.Join(parts, ", "))
	}
	return ""
}

// ParseJSONObject decodes an answer that must be exactly one JSON object,
// optionally wrapped in one markdown code fence (``` or ```json). Prose
// around the object, a top-level array or trailing data is an error whose
// text is a short violation.
func ParseJSONObject(text string) (map[string]any, error) {
	body := Unfence(strings.TrimSpace(text))
	if body == "" {
		return nil, fmt.Errorf("not JSON: empty answer")
	}
	dec := json.NewDecoder(strings.NewReader(body))
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("not JSON: %s", shorten(err.Error()))
	}
	if dec.More() {
		return nil, fmt.Errorf("not JSON: text after the JSON value")
	}
	if _, err := dec.Token(); err == nil {
		return nil, fmt.Errorf("not JSON: text after the JSON value")
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("want a JSON object, got %s", jsonKind(v))
	}
	return obj, nil
}

// Unfence returns the inside of a text that is one fenced code block
// (``` or ~~~, any info string such as json), or the text unchanged.
func Unfence(t string) string {
	for _, f := range []string{"```", "~~~"} {
		if !strings.HasPrefix(t, f) || !strings.HasSuffix(t, f) || len(t) < 2*len(f) {
			continue
		}
		nl := strings.IndexByte(t, '\n')
		if nl < 0 {
			continue
		}
		inner := t[nl+1 : len(t)-len(f)]
		if strings.Contains(inner, f) {
			// more than one block, or a fence inside: not a single block.
			continue
		}
		return strings.TrimSpace(inner)
	}
	return t
}

func isEmpty(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case string:
		return strings.TrimSpace(x) == ""
	case []any:
		return len(x) == 0
	case map[string]any:
		return len(x) == 0
	}
	return false
}

func jsonKind(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case string:
		return "string"
	case float64:
		if hasType(x, "integer") {
			return "integer"
		}
		return "number"
	case bool:
		return "boolean"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", v)
}

// show renders a value as JSON, shortened, for violations.
func show(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return shorten(string(b))
}

func intValue(v any) (int, bool) {
	switch x := v.(type) {
	case int:
		return x, x > 0
	case int64:
		return int(x), x > 0
	case float64:
		return int(x), x > 0 && x == float64(int(x))
	}
	return 0, false
}

const maxShown = 60

// shorten keeps violations short: at most maxShown runes, with an ellipsis.
func shorten(s string) string {
	if utf8.RuneCountInString(s) <= maxShown {
		return s
	}
	r := []rune(s)
	return string(r[:maxShown-1]) + "…"
}

func quote(s string) string { return fmt.Sprintf("%q", shorten(s)) }

func quoteList(vs []string) string {
	parts := make([]string, len(vs))
	for i, v := range vs {
		parts[i] = quote(v)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

func ptr[T any](v T) *T { return &v }

func pass(parsed any) Outcome { return Outcome{Pass: ptr(true), Parsed: parsed} }

func fail(parsed any, format string, args ...any) Outcome {
	return Outcome{Pass: ptr(false), Violation: fmt.Sprintf(format, args...), Parsed: parsed}
}

func invalid(msg string) Outcome {
	return Outcome{Pass: ptr(false), Violation: "invalid validator: " + msg}
}
