// Package yamlerr turns YAML decoding problems into errors that name the
// file, the line and the field, the form every bench config error takes.
//
// Layer: internal helpers (imports no bench package).
package yamlerr

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"gopkg.in/yaml.v3"
)

// Error is a problem at a place in a file: file:line: field: message.
type Error struct {
	File  string
	Line  int
	Field string
	Msg   string
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d", e.Line)
	}
	if e.Field != "" {
		b.WriteString(": ")
		b.WriteString(e.Field)
	}
	b.WriteString(": ")
	b.WriteString(e.Msg)
	return b.String()
}

// At returns a positioned error for a node; the field may be empty.
func At(n *yaml.Node, field, msg string) *Error {
	line := 0
	if n != nil {
		line = n.Line
	}
	return &Error{Line: line, Field: field, Msg: msg}
}

// fieldAt returns the dotted path of the deepest key on line, for naming the
// field of a decoder error that only gives a line.
func fieldAt(root *yaml.Node, line int, key ...string) string {
	var best string
	var exact string
	keyOnLine := false
	var walk func(cur *yaml.Node, path string)
	walk = func(cur *yaml.Node, path string) {
		switch cur.Kind {
		case yaml.DocumentNode:
			for _, c := range cur.Content {
				walk(c, path)
			}
		case yaml.MappingNode:
			for i := 0; i+1 < len(cur.Content); i += 2 {
				k, val := cur.Content[i], cur.Content[i+1]
				p := k.Value
				if path != "" {
					p = path + "." + k.Value
				}
				if k.Line == line {
					best, keyOnLine = p, true
					if len(key) > 0 && k.Value == key[0] && exact == "" {
						exact = p
					}
				}
				walk(val, p)
			}
		case yaml.SequenceNode:
			for i, c := range cur.Content {
				p := fmt.Sprintf("%s[%d]", path, i)
				// An item of a flow list ([a, b]) names the field only when
				// no key is on its line: a type error is about the key's value.
				if c.Line == line && c.Kind == yaml.ScalarNode && !keyOnLine {
					best = p
				}
				walk(c, p)
			}
		}
	}
	if root != nil {
		walk(root, "")
	}
	if exact != "" {
		return exact
	}
	return best
}

var lineMsg = regexp.MustCompile(`(?s)^line (\d+): (.*)$`)

// mark starts an entry of a *yaml.TypeError that Continue made of an
// *Error: "line N: " mark "field: message". It is a zero-width space, so
// an entry printed as yaml.v3 prints it still reads as the error.
const mark = "\u200b"

// Continue returns errs as a *yaml.TypeError: the one error yaml.v3
// decodes past. An UnmarshalYAML that returns any other error stops the
// decoding of the whole document there, so a file's problems would come
// one round at a time; with Continue the rest of the document is decoded
// (and checked) too, and Wrap gives back each *Error as it was (line,
// field, message). The value it was decoding is kept in a struct field
// or behind a pointer, and dropped from a list (see validators.Specs).
func Continue(errs ...error) error {
	te := &yaml.TypeError{}
	for _, err := range Flatten(errs...) {
		var e *Error
		var t *yaml.TypeError
		switch {
		case errors.As(err, &e):
			te.Errors = append(te.Errors, fmt.Sprintf("line %d: %s%s: %s", e.Line, mark, e.Field, e.Msg))
		case errors.As(err, &t):
			te.Errors = append(te.Errors, t.Errors...)
		default:
			te.Errors = append(te.Errors, err.Error())
		}
	}
	return te
}

// Flatten lists the errors errors.Join joined, depth first (nil ones
// left out), so each can be placed and sorted by its own file and line.
func Flatten(errs ...error) []error {
	var out []error
	for _, err := range errs {
		if j, ok := err.(interface{ Unwrap() []error }); ok {
			out = append(out, Flatten(j.Unwrap()...)...)
		} else if err != nil {
			out = append(out, err)
		}
	}
	return out
}

// Wrap turns a yaml.v3 error into file:line: field: message errors.
func Wrap(file string, root *yaml.Node, err error) error {
	if err == nil {
		return nil
	}
	var te *yaml.TypeError
	var ce *Error
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var errs []error
		for _, e := range j.Unwrap() {
			errs = append(errs, Wrap(file, root, e))
		}
		return errors.Join(errs...)
	}
	switch {
	case errors.As(err, &ce):
		if ce.File == "" {
			ce.File = file
		}
		if ce.Field == "" && ce.Line > 0 {
			ce.Field = fieldAt(root, ce.Line)
		}
		return ce
	case errors.As(err, &te):
		var errs []error
		for _, m := range te.Errors {
			errs = append(errs, lineError(file, root, m))
		}
		return errors.Join(errs...)
	}
	return lineError(file, root, strings.TrimPrefix(err.Error(), "yaml: "))
}

var unknownField = regexp.MustCompile(`^field (\S+) not found in type (.+)$`)
var cannotUnmarshal = regexp.MustCompile("^cannot unmarshal !!(\\w+)(?: `(.*)`)? into (\\S+)$")

func lineError(file string, root *yaml.Node, m string) error {
	sm := lineMsg.FindStringSubmatch(m)
	if sm == nil {
		return &Error{File: file, Msg: m}
	}
	line, _ := strconv.Atoi(sm[1])
	msg := sm[2]
	if rest, ok := strings.CutPrefix(msg, mark); ok {
		f, m, _ := strings.Cut(rest, ": ")
		return &Error{File: file, Line: line, Field: f, Msg: m}
	}
	field := fieldAt(root, line)
	if u := unknownField.FindStringSubmatch(msg); u != nil {
		field = fieldAt(root, line, u[1])
		msg = fmt.Sprintf("unknown field %q", u[1])
	} else if u := cannotUnmarshal.FindStringSubmatch(msg); u != nil {
		got := yamlKind(u[1])
		if u[2] != "" {
			got += " " + u[2]
		}
		msg = fmt.Sprintf("wrong type: got %s, want %s", got, goKind(u[3]))
	}
	return &Error{File: file, Line: line, Field: field, Msg: msg}
}

func yamlKind(tag string) string {
	switch tag {
	case "str":
		return "string"
	case "seq":
		return "a list"
	case "map":
		return "a mapping"
	case "int", "float", "bool":
		return tag
	}
	return tag
}

func goKind(t string) string {
	switch {
	case strings.HasPrefix(t, "[]"):
		return "a list"
	case strings.HasPrefix(t, "map["):
		return "a mapping"
	case t == "int" || t == "float64":
		return "a number"
	case t == "bool":
		return "true or false"
	case t == "string":
		return "a string"
	case strings.HasPrefix(t, "config."), strings.HasPrefix(t, "prompts."):
		return "a mapping"
	}
	return t
}

// Resolve follows alias nodes to what they stand for.
func Resolve(n *yaml.Node) *yaml.Node {
	for n != nil && n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	return n
}

// Describe names what a node holds, for "got ..." messages.
func Describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	}
	switch n.Tag {
	case "!!int", "!!float":
		return "number " + n.Value
	case "!!bool":
		return "boolean " + n.Value
	case "!!null":
		return "null"
	}
	return fmt.Sprintf("%q", n.Value)
}

// NotShown stands for a value an error message does not repeat.
const NotShown = "(a value that looks like a key; not repeated)"

// Shown is a value as an error message may repeat it. One that looks like
// a credential (a long token of letters and digits, no space, not a path
// or URL) is not repeated: a key pasted in the wrong place must not reach
// a terminal or a CI log through the message that points at it.
func Shown(v string) string {
	if LooksLikeKey(v) {
		return NotShown
	}
	return v
}

// Quoted is Shown, quoted unless it is not shown.
func Quoted(v string) string {
	if LooksLikeKey(v) {
		return NotShown
	}
	return strconv.Quote(v)
}

// LooksLikeKey says v looks like a credential.
func LooksLikeKey(v string) bool {
	if len(v) < 20 || strings.ContainsAny(v, " \t\n") || strings.Contains(v, "://") || strings.HasPrefix(v, "/") || strings.HasPrefix(v, ".") {
		return false
	}
	return strings.ContainsAny(v, "0123456789") && strings.ContainsAny(strings.ToLower(v), "abcdefghijklmnopqrstuvwxyz")
}

// CheckUTF8 is nil for UTF-8 text, else the error at the line of the
// first byte that is not.
func CheckUTF8(file string, data []byte) error {
	if utf8.Valid(data) {
		return nil
	}
	line := 1
	for i := 0; i < len(data); {
		r, size := utf8.DecodeRune(data[i:])
		if r == utf8.RuneError && size <= 1 {
			break
		}
		if r == '\n' {
			line++
		}
		i += size
	}
	return &Error{File: file, Line: line, Msg: "not UTF-8 text; save the file as UTF-8"}
}
