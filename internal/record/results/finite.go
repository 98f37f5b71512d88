package results

import (
	"encoding/json"
	"errors"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
)

// NonFiniteKey is the provider_metrics key that lists the fields a record
// had no JSON for (see dropNonFinite).
const NonFiniteKey = "non_finite_dropped"

// dropNonFinite makes a record that encoding/json refuses (a NaN or an
// infinity in a float: JSON has no such number) encodable: each such value
// becomes null where it can be (a pointer, a map's value) and 0 where it
// cannot, and its place is listed under provider_metrics'
// NonFiniteKey. It is the writer's last resort, on the error path only:
// the sums that could make one (costs, token counts) are safe from
// overflow (package pricing), but a record that cannot be written would
// stop the run, and a --resume would stop at the same cell every time.
func dropNonFinite(r *Record) []string {
	var dropped []string
	walkFloats(reflect.ValueOf(r).Elem(), "", &dropped)
	if len(dropped) > 0 {
		if r.ProviderMetrics == nil {
			r.ProviderMetrics = map[string]any{}
		}
		r.ProviderMetrics[NonFiniteKey] = dropped
	}
	return dropped
}

func nonFinite(f float64) bool { return math.IsNaN(f) || math.IsInf(f, 0) }

// walkFloats clears the non-finite floats under v (addressable), naming
// each by its JSON path.
func walkFloats(v reflect.Value, path string, dropped *[]string) {
	switch v.Kind() {
	case reflect.Float32, reflect.Float64:
		if nonFinite(v.Float()) {
			v.SetFloat(0)
			*dropped = append(*dropped, path)
		}
	case reflect.Pointer:
		if v.IsNil() {
			return
		}
		if e := v.Elem(); (e.Kind() == reflect.Float64 || e.Kind() == reflect.Float32) && nonFinite(e.Float()) {
			v.SetZero()
			*dropped = append(*dropped, path)
			return
		}
		walkFloats(v.Elem(), path, dropped)
	case reflect.Struct:
		t := v.Type()
		for i := range t.NumField() {
			f := t.Field(i)
			if !f.IsExported() {
				continue
			}
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "-" {
				continue
			}
			if name == "" {
				name = f.Name
			}
			walkFloats(v.Field(i), join(path, name), dropped)
		}
	case reflect.Slice, reflect.Array:
		for i := range v.Len() {
			walkFloats(v.Index(i), path+"["+strconv.Itoa(i)+"]", dropped)
		}
	case reflect.Map:
		if v.Type().Key().Kind() != reflect.String {
			return
		}
		keys := v.MapKeys()
		slices.SortFunc(keys, func(a, b reflect.Value) int { return strings.Compare(a.String(), b.String()) })
		for _, k := range keys {
			// A map's values are not addressable: a copy is cleaned and
			// put back.
			e := reflect.New(v.Type().Elem()).Elem()
			e.Set(v.MapIndex(k))
			n := len(*dropped)
			walkFloats(e, join(path, k.String()), dropped)
			if len(*dropped) > n {
				v.SetMapIndex(k, e)
			}
		}
	case reflect.Interface:
		if v.IsNil() {
			return
		}
		inner := v.Elem()
		if (inner.Kind() == reflect.Float64 || inner.Kind() == reflect.Float32) && nonFinite(inner.Float()) {
			v.SetZero() // null
			*dropped = append(*dropped, path)
			return
		}
		// A copy that can be set, cleaned and put back.
		c := reflect.New(inner.Type()).Elem()
		c.Set(inner)
		n := len(*dropped)
		walkFloats(c, path, dropped)
		if len(*dropped) > n {
			v.Set(c)
		}
	}
}

func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

// unsupported says err is encoding/json's refusal of a value.
func unsupported(err error) bool {
	var uv *json.UnsupportedValueError
	return errors.As(err, &uv)
}
