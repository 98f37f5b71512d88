package traces

import (
	"crypto/rand"
	"encoding/binary"

	"go.opentelemetry.io/otel/trace"

	"bench/internal/record/results"
	"bench/run/plan"
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
// cell span under that same id. The hash is FNV-1a, 64 bits, over the
// trace id and the length-prefixed parts: stable across processes (a
// resumed run names the earlier root by it) and a few dozen nanoseconds,
// where SHA-256 was a tenth of a cell's tracing cost. Ids of different
// paths differ but for a 2^-64 chance; Check verifies a file's ids are
// unique.
func derive(tid trace.TraceID, parts ...string) trace.SpanID {
	h := uint64(fnvOffset)
	h = fnvBytes(h, tid[:])
	for _, p := range parts {
		h = fnvUint(h, uint64(len(p)))
		h = fnvString(h, p)
	}
	return spanID(h)
}

const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

func fnvBytes(h uint64, b []byte) uint64 {
	for _, c := range b {
		h = (h ^ uint64(c)) * fnvPrime
	}
	return h
}

func fnvString(h uint64, s string) uint64 {
	for i := 0; i < len(s); i++ {
		h = (h ^ uint64(s[i])) * fnvPrime
	}
	return h
}

func fnvUint(h, v uint64) uint64 {
	var n [8]byte
	binary.LittleEndian.PutUint64(n[:], v)
	return fnvBytes(h, n[:])
}

func spanID(h uint64) trace.SpanID {
	var id trace.SpanID
	binary.BigEndian.PutUint64(id[:], h)
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
	h := fnvBytes(uint64(fnvOffset), tid[:])
	h = fnvBytes(h, parent[:])
	h = fnvUint(h, uint64(len(what)))
	h = fnvString(h, what)
	return spanID(fnvUint(h, uint64(i)))
}

// traceParent is the W3C traceparent naming a span of the trace, sampled.
func traceParent(tid trace.TraceID, sid trace.SpanID) string {
	return "00-" + tid.String() + "-" + sid.String() + "-01"
}

// CellTraceParent is the traceparent of a plan cell's span in the trace tid.
func CellTraceParent(tid trace.TraceID, c plan.Cell) string {
	return traceParent(tid, cellID(tid, c.Key()))
}

// judgeID is the id of a cell's judge span: what its llm_judge requests
// carry, and what the span AddRecord writes from the record's judge has.
func judgeID(tid trace.TraceID, k results.Key) trace.SpanID {
	return child(tid, cellID(tid, k), "judge", 0)
}

// JudgeTraceParent is the traceparent of a plan cell's judge span in the
// trace tid: what the cell's llm_judge requests carry.
func JudgeTraceParent(tid trace.TraceID, c plan.Cell) string {
	return traceParent(tid, judgeID(tid, c.Key()))
}

// SuiteTraceParent is the traceparent of a plan suite's span in the trace
// tid: what the suite's warm-up request carries.
func SuiteTraceParent(tid trace.TraceID, s plan.Suite) string {
	k := suiteKey{provider: s.Provider, model: s.Model}
	if s.ThinkingLevel != nil {
		k.thinking = *s.ThinkingLevel
	}
	return traceParent(tid, suiteID(tid, k))
}
