package config

import (
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"bench/internal/suggest"
	"bench/internal/yamlerr"
)

// decoder decodes YAML into structs key by key, so every problem of a file
// is reported at once, each at its own line: an unknown key, a value of the
// wrong type, a float where a whole number belongs (yaml.v3 alone truncates
// 1.5 to 1), a bad duration next to other bad values. yaml.v3's own strict
// mode stops at the first error a custom unmarshaler returns, so bench
// walks the node tree itself and hands each value to yaml.v3 separately.
type decoder struct {
	file string
	errs []error
}

func (d *decoder) fail(n *yaml.Node, field, msg string) {
	line := 0
	if n != nil {
		line = n.Line
	}
	d.errs = append(d.errs, &yamlerr.Error{File: d.file, Line: line, Field: field, Msg: msg})
}

// field is one yaml-tagged struct field, found through inline structs.
type field struct {
	key   string
	index []int
}

// fields lists the yaml keys of a struct type in declaration order.
func fields(t reflect.Type) []field {
	var out []field
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("yaml")
		name, opts, _ := strings.Cut(tag, ",")
		if opts == "inline" && f.Anonymous {
			// An embedded struct's exported fields are settable even when
			// the struct type itself is unexported, as in encoding/json.
			for _, sub := range fields(f.Type) {
				out = append(out, field{sub.key, append([]int{i}, sub.index...)})
			}
			continue
		}
		if name == "" || name == "-" || !f.IsExported() {
			continue
		}
		out = append(out, field{name, []int{i}})
	}
	return out
}

// Keys lists the YAML keys a struct (or pointer to one) takes, for "did
// you mean" hints and for telling a key of another provider kind.
func Keys(v any) []string {
	t := reflect.TypeOf(v)
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	var out []string
	for _, f := range fields(t) {
		out = append(out, f.key)
	}
	return out
}

// mapping decodes a mapping node into the structs targets point to, each
// key going to the first target that has it. unknown is asked about keys
// none has; it returns the message (without the field) or "" to accept.
func (d *decoder) mapping(n *yaml.Node, path string, unknown func(key string) string, targets ...any) {
	n = resolve(n)
	if n.Kind != yaml.MappingNode {
		if isNull(n) {
			return
		}
		d.fail(n, path, "wrong type: got "+describe(n)+", want a mapping")
		return
	}
	type slot struct {
		v reflect.Value
		f field
	}
	byKey := map[string]slot{}
	var all []string
	for _, t := range targets {
		v := reflect.ValueOf(t).Elem()
		for _, f := range fields(v.Type()) {
			if _, dup := byKey[f.key]; !dup {
				byKey[f.key] = slot{v, f}
				all = append(all, f.key)
			}
		}
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, val := n.Content[i], n.Content[i+1]
		at := join(path, k.Value)
		s, ok := byKey[k.Value]
		if !ok {
			at = join(path, yamlerr.Shown(k.Value))
			msg := fmt.Sprintf("unknown field %s%s", yamlerr.Quoted(k.Value), suggest.Hint(k.Value, all))
			if unknown != nil {
				msg = unknown(k.Value)
			}
			if msg != "" {
				d.fail(k, at, msg)
			}
			continue
		}
		d.value(val, at, s.v.FieldByIndex(s.f.index))
	}
}

var unmarshaler = reflect.TypeFor[yaml.Unmarshaler]()

// value decodes one node into v, recording problems instead of stopping.
func (d *decoder) value(n *yaml.Node, path string, v reflect.Value) {
	n = resolve(n)
	if v.CanAddr() && v.Addr().Type().Implements(unmarshaler) {
		if isNull(n) {
			return
		}
		if err := n.Decode(v.Addr().Interface()); err != nil {
			d.decodeErr(n, path, err)
		}
		return
	}
	switch v.Kind() {
	case reflect.Pointer:
		if isNull(n) {
			v.SetZero()
			return
		}
		p := reflect.New(v.Type().Elem())
		before := len(d.errs)
		d.value(n, path, p.Elem())
		if len(d.errs) == before {
			v.Set(p)
		}
	case reflect.String:
		if isNull(n) {
			return
		}
		if n.Kind != yaml.ScalarNode {
			d.fail(n, path, "wrong type: got "+describe(n)+", want a string")
			return
		}
		v.SetString(n.Value)
	case reflect.Int, reflect.Int64:
		if isNull(n) {
			return
		}
		if n.Kind == yaml.ScalarNode && n.Tag == "!!float" {
			d.fail(n, path, fmt.Sprintf("must be a whole number, not %s", yamlerr.Shown(n.Value)))
			return
		}
		i, err := strconv.ParseInt(n.Value, 0, 64)
		if n.Kind != yaml.ScalarNode || n.Tag != "!!int" || err != nil {
			d.fail(n, path, "wrong type: got "+describe(n)+", want a number")
			return
		}
		v.SetInt(i)
	case reflect.Float64:
		if isNull(n) {
			return
		}
		f, err := strconv.ParseFloat(n.Value, 64)
		if n.Kind != yaml.ScalarNode || (n.Tag != "!!int" && n.Tag != "!!float") || err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			d.fail(n, path, "wrong type: got "+describe(n)+", want a number")
			return
		}
		v.SetFloat(f)
	case reflect.Bool:
		if isNull(n) {
			return
		}
		if n.Kind != yaml.ScalarNode || n.Tag != "!!bool" {
			d.fail(n, path, "wrong type: got "+describe(n)+", want true or false")
			return
		}
		v.SetBool(n.Value == "true" || n.Value == "True" || n.Value == "TRUE")
	case reflect.Slice:
		if isNull(n) {
			return
		}
		if n.Kind != yaml.SequenceNode {
			d.fail(n, path, "wrong type: got "+describe(n)+", want a list")
			return
		}
		s := reflect.MakeSlice(v.Type(), len(n.Content), len(n.Content))
		for i, c := range n.Content {
			d.value(c, fmt.Sprintf("%s[%d]", path, i), s.Index(i))
		}
		v.Set(s)
	case reflect.Map:
		if isNull(n) {
			return
		}
		if n.Kind != yaml.MappingNode || v.Type().Key().Kind() != reflect.String {
			d.fail(n, path, "wrong type: got "+describe(n)+", want a mapping")
			return
		}
		m := reflect.MakeMapWithSize(v.Type(), len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			e := reflect.New(v.Type().Elem()).Elem()
			d.value(n.Content[i+1], join(path, yamlerr.Shown(n.Content[i].Value)), e)
			m.SetMapIndex(reflect.ValueOf(n.Content[i].Value).Convert(v.Type().Key()), e)
		}
		v.Set(m)
	case reflect.Struct:
		d.mapping(n, path, nil, v.Addr().Interface())
	case reflect.Interface:
		var x any
		if err := n.Decode(&x); err != nil {
			d.decodeErr(n, path, err)
			return
		}
		if x != nil {
			v.Set(reflect.ValueOf(x))
		}
	default:
		if err := n.Decode(v.Addr().Interface()); err != nil {
			d.decodeErr(n, path, err)
		}
	}
}

// decodeErr records an error from a type's own UnmarshalYAML (or yaml.v3),
// placed at the node unless it names its own line.
func (d *decoder) decodeErr(n *yaml.Node, path string, err error) {
	if ye, ok := err.(*yamlerr.Error); ok {
		e := *ye
		if e.File == "" {
			e.File = d.file
		}
		if e.Line == 0 {
			e.Line = n.Line
		}
		if e.Field == "" {
			e.Field = path
		}
		d.errs = append(d.errs, &e)
		return
	}
	d.fail(n, path, strings.TrimPrefix(err.Error(), "yaml: "))
}

func resolve(n *yaml.Node) *yaml.Node {
	for n != nil && n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	if n != nil && n.Kind == yaml.DocumentNode && len(n.Content) > 0 {
		return resolve(n.Content[0])
	}
	return n
}

func isNull(n *yaml.Node) bool {
	return n == nil || n.Kind == yaml.ScalarNode && n.Tag == "!!null"
}

// describe names what a node holds, for "got ..." messages.
func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.SequenceNode:
		return "a list"
	case yaml.MappingNode:
		return "a mapping"
	}
	switch n.Tag {
	case "!!str":
		return "string " + yamlerr.Shown(n.Value)
	case "!!int":
		return "int " + yamlerr.Shown(n.Value)
	case "!!float":
		return "float " + yamlerr.Shown(n.Value)
	case "!!bool":
		return "bool " + n.Value
	case "!!null":
		return "null"
	}
	return yamlerr.Shown(n.Value)
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}
