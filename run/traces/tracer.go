package traces

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"bench/config"
	"bench/internal/record/results"
	"bench/run/output"
	"bench/run/plan"
)

// Options are what a run's tracer needs.
type Options struct {
	Config *config.Config
	// RunDir is the run directory; the NDJSON goes to its traces/.
	RunDir string
	// Version is bench's version, an attribute of the root span.
	Version string
	// Resume says the run continues an earlier one (bench run --resume):
	// the root links to the latest trace already in traces/. Done is how
	// many cells that run had recorded.
	Resume bool
	Done   int
	// Log gets the warnings (one per kind of failure); nil discards them.
	Log io.Writer
	// Now is the clock of the root span's window; nil is time.Now.
	Now func() time.Time
	// Getenv reads the OTEL_* variables; nil is os.Getenv. (The SDK's
	// exporters read their own variables from the process environment.)
	Getenv func(string) string
	// TraceID is the run's trace id; zero makes a random one.
	TraceID trace.TraceID
}

// Tracer writes a run as one trace. It is one of the run's outputs
// (package output): it writes each record's subtree (AddRecord), gives the
// runner each cell's traceparent before the cell runs (WithTraceParent),
// and writes the suite and root spans when the run has ended (RunEnd, then
// Stop). Nothing it does changes a result or stops the run: its failures
// are warnings.
type Tracer struct {
	tid     trace.TraceID
	b       *builder
	now     func() time.Time
	start   time.Time
	cfg     *config.Config
	version string
	file    *ndjsonFile
	otlp    *otlpOut
	export  Export
	prev    trace.TraceID
	resume  bool
	done    int
	log     io.Writer

	suites map[suiteKey]*suiteAgg
	order  []suiteKey
	first  time.Time
	last   time.Time
	end    output.End

	warnMu sync.Mutex
	warned bool
}

type suiteAgg struct {
	key                         suiteKey
	providerType                string
	start, end                  time.Time
	cells, ok, skipped, errored int
}

// New starts a run's trace: it creates the trace file and the exporter as
// the traces: block and the environment say. It returns nil (and no
// error) when both are off. An error means the NDJSON file could not be
// made; the export may still be on, so the tracer is returned with it.
func New(ctx context.Context, o Options) (*Tracer, error) {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Getenv == nil {
		o.Getenv = os.Getenv
	}
	if o.Log == nil {
		o.Log = io.Discard
	}
	export, notes := ResolveExport(o.Config.Traces, o.Getenv)
	ndjson := o.Config.Traces.NDJSON && o.RunDir != ""
	if !ndjson && !export.On {
		for _, n := range notes {
			fmt.Fprintf(o.Log, "bench: warning: traces: %s\n", n)
		}
		return nil, nil
	}
	t := &Tracer{
		tid: o.TraceID, now: o.Now, cfg: o.Config, version: o.Version, export: export,
		resume: o.Resume, done: o.Done, log: o.Log, suites: map[suiteKey]*suiteAgg{},
	}
	if !t.tid.IsValid() {
		t.tid = NewTraceID()
	}
	for _, n := range notes {
		fmt.Fprintf(o.Log, "bench: warning: traces: %s\n", n)
	}
	t.start = o.Now().Truncate(time.Microsecond)
	t.b = newBuilder(t.tid, o.Config)
	if o.RunDir != "" {
		// A trace already there means the run directory is being
		// resumed, whatever count of done cells the caller gave.
		t.prev, _ = previousTrace(o.RunDir)
		t.resume = t.resume || t.prev.IsValid()
	}
	var err error
	if ndjson {
		t.file, err = createNDJSON(o.RunDir, t.start, t.tid, o.Now)
	}
	if export.On {
		out, xerr := newOTLP(ctx, export, t.tid, o.Version, t.exportWarn)
		if xerr != nil {
			t.exportWarn(xerr)
		}
		t.otlp = out
	}
	if t.file == nil && t.otlp == nil {
		return nil, err
	}
	return t, err
}

// TraceID is the run's trace id.
func (t *Tracer) TraceID() trace.TraceID { return t.tid }

// Path is the trace file, "" when the NDJSON is off.
func (t *Tracer) Path() string {
	if t.file == nil {
		return ""
	}
	return t.file.path
}

// Exporting says whether spans go out over OTLP.
func (t *Tracer) Exporting() bool { return t.otlp != nil }

// TraceParent is the W3C traceparent of a cell's span, for the runner to
// send with the cell's requests: the span AddRecord later writes has its id.
func (t *Tracer) TraceParent(c plan.Cell) string { return CellTraceParent(t.tid, c) }

// SuiteTraceParent is the traceparent a suite's warm-up request carries,
// naming the suite's span.
func (t *Tracer) SuiteTraceParent(s plan.Suite) string { return SuiteTraceParent(t.tid, s) }

// JudgeTraceParent is the traceparent a cell's llm_judge requests carry,
// naming the judge span AddRecord writes after the cell's.
func (t *Tracer) JudgeTraceParent(c plan.Cell) string { return JudgeTraceParent(t.tid, c) }

// AddRecord writes a finished cell's subtree. Only a trace file's failure
// is returned (the run warns once); the export reports its own, once.
func (t *Tracer) AddRecord(r *results.Record) error {
	t.b.reset()
	spans := t.b.cell(r)
	c := &spans[0]
	k := suiteOf(r)
	s := t.suites[k]
	if s == nil {
		s = &suiteAgg{key: k, providerType: r.ProviderType, start: c.start, end: c.end}
		t.suites[k] = s
		t.order = append(t.order, k)
	}
	s.start, s.end = minTime(s.start, c.start), maxTime(s.end, c.end)
	if j, ok := t.b.judge(r); ok {
		// The judge ran after the cell: a span of the suite's, beside it.
		spans = append(spans, j)
		s.end, t.last = maxTime(s.end, j.end), maxTime(t.last, j.end)
	}
	s.cells++
	switch c.status {
	case StatusSkipped:
		s.skipped++
	case StatusError:
		s.errored++
	}
	if r.Success {
		s.ok++
	}
	if t.first.IsZero() || c.start.Before(t.first) {
		t.first = c.start
	}
	t.last = maxTime(t.last, c.end)
	if t.otlp != nil {
		t.otlp.emit(spans)
	}
	if t.file != nil {
		return t.file.write(spans)
	}
	return nil
}

// RunEnd takes how the run ended, for the root span Stop writes.
func (t *Tracer) RunEnd(e output.End) { t.end = e }

// Stop writes the suite spans and the root, closes the file and flushes
// the export within the traces timeout. The error is the trace file's
// (export failures have been warned about).
func (t *Tracer) Stop() error {
	spans := make([]span, 0, len(t.order)+1)
	for _, k := range t.order {
		spans = append(spans, t.suiteSpan(t.suites[k]))
	}
	spans = append(spans, t.root(t.end))
	var err error
	if t.file != nil {
		err = t.file.write(spans)
		if cerr := t.file.close(); err == nil {
			err = cerr
		}
	}
	if t.otlp != nil {
		t.otlp.emit(spans)
		t.otlp.shutdown()
	}
	return err
}

func (t *Tracer) suiteSpan(a *suiteAgg) span {
	name := "suite " + a.key.provider + "/" + a.key.model
	if a.key.thinking != "" {
		name += "@" + a.key.thinking
	}
	gp := genAIProvider(a.providerType)
	s := span{
		id: suiteID(t.tid, a.key), parent: rootID(t.tid), kind: KindCustom, otel: trace.SpanKindInternal,
		name: name, start: a.start, end: a.end, status: StatusOK,
		attrs: []attribute.KeyValue{keyProviderName.String(gp), keySystem.String(gp), keyRequestModel.String(a.key.model),
			keyProvider.String(a.key.provider), keyProviderType.String(a.providerType)},
	}
	if a.key.thinking != "" {
		s.attrs = append(s.attrs, keyThinking.String(a.key.thinking))
	}
	s.attrs = append(s.attrs, keyCells.Int(a.cells), keyCellsOK.Int(a.ok), keyCellsSkipped.Int(a.skipped), keyCellsFailed.Int(a.errored))
	switch {
	case a.skipped == a.cells:
		s.status = StatusSkipped
	case a.errored > 0:
		s.fail("cells_failed", fmt.Sprintf("%d of %d cells failed", a.errored, a.cells))
	}
	return s
}

func (t *Tracer) root(end output.End) span {
	s := span{
		id: rootID(t.tid), kind: KindSkillExecute, otel: trace.SpanKindInternal, name: RootName,
		start: t.start, end: t.now().Truncate(time.Microsecond), status: StatusOK,
		attrs: []attribute.KeyValue{keySOPLevel.String(SOPLevel), keyRunID.String(t.cfg.Run.ID), keyVersion.String(t.version),
			keyEndReason.String(end.Reason), keyPlanned.Int(end.Planned), keyRecorded.Int(end.Recorded)},
	}
	// The clock of the cells may be another's (a test's fake clock): the
	// root still holds every suite.
	if !t.first.IsZero() {
		s.start = minTime(s.start, t.first)
		s.end = maxTime(s.end, t.last)
	}
	if t.resume {
		s.attrs = append(s.attrs, keyResumedCells.Int(t.done))
		if t.prev.IsValid() {
			s.attrs = append(s.attrs, keyPrevTrace.String(t.prev.String()), keyPrevSpan.String(rootID(t.prev).String()))
			s.links = []link{{trace: t.prev, span: rootID(t.prev), attrs: []attribute.KeyValue{
				attribute.String("bench.link.type", "resumes")}}}
		}
	}
	if end.Reason != "" && end.Reason != "finished" {
		s.fail(end.Reason, fmt.Sprintf("run %s: %d of %d cells recorded", end.Reason, end.Recorded, end.Planned))
	}
	return s
}

// exportWarn prints the export's first failure, once: a dead collector
// gives one line however many batches fail. Header values never appear.
func (t *Tracer) exportWarn(err error) {
	t.warnMu.Lock()
	defer t.warnMu.Unlock()
	if t.warned {
		return
	}
	t.warned = true
	msg := err.Error()
	for _, s := range t.export.secrets {
		if s != "" {
			msg = strings.ReplaceAll(msg, s, "[redacted]")
		}
	}
	if len(msg) > 300 {
		msg = msg[:300] + "…"
	}
	fmt.Fprintf(t.log, "bench: warning: traces: OTLP export (%s) failed: %s (the run goes on; results.jsonl is unaffected; later export errors are not shown)\n", t.export.Protocol, msg)
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
