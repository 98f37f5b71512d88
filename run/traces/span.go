package traces

import (
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
)

// The span kinds of the execution-trace spec (its SpanKind), as the NDJSON
// "kind" field spells them. OTLP spans carry the same in sop.span.kind.
const (
	KindSkillExecute   = "skill.execute"
	KindSkillInput     = "skill.input"
	KindSkillOutput    = "skill.output"
	KindToolCall       = "tool.call"
	KindToolResult     = "tool.result"
	KindFileRead       = "file.read"
	KindFileWrite      = "file.write"
	KindHTTPRequest    = "http.request"
	KindLLMReason      = "llm.reason"
	KindAssertionCheck = "assertion.check"
	KindBranch         = "branch"
	KindCustom         = "custom"
)

// Kinds lists the spec's span kinds.
var Kinds = []string{KindSkillExecute, KindSkillInput, KindSkillOutput, KindToolCall, KindToolResult,
	KindFileRead, KindFileWrite, KindHTTPRequest, KindLLMReason, KindAssertionCheck, KindBranch, KindCustom}

// The span statuses of the spec.
const (
	StatusOK      = "ok"
	StatusError   = "error"
	StatusSkipped = "skipped"
)

// RootName is the root span's name, and the {name} of the trace file.
const RootName = "bench-run"

// SOPLevel is the spec's observability level the tree meets: the full
// span tree with assertion spans.
const SOPLevel = "L2"

// span is one span of the tree: the one form both outputs (NDJSON and
// OTLP) are written from, so they cannot disagree.
type span struct {
	id, parent trace.SpanID // parent is invalid on the root only
	kind       string       // the spec's kind
	otel       trace.SpanKind
	name       string
	start, end time.Time // microsecond precision
	status     string
	errType    string // set exactly when status is error
	errMsg     string
	attrs      []attribute.KeyValue
	events     []event
	links      []link
}

type event struct {
	name  string
	at    time.Time
	attrs []attribute.KeyValue
}

// link points at a span of another trace: a resumed run's root at the
// earlier run's root.
type link struct {
	trace trace.TraceID
	span  trace.SpanID
	attrs []attribute.KeyValue
}

func (s *span) fail(typ, msg string) {
	s.status, s.errType, s.errMsg = StatusError, typ, msg
	if s.errMsg == "" {
		s.errMsg = typ
	}
	s.attrs = append(s.attrs, keyErrorType.String(typ))
}

// clamp keeps a child's window inside its parent's: stamps come from
// several sources (the runner's clock, a provider's phases, an agentic
// loop) rounded to microseconds, and the spec wants every child within its
// parent.
func clamp(t, lo, hi time.Time) time.Time {
	if t.Before(lo) {
		return lo
	}
	if t.After(hi) {
		return hi
	}
	return t
}
