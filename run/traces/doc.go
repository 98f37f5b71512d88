// Package traces writes a bench run as one execution trace: a span tree in
// NDJSON in the run directory (the execution-trace spec's Span lines, file
// traces/{timestamp}_bench-run_{trace-id}.jsonl) and, when configured, the
// same tree over OTLP: each span encoded straight from its record, as OTLP
// protobuf (otlpenc.go) sent in batches through the OTLP exporters' own
// clients (grpc, http/protobuf), or as OTLP/JSON (jsonenc.go) posted by
// bench's own client (http/json).
//
// The tree (spec kind, OTLP kind):
//
//	bench-run                      skill.execute, internal   the run: sop.level L2, bench.run.id, bench.version
//	└─ suite {provider}/{model}[@thinking]   custom           one per provider × model × thinking level
//	   ├─ cell {prompt} #{rep}     custom, internal          one per cell: gen_ai.* and bench.* figures
//	   │  ├─ POST                  http.request, client      one per request attempt: connected,
//	   │  │  │                                               request_written, first_byte, first_reasoning,
//	   │  │  │                                               first_token and retry events
//	   │  │  └─ tool_call {name}   tool.call                 each tool call the model made in that reply
//	   │  ├─ exec {command}        tool.call                 a CLI provider's subprocess, instead of POST
//	   │  ├─ turn {n}              llm.reason                an agentic cell's model replies, each holding
//	   │  │  ├─ execute_tool {name} tool.call                its calls (result hashed) and its requests
//	   │  │  └─ POST ...
//	   │  └─ validate              assertion.check           assertions.total/passed/failed
//	   └─ judge {prompt} #{rep}    assertion.check           a cell's llm_judge, after the cell: its verdict
//
// Every span's id is derived from the run's trace id and what the span is
// (the cell's key, the attempt's index...), so the traceparent the runner
// sends with a cell's requests names the cell span written after it ends.
// Every stamp is the runner's own (results.jsonl's timeline, to the
// microsecond), so the NDJSON, the OTLP spans and results.jsonl agree.
//
// Nothing secret or private is written: no prompt, answer, argument or
// result text (their sizes and "sha256:" hashes), no key, no environment
// value. Tracing never changes a result and never stops or stalls a run:
// its failures are one warning each, and the export's final flush is
// bounded by traces.timeout.
//
// Layer: the run (an output: fed the finished cells; never changes a result or
// stops the run).
package traces
