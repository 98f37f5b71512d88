// Package jsonvalue is bench's one JSON equality: whether two JSON values
// are the same value, whatever their text. The scripted tools' argument
// matches, the validators' enums and the agent snapshots' diff all ask it,
// so a call that matches its script never shows as changed in a snapshot
// diff for a reason the match ignored.
//
// It is written here rather than taken from a library because the
// rule is JavaScript's (agentsnap's reference implementation is): numbers
// are IEEE doubles compared by value (1, 1.0 and 1e0 are one number; -0 is
// 0; 2^53+1 is 2^53; a number too large for a double is null, as
// JSON.stringify writes Infinity), object keys are unordered and the last
// of a repeated key wins, as JSON.parse keeps it. reflect.DeepEqual gets
// none of the number rules and tells an empty object from a nil map.
//
// Layer: internal helpers (imports no bench package).
package jsonvalue

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"strconv"
)

// Equal reports whether two decoded JSON values (what encoding/json
// decodes into an any: map[string]any, []any, float64 or json.Number,
// string, bool, nil) are the same value: objects with the same keys and
// equal values, arrays equal in order, numbers equal by value. A value of
// any other Go type equals nothing.
func Equal(a, b any) bool {
	a, b = number(a), number(b)
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, xv := range x {
			yv, ok := y[k]
			if !ok || !Equal(xv, yv) {
				return false
			}
		}
		return true
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !Equal(x[i], y[i]) {
				return false
			}
		}
		return true
	case float64:
		y, ok := b.(float64)
		return ok && x == y
	case string:
		y, ok := b.(string)
		return ok && x == y
	case bool:
		y, ok := b.(bool)
		return ok && x == y
	case nil:
		return b == nil
	}
	return false
}

// EqualText reports whether two JSON texts hold the same value (see
// Equal): key order, white space and number spelling do not matter. Text
// that is not one JSON value is compared byte for byte, white space
// around it aside.
func EqualText(a, b []byte) bool {
	if bytes.Equal(a, b) {
		return true // the common case, and equal text is always an equal value
	}
	va, errA := decode(a)
	vb, errB := decode(b)
	if errA != nil || errB != nil {
		return bytes.Equal(bytes.TrimSpace(a), bytes.TrimSpace(b))
	}
	return Equal(va, vb)
}

// decode reads one JSON value with its numbers as written, so number can
// apply JavaScript's rule rather than encoding/json's (which refuses a
// number too large for a double).
func decode(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if len(bytes.TrimSpace(data[dec.InputOffset():])) > 0 {
		return nil, errTrailing
	}
	return v, nil
}

// errTrailing is text after the value: not one JSON value, as JSON.parse
// would refuse it.
var errTrailing = errors.New("text after the JSON value")

// number turns a json.Number into the double JavaScript reads (nil when
// it overflows, as JSON.stringify writes ±Infinity as null); other values
// pass through.
func number(v any) any {
	n, ok := v.(json.Number)
	if !ok {
		return v
	}
	// The decoder checked the syntax: the only error left is range, ±Inf
	// for an overflow and 0 for an underflow, as JavaScript reads them.
	f, _ := strconv.ParseFloat(string(n), 64)
	if math.IsInf(f, 0) {
		return nil
	}
	return f
}
