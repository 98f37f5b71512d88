package agentsnap

import (
	"bytes"
	"encoding/json"
	"slices"
	"strconv"

	"bench/internal/jsonvalue"
)

// Bench's snapshot statuses, the words of bench compare's cell verdicts.
const (
	StatusMatch      = "match"
	StatusDrift      = "drift"
	StatusRegression = "regression"
)

// agentsnap's own statuses (src/diff.js of agentsnap 0.1.2).
const (
	AgentsnapPassed         = "PASSED"
	AgentsnapOutputDrift    = "OUTPUT_DRIFT"
	AgentsnapToolsReordered = "TOOLS_REORDERED"
	AgentsnapToolsChanged   = "TOOLS_CHANGED"
	AgentsnapRegression     = "REGRESSION"
)

// Change is one difference, as agentsnap reports it: a path such as
// "output", "error", "tools[].name", "tools[].order", "tools[2].args" or
// "tools[0].result_hash", and the JSON values before and after.
type Change struct {
	Path string          `json:"path"`
	From json.RawMessage `json:"from"`
	To   json.RawMessage `json:"to"`
}

// Result is the diff of two snapshots.
type Result struct {
	// Status is match, drift or regression (see Diff).
	Status string `json:"status"`
	// Agentsnap is the status `agentsnap diff` reports for the same pair.
	Agentsnap string `json:"agentsnap"`
	// Changes are the changes agentsnap reports, in its order: only those of
	// the first rule that fired.
	Changes []Change `json:"changes"`
	// Ignored are differences agentsnap's rules never judge, listed so a
	// caller can: input, version, and an error that changed its text or
	// went away. They never change Status.
	Ignored []Change `json:"ignored,omitempty"`
}

// Diff compares a baseline snapshot with a current one by the rules of
// agentsnap's diff() (src/diff.js, which `agentsnap diff` runs), the first
// rule that fires deciding:
//
//  1. Equal apart from the fingerprint: PASSED, no changes.
//  2. The current run has an error and the baseline had none (null or ""):
//     REGRESSION, change "error" from null to the new error.
//  3. The multiset of tool names differs: TOOLS_CHANGED, change
//     "tools[].name" from the baseline's names to the current ones.
//  4. Same names in another order: TOOLS_REORDERED, change "tools[].order".
//  5. Some call's args differ (compared as JSON values, key order and number
//     spelling ignored): TOOLS_CHANGED, one change "tools[i].args" per call.
//  6. Some result_hash, the output or the model differs: OUTPUT_DRIFT, with
//     one change per difference in that order.
//  7. Otherwise PASSED with no changes, even though rule 1 did not hold:
//     agentsnap does not judge input, version, a changed error text or an
//     error that went away (Result.Ignored lists them).
//
// Status maps agentsnap's statuses to bench's words by agentsnap's own
// default failOn (expectSnapshot fails on TOOLS_CHANGED, TOOLS_REORDERED and
// REGRESSION): PASSED is match, OUTPUT_DRIFT is drift, the three failing
// ones are regression.
//
// Where this differs from agentsnap on purpose or by necessity: agentsnap's
// rule for a tool that errored (tools[i].error) has no counterpart, since a
// bench snapshot records no per-tool errors; a JSON string holding an
// unpaired surrogate escape (\ud800) is compared after Go's decoding, which
// replaces it with U+FFFD; and an args key "__proto__" is compared as an
// ordinary key (agentsnap's key sort drops it). Snapshots bench writes hold
// none of these.
func Diff(base, cur *Snapshot) Result {
	kind, changes := agentsnapDiff(base, cur)
	if changes == nil {
		changes = []Change{}
	}
	return Result{Status: statusOf(kind), Agentsnap: kind, Changes: changes, Ignored: ignored(base, cur)}
}

func statusOf(kind string) string {
	switch kind {
	case AgentsnapPassed:
		return StatusMatch
	case AgentsnapOutputDrift:
		return StatusDrift
	}
	return StatusRegression
}

// agentsnapDiff is rules 2 to 7 of Diff; rule 1 needs no code, since two
// snapshots equal apart from the fingerprint fall through to rule 7.
func agentsnapDiff(base, cur *Snapshot) (string, []Change) {
	if !hasError(base) && hasError(cur) {
		return AgentsnapRegression, []Change{{Path: "error", From: jsonNull, To: JSONValue(*cur.Error)}}
	}

	baseNames, curNames := names(base.Tools), names(cur.Tools)
	if !sameMultiset(baseNames, curNames) {
		return AgentsnapToolsChanged, []Change{{Path: "tools[].name", From: JSONValue(baseNames), To: JSONValue(curNames)}}
	}
	if !slices.Equal(baseNames, curNames) {
		return AgentsnapToolsReordered, []Change{{Path: "tools[].order", From: JSONValue(baseNames), To: JSONValue(curNames)}}
	}

	var changes []Change
	for i := range base.Tools {
		b, c := base.Tools[i], cur.Tools[i]
		if !jsonvalue.EqualText(b.Args, c.Args) {
			changes = append(changes, Change{Path: "tools[" + strconv.Itoa(i) + "].args", From: OrNull(b.Args), To: OrNull(c.Args)})
		}
	}
	if len(changes) > 0 {
		return AgentsnapToolsChanged, changes
	}

	for i := range base.Tools {
		b, c := base.Tools[i], cur.Tools[i]
		if b.ResultHash != c.ResultHash {
			changes = append(changes, Change{Path: "tools[" + strconv.Itoa(i) + "].result_hash", From: JSONValue(b.ResultHash), To: JSONValue(c.ResultHash)})
		}
	}
	if base.Output != cur.Output {
		changes = append(changes, Change{Path: "output", From: JSONValue(base.Output), To: JSONValue(cur.Output)})
	}
	if base.Model != cur.Model {
		changes = append(changes, Change{Path: "model", From: JSONValue(base.Model), To: JSONValue(cur.Model)})
	}
	if len(changes) > 0 {
		return AgentsnapOutputDrift, changes
	}
	return AgentsnapPassed, nil
}

// ignored lists the differences agentsnap's rules do not judge.
func ignored(base, cur *Snapshot) []Change {
	var out []Change
	if base.Version != cur.Version {
		out = append(out, Change{Path: "version", From: JSONValue(base.Version), To: JSONValue(cur.Version)})
	}
	if base.Input != cur.Input {
		out = append(out, Change{Path: "input", From: JSONValue(base.Input), To: JSONValue(cur.Input)})
	}
	if hasError(base) && errorText(base) != errorText(cur) {
		out = append(out, Change{Path: "error", From: errorJSON(base), To: errorJSON(cur)})
	}
	return out
}

var jsonNull = json.RawMessage("null")

// hasError is JavaScript's truthiness of the error field: null and "" are
// no error.
func hasError(s *Snapshot) bool { return s.Error != nil && *s.Error != "" }

func errorText(s *Snapshot) string {
	if s.Error == nil {
		return ""
	}
	return *s.Error
}

func errorJSON(s *Snapshot) json.RawMessage {
	if s.Error == nil {
		return jsonNull
	}
	return JSONValue(*s.Error)
}

func names(tools []Tool) []string {
	out := make([]string, len(tools))
	for i, t := range tools {
		out[i] = t.Name
	}
	return out
}

func sameMultiset(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

// JSONValue encodes a value for a Change (null when it cannot be
// encoded), without HTML escaping so an output with <tags> stays readable.
func JSONValue(v any) json.RawMessage {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if enc.Encode(v) != nil {
		return jsonNull
	}
	return bytes.TrimRight(buf.Bytes(), "\n")
}

// OrNull is r, or null when r is empty: a Change's side that had no value.
func OrNull(r json.RawMessage) json.RawMessage {
	if len(bytes.TrimSpace(r)) == 0 {
		return jsonNull
	}
	return r
}
