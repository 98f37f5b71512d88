package agentsnap

import "bench/internal/record/results"

// KeyFor is the snapshot key of a results key: the same seven fields.
func KeyFor(k results.Key) Key {
	return Key{Provider: k.Provider, ProviderType: k.ProviderType, Model: k.Model,
		ThinkingLevel: k.ThinkingLevel, PromptID: k.PromptID, Repetition: k.Repetition, Stage: k.Stage}
}

// FromRecord is the snapshot of a finished cell, built from its
// results.jsonl record alone (bench run and bench compare build it the same
// way, so a compare judges exactly what the files hold):
//
//   - input is the prompt as sent, system prompt included (Input);
//   - output is raw_output (cut at max_output_bytes, as in the record);
//   - tools are the calls in the order the model made them: for an agentic
//     cell, every turn's calls with the result_hash of what bench answered;
//     for a single-turn cell, tool_call_details with the hash of "" since no
//     result went back to the model (tool_calls names with {} args when the
//     details are absent);
//   - error is the failure type and message of a failed cell (both are
//     already cleaned of secrets in the record), null otherwise: a cell that
//     ran but failed its validator has no error;
//   - the fingerprint holds the cell key; the caller adds bench's version
//     and the server's (Env.Fill).
func FromRecord(r *results.Record, input string) *Snapshot {
	s := New(KeyFor(r.Key()))
	s.Input = input
	s.Output = r.RawOutput
	s.Tools = recordTools(r)
	if !r.Success {
		ft, msg := "", ""
		if r.FailureType != nil {
			ft = *r.FailureType
		}
		if r.ErrorMessage != nil {
			msg = *r.ErrorMessage
		}
		s.Error = ErrorString(ft, msg)
	}
	return s
}

// recordTools lists a record's tool calls as snapshot tools.
func recordTools(r *results.Record) []Tool {
	tools := []Tool{}
	if len(r.TurnDetails) > 0 {
		for _, t := range r.TurnDetails {
			for _, c := range t.Calls {
				tools = append(tools, turnTool(c))
			}
		}
		return tools
	}
	if len(r.ToolCallDetails) > 0 {
		for _, c := range r.ToolCallDetails {
			tools = append(tools, NewTool(toolName(c.Name), c.Arguments, ""))
		}
		return tools
	}
	for _, name := range r.ToolCalls {
		tools = append(tools, NewTool(toolName(name), nil, ""))
	}
	return tools
}

// turnTool is one answered call of an agentic turn. The record's
// result_hash is of the whole result (the stored result may be cut), so it
// is kept when well formed; otherwise the stored result is hashed.
func turnTool(c results.TurnCall) Tool {
	t := Tool{Name: toolName(c.Name), Args: ArgsObject(c.Arguments), ResultHash: c.ResultHash}
	if !validHash(t.ResultHash) {
		t.ResultHash = ResultHash(c.Result)
	}
	return t
}

// ValidResultHash reports whether h is a result hash as snapshots hold
// them: "sha256:" and 64 lower-case hex digits.
func ValidResultHash(h string) bool { return validHash(h) }

// toolName keeps a call without a name visible: a snapshot tool needs one.
func toolName(name string) string {
	if name == "" {
		return "(unnamed)"
	}
	return name
}

// Env is the setup a run's snapshots record in their fingerprints beyond
// the cell key.
type Env struct {
	// Bench is bench's version.
	Bench string
	// Servers maps a provider name (the config entry's name) to what its
	// probe reported.
	Servers map[string]Server
}

// Server is what one provider's probe said of its server or CLI.
type Server struct {
	// Version is the server's version, or the CLI's for a CLI provider.
	Version string
	// Digests maps a model name as configured to the digest the server
	// reports for it.
	Digests map[string]string
}

// Fill sets s's fingerprint fields that come from the setup.
func (e Env) Fill(s *Snapshot) {
	s.Fingerprint.Bench = e.Bench
	srv, ok := e.Servers[s.Fingerprint.Provider]
	if !ok {
		return
	}
	s.Fingerprint.ServerVersion = srv.Version
	s.Fingerprint.ModelDigest = srv.Digests[s.Model]
}
