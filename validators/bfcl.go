package validators

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"bench/internal/yamlerr"
	"bench/toolparse"
	"bench/validators/bfcl"
)

// TypeBFCL judges a reply's native function calls with BFCL's AST checker
// (package bfcl): the category's rules (simple, multiple, parallel,
// parallel_multiple: the calls against the possible answers; irrelevance:
// no call), the function documents in BFCL's own types and the possible
// answers as BFCL writes them. The built-in bfcl suite is made of such
// prompts; a prompt file may hold its own.
const TypeBFCL = "bfcl_ast"

// bfclCategories are the categories the AST checker here judges.
var bfclCategories = []string{bfcl.Simple, bfcl.Multiple, bfcl.Parallel, bfcl.ParallelMultiple, bfcl.Irrelevance}

// NewBFCL is the bfcl_ast check of a BFCL case.
func NewBFCL(c *bfcl.Case) Spec {
	return Spec{Type: TypeBFCL, Category: c.Category, Functions: c.RawFunctions, GroundTruth: c.RawAnswers, bfcl: c}
}

// bfclSpec decodes a bfcl_ast spec: functions and ground_truth are read as
// JSON with their numbers' int or float form kept, since BFCL's checker
// tells 10 from 10.0.
func (s *Spec) bfclSpec(vals map[string]*yaml.Node) error {
	cat, err := str(vals["category"], "validator.category")
	if err != nil {
		return err
	}
	if !slices.Contains(bfclCategories, cat) {
		return yamlerr.At(vals["category"], "validator.category", fmt.Sprintf("unknown BFCL category %q; one of %s", cat, strings.Join(bfclCategories, ", ")))
	}
	fn, ok := vals["functions"]
	if !ok {
		return yamlerr.At(nil, "validator.functions", "missing (required by type bfcl_ast)")
	}
	raw, err := bfclJSON(fn, "validator.functions")
	if err != nil {
		return err
	}
	fns, err := bfcl.ParseFunctions(raw)
	if err != nil {
		return yamlerr.At(fn, "validator.functions", err.Error())
	}
	c := &bfcl.Case{Category: cat, Functions: fns, RawFunctions: raw}
	gt, has := vals["ground_truth"]
	switch {
	case cat == bfcl.Irrelevance && has:
		return yamlerr.At(gt, "validator.ground_truth", "an irrelevance case has no possible answer: the model must call nothing")
	case cat != bfcl.Irrelevance && !has:
		return yamlerr.At(nil, "validator.ground_truth", "missing (required by BFCL category "+cat+")")
	case has:
		raw, err := bfclJSON(gt, "validator.ground_truth")
		if err != nil {
			return err
		}
		if c.Answers, err = bfcl.ParseAnswers(raw, fns); err != nil {
			return yamlerr.At(gt, "validator.ground_truth", err.Error())
		}
		c.RawAnswers = raw
	}
	s.Category, s.Functions, s.GroundTruth, s.bfcl = cat, c.RawFunctions, c.RawAnswers, c
	return nil
}

// checkBFCL runs BFCL's checker on the reply's native calls (a command
// written in text is not a function call to BFCL).
func (s *Spec) checkBFCL(in Input) Outcome {
	c := s.bfcl
	if c == nil {
		return invalid("bfcl_ast needs its functions and ground truth")
	}
	var calls []bfcl.Call
	for _, tc := range in.ToolCalls {
		if tc.Source == toolparse.SourceNative {
			calls = append(calls, bfcl.Call{Name: tc.Name, Arguments: tc.Arguments})
		}
	}
	r := c.Check(calls)
	p := map[string]any{"bfcl": map[string]any{"category": c.Category, "valid": r.Valid, "error_type": r.ErrorType}}
	if r.Valid {
		return pass(p)
	}
	return fail(p, "BFCL %s: %s", r.ErrorType, shorten(r.Error))
}

// BFCLExpected are the tools a bfcl_ast check expects to be called (none
// for irrelevance).
func (s *Spec) BFCLExpected() []string {
	if s.Type != TypeBFCL || s.bfcl == nil {
		return nil
	}
	return s.bfcl.ExpectedTools()
}

// bfclJSON renders a YAML value as JSON keeping what BFCL's checker reads
// from a JSON number: a float stays a float (10.0, not 10), an integer an
// integer.
func bfclJSON(n *yaml.Node, field string) (json.RawMessage, error) {
	var b bytes.Buffer
	if err := writeBFCL(&b, n, field, 0); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

func writeBFCL(b *bytes.Buffer, n *yaml.Node, field string, depth int) error {
	n = yamlerr.Resolve(n)
	if depth > 64 {
		return yamlerr.At(n, field, "nested deeper than 64 levels")
	}
	switch n.Kind {
	case yaml.MappingNode:
		b.WriteByte('{')
		for i := 0; i+1 < len(n.Content); i += 2 {
			if i > 0 {
				b.WriteByte(',')
			}
			k, _ := json.Marshal(n.Content[i].Value)
			b.Write(k)
			b.WriteByte(':')
			if err := writeBFCL(b, n.Content[i+1], field+"."+n.Content[i].Value, depth+1); err != nil {
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
			if err := writeBFCL(b, c, fmt.Sprintf("%s[%d]", field, i), depth+1); err != nil {
				return err
			}
		}
		b.WriteByte(']')
	case yaml.ScalarNode:
		switch n.Tag {
		case "!!null":
			b.WriteString("null")
		case "!!bool":
			var v bool
			if err := n.Decode(&v); err != nil {
				return yamlerr.At(n, field, err.Error())
			}
			b.WriteString(strconv.FormatBool(v))
		case "!!int":
			var v int64
			if err := n.Decode(&v); err != nil {
				return yamlerr.At(n, field, "bad integer "+n.Value)
			}
			b.WriteString(strconv.FormatInt(v, 10))
		case "!!float":
			var f float64
			if err := n.Decode(&f); err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
				return yamlerr.At(n, field, "bad number "+n.Value+" (NaN and infinity have no JSON form)")
			}
			s := strconv.FormatFloat(f, 'g', -1, 64)
			if !strings.ContainsAny(s, ".e") {
				s += ".0"
			}
			b.WriteString(s)
		default:
			k, _ := json.Marshal(n.Value)
			b.Write(k)
		}
	default:
		return yamlerr.At(n, field, "unsupported YAML value")
	}
	return nil
}
