package main

import (
	"context"
	"fmt"

	"bench/internal/version"
	"bench/runner"
	"bench/traces"
)

// startTraces opens the run's trace: the spans NDJSON in the run
// directory's traces/ and the OTLP export, as the traces: block and the
// OTEL_* variables say. It returns nil when both are off. A trace never
// stops a run: a failure here is a warning.
func (s *session) startTraces(resumed int) *traces.Tracer {
	tr, err := traces.New(context.Background(), traces.Options{
		Config: s.cfg, RunDir: s.dir.Path, Version: version.String(),
		Resume: resumed > 0, Done: resumed, Log: s.prog.log(),
	})
	if err != nil {
		fmt.Fprintf(s.prog.log(), "bench: warning: %v (the run goes on without its trace file)\n", err)
	}
	return tr
}

// traceRun makes the tracer one of the run's observers and gives the
// runner each cell's traceparent, so the requests name the cell's span.
func traceRun(tr *traces.Tracer, o *runner.Options) {
	if tr == nil {
		return
	}
	o.Observers = append(o.Observers, tr)
	o.TraceParent, o.SuiteTraceParent = tr.TraceParent, tr.SuiteTraceParent
}

// finishTraces writes the suite and root spans and flushes the export,
// within traces.timeout whatever the collector does.
func (s *session) finishTraces(tr *traces.Tracer, out *runner.Outcome) {
	if tr == nil {
		return
	}
	var end traces.End
	if out != nil {
		end = traces.End{Reason: out.EndReason, Planned: out.Planned, Recorded: out.Recorded}
	}
	if err := tr.Finish(end); err != nil {
		fmt.Fprintf(s.prog.log(), "bench: warning: %v (results.jsonl is unaffected)\n", err)
	}
}
