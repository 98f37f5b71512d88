package secrets

import "encoding/json"

// Value cleans a decoded JSON value (or a provider_metrics value):
// strings and object keys through c.Text, raw JSON through c.JSON, maps and
// slices element by element (in place where they can be). Numbers,
// booleans and nil are returned as they are; a value of any other type is
// cleaned as its JSON encoding, decoded back.
func (c Set) Value(v any) any {
	switch x := v.(type) {
	case nil, bool, json.Number, float64, float32, int, int64, int32, uint, uint64, uint32,
		[]int, []int64, []float64, []bool:
		return v
	case string:
		return c.Text(x)
	case []string:
		for i, s := range x {
			x[i] = c.Text(s)
		}
		return x
	case json.RawMessage:
		if len(x) == 0 {
			return x
		}
		return c.JSON(x)
	case []any:
		for i := range x {
			x[i] = c.Value(x[i])
		}
		return x
	case map[string]any:
		for k, e := range x {
			if ck := c.Text(k); ck != k {
				delete(x, k)
				k = ck
			}
			x[k] = c.Value(e)
		}
		return x
	case map[string]string:
		for k, e := range x {
			if ck := c.Text(k); ck != k {
				delete(x, k)
				k = ck
			}
			x[k] = c.Text(e)
		}
		return x
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	var out any
	if json.Unmarshal(c.JSON(b), &out) != nil {
		return nil
	}
	return out
}
