package traces

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"

	"go.opentelemetry.io/otel/trace"

	"bench/plan"
	"bench/results"
)

// NewTraceID returns a random trace id: one per bench run (a resumed run
// gets a new one and links to the earlier trace).
func NewTraceID() trace.TraceID {
	var id trace.TraceID
	for !id.IsValid() {
		_, _ = rand.Read(id[:])
	}
	return id
}

// derive makes a span id from the trace id and a path of parts, so a span's
// id is known before the span is written: the runner sends a cell's
// traceparent before the cell has run, and the observer later writes the
// cell span under that same id. Ids of different paths differ (64 bits of
// SHA-256; Check verifies that a file's ids are unique).
func derive(tid trace.TraceID, parts ...string) trace.SpanID {
	h := sha256.New()
	h.Write(tid[:])
	var n [8]byte
	for _, p := range parts {
		// Length-prefixed, so ("ab","c") and ("a","bc") differ.
		binary.LittleEndian.PutUint64(n[:], uint64(len(p)))
		h.Write(n[:])
		h.Write([]byte(p))
	}
	var sum [sha256.Size]byte
	var id trace.SpanID
	copy(id[:], h.Sum(sum[:0]))
	if !id.IsValid() {
		id[7] = 1 // all zero is not a span id
	}
	return id
}

func rootID(tid trace.TraceID) trace.SpanID { return derive(tid, "root") }

// suiteKey is what a suite is: provider × model × thinking level.
type suiteKey struct{ provider, model, thinking string }

func suiteID(tid trace.TraceID, k suiteKey) trace.SpanID {
	return derive(tid, "suite", k.provider, k.model, k.thinking)
}

func keyParts(k results.Key) []string {
	return []string{"cell", k.Provider, k.ProviderType, k.Model, k.ThinkingLevel, k.PromptID, itoa(k.Repetition)}
}

func cellID(tid trace.TraceID, k results.Key) trace.SpanID { return derive(tid, keyParts(k)...) }

// child is the id of a span below a cell span: its kind and index.
func child(tid trace.TraceID, parent trace.SpanID, what string, i int) trace.SpanID {
	return derive(tid, parent.String(), what, itoa(i))
}

// traceParent is the W3C traceparent naming a span of the trace, sampled.
func traceParent(tid trace.TraceID, sid trace.SpanID) string {
	return "00-" + tid.String() + "-" + sid.String() + "-01"
}

// CellTraceParent is the traceparent of a plan cell's span in the trace tid.
func CellTraceParent(tid trace.TraceID, c plan.Cell) string {
	return traceParent(tid, cellID(tid, c.Key()))
}
