package yamlerr

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

func TestErrorString(t *testing.T) {
	cases := []struct {
		e    Error
		want string
	}{
		{Error{File: "a.yaml", Line: 3, Field: "run.id", Msg: "bad"}, "a.yaml:3: run.id: bad"},
		{Error{File: "a.yaml", Msg: "empty"}, "a.yaml: empty"},
		{Error{File: "a.yaml", Line: 2, Msg: "no field"}, "a.yaml:2: no field"},
	}
	for _, c := range cases {
		if got := c.e.Error(); got != c.want {
			t.Errorf("%+v: %q, want %q", c.e, got, c.want)
		}
	}
}

type target struct {
	Run struct {
		Concurrency int      `yaml:"concurrency"`
		Models      []string `yaml:"models"`
	} `yaml:"run"`
	Items []struct {
		Name string `yaml:"name"`
	} `yaml:"items"`
}

// decode runs a strict yaml.v3 decode and wraps its error as the loaders do.
func decode(t *testing.T, src string) error {
	t.Helper()
	var root yaml.Node
	if err := yaml.Unmarshal([]byte(src), &root); err != nil {
		return Wrap("f.yaml", &root, err)
	}
	dec := yaml.NewDecoder(bytes.NewReader([]byte(src)))
	dec.KnownFields(true)
	var v target
	if err := dec.Decode(&v); err != nil {
		return Wrap("f.yaml", &root, err)
	}
	return nil
}

func TestWrap(t *testing.T) {
	cases := []struct {
		name, src string
		want      []string
	}{
		{"unknown field", "run:\n  concurency: 2\n", []string{`f.yaml:2: run.concurency: unknown field "concurency"`}},
		{"wrong type", "run:\n  concurrency: lots\n", []string{"f.yaml:2: run.concurrency: wrong type: got string lots, want a number"}},
		{"string for a list", "run:\n  models: llama\n", []string{"f.yaml:2: run.models: wrong type: got string llama, want a list"}},
		{"item of a flow list", "items: [{name: [x]}]\n", []string{"f.yaml:1: items[0].name: wrong type: got a list, want a string"}},
		{"two at once", "run:\n  concurrency: lots\n  colour: red\n", []string{"f.yaml:2: run.concurrency:", "f.yaml:3: run.colour: unknown field"}},
		{"syntax", "run: [\n", []string{"f.yaml:"}},
	}
	for _, c := range cases {
		err := decode(t, c.src)
		if err == nil {
			t.Errorf("%s: no error", c.name)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: %q does not contain %q", c.name, err, w)
			}
		}
	}
}

// A positioned error from a custom unmarshaler keeps its line and gains
// the file and, when missing, the field on that line.
func TestWrapKeepsPositionedErrors(t *testing.T) {
	var root yaml.Node
	yaml.Unmarshal([]byte("run:\n  concurrency: 3\n"), &root)
	err := Wrap("f.yaml", &root, At(&yaml.Node{Line: 2}, "", "too many"))
	var e *Error
	if !errors.As(err, &e) || e.Error() != "f.yaml:2: run.concurrency: too many" {
		t.Errorf("got %v", err)
	}
}

// cont is a value whose decoding fails but lets the document's go on.
type cont struct{}

func (cont) UnmarshalYAML(n *yaml.Node) error {
	return Continue(&Error{Line: n.Line, Field: "a.b", Msg: "bad: " + n.Value}, &Error{Line: n.Line, Field: "a.c", Msg: "worse"})
}

// Continue lets yaml.v3 decode past a value's problems (it stops at any
// error but a *yaml.TypeError), and Wrap gives each back as it was, with
// the document's own type errors in the same round.
func TestContinue(t *testing.T) {
	var doc struct {
		X cont `yaml:"x"`
		N int  `yaml:"n"`
		Y cont `yaml:"y"`
	}
	src := "x: one\nn: many\ny: two\n"
	var root yaml.Node
	yaml.Unmarshal([]byte(src), &root)
	err := Wrap("f.yaml", &root, yaml.Unmarshal([]byte(src), &doc))
	var got []string
	for _, e := range Flatten(err) {
		got = append(got, e.Error())
	}
	want := []string{"f.yaml:1: a.b: bad: one", "f.yaml:1: a.c: worse", "f.yaml:2: n: wrong type: got string many, want a number", "f.yaml:3: a.b: bad: two", "f.yaml:3: a.c: worse"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if Wrap("f", nil, nil) != nil {
		t.Error("Wrap(nil) is not nil")
	}
}
