// Package bfcl is a sample of the Berkeley Function Calling Leaderboard
// (BFCL, ShishirPatil/gorilla, Apache-2.0) built into bench: its
// single-turn AST categories (simple, multiple, parallel,
// parallel_multiple, irrelevance), the conversion of BFCL's function
// documents to JSON Schema tools as BFCL's own model handlers do it, and
// BFCL's AST checker, ported from bfcl_eval/eval_checker/ast_eval/
// ast_checker.py and followed line by line.
//
// The sample (data/) is 40 cases per category drawn with a fixed seed from
// the files of one gorilla commit (data/SOURCE.md says which, how and
// why); data/LICENSE is gorilla's licence. Nothing outside the embedded
// files is read at run time. docs/routing.md lists every place where the
// port differs from BFCL, and why.
//
// Layer: scoring (a public suite and its checker; imports only scripted
// and internal helpers).
package bfcl

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"regexp"
	"slices"
	"sort"
	"strings"

	"bench/internal/yamlerr"
)

// The categories of the sample, in the order BFCL lists them.
const (
	Simple           = "simple"
	Multiple         = "multiple"
	Parallel         = "parallel"
	ParallelMultiple = "parallel_multiple"
	Irrelevance      = "irrelevance"
)

// Categories are the sample's categories with the BFCL file each comes
// from (BFCL v4 names simple "simple_python"; its cases are v3's simple).
var Categories = []struct{ Name, File string }{
	{Simple, "BFCL_v4_simple_python.json"},
	{Multiple, "BFCL_v4_multiple.json"},
	{Parallel, "BFCL_v4_parallel.json"},
	{ParallelMultiple, "BFCL_v4_parallel_multiple.json"},
	{Irrelevance, "BFCL_v4_irrelevance.json"},
}

// AnswerDir is where a category's possible answers are, beside its cases.
const AnswerDir = "possible_answer"

// Case is one BFCL test case.
type Case struct {
	ID       string
	Category string
	// System and User are the question's messages (the categories here
	// have one turn: a user message, rarely a system one before it).
	System, User string
	Functions    []Function
	// Answers are the possible answers, one per expected call: the
	// function's BFCL name and, per parameter, the acceptable values (""
	// among them marks the parameter optional). Nil for irrelevance.
	Answers []Answer
	// RawFunctions and RawAnswers are the case's JSON as in the BFCL files,
	// byte for byte (the numbers keep their int or float form).
	RawFunctions, RawAnswers json.RawMessage
}

// Function is a BFCL function document, decoded with Python's types.
type Function struct {
	Name        string
	Description string
	// Properties are the parameters' documents (type, items, description,
	// enum, default, ...); Required names the required ones.
	Properties map[string]map[string]any
	Required   []string
	raw        map[string]any
}

// Answer is one expected call: the function and, per parameter, its
// acceptable values.
type Answer struct {
	Function string
	Params   map[string][]any
}

// pythonTypes are the types BFCL's checker knows for Python cases
// (PYTHON_TYPE_MAPPING): the Python type each BFCL type must decode to.
var pythonTypes = map[string]string{
	"string": "str", "integer": "int", "float": "float", "boolean": "bool",
	"array": "list", "tuple": "list", "dict": "dict", "any": "str",
}

// Load reads the sample from fsys (the embedded data, or a directory laid
// out the same way): each category's cases and possible answers, checked
// case by case. Every problem is an error naming the file, the line and
// the case id, all of them at once.
func Load(fsys fs.FS, name string) ([]Case, error) {
	var out []Case
	var errs []error
	for _, c := range Categories {
		cases, err := loadCategory(fsys, name, c.Name, c.File)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out = append(out, cases...)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	seen := map[string]bool{}
	for _, c := range out {
		if seen[c.ID] {
			return nil, fmt.Errorf("%s: case id %s appears twice", name, c.ID)
		}
		seen[c.ID] = true
	}
	return out, nil
}

// rawCase and rawAnswer are a line of a BFCL file.
type rawCase struct {
	ID       string          `json:"id"`
	Question json.RawMessage `json:"question"`
	Function json.RawMessage `json:"function"`
}

type rawAnswer struct {
	ID          string          `json:"id"`
	GroundTruth json.RawMessage `json:"ground_truth"`
}

var idRe = regexp.MustCompile(`"id"\s*:\s*"([^"]*)"`)

func loadCategory(fsys fs.FS, name, category, file string) ([]Case, error) {
	path := name + "/" + file
	data, err := fs.ReadFile(fsys, file)
	if err != nil {
		return nil, fmt.Errorf("bfcl: read %s: %w", path, err)
	}
	var answers [][]byte
	apath := name + "/" + AnswerDir + "/" + file
	if category != Irrelevance {
		adata, err := fs.ReadFile(fsys, AnswerDir+"/"+file)
		if err != nil {
			return nil, fmt.Errorf("bfcl: read %s: %w", apath, err)
		}
		answers = lines(adata)
	}
	var out []Case
	var errs []error
	for i, line := range lines(data) {
		id := "?"
		if m := idRe.FindSubmatch(line); m != nil {
			id = string(m[1])
		}
		at := func(file string, format string, args ...any) {
			errs = append(errs, &yamlerr.Error{File: file, Line: i + 1, Field: "case " + id, Msg: fmt.Sprintf(format, args...)})
		}
		var rc rawCase
		if err := json.Unmarshal(line, &rc); err != nil {
			at(path, "not a BFCL case: %v", err)
			continue
		}
		c, err := parseCase(category, rc)
		if err != nil {
			at(path, "%v", err)
			continue
		}
		if category != Irrelevance {
			if i >= len(answers) {
				at(apath, "no possible answer (the file has %d lines)", len(answers))
				continue
			}
			var ra rawAnswer
			if err := json.Unmarshal(answers[i], &ra); err != nil {
				at(apath, "not a BFCL possible answer: %v", err)
				continue
			}
			if ra.ID != c.ID {
				at(apath, "possible answer of case %q on the line of case %q", ra.ID, c.ID)
				continue
			}
			if c.Answers, err = ParseAnswers(ra.GroundTruth, c.Functions); err != nil {
				at(apath, "%v", err)
				continue
			}
			c.RawAnswers = ra.GroundTruth
		}
		out = append(out, c)
	}
	if len(answers) > len(lines(data)) {
		errs = append(errs, &yamlerr.Error{File: apath, Line: len(lines(data)) + 1, Msg: "more possible answers than cases"})
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return out, nil
}

// lines splits a JSON Lines file, keeping blank lines out (BFCL's loader
// reads every line; its files have none).
func lines(data []byte) [][]byte {
	var out [][]byte
	for _, l := range bytes.Split(data, []byte("\n")) {
		if len(bytes.TrimSpace(l)) > 0 {
			out = append(out, l)
		}
	}
	return out
}

// parseCase checks one case: an id, one turn of messages ending with the
// user's, and function documents the checker can read.
func parseCase(category string, rc rawCase) (Case, error) {
	c := Case{ID: rc.ID, Category: category, RawFunctions: rc.Function}
	if rc.ID == "" {
		return c, errors.New("no id")
	}
	var turns [][]struct {
		Role    string `json:"role"`
		Content string `json:"content"`
	}
	if err := json.Unmarshal(rc.Question, &turns); err != nil {
		return c, fmt.Errorf("question: %v", err)
	}
	if len(turns) != 1 || len(turns[0]) == 0 {
		return c, fmt.Errorf("question: want one turn of messages, got %d turns", len(turns))
	}
	for j, m := range turns[0] {
		last := j == len(turns[0])-1
		switch {
		case m.Role == "system" && !last && j == 0:
			c.System = m.Content
		case m.Role == "user" && last:
			c.User = m.Content
		default:
			return c, fmt.Errorf("question: message %d has role %q; want an optional system message, then the user's", j, m.Role)
		}
	}
	fns, err := ParseFunctions(rc.Function)
	if err != nil {
		return c, err
	}
	c.Functions = fns
	return c, nil
}

// ParseFunctions decodes BFCL function documents and checks what the
// checker and the conversion read: a name, parameters of type dict with
// properties whose types BFCL knows, and names that stay distinct once
// dots become underscores.
func ParseFunctions(raw json.RawMessage) ([]Function, error) {
	v, err := decode(raw)
	if err != nil {
		return nil, fmt.Errorf("function: %v", err)
	}
	list, ok := v.([]any)
	if !ok || len(list) == 0 {
		return nil, errors.New("function: want a non-empty list of function documents")
	}
	var out []Function
	offered := map[string]string{}
	for i, item := range list {
		m, ok := item.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("function[%d]: want an object", i)
		}
		f := Function{raw: m}
		f.Name, _ = m["name"].(string)
		f.Description, _ = m["description"].(string)
		if f.Name == "" {
			return nil, fmt.Errorf("function[%d]: no name", i)
		}
		if other, dup := offered[ToolName(f.Name)]; dup {
			return nil, fmt.Errorf("function %q: offered as %q, like %q", f.Name, ToolName(f.Name), other)
		}
		offered[ToolName(f.Name)] = f.Name
		params, ok := m["parameters"].(map[string]any)
		if !ok {
			return nil, fmt.Errorf("function %q: no parameters object", f.Name)
		}
		props, ok := params["properties"].(map[string]any)
		if !ok {
			return nil, fmt.Errorf("function %q: parameters have no properties object", f.Name)
		}
		f.Properties = map[string]map[string]any{}
		for _, p := range sortedKeys(props) {
			pd, ok := props[p].(map[string]any)
			if !ok {
				return nil, fmt.Errorf("function %q: parameter %q: want an object", f.Name, p)
			}
			typ, _ := pd["type"].(string)
			if _, known := pythonTypes[typ]; !known {
				return nil, fmt.Errorf("function %q: parameter %q: type %q is not one BFCL's checker knows (%s)", f.Name, p, typ, strings.Join(sortedKeys(pythonTypes), ", "))
			}
			if typ == "array" || typ == "tuple" {
				items, _ := pd["items"].(map[string]any)
				it, _ := items["type"].(string)
				if _, known := pythonTypes[it]; !known {
					return nil, fmt.Errorf("function %q: parameter %q: items of type %q, which BFCL's checker does not know", f.Name, p, it)
				}
			}
			f.Properties[p] = pd
		}
		if req, ok := params["required"].([]any); ok {
			for _, r := range req {
				s, ok := r.(string)
				if !ok {
					return nil, fmt.Errorf("function %q: required: want names", f.Name)
				}
				f.Required = append(f.Required, s)
			}
		}
		out = append(out, f)
	}
	return out, nil
}

// ParseAnswers decodes a case's ground truth: a list of {function:
// {parameter: [acceptable values]}}, each naming a function the case
// offers.
func ParseAnswers(raw json.RawMessage, fns []Function) ([]Answer, error) {
	v, err := decode(raw)
	if err != nil {
		return nil, fmt.Errorf("ground_truth: %v", err)
	}
	list, ok := v.([]any)
	if !ok || len(list) == 0 {
		return nil, errors.New("ground_truth: want a non-empty list of expected calls")
	}
	var names []string
	for _, f := range fns {
		names = append(names, f.Name)
	}
	var out []Answer
	for i, item := range list {
		m, ok := item.(map[string]any)
		if !ok || len(m) != 1 {
			return nil, fmt.Errorf("ground_truth[%d]: want {function: {parameter: [values]}}", i)
		}
		for name, pv := range m {
			if !slices.Contains(names, name) {
				return nil, fmt.Errorf("ground_truth[%d]: possible answer for function %q, which the case does not offer [%s]", i, name, strings.Join(names, ", "))
			}
			params, ok := pv.(map[string]any)
			if !ok {
				return nil, fmt.Errorf("ground_truth[%d]: %s: want {parameter: [values]}", i, name)
			}
			a := Answer{Function: name, Params: map[string][]any{}}
			for p, vals := range params {
				l, ok := vals.([]any)
				if !ok {
					return nil, fmt.Errorf("ground_truth[%d]: %s.%s: want a list of acceptable values", i, name, p)
				}
				a.Params[p] = l
			}
			out = append(out, a)
		}
	}
	return out, nil
}

// ToolName is the name a function is offered under: BFCL's handlers turn
// "." into "_" for every API that takes ^[a-zA-Z0-9_-]{1,64}$ (OpenAI,
// Anthropic, Mistral, Google, OSS models: convert_to_tool), and its
// checker compares the model's call with the name converted the same way
// (convert_func_name).
func ToolName(name string) string { return strings.ReplaceAll(name, ".", "_") }

// function returns the case's function of that BFCL name, or nil
// (find_description).
func (c *Case) function(name string) *Function {
	for i := range c.Functions {
		if c.Functions[i].Name == name {
			return &c.Functions[i]
		}
	}
	return nil
}

// ExpectedTools are the tool names of the functions the answers call, once
// each, in order; none for irrelevance.
func (c *Case) ExpectedTools() []string {
	var out []string
	for _, a := range c.Answers {
		if n := ToolName(a.Function); !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
