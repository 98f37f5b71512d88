package bfcl

import (
	"encoding/json"
	"strings"
	"testing"
)

// A call as the test writes it: name and arguments text.
type c = struct{ name, args string }

// Each case feeds a recorded answer of a sampled case through the checker
// and compares with the verdict derived by hand from BFCL's code
// (ast_checker.py, eval_runner.py at the commit in data/SOURCE.md): the
// comment says which rule decides.
func TestCheckerVerdicts(t *testing.T) {
	cases := verdictCases
	all, err := Builtin()
	if err != nil {
		t.Fatal(err)
	}
	byID := map[string]*Case{}
	for i := range all {
		byID[all[i].ID] = &all[i]
	}
	for i, tc := range cases {
		cs := byID[tc.id]
		if cs == nil {
			t.Fatalf("case %s is not in the sample", tc.id)
		}
		var calls []Call
		for _, cl := range tc.calls {
			calls = append(calls, Call{Name: cl.name, Arguments: json.RawMessage(cl.args)})
		}
		r := cs.Check(calls)
		if r.Valid != tc.valid || r.ErrorType != tc.typ {
			t.Errorf("%d %s %v: valid %v %s (%s), want %v %s", i, tc.id, tc.calls, r.Valid, r.ErrorType, r.Error, tc.valid, tc.typ)
		}
		if !r.Valid && (r.Error == "" && !strings.HasSuffix(r.ErrorType, "unclear")) {
			t.Errorf("%d %s: no error text", i, tc.id)
		}
	}
}

// verdictCases are the recorded answers and their hand-derived verdicts.
var verdictCases = []struct {
	id    string
	calls []c
	valid bool
	typ   string // the BFCL error_type when not valid
}{
	// simple_python_10: calculate_area(base int [6], height int [10], unit str ["cm", ""]).
	{"simple_python_10", []c{{"calculate_area", `{"base": 6, "height": 10}`}}, true, ""},                            // unit's "" marks it optional
	{"simple_python_10", []c{{"calculate_area", `{"base": 6, "height": 10, "unit": "CM"}`}}, true, ""},              // string_checker lowercases
	{"simple_python_10", []c{{"calculate_area", `{"base": 7, "height": 10}`}}, false, "value_error:others"},         // 7 not in [6]
	{"simple_python_10", []c{{"calculate_area", `{"base": 6}`}}, false, "simple_function_checker:missing_required"}, // height is required
	{"simple_python_10", []c{{"calculate_area", `{"base": "6", "height": 10}`}}, false, "type_error:simple"},        // str for integer, answers are int
	{"simple_python_10", []c{{"calculate_area", `{"base": 6.0, "height": 10}`}}, false, "type_error:simple"},        // float for integer: no conversion that way
	{"simple_python_10", []c{{"calculate_area", `{"base": 6, "height": 10, "color": "red"}`}}, false, "simple_function_checker:unexpected_param"},
	{"simple_python_10", []c{{"calculate_area", `{"base": 6, "height": 10}`}, {"calculate_area", `{"base": 6, "height": 10}`}}, false, "simple_function_checker:wrong_count"}, // an extra call
	{"simple_python_10", nil, false, "ast_decoder:decoder_failed"},                                                                                                            // abstention: a text answer does not decode
	{"simple_python_10", []c{{"calculate_triangle_area", `{"base": 6, "height": 10}`}}, false, "simple_function_checker:wrong_func_name"},
	{"simple_python_10", []c{{"calculate_area", `"base=6, height=10"`}}, false, "ast_decoder:decoder_failed"},  // arguments that are not JSON
	{"simple_python_10", []c{{"calculate_area", `[6, 10]`}}, false, "ast_decoder:decoder_wrong_output_format"}, // JSON, not a dict

	// simple_python_14: calculate_derivative(function str ["3x**2 + 2x - 1", ...], x_value float ["", 0.0]).
	{"simple_python_14", []c{{"calculate_derivative", `{"function": "3x**2 + 2x - 1"}`}}, true, ""},
	{"simple_python_14", []c{{"calculate_derivative", `{"function": "3x^2 + 2x - 1"}`}}, true, ""},                // standardize_string drops ^ * - and spaces
	{"simple_python_14", []c{{"calculate_derivative", `{"function": "3x**2 + 2x - 1", "x_value": 0}`}}, true, ""}, // int auto-converted to float, 0.0 accepted
	{"simple_python_14", []c{{"calculate_derivative", `{"function": "3x**2 + 2x - 1", "x_value": 1.5}`}}, false, "value_error:others"},
	{"simple_python_14", []c{{"calculate_derivative", `{"function": "x**3"}`}}, false, "value_error:string"},

	// simple_python_161: detail_level ["detailed"] has no "": it must be given.
	{"simple_python_161", []c{{"crime_statute_lookup", `{"jurisdiction": "CA", "crime": "theft"}`}}, false, "simple_function_checker:missing_optional"},
	{"simple_python_161", []c{{"crime_statute_lookup", `{"jurisdiction": "california", "crime": "Theft", "detail_level": "detailed"}`}}, true, ""},

	// simple_python_89: conditions is a dict, checked key by key.
	{"simple_python_89", []c{{"db_fetch_records", `{"database_name": "StudentDB", "table_name": "students", "conditions": {"department": "science", "school": "Bluebird HS"}}`}}, true, ""},
	{"simple_python_89", []c{{"db_fetch_records", `{"database_name": "StudentDB", "table_name": "students", "conditions": {"department": "Science"}}`}}, false, "value_error:dict_key"},
	{"simple_python_89", []c{{"db_fetch_records", `{"database_name": "StudentDB", "table_name": "students", "conditions": {"department": "Arts", "school": "Bluebird HS"}}`}}, false, "value_error:dict_value"},

	// simple_python_335: deck (a list of dicts) answers [""]: len("") is 0, so [] passes and any card fails.
	{"simple_python_335", []c{{"find_card_in_deck", `{"rank": "Queen", "suit": "Hearts"}`}}, true, ""},
	{"simple_python_335", []c{{"find_card_in_deck", `{"rank": "Queen", "suit": "Hearts", "deck": []}`}}, true, ""},
	{"simple_python_335", []c{{"find_card_in_deck", `{"rank": "Queen", "suit": "Hearts", "deck": [{"rank": "Ace", "suit": "Spades"}]}`}}, false, "value_error:list_dict_count"},

	// multiple_1: the heron function of three offered, called by its offered name.
	{"multiple_1", []c{{"math_triangle_area_heron", `{"side1": 3, "side2": 4, "side3": 5}`}}, true, ""},
	{"multiple_1", []c{{"math.triangle_area_heron", `{"side1": 3, "side2": 4, "side3": 5}`}}, false, "simple_function_checker:wrong_func_name"}, // the dotted name was not offered
	{"multiple_1", []c{{"math_circle_area", `{"radius": 3}`}}, false, "simple_function_checker:wrong_func_name"},
	{"multiple_1", []c{{"math_triangle_area_heron", `{"side1": 3, "side2": 4, "side3": 5}`}, {"math_circle_area", `{"radius": 1}`}}, false, "multiple_function_checker:wrong_count"},

	// parallel_1: two calls, order free.
	{"parallel_1", []c{{"calculate_em_force", `{"b_field": 5, "area": 2, "d_time": 10}`}, {"calculate_em_force", `{"b_field": 5, "area": 2, "d_time": 4}`}}, true, ""},
	{"parallel_1", []c{{"calculate_em_force", `{"b_field": 5, "area": 2, "d_time": 4}`}, {"calculate_em_force", `{"b_field": 5, "area": 2, "d_time": 4}`}}, false, "parallel_function_checker_no_order:cannot_find_match"},
	{"parallel_1", []c{{"calculate_em_force", `{"b_field": 5, "area": 2, "d_time": 4}`}}, false, "parallel_function_checker_no_order:wrong_count"},

	// parallel_5: show_list is a list of strings, either order of the two shows.
	{"parallel_5", []c{
		{"streaming_services_shows_list_and_ratings", `{"streaming_service": "Hulu", "show_list": ["stranger things", "the office"], "sort_by_rating": true}`},
		{"streaming_services_shows_list_and_ratings", `{"streaming_service": "Netflix", "show_list": ["Friends"], "sort_by_rating": true}`},
	}, true, ""},
	{"parallel_5", []c{
		{"streaming_services_shows_list_and_ratings", `{"streaming_service": "Netflix", "show_list": ["Friends"], "sort_by_rating": true}`},
		{"streaming_services_shows_list_and_ratings", `{"streaming_service": "Hulu", "show_list": ["The Office"], "sort_by_rating": true}`},
	}, false, "parallel_function_checker_no_order:cannot_find_match"},
	{"parallel_5", []c{
		{"streaming_services_shows_list_and_ratings", `{"streaming_service": "Netflix", "show_list": ["Friends"], "sort_by_rating": "true"}`},
		{"streaming_services_shows_list_and_ratings", `{"streaming_service": "Hulu", "show_list": ["The Office", "Stranger Things"], "sort_by_rating": true}`},
	}, false, "parallel_function_checker_no_order:cannot_find_match"}, // "true" is a str for a boolean

	// parallel_multiple_17: two functions, floats given as ints.
	{"parallel_multiple_17", []c{{"hydration_calculator", `{"exercise_time": 2}`}, {"steps_calorie_calculation", `{"calorie": 500}`}}, true, ""},
	{"parallel_multiple_17", []c{{"steps_calorie_calculation", `{"calorie": 500}`}, {"payment_calculation", `{"items": ["water"], "quantities": [2]}`}}, false, "parallel_function_checker_no_order:cannot_find_match"},

	// irrelevance_9: no call passes; a call fails; a call whose
	// arguments do not decode passes (BFCL counts it as no call).
	{"irrelevance_9", nil, true, ""},
	{"irrelevance_9", []c{{"CalculateTax", `{"annual_income": 1, "tax_rate": 0.1, "other_deductions": 0}`}}, false, "irrelevance_error:decoder_success"},
	{"irrelevance_9", []c{{"CalculateTax", `"integrate x^2"`}}, true, ""},
}

// canonical is the answer BFCL's possible answers describe first: each
// expected call with, per parameter, the first acceptable value that is
// not the optional marker "" (an optional parameter whose only value is ""
// left out).
func canonical(cs *Case) []Call {
	first := func(vals []any) (any, bool) {
		for _, v := range vals {
			if !pyEqual(v, "") {
				return v, true
			}
		}
		return nil, false
	}
	// A dict parameter's answer is a dict of acceptable values per key.
	dict := func(v any) any {
		m, ok := v.(map[string]any)
		if !ok {
			return v
		}
		out := map[string]any{}
		for k, vals := range m {
			if l, ok := vals.([]any); ok {
				if x, ok := first(l); ok {
					out[k] = x
				}
			}
		}
		return out
	}
	var out []Call
	for _, a := range cs.Answers {
		f := cs.function(a.Function)
		args := map[string]any{}
		for p, vals := range a.Params {
			v, ok := first(vals)
			if !ok {
				continue
			}
			typ, _ := f.Properties[p]["type"].(string)
			items, _ := f.Properties[p]["items"].(map[string]any)
			switch {
			case typ == "dict":
				v = dict(v)
			case typ == "array" && items["type"] == "dict":
				l, _ := v.([]any)
				var ds []any
				for _, d := range l {
					ds = append(ds, dict(d))
				}
				v = ds
			}
			args[p] = v
		}
		b, err := json.Marshal(args)
		if err != nil {
			panic(err)
		}
		out = append(out, Call{Name: ToolName(a.Function), Arguments: pyFloats(b, args)})
	}
	return out
}

// pyFloats writes the arguments keeping Python's float type: a float that
// encoding/json writes without a point gets ".0".
func pyFloats(_ []byte, args map[string]any) json.RawMessage {
	var enc func(v any) string
	enc = func(v any) string {
		switch x := v.(type) {
		case float64:
			return repr(x)
		case []any:
			parts := make([]string, len(x))
			for i := range x {
				parts[i] = enc(x[i])
			}
			return "[" + strings.Join(parts, ",") + "]"
		case map[string]any:
			var parts []string
			for _, k := range sortedKeys(x) {
				kb, _ := json.Marshal(k)
				parts = append(parts, string(kb)+":"+enc(x[k]))
			}
			return "{" + strings.Join(parts, ",") + "}"
		}
		b, _ := json.Marshal(v)
		return string(b)
	}
	return json.RawMessage(enc(args))
}

// Every sampled case passes its own canonical answer, whatever the order
// of a parallel answer's calls, and fails with no call; irrelevance passes
// with no call and fails when it calls its first function.
func TestCanonicalAnswers(t *testing.T) {
	all, err := Builtin()
	if err != nil {
		t.Fatal(err)
	}
	for i := range all {
		cs := &all[i]
		if cs.Category == Irrelevance {
			if r := cs.Check(nil); !r.Valid {
				t.Errorf("%s: no call fails: %+v", cs.ID, r)
			}
			call := Call{Name: ToolName(cs.Functions[0].Name), Arguments: json.RawMessage(`{}`)}
			if r := cs.Check([]Call{call}); r.Valid {
				t.Errorf("%s: a call passes", cs.ID)
			}
			continue
		}
		calls := canonical(cs)
		if r := cs.Check(calls); !r.Valid {
			t.Errorf("%s: canonical answer %v fails: %s %s", cs.ID, calls, r.ErrorType, r.Error)
		}
		if len(calls) > 1 {
			rev := make([]Call, len(calls))
			for k := range calls {
				rev[k] = calls[len(calls)-1-k]
			}
			if r := cs.Check(rev); !r.Valid && cs.Category != Multiple {
				t.Errorf("%s: reversed canonical answer fails: %s %s", cs.ID, r.ErrorType, r.Error)
			}
		}
		if r := cs.Check(nil); r.Valid {
			t.Errorf("%s: no call passes", cs.ID)
		}
	}
}
