package session

import (
	"context"
	"fmt"
	"strings"
	"time"

	"bench/internal/record/agentsnap"
	"bench/internal/record/results"
	"bench/internal/record/rundir"
	"bench/internal/version"
	"bench/providers"
	"bench/report"
	"bench/report/rebuild"
	"bench/run/inventory"
	"bench/run/output"
	"bench/run/plan"
	"bench/run/progress"
	"bench/run/resources"
	"bench/run/runner"
	"bench/run/traces"
)

// progressNow is the progress display's clock; tests replace it so the
// lines they check are exact (nil is time.Now).
var progressNow func() time.Time

// outputs is everything the run writes or shows, each built on the run
// directory, in the order the runner stops them once results.jsonl (the
// one Critical output) is closed: the tally the end of the run reads, the
// progress display (its bar ends before anything else prints), resource
// snapshots, work traces, agent snapshots, the execution trace, and last
// the reports, which read what the others wrote. Adding an output is a
// line here. Only results.jsonl failing to open is an error; an output
// that cannot start is a warning and the run goes on without it.
func (s *session) outputs(pl *plan.Plan, resumed int) ([]output.Output, *reports, error) {
	res, err := results.Create(s.dir.File(rundir.ResultsFile))
	if err != nil {
		return nil, nil, err
	}
	outs := []output.Output{res, s.tally,
		progress.New(s.log, pl, progress.Options{Quiet: s.o.Quiet, Now: progressNow}),
		resources.NewRecorder(s.dir.Path),
		runner.NewWorkTraces(s.dir.File(rundir.ForsyDir), s.cfg.PromptSet, version.String()),
	}
	if snaps, err := s.snapshots(); err != nil {
		fmt.Fprintf(s.log, "bench: warning: no snapshots: %v\n", err)
	} else {
		outs = append(outs, snaps)
	}
	if tr := s.tracer(resumed); tr != nil {
		outs = append(outs, tr)
	}
	reports := &reports{dir: s.dir.Path, o: rebuild.Options{JUnitCopy: s.o.JUnit, Warn: s.log, Baseline: s.o.Baseline}}
	return append(outs, reports), reports, nil
}

// reports builds the reports when the run has ended: the run's last
// output, so it reads results.jsonl and the resource files once the
// outputs before it have closed them (rebuild.All, as bench report does). A
// run that stopped because results.jsonl could not be written gets none
// (bench report rebuilds them from what was written).
type reports struct {
	dir  string
	o    rebuild.Options
	end  output.End
	sum  *report.Summary
	err  error
	done bool
}

// AddRecord takes nothing: the reports are read from results.jsonl, the
// one source of truth.
func (b *reports) AddRecord(*results.Record) error { return nil }

// RunEnd takes how the run ended.
func (b *reports) RunEnd(e output.End) { b.end = e }

// Stop builds the reports.
func (b *reports) Stop() error {
	if b.end.Reason == runner.EndIOError {
		return nil
	}
	b.done = true
	b.sum, b.err = rebuild.All(b.dir, b.o)
	if b.err != nil {
		return fmt.Errorf("reports: %w", b.err)
	}
	return nil
}

// summary is the summary Stop built, for the terminal table, or why there
// is none.
func (b *reports) summary() (*report.Summary, error) {
	if !b.done {
		return nil, fmt.Errorf("reports: not built (the run did not end normally)")
	}
	return b.sum, b.err
}

// What the run asks of each output, checked when bench is built: an
// output that lost a capability (a method renamed, a wrapper put around
// it) would otherwise lose its part of the run without a word.
var (
	_ interface {
		output.Critical
		output.WithStop
	} = (*results.Writer)(nil)
	_ interface {
		output.WithStart
		output.WithSuites
		output.WithStop
	} = (*progress.Display)(nil)
	_ interface {
		output.WithSuites
		output.WithWarmup
		output.WithServerReadings
		output.WithStop
	} = (*resources.Recorder)(nil)
	_ output.WithStop = (*agentsnap.Writer)(nil)
	_ interface {
		output.WithTraceParent
		output.WithRunEnd
		output.WithStop
	} = (*traces.Tracer)(nil)
	_ interface {
		output.WithRunEnd
		output.WithStop
	} = (*reports)(nil)
	_ output.Output = (*runner.WorkTraces)(nil)
	_ output.Output = (*tally)(nil)
)

// tracer opens the run's trace: the spans NDJSON in the run directory's
// traces/ and the OTLP export, as the traces: block and the OTEL_*
// variables say; nil when both are off. A trace never stops a run: a
// failure here is a warning.
func (s *session) tracer(resumed int) *traces.Tracer {
	tr, err := traces.New(context.Background(), traces.Options{
		Config: s.cfg, RunDir: s.dir.Path, Version: version.String(),
		Resume: resumed > 0, Done: resumed, Log: s.log,
	})
	if err != nil {
		fmt.Fprintf(s.log, "bench: warning: %v (the run goes on without its trace file)\n", err)
	}
	return tr
}

// snapshots is the output that writes snapshots/: each cell's agent
// snapshot, with the prompt as sent and the setup the inventory probe
// found (server version, model digest).
func (s *session) snapshots() (*agentsnap.Writer, error) {
	prompts := make(map[string]agentsnap.Prompt, len(s.cfg.PromptSet))
	for _, p := range s.cfg.PromptSet {
		prompts[p.ID] = agentsnap.Prompt{System: p.System, Text: p.Prompt}
	}
	w, err := agentsnap.NewWriter(s.dir.Path, prompts, snapshotEnv(s.inv))
	if err != nil {
		return nil, err
	}
	w.Skip = s.noSnapshot()
	return w, nil
}

// noSnapshot says which records get no snapshot: the cells of a load
// stage whose entry's profile has not asked for them (load.snapshots).
func (s *session) noSnapshot() func(*results.Record) bool {
	keep := map[string]bool{}
	for _, p := range s.cfg.Providers {
		keep[p.Name] = p.Load == nil || p.Load.Snapshots
	}
	return func(r *results.Record) bool { return r.Stage != "" && !keep[r.Provider] }
}

// snapshotEnv turns the inventory's probes into the fingerprints' setup.
func snapshotEnv(inv *inventory.Inventory) agentsnap.Env {
	env := agentsnap.Env{Bench: version.String(), Servers: map[string]agentsnap.Server{}}
	if inv == nil {
		return env
	}
	for _, p := range inv.Providers {
		if p.Probe == nil {
			continue
		}
		srv := agentsnap.Server{Digests: map[string]string{}}
		switch {
		case p.ServerVersion != nil:
			srv.Version = *p.ServerVersion
		case p.CLIVersion != nil:
			srv.Version = *p.CLIVersion
		}
		for _, m := range p.Models {
			srv.Digests[m] = serverDigest(p.Probe.ServerModels, m)
		}
		env.Servers[p.Name] = srv
	}
	return env
}

// serverDigest is the digest the server lists for a configured model name;
// Ollama lists "name:latest" for a model configured without a tag.
func serverDigest(models []providers.ServerModel, name string) string {
	for _, m := range models {
		if m.Name == name || (!strings.Contains(name, ":") && m.Name == name+":latest") {
			return m.Digest
		}
	}
	return ""
}
