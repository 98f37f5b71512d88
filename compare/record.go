package compare

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"hash/maphash"

	fastjson "github.com/segmentio/encoding/json"

	"bench/agentsnap"
	"bench/results"
)

// SchemaVersion is the results schema compare reads: the fields of
// results.Record with record_type "result" and the full cell key. Lines do
// not carry a version today; a line that declares a schema_version other
// than this one is refused, and so is a line without provider_type or
// prompt_id (written by a bench from before the full cell key), since its
// cells could not be matched.
const SchemaVersion = 1

// digest is a 128-bit hash, equal for two cells whose snapshots are equal
// (the converse does not hold: a digest that differs sends the cell to the
// full snapshot diff, which decides).
type digest [2]uint64

// seeds hash both runs of one comparison the same way.
var seeds = [2]maphash.Seed{maphash.MakeSeed(), maphash.MakeSeed()}

// hashed is a JSON value kept only as the digest of its text: decoding it
// costs no copy and no allocation.
type hashed struct {
	set bool
	sum digest
}

// UnmarshalJSON hashes the value's JSON text.
func (h *hashed) UnmarshalJSON(data []byte) error {
	h.set = true
	h.sum = digest{maphash.Bytes(seeds[0], data), maphash.Bytes(seeds[1], data)}
	return nil
}

// leanRecord is the part of a results line that a first pass needs: the
// cell key and outcome, the latencies, and hashes of what the cell's
// snapshot holds. Everything else of the line (timeline, reasoning,
// provider metrics, turn texts) is read past.
type leanRecord struct {
	RecordType         string          `json:"record_type"`
	RunID              string          `json:"run_id"`
	Provider           string          `json:"provider"`
	ProviderType       string          `json:"provider_type"`
	Model              string          `json:"model"`
	ThinkingLevel      *string         `json:"thinking_level"`
	PromptID           string          `json:"prompt_id"`
	Repetition         *int            `json:"repetition"`
	AvailabilityStatus string          `json:"availability_status"`
	Success            bool            `json:"success"`
	FailureType        *string         `json:"failure_type"`
	ErrorMessage       hashed          `json:"error_message"`
	ObjectivePass      *bool           `json:"objective_pass"`
	Violation          *string         `json:"violation"`
	ToolUseSuccess     *bool           `json:"tool_use_success"`
	ToolCalls          []string        `json:"tool_calls"`
	ExpectedTools      []string        `json:"expected_tools"`
	RawOutput          hashed          `json:"raw_output"`
	ToolCallDetails    []leanCall      `json:"tool_call_details"`
	TurnDetails        []leanTurn      `json:"turn_details"`
	TTFTMS             *float64        `json:"ttft_ms"`
	E2EMS              *float64        `json:"e2e_ms"`
	TokensPerS         *float64        `json:"tokens_per_s"`
	ColdStart          *bool           `json:"cold_start"`
	SchemaVersion      json.RawMessage `json:"schema_version"`
}

type leanCall struct {
	Name      string `json:"name"`
	Arguments hashed `json:"arguments"`
}

type leanTurn struct {
	Calls []leanTurnCall `json:"calls"`
}

type leanTurnCall struct {
	Name       string `json:"name"`
	Arguments  hashed `json:"arguments"`
	ResultHash string `json:"result_hash"`
	Result     hashed `json:"result"`
}

// decodeLean parses one line and checks it is a results record of the
// schema compare reads.
func decodeLean(data []byte, r *leanRecord) error {
	if err := fastjson.Unmarshal(data, r); err != nil {
		return describe(data, err)
	}
	return checkSchema(r.RecordType, r.SchemaVersion, map[string]bool{
		"provider": r.Provider != "", "provider_type": r.ProviderType != "", "model": r.Model != "",
		"prompt_id": r.PromptID != "", "repetition": r.Repetition != nil, "availability_status": r.AvailabilityStatus != "",
	})
}

// keyFields are the fields every line must have, in the order errors name
// them.
var keyFields = []string{"provider", "provider_type", "model", "prompt_id", "repetition", "availability_status"}

func checkSchema(recordType string, version json.RawMessage, present map[string]bool) error {
	if recordType != results.RecordType {
		return fmt.Errorf("record_type is %q, want %q", recordType, results.RecordType)
	}
	if v := bytes.TrimSpace(version); len(v) > 0 && string(v) != "null" && string(v) != fmt.Sprint(SchemaVersion) {
		return fmt.Errorf("schema_version is %s; this bench compares results schema %d only", v, SchemaVersion)
	}
	for _, f := range keyFields {
		if !present[f] {
			if f == "provider_type" || f == "prompt_id" {
				return fmt.Errorf("no %s: written by a bench older than results schema %d, whose cells cannot be matched on the full key", f, SchemaVersion)
			}
			return fmt.Errorf("%s is missing or empty", f)
		}
	}
	return nil
}

// describe words a line that did not decode. The fast decoder's errors
// name Go types; the standard decoder, run again on this rare path, says
// where and what: a syntax error's column, a field of the wrong type.
func describe(data []byte, fastErr error) error {
	var probe leanRecord
	err := json.Unmarshal(data, &probe)
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		if se.Offset >= int64(len(bytes.TrimRight(data, " \t\r"))) {
			return errors.New("not a results record: the JSON ends too early")
		}
		return fmt.Errorf("not a results record: column %d: %v", se.Offset, se)
	case errors.As(err, &te) && te.Field != "":
		return fmt.Errorf("field %s: a JSON %s, want %s", te.Field, te.Value, jsonType(te.Type.Kind().String()))
	case err != nil:
		return fmt.Errorf("not a results record: %v", err)
	}
	return fmt.Errorf("not a results record: %v", fastErr)
}

func jsonType(kind string) string {
	switch kind {
	case "string":
		return "a string"
	case "bool":
		return "true or false"
	case "slice", "array":
		return "an array"
	case "struct", "map":
		return "an object"
	case "ptr":
		return "a value or null"
	}
	return "a number"
}

// key is the record's cell key.
func (r *leanRecord) key() results.Key {
	k := results.Key{Provider: r.Provider, ProviderType: r.ProviderType, Model: r.Model, PromptID: r.PromptID, Repetition: *r.Repetition}
	if r.ThinkingLevel != nil {
		k.ThinkingLevel = *r.ThinkingLevel
	}
	return k
}

// snapshotDigest hashes everything of the record that FromRecord puts in
// the cell's snapshot apart from the key and the input (compared through
// the prompt set): output, tools, error. ok is false when the record holds
// something the digest cannot vouch for (a malformed result hash), so the
// cell always gets the full diff.
func (r *leanRecord) snapshotDigest() (digest, bool) {
	var h [2]maphash.Hash
	h[0].SetSeed(seeds[0])
	h[1].SetSeed(seeds[1])
	ok := true
	put := func(parts ...any) {
		for _, p := range parts {
			for i := range h {
				switch v := p.(type) {
				case string:
					maphash.WriteComparable(&h[i], len(v))
					h[i].WriteString(v)
				case hashed:
					maphash.WriteComparable(&h[i], v)
				case bool:
					maphash.WriteComparable(&h[i], v)
				case int:
					maphash.WriteComparable(&h[i], v)
				}
			}
		}
	}
	put(r.RawOutput, r.Success)
	if !r.Success {
		put(deref(r.FailureType), r.ErrorMessage)
	}
	switch {
	case len(r.TurnDetails) > 0:
		put("turns")
		for _, t := range r.TurnDetails {
			for _, c := range t.Calls {
				put(c.Name, c.Arguments, c.ResultHash)
				ok = ok && agentsnap.ValidResultHash(c.ResultHash)
			}
		}
	case len(r.ToolCallDetails) > 0:
		put("details")
		for _, c := range r.ToolCallDetails {
			put(c.Name, c.Arguments)
		}
	default:
		put("names", len(r.ToolCalls))
		for _, n := range r.ToolCalls {
			put(n)
		}
	}
	return digest{h[0].Sum64(), h[1].Sum64()}, ok
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// snapRecord is a line decoded for the second pass: the record as
// results.Record holds it, for agentsnap.FromRecord, without the fields a
// snapshot does not hold (the outer fields shadow the embedded ones of
// the same JSON name, and are read past).
type snapRecord struct {
	results.Record
	Timeline        skipped `json:"timeline"`
	ProviderMetrics skipped `json:"provider_metrics"`
	ParsedOutput    skipped `json:"parsed_output"`
	Reasoning       skipped `json:"reasoning"`
}

// skipped is a JSON value read past and dropped.
type skipped struct{}

// UnmarshalJSON drops the value.
func (*skipped) UnmarshalJSON([]byte) error { return nil }

// fullRecord decodes a line for the second pass.
func fullRecord(data []byte, r *snapRecord) error {
	if err := fastjson.Unmarshal(data, r); err != nil {
		return describe(data, err)
	}
	if r.RecordType != results.RecordType {
		return errors.New("record_type changed between two reads: the file is being written")
	}
	return nil
}
