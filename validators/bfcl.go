package validators

import (
	"fmt"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"bench/internal/yamlerr"
	"bench/toolparse"
	"bench/validators/bfcl"
	"bench/validators/scripted"
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
	raw, err := scripted.NodeJSON(fn, "validator.functions", true)
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
		raw, err := scripted.NodeJSON(gt, "validator.ground_truth", true)
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
