package bfcl

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/big"
	"regexp"
	"strings"
)

// BFCL's checker is Python: it compares values as json.loads gives them,
// with Python's types (int, float, str, bool, list, dict, None) and
// Python's ==. Values here are decoded the same way: a number is an int
// when its JSON text has no fraction or exponent (so 10 and 10.0 differ in
// type, as in Python), and equality follows Python (1 == 1.0 == True,
// lists element by element, dicts by key set and values).

// pyInt is a Python int too large for int64.
type pyInt struct{ *big.Int }

// decode reads one JSON value with Python's number types: int64 (or pyInt
// past int64) for integers, float64 for the rest.
func decode(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("trailing data after the JSON value")
	}
	return convertNumbers(v)
}

func convertNumbers(v any) (any, error) {
	switch x := v.(type) {
	case json.Number:
		return number(string(x))
	case []any:
		for i := range x {
			c, err := convertNumbers(x[i])
			if err != nil {
				return nil, err
			}
			x[i] = c
		}
	case map[string]any:
		for k := range x {
			c, err := convertNumbers(x[k])
			if err != nil {
				return nil, err
			}
			x[k] = c
		}
	}
	return v, nil
}

// number is Python's json.loads of a number literal: int unless it has a
// fraction or an exponent.
func number(s string) (any, error) {
	if !strings.ContainsAny(s, ".eE") {
		b, ok := new(big.Int).SetString(s, 10)
		if !ok {
			return nil, fmt.Errorf("bad number %s", s)
		}
		if b.IsInt64() {
			return b.Int64(), nil
		}
		return pyInt{b}, nil
	}
	f, err := json.Number(s).Float64()
	if err != nil && !math.IsInf(f, 0) {
		return nil, fmt.Errorf("bad number %s", s)
	}
	return f, nil // Python gives inf past the float range too
}

// pyType is the Python type name of a decoded value.
func pyType(v any) string {
	switch v.(type) {
	case nil:
		return "NoneType"
	case bool:
		return "bool"
	case int64, pyInt:
		return "int"
	case float64:
		return "float"
	case string:
		return "str"
	case []any:
		return "list"
	case map[string]any:
		return "dict"
	}
	return fmt.Sprintf("%T", v)
}

// numeric gives a bool, int or float as an exact big.Float for Python's
// cross-type numeric ==; ok is false for other types and for NaN.
func numeric(v any) (*big.Float, bool) {
	switch x := v.(type) {
	case bool:
		if x {
			return big.NewFloat(1), true
		}
		return big.NewFloat(0), true
	case int64:
		return new(big.Float).SetInt64(x), true
	case pyInt:
		return new(big.Float).SetInt(x.Int), true
	case float64:
		if math.IsNaN(x) {
			return nil, false
		}
		return big.NewFloat(x), true // ±Inf compare as in Python
	}
	return nil, false
}

// pyEqual is Python's a == b on decoded values.
func pyEqual(a, b any) bool {
	if na, ok := numeric(a); ok {
		nb, ok := numeric(b)
		return ok && na.Cmp(nb) == 0
	}
	switch x := a.(type) {
	case nil:
		return b == nil
	case string:
		y, ok := b.(string)
		return ok && x == y
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !pyEqual(x[i], y[i]) {
				return false
			}
		}
		return true
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, v := range x {
			w, ok := y[k]
			if !ok || !pyEqual(v, w) {
				return false
			}
		}
		return true
	}
	return false
}

// pyIn is Python's v in list.
func pyIn(v any, list []any) bool {
	for _, x := range list {
		if pyEqual(v, x) {
			return true
		}
	}
	return false
}

// pyLen is Python's len() of a list, str or dict, and ok false for the
// types len() refuses (BFCL would stop with a TypeError there).
func pyLen(v any) (int, bool) {
	switch x := v.(type) {
	case []any:
		return len(x), true
	case string:
		return len([]rune(x)), true
	case map[string]any:
		return len(x), true
	}
	return 0, false
}

// pyItems is a list, or a str's characters (as Python iterates one); ok is
// false for anything else.
func pyItems(v any) ([]any, bool) {
	switch x := v.(type) {
	case []any:
		return x, true
	case string:
		out := make([]any, 0, len(x))
		for _, r := range x {
			out = append(out, string(r))
		}
		return out, true
	}
	return nil, false
}

// standardizeRe is the character class standardize_string removes.
var standardizeRe = regexp.MustCompile(`[ ,./\-_*^]`)

// standardize is BFCL's standardize_string: spaces and ",./-_*^" removed,
// lower case, single quotes made double, so "April 1, 2024" matches
// "april 1 2024".
func standardize(s string) string {
	return strings.ReplaceAll(strings.ToLower(standardizeRe.ReplaceAllString(s, "")), "'", `"`)
}

// repr renders a value for an error message, close to Python's repr.
func repr(v any) string {
	switch x := v.(type) {
	case nil:
		return "None"
	case bool:
		if x {
			return "True"
		}
		return "False"
	case string:
		return "'" + strings.ReplaceAll(x, "'", `\'`) + "'"
	case int64:
		return fmt.Sprint(x)
	case pyInt:
		return x.String()
	case float64:
		s := fmt.Sprint(x)
		if !strings.ContainsAny(s, ".eIN") {
			s += ".0"
		}
		return s
	case []any:
		parts := make([]string, len(x))
		for i := range x {
			parts[i] = repr(x[i])
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case map[string]any:
		parts := make([]string, 0, len(x))
		for _, k := range sortedKeys(x) {
			parts = append(parts, repr(k)+": "+repr(x[k]))
		}
		return "{" + strings.Join(parts, ", ") + "}"
	}
	return fmt.Sprint(v)
}
