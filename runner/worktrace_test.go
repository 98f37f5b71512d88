package runner

import (
	"bytes"
	"encoding/json"
	"os"
	"sync"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"bench/forsy"
)

// The upstream Forsy JSON Schema is the forsy package's copy of it (with
// its licence, in forsy/testdata), registered under its own $id so nothing
// is fetched.
const forsySchemaPath = "../forsy/testdata/forsy_trace_schema_v0_1.json"
const forsySchemaURL = "https://forsy.ai/schemas/forsy_trace_schema_v0_1.json"

var (
	schemaOnce sync.Once
	schema     *jsonschema.Schema
	schemaErr  error
)

func forsySchema(t testing.TB) *jsonschema.Schema {
	t.Helper()
	schemaOnce.Do(func() {
		f, err := os.Open(forsySchemaPath)
		if err != nil {
			schemaErr = err
			return
		}
		defer f.Close()
		doc, err := jsonschema.UnmarshalJSON(f)
		if err != nil {
			schemaErr = err
			return
		}
		c := jsonschema.NewCompiler()
		if err := c.AddResource(forsySchemaURL, doc); err != nil {
			schemaErr = err
			return
		}
		schema, schemaErr = c.Compile(forsySchemaURL)
	})
	if schemaErr != nil {
		t.Fatalf("upstream Forsy schema: %v", schemaErr)
	}
	return schema
}

// requireTrace checks a written trace against the upstream schema and
// every invariant forsy checks, and decodes it.
func requireTrace(t testing.TB, data []byte) *forsy.Trace {
	t.Helper()
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("trace is not JSON: %v", err)
	}
	if err := forsySchema(t).Validate(inst); err != nil {
		t.Fatalf("upstream schema: %v", err)
	}
	if err := forsy.ValidateJSON(data); err != nil {
		t.Fatalf("forsy invariants: %v", err)
	}
	var tr forsy.Trace
	if err := json.Unmarshal(data, &tr); err != nil {
		t.Fatal(err)
	}
	if err := forsy.Validate(&tr); err != nil {
		t.Fatalf("forsy.Validate: %v", err)
	}
	return &tr
}
