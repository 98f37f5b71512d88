package output

import (
	"errors"
	"fmt"
	"io"
	"sync"

	"bench/internal/record/results"
	"bench/internal/record/rundir"
	"bench/run/plan"
)

// QueueSize is how many records may wait for a slow output before the run
// waits for it: deep enough to absorb bursts, bounded so a stuck output
// cannot hold every record of a large run in memory.
const QueueSize = 4096

// Manager feeds a run's outputs, as k6's output manager does: it holds the
// list and asks each output itself which capabilities it has. The runner
// calls AddRecord one record at a time; the suite calls may come from
// several lanes at once.
type Manager struct {
	outs     []Output
	critical []Output
	// queues[i] feeds outs[i] when it is not Critical (nil otherwise).
	queues []chan *results.Record
	wg     sync.WaitGroup
	tp     WithTraceParent
	log    io.Writer

	mu     sync.Mutex
	warned map[int]bool
}

// NewManager returns the manager of outs; warnings go to log (nil
// discards them). Nothing runs until Start.
func NewManager(outs []Output, log io.Writer) *Manager {
	if log == nil {
		log = io.Discard
	}
	m := &Manager{outs: outs, queues: make([]chan *results.Record, len(outs)), log: log, warned: map[int]bool{}}
	for _, o := range outs {
		if _, ok := o.(Critical); ok {
			m.critical = append(m.critical, o)
		}
		if tp, ok := o.(WithTraceParent); ok && m.tp == nil {
			m.tp = tp
		}
	}
	return m
}

func isCritical(o Output) bool {
	_, ok := o.(Critical)
	return ok
}

// Start starts each output that has a Start, then the queues of the
// outputs that are not Critical. A Critical output's failure is returned
// (the run must not start); another's is a warning.
func (m *Manager) Start() error {
	for i, o := range m.outs {
		st, ok := o.(WithStart)
		if !ok {
			continue
		}
		if err := st.Start(); err != nil {
			if isCritical(o) {
				return err
			}
			m.warn(i, err, "the run goes on")
		}
	}
	for i, o := range m.outs {
		if isCritical(o) {
			continue
		}
		q := make(chan *results.Record, QueueSize)
		m.queues[i] = q
		m.wg.Add(1)
		go func() {
			defer m.wg.Done()
			for r := range q {
				if err := o.AddRecord(r); err != nil {
					m.warn(i, err, "the run goes on")
				}
			}
		}()
	}
	return nil
}

// AddRecord writes r to the Critical outputs, in list order, and then
// queues it for the others. An error is a Critical output's: r was not
// recorded, and no other output sees it. Calls must not overlap.
func (m *Manager) AddRecord(r *results.Record) error {
	for _, o := range m.critical {
		if err := o.AddRecord(r); err != nil {
			return err
		}
	}
	for _, q := range m.queues {
		if q != nil {
			q <- r
		}
	}
	return nil
}

// SuiteStart tells every WithSuites output, in list order.
func (m *Manager) SuiteStart(s plan.Suite) {
	for _, o := range m.outs {
		if h, ok := o.(WithSuites); ok {
			h.SuiteStart(s)
		}
	}
}

// SuiteEnd tells every WithSuites output, in list order.
func (m *Manager) SuiteEnd(s plan.Suite) {
	for _, o := range m.outs {
		if h, ok := o.(WithSuites); ok {
			h.SuiteEnd(s)
		}
	}
}

// SuiteWarmup tells every WithWarmup output what the suite's warm-up
// measured.
func (m *Manager) SuiteWarmup(s plan.Suite, w Warmup) {
	for _, o := range m.outs {
		if h, ok := o.(WithWarmup); ok {
			h.SuiteWarmup(s, w)
		}
	}
}

// ServerReading hands every WithServerReadings output a reading of the
// suite's server.
func (m *Manager) ServerReading(s plan.Suite, r rundir.ServerSample) {
	for _, o := range m.outs {
		if h, ok := o.(WithServerReadings); ok {
			h.ServerReading(s, r)
		}
	}
}

// TraceParent is the traceparent a cell's requests carry: the first
// WithTraceParent output's, "" when there is none.
func (m *Manager) TraceParent(c plan.Cell) string {
	if m.tp == nil {
		return ""
	}
	return m.tp.TraceParent(c)
}

// JudgeTraceParent is the traceparent a cell's llm_judge requests carry.
func (m *Manager) JudgeTraceParent(c plan.Cell) string {
	if m.tp == nil {
		return ""
	}
	return m.tp.JudgeTraceParent(c)
}

// SuiteTraceParent is the traceparent a suite's warm-up carries.
func (m *Manager) SuiteTraceParent(s plan.Suite) string {
	if m.tp == nil {
		return ""
	}
	return m.tp.SuiteTraceParent(s)
}

// Stop ends the run for the outputs: it waits for every queued record to
// be handed over, tells each WithRunEnd output how the run ended, then
// stops the Critical outputs (their errors are returned, joined) and the
// others in list order (their errors are warnings).
func (m *Manager) Stop(e End) error {
	for _, q := range m.queues {
		if q != nil {
			close(q)
		}
	}
	m.wg.Wait()
	for _, o := range m.outs {
		if h, ok := o.(WithRunEnd); ok {
			h.RunEnd(e)
		}
	}
	var errs []error
	for _, o := range m.critical {
		if st, ok := o.(WithStop); ok {
			if err := st.Stop(); err != nil {
				errs = append(errs, err)
			}
		}
	}
	for i, o := range m.outs {
		if st, ok := o.(WithStop); ok && !isCritical(o) {
			if err := st.Stop(); err != nil {
				m.warn(i, err, "")
			}
		}
	}
	return errors.Join(errs...)
}

// warn prints an output's error: its first while records come in (later
// ones would mostly repeat it), and any error of its Stop.
func (m *Manager) warn(i int, err error, goesOn string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if goesOn != "" {
		if m.warned[i] {
			return
		}
		m.warned[i] = true
		fmt.Fprintf(m.log, "bench: warning: %v (%s; results.jsonl is unaffected)\n", err, goesOn)
		return
	}
	fmt.Fprintf(m.log, "bench: warning: %v (results.jsonl is unaffected)\n", err)
}
