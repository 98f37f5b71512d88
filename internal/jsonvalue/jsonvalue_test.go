package jsonvalue

import (
	"encoding/json"
	"testing"
)

func TestEqualText(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want bool
	}{
		{`{"a":1,"b":2}`, `{"b":2,"a":1}`, true},
		{`{"a":1}`, `{"a":1.0}`, true},
		{`{"a":1}`, `{"a":1e0}`, true},
		{`{"a":1}`, `{"a":"1"}`, false},
		{`{"a":[1,2]}`, `{"a":[2,1]}`, false},
		{`{"a":{"x":true}}`, `{"a":{"x":true,"y":null}}`, false},
		{`{"a":1e400}`, `{"a":-1e400}`, true}, // both Infinity: null
		{`{"a":1e400}`, `{"a":null}`, true},
		{`{"a":1e-400}`, `{"a":0}`, true},
		{`{"a":-0.0}`, `{"a":0}`, true},
		{`9007199254740993`, `9007199254740992`, true}, // 2^53+1 is 2^53 as a double
		{`{"a":1,"a":2}`, `{"a":2}`, true},             // the last duplicate wins, as in JSON.parse
		{` {"a":1} `, `{"a":1}`, true},
		{`{"a":1} x`, `{"a":1}`, false}, // not one JSON value: compared as text
		{`{"a":1} {}`, `{"a":1}`, false},
		{`not json`, `not json`, true},
		{` not json`, `not json `, true},
		{`not json`, `{}`, false},
		{`{}`, `[]`, false},
		{`null`, `{}`, false},
		{`"é"`, `"\u00e9"`, true},
	} {
		if got := EqualText([]byte(tc.a), []byte(tc.b)); got != tc.want {
			t.Errorf("EqualText(%s, %s) = %v, want %v", tc.a, tc.b, got, tc.want)
		}
		if got := EqualText([]byte(tc.b), []byte(tc.a)); got != tc.want {
			t.Errorf("EqualText(%s, %s) = %v, want %v (not symmetric)", tc.b, tc.a, got, tc.want)
		}
	}
}

// Equal takes what encoding/json decodes (float64 numbers) and what a
// caller builds (a nil map is the empty object); other Go types equal
// nothing, not even themselves.
func TestEqual(t *testing.T) {
	dec := func(s string) any {
		var v any
		if err := json.Unmarshal([]byte(s), &v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	for _, tc := range []struct {
		name string
		a, b any
		want bool
	}{
		{"decoded objects", dec(`{"a":[1,{"b":null}],"c":"x"}`), dec(`{"c":"x","a":[1.0,{"b":null}]}`), true},
		{"nested differ", dec(`{"a":[1,{"b":null}]}`), dec(`{"a":[1,{"b":false}]}`), false},
		{"nil map is {}", map[string]any(nil), dec(`{}`), true},
		{"nil slice is []", []any(nil), dec(`[]`), true},
		{"number and json.Number", 2.0, json.Number("2.0"), true},
		{"number and string", 2.0, "2", false},
		{"false and null", false, nil, false},
		{"int is not JSON", 1, 1, false},
	} {
		if got := Equal(tc.a, tc.b); got != tc.want {
			t.Errorf("%s: Equal(%#v, %#v) = %v, want %v", tc.name, tc.a, tc.b, got, tc.want)
		}
	}
}

func FuzzEqualText(f *testing.F) {
	for _, s := range []string{`{"a":1}`, `[1,2.0,"x",null,true]`, `1e400`, `-0`, `not json`, `{"a":1,"a":2}`} {
		f.Add(s, s)
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		ab, ba := EqualText([]byte(a), []byte(b)), EqualText([]byte(b), []byte(a))
		if ab != ba {
			t.Errorf("EqualText(%q, %q) = %v but the other way %v", a, b, ab, ba)
		}
		if !EqualText([]byte(a), []byte(a)) {
			t.Errorf("%q differs from itself", a)
		}
	})
}
