package config

import (
	"strings"

	"gopkg.in/yaml.v3"
)

// node wraps a yaml.Node to find where a field sits in the file.
type node struct{ *yaml.Node }

// lookup walks mapping keys (string) and sequence indexes (int) and returns
// the node found, or nil.
func (n node) lookup(path ...any) *yaml.Node {
	cur := n.Node
	for _, step := range path {
		if cur == nil {
			return nil
		}
		if cur.Kind == yaml.DocumentNode && len(cur.Content) > 0 {
			cur = cur.Content[0]
		}
		switch s := step.(type) {
		case string:
			if cur.Kind != yaml.MappingNode {
				return nil
			}
			var next *yaml.Node
			for i := 0; i+1 < len(cur.Content); i += 2 {
				if cur.Content[i].Value == s {
					next = cur.Content[i+1]
					break
				}
			}
			cur = next
		case int:
			if cur.Kind != yaml.SequenceNode || s >= len(cur.Content) {
				return nil
			}
			cur = cur.Content[s]
		}
	}
	return cur
}

type validator struct {
	file string
	root node
	errs []error
	// flags are the keys the command line set, with the flag and value
	// that set each: a problem there names them, not a line of the file.
	flags map[string]string
}

// add records a problem at a dotted field path, found in the YAML tree.
func (v *validator) add(field, msg string) {
	var path []any
	for _, part := range strings.Split(field, ".") {
		path = append(path, part)
	}
	v.addPath(path, field, msg)
}

// addPath records a problem at the node path; if that node is absent (a
// missing key) the nearest present parent gives the line.
func (v *validator) addPath(path []any, field, msg string) {
	if e, ok := flagError(v.flags, field, msg); ok {
		v.errs = append(v.errs, e)
		return
	}
	line := 0
	for i := len(path); i >= 0 && line == 0; i-- {
		if n := v.root.lookup(path[:i]...); n != nil {
			line = n.Line
		}
	}
	v.errs = append(v.errs, &Error{File: v.file, Line: line, Field: field, Msg: msg})
}
