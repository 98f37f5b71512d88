package results_test

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"bench/internal/record/results"
	"bench/internal/record/secrets"
)

// scrubKey is a made-up key; escaped is the same key as JSON \u escapes,
// which any JSON parser turns back into the key.
const scrubKey = "sk-test-" + "Qw3rTy7UiOp9AsDfGhJkL"

func escaped(s string) string {
	var b strings.Builder
	for _, r := range s {
		fmt.Fprintf(&b, `\u%04x`, r)
	}
	return b.String()
}

// identity are the record's coordinates, which Scrub leaves as they are
// (see Record.Scrub).
var identity = map[string]bool{"record_type": true, "run_id": true, "provider": true, "provider_type": true,
	"model": true, "thinking_level": true, "prompt_id": true, "stage": true}

// fill sets every string the value can hold, by reflection, to text that
// carries the key in the ways a server can send it: as it is, split by
// nothing, and \u-escaped inside JSON. A field of a kind fill does not know
// fails the test, so a new kind of field is noticed too.
func fill(t *testing.T, v reflect.Value, path string) {
	switch v.Kind() {
	case reflect.String:
		v.SetString("said: " + scrubKey + " and " + escaped(scrubKey))
	case reflect.Pointer:
		switch v.Type().Elem().Kind() {
		case reflect.String, reflect.Struct:
			v.Set(reflect.New(v.Type().Elem()))
			fill(t, v.Elem(), path)
		}
	case reflect.Struct:
		for i := range v.NumField() {
			f := v.Type().Field(i)
			if f.IsExported() {
				fill(t, v.Field(i), path+"."+jsonName(f))
			}
		}
	case reflect.Slice:
		if v.Type() == reflect.TypeFor[json.RawMessage]() {
			v.SetBytes([]byte(`{"q":"` + escaped(scrubKey) + `","` + escaped(scrubKey) + `":["x ` + scrubKey + `"],"n":{"deep":"` + escaped("tail "+scrubKey) + `"},"num":1.50}`))
			return
		}
		v.Set(reflect.MakeSlice(v.Type(), 1, 1))
		fill(t, v.Index(0), path+"[0]")
	case reflect.Map:
		if v.Type() != reflect.TypeFor[map[string]any]() {
			t.Fatalf("%s: a map of %s: teach fill and Record.Scrub about it", path, v.Type())
		}
		v.Set(reflect.ValueOf(map[string]any{
			"text":        "said " + scrubKey,
			scrubKey:      1,
			"list":        []string{scrubKey},
			"nested":      map[string]any{"k": []any{"x" + scrubKey}},
			"raw":         json.RawMessage(`"` + escaped(scrubKey) + `"`),
			"typed":       struct{ S string }{scrubKey},
			"count":       3,
			"record_shed": []string{"reasoning"},
		}))
	case reflect.Interface:
		v.Set(reflect.ValueOf("said " + scrubKey))
	case reflect.Bool, reflect.Int, reflect.Int64, reflect.Float64:
	default:
		t.Fatalf("%s: a field of kind %s: teach fill and Record.Scrub about it", path, v.Kind())
	}
}

func jsonName(f reflect.StructField) string {
	name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
	if name == "" {
		return f.Name
	}
	return name
}

// holdsKey says whether s holds an 8-byte piece of the key, as it is or
// once its JSON escapes are read.
func holdsKey(s string) bool {
	var un string
	if json.Unmarshal([]byte(`"`+strings.ReplaceAll(s, `"`, `\"`)+`"`), &un) != nil {
		un = s
	}
	for _, text := range []string{s, un} {
		for i := 0; i+8 <= len(scrubKey); i++ {
			if strings.Contains(text, scrubKey[i:i+8]) {
				return true
			}
		}
	}
	return false
}

// walk calls fn with every string (and object key) of a decoded JSON
// value, with its path.
func walk(v any, path string, fn func(path, s string)) {
	switch x := v.(type) {
	case string:
		fn(path, x)
	case []any:
		for i, e := range x {
			walk(e, fmt.Sprintf("%s[%d]", path, i), fn)
		}
	case map[string]any:
		for k, e := range x {
			fn(path+" (key)", k)
			walk(e, path+"."+k, fn)
		}
	}
}

// TestScrubCoversRecord fills every string a record can hold with the key
// (by reflection, so a field added later is filled too), scrubs it with
// the real secrets, writes it as results.jsonl would and reads it back as
// any JSON parser would: no string, object key or raw JSON value may keep
// a piece of the key, as it is or \u-escaped, except the coordinates.
func TestScrubCoversRecord(t *testing.T) {
	var rec results.Record
	fill(t, reflect.ValueOf(&rec).Elem(), "")
	rec.Scrub(secrets.New(scrubKey))
	line, err := json.Marshal(&rec)
	if err != nil {
		t.Fatalf("the scrubbed record does not encode: %v", err)
	}
	var back map[string]any
	if err := json.Unmarshal(line, &back); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for field, v := range back {
		seen[field] = true
		walk(v, field, func(path, s string) {
			switch {
			case identity[field]:
				if !strings.Contains(s, scrubKey) {
					t.Errorf("%s is a coordinate Scrub should leave alone, got %q", path, s)
				}
			case holdsKey(s):
				t.Errorf("%s keeps the key after Scrub: %q", path, s)
			}
		})
	}
	for name := range identity {
		if !seen[name] {
			t.Errorf("%s: no such field in the record; update identity and Record.Scrub", name)
		}
	}
	// Scrubbing is not erasing: what was not the key is kept.
	if !strings.Contains(rec.RawOutput, "said: [redacted] and [redacted]") {
		t.Errorf("raw_output = %q", rec.RawOutput)
	}
	var args map[string]any
	if err := json.Unmarshal(rec.ToolCallDetails[0].Arguments, &args); err != nil || args["num"] == nil {
		t.Errorf("arguments no longer JSON with their other values: %s (%v)", rec.ToolCallDetails[0].Arguments, err)
	}
}

// A string that holds nothing to clean is kept as it is: same bytes for
// raw JSON (arguments stay as the model sent them).
func TestScrubKeepsCleanRecord(t *testing.T) {
	args := json.RawMessage(`{ "unit" : "MB",  "n": 1e3 }`)
	rec := results.Record{RawOutput: "fine", FinishReason: "stop",
		ToolCallDetails: []results.ToolCall{{Name: "f", Arguments: args, Source: results.SourceNative}},
		ProviderMetrics: map[string]any{"status": "completed", "n": 3}}
	rec.Scrub(secrets.New(scrubKey))
	if got := string(rec.ToolCallDetails[0].Arguments); got != string(args) {
		t.Errorf("arguments re-encoded without need: %s", got)
	}
	if rec.RawOutput != "fine" || rec.FinishReason != "stop" || rec.ProviderMetrics["status"] != "completed" {
		t.Errorf("changed: %+v", rec)
	}
}
