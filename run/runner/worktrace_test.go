package runner

import (
	"bytes"
	"encoding/json"
	"os"
	"sync"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"bench/internal/record/forsy"
	"bench/internal/record/results"
)

// The upstream Forsy JSON Schema is the forsy package's copy of it (with
// its licence, in forsy/testdata), registered under its own $id so nothing
// is fetched.
const forsySchemaPath = "../../internal/record/forsy/testdata/forsy_trace_schema_v0_1.json"
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
	return &tr
}

// A work trace asks the record's kind how it carries calls and whether its
// agent owns the loop (so the model saw bench's MCP names): the runner
// names no kind. A provider_type this bench does not know (a record of
// another version) gets no protocol and the plain names.
func TestWorkTraceCellAsksTheKind(t *testing.T) {
	p := &loadTask(t, weatherTask)[0]
	for _, cs := range []struct {
		typ, protocol, tool string
	}{
		{"ollama", "Ollama /api/chat tool_calls and tool messages", "get_weather"},
		{"ollama_openai", "OpenAI chat completions tool_calls and tool messages (tool_call_id)", "get_weather"},
		{"openai_responses", "OpenAI Responses function_call and function_call_output items", "get_weather"},
		{"claude_code_cli", "MCP over stdio: Claude Code's own loop calls bench's server", "mcp__bench__get_weather"},
		{"a_kind_from_the_future", "", "get_weather"},
	} {
		r := &results.Record{RunID: "r", Provider: "p", ProviderType: cs.typ, Model: "m", PromptID: p.ID, Success: true,
			StartedAtMS: 1_771_000_000_000, EndedAtMS: 1_771_000_000_500,
			TurnDetails: []results.Turn{
				{StartMS: 1, EndMS: 2, Calls: []results.TurnCall{{ID: "c1", Name: "get_weather", Arguments: json.RawMessage(`{"city":"Paris"}`), Result: "18 C", Rule: 0}}},
				{StartMS: 3, EndMS: 4, Text: "18 C in Paris"},
			}}
		cell := WorkTraceCell(r, p, "test")
		if cell.Task.Protocol != cs.protocol {
			t.Errorf("%s: protocol %q, want %q", cs.typ, cell.Task.Protocol, cs.protocol)
		}
		if got := cell.Task.Tools[0].Name; got != cs.tool {
			t.Errorf("%s: tool offered as %q, want %q", cs.typ, got, cs.tool)
		}
		if got := cell.Turns[0].Calls[0]; got.Name != cs.tool || got.Unknown {
			t.Errorf("%s: call named %q (unknown %v), want %q", cs.typ, got.Name, got.Unknown, cs.tool)
		}
	}
}
