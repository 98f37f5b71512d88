package scripted

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"bench/internal/yamlerr"
)

// maxDepth bounds how deeply a YAML value may nest, so a hostile file cannot
// exhaust the stack.
const maxDepth = 64

// NodeJSON renders a YAML value as compact JSON, keeping the author's key
// order (a JSON result reads to the model as it was written). Scalars follow
// their resolved YAML tag; a timestamp or other non-JSON scalar becomes the
// string as written. NaN and infinities have no JSON form and are errors.
// With floats, a float stays a float (10.0, not 10), as BFCL's checker
// tells a JSON float from an integer; otherwise numbers take Go's shortest
// form. It is the one YAML-to-JSON writer: the scripted tools' results and
// arguments and the bfcl_ast check's functions and ground truth.
func NodeJSON(n *yaml.Node, field string, floats bool) (json.RawMessage, error) {
	var b bytes.Buffer
	if err := writeNode(&b, n, field, 0, floats); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

func nodeJSON(n *yaml.Node, field string) (json.RawMessage, error) { return NodeJSON(n, field, false) }

func writeNode(b *bytes.Buffer, n *yaml.Node, field string, depth int, floats bool) error {
	n = yamlerr.Resolve(n)
	if n == nil {
		b.WriteString("null")
		return nil
	}
	if depth > maxDepth {
		return yamlerr.At(n, field, fmt.Sprintf("nested deeper than %d levels", maxDepth))
	}
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) == 0 {
			b.WriteString("null")
			return nil
		}
		return writeNode(b, n.Content[0], field, depth+1, floats)
	case yaml.MappingNode:
		b.WriteByte('{')
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := yamlerr.Resolve(n.Content[i])
			if k.Kind != yaml.ScalarNode {
				return yamlerr.At(k, field, "a mapping key must be a plain string")
			}
			if i > 0 {
				b.WriteByte(',')
			}
			writeString(b, k.Value)
			b.WriteByte(':')
			if err := writeNode(b, n.Content[i+1], field+"."+k.Value, depth+1, floats); err != nil {
				return err
			}
		}
		b.WriteByte('}')
	case yaml.SequenceNode:
		b.WriteByte('[')
		for i, c := range n.Content {
			if i > 0 {
				b.WriteByte(',')
			}
			if err := writeNode(b, c, fmt.Sprintf("%s[%d]", field, i), depth+1, floats); err != nil {
				return err
			}
		}
		b.WriteByte(']')
	case yaml.ScalarNode:
		return writeScalar(b, n, field, floats)
	default:
		return yamlerr.At(n, field, "unsupported YAML value")
	}
	return nil
}

func writeScalar(b *bytes.Buffer, n *yaml.Node, field string, floats bool) error {
	switch n.Tag {
	case "!!null":
		b.WriteString("null")
	case "!!bool":
		var v bool
		if err := n.Decode(&v); err != nil {
			return yamlerr.At(n, field, err.Error())
		}
		b.WriteString(strconv.FormatBool(v))
	case "!!int", "!!float":
		var f float64
		if err := n.Decode(&f); err != nil {
			return yamlerr.At(n, field, "bad number "+n.Value)
		}
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return yamlerr.At(n, field, "NaN and infinity have no JSON form")
		}
		// Integers keep their digits; other numbers use Go's shortest form,
		// a float with a point or an exponent when floats says so.
		if n.Tag == "!!int" {
			if i, err := strconv.ParseInt(strings.ReplaceAll(n.Value, "_", ""), 0, 64); err == nil {
				b.WriteString(strconv.FormatInt(i, 10))
				return nil
			}
			if floats {
				return yamlerr.At(n, field, "bad integer "+n.Value)
			}
		}
		if floats {
			s := strconv.FormatFloat(f, 'g', -1, 64)
			if !strings.ContainsAny(s, ".e") {
				s += ".0"
			}
			b.WriteString(s)
			return nil
		}
		out, _ := json.Marshal(f)
		b.Write(out)
	default:
		writeString(b, n.Value)
	}
	return nil
}

func writeString(b *bytes.Buffer, s string) {
	enc := json.NewEncoder(b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	b.Truncate(b.Len() - 1)
}

// nodeValue decodes a YAML value into the form encoding/json produces
// (float64 numbers, map[string]any, []any), so it compares with decoded call
// arguments directly.
func nodeValue(n *yaml.Node, field string) (any, error) {
	raw, err := nodeJSON(n, field)
	if err != nil {
		return nil, err
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, yamlerr.At(n, field, err.Error())
	}
	return v, nil
}

// str reads a string scalar.
func str(n *yaml.Node, field string) (string, error) {
	n = yamlerr.Resolve(n)
	if n.Kind != yaml.ScalarNode || n.Tag != "!!str" {
		msg := "want a string, got " + yamlerr.Describe(n)
		if n.Kind == yaml.ScalarNode && n.Tag != "!!null" {
			msg += fmt.Sprintf(" (quote it: \"%s\")", n.Value)
		}
		return "", yamlerr.At(n, field, msg)
	}
	return n.Value, nil
}

// boolean reads true or false.
func boolean(n *yaml.Node, field string) (bool, error) {
	n = yamlerr.Resolve(n)
	var v bool
	if n.Kind != yaml.ScalarNode || n.Tag != "!!bool" || n.Decode(&v) != nil {
		return false, yamlerr.At(n, field, "want true or false, got "+yamlerr.Describe(n))
	}
	return v, nil
}

// mapping returns a mapping node's keys in order with their value nodes, or
// an error naming field when n is not a mapping.
func mapping(n *yaml.Node, field, example string) ([]string, map[string]*yaml.Node, error) {
	n = yamlerr.Resolve(n)
	if n == nil || n.Kind != yaml.MappingNode {
		got := "nothing"
		if n != nil {
			got = yamlerr.Describe(n)
		}
		return nil, nil, yamlerr.At(n, field, "want a mapping like "+example+", got "+got)
	}
	var keys []string
	vals := map[string]*yaml.Node{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := yamlerr.Resolve(n.Content[i])
		keys = append(keys, k.Value)
		vals[k.Value] = yamlerr.Resolve(n.Content[i+1])
	}
	return keys, vals, nil
}

// keyNode returns the key node of key in a mapping, for errors about the key
// itself (an unknown key is reported on its own line).
func keyNode(n *yaml.Node, key string) *yaml.Node {
	n = yamlerr.Resolve(n)
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i]
		}
	}
	return n
}
