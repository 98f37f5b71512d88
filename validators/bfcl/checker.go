package bfcl

import (
	"encoding/json"
	"fmt"
	"math/big"
	"strings"
)

// This file is BFCL's AST checker for Python cases (ast_checker.py at the
// commit data/SOURCE.md names), with the FC decoding around it
// (eval_runner.py's _evaluate_single_ast_entry and
// _evaluate_single_relevance_entry, the OpenAI FC handler's decode_ast).
// The functions keep the Python ones' names and order of checks, so the
// two read side by side; where the port differs, docs/routing.md says so.

// Call is a native function call as recorded: the name the model called
// and its arguments (a JSON object, or as results.Arguments keeps anything
// else).
type Call struct {
	Name      string
	Arguments json.RawMessage
}

// Result is the checker's verdict on a cell: Valid, or the first error and
// its BFCL error type (simple_function_checker:missing_required,
// value_error:string, irrelevance_error:decoder_success, ...).
type Result struct {
	Valid     bool
	Error     string
	ErrorType string
}

func invalid(typ, format string, args ...any) Result {
	return Result{Error: fmt.Sprintf(format, args...), ErrorType: typ}
}

var valid = Result{Valid: true}

// decoded is one call after decode_ast: {name: params}.
type decoded struct {
	name   string
	params any // a dict when the call is well formed
}

// decodeCalls is the FC handler's decode_ast over the model's native calls:
// each call's arguments json.loads'ed. ok is false when there was nothing
// to decode as calls (a text answer: BFCL's handler then returns the text,
// which decode_ast cannot read) or an argument text is not JSON.
func decodeCalls(calls []Call) ([]decoded, bool) {
	if len(calls) == 0 {
		return nil, false
	}
	out := make([]decoded, 0, len(calls))
	for _, c := range calls {
		args := c.Arguments
		if len(args) > 0 && args[0] == '"' {
			// Arguments that were not a JSON object are recorded as a JSON
			// string of their text: json.loads fails on that text, or
			// gives a str, which no check accepts either.
			return nil, false
		}
		v, err := decode(args)
		if err != nil {
			return nil, false
		}
		out = append(out, decoded{c.Name, v})
	}
	return out, true
}

// functionCallFormat is is_function_calling_format_output: every call's
// parameters are a dict.
func functionCallFormat(d []decoded) bool {
	for _, c := range d {
		if _, ok := c.params.(map[string]any); !ok {
			return false
		}
	}
	return true
}

// Check judges a cell's native calls as BFCL does for the case's category:
// irrelevance passes when the model made no (decodable) call, the other
// categories go through the AST checker.
func (c *Case) Check(calls []Call) Result {
	d, ok := decodeCalls(calls)
	if c.Category == Irrelevance {
		// _evaluate_single_relevance_entry: a call that decodes and is not
		// empty output is a function call, which irrelevance must not make.
		contains := ok && functionCallFormat(d) && len(d) > 0
		if contains {
			return invalid("irrelevance_error:decoder_success", "Valid syntax. Successfully decode AST when it should not.")
		}
		return valid
	}
	if !ok {
		if len(calls) == 0 {
			return invalid("ast_decoder:decoder_failed", "Invalid syntax. Failed to decode AST. The model made no function call.")
		}
		return invalid("ast_decoder:decoder_failed", "Invalid syntax. Failed to decode AST. A call's arguments are not JSON.")
	}
	if !functionCallFormat(d) {
		return invalid("ast_decoder:decoder_wrong_output_format", "Did not output in the specified format.")
	}
	return c.astChecker(d)
}

// astChecker is ast_checker for Python: parallel categories without order,
// multiple, else simple.
func (c *Case) astChecker(out []decoded) Result {
	switch {
	case strings.Contains(c.Category, "parallel"):
		return c.parallelNoOrder(out)
	case strings.Contains(c.Category, "multiple"):
		return c.multipleChecker(out)
	}
	if len(out) != 1 {
		return invalid("simple_function_checker:wrong_count", "Wrong number of functions.")
	}
	return simpleFunctionChecker(&c.Functions[0], out[0], c.Answers[0])
}

// multipleChecker is multiple_function_checker: one call, of the function
// the possible answer names.
func (c *Case) multipleChecker(out []decoded) Result {
	if len(out) != len(c.Answers) {
		return invalid("multiple_function_checker:wrong_count", "Wrong number of functions.")
	}
	return simpleFunctionChecker(c.function(c.Answers[0].Function), out[0], c.Answers[0])
}

// parallelNoOrder is parallel_function_checker_no_order: each possible
// answer, in order, takes the first call not yet taken that matches it.
func (c *Case) parallelNoOrder(out []decoded) Result {
	if len(out) != len(c.Answers) {
		return invalid("parallel_function_checker_no_order:wrong_count", "Wrong number of functions.")
	}
	var matched []int
	result := valid
	for i, a := range c.Answers {
		desc := c.function(a.Function)
		var errs []string
		for index := range out {
			if contains(matched, index) {
				continue
			}
			result = simpleFunctionChecker(desc, out[index], a)
			if result.Valid {
				matched = append(matched, index)
				break
			}
			errs = append(errs, fmt.Sprintf("Model Result Index %d: %s", index, result.Error))
		}
		if !result.Valid {
			var considered []string
			for k := range out {
				if !contains(matched, k) {
					considered = append(considered, fmt.Sprint(k))
				}
			}
			msg := fmt.Sprintf("Could not find a matching function among index [%s] of model output for index %d of possible answers.", strings.Join(considered, ", "), i)
			if len(errs) > 0 {
				msg += " " + strings.Join(errs, " ")
			}
			return invalid("parallel_function_checker_no_order:cannot_find_match", "%s", msg)
		}
	}
	return valid
}

func contains(list []int, v int) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}

// simpleFunctionChecker is simple_function_checker for Python: the
// function's (converted) name, its required parameters present, each
// parameter given known to the function and to the possible answer, of
// the right type and among the acceptable values, and every parameter the
// answer does not mark optional given.
func simpleFunctionChecker(f *Function, call decoded, answer Answer) Result {
	possible := answer.Params
	name := ToolName(f.Name)
	if call.name != name {
		return invalid("simple_function_checker:wrong_func_name", "Function name %s not found in model output.", repr(name))
	}
	params := call.params.(map[string]any)
	for _, p := range f.Required {
		if _, ok := params[p]; !ok {
			return invalid("simple_function_checker:missing_required", "Missing required parameter: %s.", repr(p))
		}
	}
	for _, p := range sortedKeys(params) {
		value := params[p]
		details, known := f.Properties[p]
		acceptable, inAnswer := possible[p]
		if !known || !inAnswer {
			return invalid("simple_function_checker:unexpected_param", "Unexpected parameter: %s.", repr(p))
		}
		typeDesc, _ := details["type"].(string)
		expected := pythonTypes[typeDesc]
		nested := ""
		if typeDesc == "array" || typeDesc == "tuple" {
			items, _ := details["items"].(map[string]any)
			it, _ := items["type"].(string)
			nested = pythonTypes[it]
		}
		// Python's auto conversion from int to float.
		if typeDesc == "float" && pyType(value) == "int" {
			value = toFloat(value)
		}
		tc := typeChecker(p, value, acceptable, typeDesc, expected, nested)
		if !tc.valid {
			return tc.result
		}
		// The special checks apply to a value of the documented type (not
		// a "variable").
		if !tc.isVariable {
			var r Result
			special := true
			switch {
			case expected == "dict":
				r = dictChecker(value.(map[string]any), acceptable)
			case expected == "list" && nested == "dict":
				r = listDictChecker(value.([]any), acceptable)
			case expected == "str":
				r = stringChecker(p, value.(string), acceptable)
			case expected == "list":
				r = listChecker(p, value.([]any), acceptable)
			default:
				special = false
			}
			if special {
				if !r.Valid {
					return r
				}
				continue
			}
		}
		if !pyIn(value, acceptable) {
			return invalid("value_error:others", "Invalid value for parameter %s: %s. Expected one of %s.", repr(p), repr(value), repr(acceptable))
		}
	}
	for _, p := range sortedKeys(possible) {
		if _, given := params[p]; !given && !pyIn("", possible[p]) {
			return invalid("simple_function_checker:missing_optional", "Optional parameter %s not provided and not marked as optional.", repr(p))
		}
	}
	return valid
}

// toFloat is Python's float() of an int.
func toFloat(v any) any {
	switch x := v.(type) {
	case int64:
		return float64(x)
	case pyInt:
		f, _ := new(big.Float).SetInt(x.Int).Float64()
		return f
	}
	return v
}

// typeCheck is type_checker's answer: whether the value passes, whether it
// is taken as a "variable" (its type is the possible answers' rather than
// the documented one, so values are compared as they are), and the result
// to return when it does not pass.
type typeCheck struct {
	valid, isVariable bool
	result            Result
}

// answerType is get_possible_answer_type: the type of the first possible
// value that is not "" (the optional marker).
func answerType(acceptable []any) string {
	for _, a := range acceptable {
		if !pyEqual(a, "") {
			return pyType(a)
		}
	}
	return ""
}

// typeChecker is type_checker, including its fall-through: a failed nested
// check still returns (as not valid) when the value has the possible
// answers' type.
func typeChecker(param string, value any, acceptable []any, typeDesc, expected, nested string) typeCheck {
	res := typeCheck{valid: true, result: valid}
	isVariable := false
	at := answerType(acceptable)
	if at != "" && at != expected {
		isVariable = true
	}
	if pyType(value) == expected {
		if nested == "" {
			res.isVariable = isVariable
			return res
		}
		for _, item := range acceptable {
			flag := true
			if list, ok := item.([]any); ok {
				for _, v := range value.([]any) {
					if r := typeChecker(param, v, list, nested, nested, ""); !r.valid {
						flag = false
						break
					}
				}
			}
			if flag {
				return typeCheck{valid: true, isVariable: isVariable, result: valid}
			}
		}
		res.valid = false
		res.result = invalid("type_error:nested", "Nested type checking failed for parameter %s. Expected outer type %s with inner type %s. Parameter value: %s.",
			repr(param), typeDesc, nested, repr(value))
	}
	if at != "" && pyType(value) == at {
		res.isVariable = true
		return res
	}
	res.valid = false
	msg := fmt.Sprintf("Incorrect type for parameter %s. Expected type %s, got %s. Parameter value: %s.", repr(param), typeDesc, pyType(value), repr(value))
	if res.result.Error != "" {
		msg = res.result.Error + " " + msg
	}
	res.result = invalid("type_error:simple", "%s", msg)
	return res
}

// stringChecker is string_checker: the standardized string among the
// standardized acceptable strings.
func stringChecker(param, value string, acceptable []any) Result {
	var std []any
	for _, a := range acceptable {
		if s, ok := a.(string); ok {
			std = append(std, standardize(s))
		}
	}
	if !pyIn(standardize(value), std) {
		return invalid("value_error:string", "Invalid value for parameter %s: %s. Expected one of %s. Case insensitive.", repr(param), repr(value), repr(acceptable))
	}
	return valid
}

// listChecker is list_checker: the list, its strings standardized, equal
// to one acceptable list standardized the same way (an acceptable "" is
// the empty list, as Python iterates a str).
func listChecker(param string, value []any, acceptable []any) Result {
	std := make([]any, len(value))
	for i, v := range value {
		std[i] = v
		if s, ok := v.(string); ok {
			std[i] = standardize(s)
		}
	}
	var stdAcc []any
	for _, a := range acceptable {
		items, ok := pyItems(a)
		if !ok {
			continue // len() of it would stop BFCL with a TypeError
		}
		one := make([]any, len(items))
		for j, v := range items {
			one[j] = v
			if s, ok := v.(string); ok {
				one[j] = standardize(s)
			}
		}
		stdAcc = append(stdAcc, one)
	}
	if !pyIn(std, stdAcc) {
		return invalid("value_error:list/tuple", "Invalid value for parameter %s: %s. Expected one of %s.", repr(param), repr(value), repr(acceptable))
	}
	return valid
}

// dictChecker is dict_checker: some acceptable dict has every key of the
// value with an acceptable (standardized) value, and the value has every
// key that dict does not mark optional.
func dictChecker(value map[string]any, acceptable []any) Result {
	result := invalid("dict_checker:unclear", "")
	for _, a := range acceptable {
		if pyEqual(a, "") {
			continue
		}
		result = invalid("dict_checker:unclear", "")
		answer, ok := a.(map[string]any)
		if !ok {
			continue // BFCL's data has a dict here; anything else cannot match
		}
		flag := true
		for _, key := range sortedKeys(value) {
			v := value[key]
			allowed, ok := answer[key]
			if !ok {
				result = invalid("value_error:dict_key", "Unexpected dict key parameter: '%s'.", key)
				flag = false
				break
			}
			std := v
			if s, ok := v.(string); ok {
				std = standardize(s)
			}
			items, _ := pyItems(allowed)
			var stdAllowed []any
			for _, x := range items {
				if s, ok := x.(string); ok {
					x = standardize(s)
				}
				stdAllowed = append(stdAllowed, x)
			}
			if !pyIn(std, stdAllowed) {
				result = invalid("value_error:dict_value", "Invalid value for parameter %s: %s. Expected one of %s.", repr(key), repr(v), repr(stdAllowed))
				flag = false
				break
			}
		}
		for _, key := range sortedKeys(answer) {
			if _, given := value[key]; !given {
				items, _ := pyItems(answer[key])
				if !pyIn("", items) {
					result = invalid("value_error:dict_key", "Missing dict key parameter: '%s'.", key)
					flag = false
					break
				}
			}
		}
		if flag {
			return valid
		}
	}
	return result
}

// listDictChecker is list_dict_checker: some acceptable list of dicts has
// as many dicts as the value, each matched in order by dictChecker.
func listDictChecker(value []any, acceptable []any) Result {
	result := invalid("list_dict_checker:unclear", "")
	for _, a := range acceptable {
		flag := true
		n, ok := pyLen(a)
		if !ok || len(value) != n {
			result = invalid("value_error:list_dict_count", "Wrong number of dictionaries in the list.")
			continue
		}
		items, _ := pyItems(a)
		for i := range value {
			m, isDict := value[i].(map[string]any)
			if !isDict {
				result = invalid("value_error:list_dict_count", "Item %d is not a dictionary.", i)
				flag = false
				break
			}
			result = dictChecker(m, []any{items[i]})
			if !result.Valid {
				flag = false
				break
			}
		}
		if flag {
			return valid
		}
	}
	return result
}
