package prompts

import (
	"bytes"
	"encoding/json"
	"math/big"
	"reflect"
	"strings"
	"testing"

	"bench/toolparse"
	"bench/validators"
)

// The bfcl suite: 200 prompts, 40 per category, each with its functions
// as native tools, its category and one bfcl_ast check; expected tools for
// every category but irrelevance.
func TestBFCLSuite(t *testing.T) {
	ps, err := Suite(SuiteBFCL)
	if err != nil {
		t.Fatal(err)
	}
	per := map[string]int{}
	for i := range ps {
		p := &ps[i]
		per[p.Category]++
		if p.BFCL() == nil || len(p.Tools) == 0 || p.Agentic() || p.Prompt == "" {
			t.Errorf("%s: %+v", p.ID, p)
		}
		if (len(p.ExpectedTools()) == 0) != (p.Category == "irrelevance") {
			t.Errorf("%s: expected tools %v", p.ID, p.ExpectedTools())
		}
	}
	if !reflect.DeepEqual(per, map[string]int{"simple": 40, "multiple": 40, "parallel": 40, "parallel_multiple": 40, "irrelevance": 40}) {
		t.Errorf("per category %v", per)
	}
	if _, err := Suite("bfcl_v9"); err == nil || !strings.Contains(err.Error(), `unknown suite "bfcl_v9"; one of default, bfcl`) {
		t.Errorf("unknown suite: %v", err)
	}
}

// A resumed run reads its prompts back from config.json through the YAML
// decoder: every bfcl prompt comes back with the same check, its numbers
// keeping their int or float form (BFCL's checker tells 10 from 10.0), and
// judges a reply the same.
func TestBFCLRoundTrip(t *testing.T) {
	ps, err := BFCL()
	if err != nil {
		t.Fatal(err)
	}
	saved := make([]Prompt, len(ps))
	for i := range ps {
		saved[i] = ps[i]
		saved[i].Source = "" // config.json keeps it apart (config.savedPrompts)
	}
	data, err := json.Marshal(map[string]any{"prompts": saved})
	if err != nil {
		t.Fatal(err)
	}
	back, err := Parse("config.json (prompt_set)", data)
	if err != nil {
		t.Fatal(err)
	}
	for i := range ps {
		a, b := ps[i].BFCL(), back[i].BFCL()
		if b == nil || a.Category != b.Category || !sameJSON(t, a.Functions, b.Functions) || !sameJSON(t, a.GroundTruth, b.GroundTruth) {
			t.Errorf("%s: the check changed: %s\n%s", ps[i].ID, a.GroundTruth, b.GroundTruth)
			continue
		}
		if back[i].Category != ps[i].Category || len(back[i].Tools) != len(ps[i].Tools) {
			t.Errorf("%s: category or tools changed", ps[i].ID)
		}
		// The same verdict on a call of the first expected tool.
		in := validators.Input{}
		if e := ps[i].ExpectedTools(); len(e) > 0 {
			in.ToolCalls = []toolparse.Call{{Name: e[0], Arguments: json.RawMessage(`{}`), Source: toolparse.SourceNative}}
		}
		if x, y := a.Check(in), b.Check(in); *x.Pass != *y.Pass || x.Violation != y.Violation {
			t.Errorf("%s: verdict %v %q, after the round trip %v %q", ps[i].ID, *x.Pass, x.Violation, *y.Pass, y.Violation)
		}
	}
}

// sameJSON compares two JSON texts as Python reads them: the same values,
// every number the same type (int or float) and value.
func sameJSON(t *testing.T, a, b json.RawMessage) bool {
	t.Helper()
	if len(a) == 0 || len(b) == 0 {
		return len(a) == len(b)
	}
	dec := func(r json.RawMessage) any {
		d := json.NewDecoder(bytes.NewReader(r))
		d.UseNumber()
		var v any
		if err := d.Decode(&v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	var eq func(x, y any) bool
	eq = func(x, y any) bool {
		switch xv := x.(type) {
		case json.Number:
			yv, ok := y.(json.Number)
			isF := func(n json.Number) bool { return strings.ContainsAny(string(n), ".eE") }
			if !ok || isF(xv) != isF(yv) {
				return false
			}
			fx, _ := new(big.Float).SetString(string(xv))
			fy, _ := new(big.Float).SetString(string(yv))
			return fx.Cmp(fy) == 0
		case []any:
			yv, ok := y.([]any)
			if !ok || len(xv) != len(yv) {
				return false
			}
			for i := range xv {
				if !eq(xv[i], yv[i]) {
					return false
				}
			}
			return true
		case map[string]any:
			yv, ok := y.(map[string]any)
			if !ok || len(xv) != len(yv) {
				return false
			}
			for k := range xv {
				if !eq(xv[k], yv[k]) {
					return false
				}
			}
			return true
		}
		return reflect.DeepEqual(x, y)
	}
	return eq(dec(a), dec(b))
}
