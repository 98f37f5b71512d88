package runner

import (
	"context"
	"fmt"
	"io"
	"slices"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"bench/config"
	"bench/internal/record/results"
	"bench/internal/record/secrets"
	"bench/prompts"
	"bench/providers"
	"bench/run/grader"
	"bench/run/output"
	"bench/run/plan"
	"bench/validators"
)

// Why a run ended, as recorded in run.json.
const (
	EndFinished    = "finished"
	EndInterrupted = "interrupted" // Ctrl-C: no new cells, in-flight ones finished
	EndAborted     = "aborted"     // second Ctrl-C: in-flight cells cancelled
	EndIOError     = "io_error"
)

// Options are what a run needs besides its context.
type Options struct {
	Config *config.Config
	Plan   *plan.Plan
	// Clock stamps every cell; nil means the real clock.
	Clock Clock
	// Providers by provider name (the entry's name, not its type).
	Providers map[string]providers.Provider
	// Outputs are everything the run writes or shows (package output):
	// each finished cell's record goes to every one, the Critical ones
	// (results.jsonl) first; the runner asks each output itself for its
	// optional capabilities (suites, warm-ups, trace parents, start, end,
	// stop).
	Outputs []output.Output
	// Drain, when closed, stops new cells from starting; cells in flight
	// finish or time out. Cancelling the run's context aborts them instead.
	Drain <-chan struct{}
	// Log receives one-line notes (preparation, warm-ups) and the
	// outputs' warnings.
	Log io.Writer
	// Recorded are a resumed run's records of SLO-search and auto-sweep
	// stages (the last record of each cell), so a search goes on from the
	// stages it ran and an auto sweep's rates from the rates it measured.
	Recorded []*results.Record
	// Budget, when not nil, is run.max_cost_usd: no cell starts that its
	// spent and in-flight cost would take past it (budget.go).
	Budget *Budget
	// Secrets are the run's (providers.NewAll), by provider entry: what
	// the external checks' output is cleaned with. Each provider's own
	// Secrets are its entry's of them.
	Secrets secrets.Scope
}

// Outcome says how a run went.
type Outcome struct {
	EndReason string
	Planned   int
	Recorded  int
	ByStatus  map[string]int
	StartedAt time.Time
	EndedAt   time.Time
}

// Run executes the plan. The error is non-nil only for a failure that stopped
// the run (a Critical output, results.jsonl, could not be started, written
// or closed); failing providers are records, not errors. Every output is
// stopped before Run returns.
//
// Suites that hit one server (plan.Lanes) run one at a time, each opened by
// its outputs' SuiteStart and its warm-up; different servers run side by side. Cells
// share run.concurrency overall and their provider's concurrency.
func Run(ctx context.Context, o Options) (*Outcome, error) {
	if o.Log == nil {
		o.Log = io.Discard
	}
	if o.Clock == nil {
		o.Clock = realClock{}
	}
	out := &Outcome{Planned: len(o.Plan.Cells), ByStatus: map[string]int{}, StartedAt: o.Clock.Now()}
	// A probe of a silent server waits no longer than a cell would.
	ctx = providers.WithProbeBound(ctx, time.Duration(o.Config.Run.Timeout))
	// Preparing (listing, pulling, warming up) ends at the first Ctrl-C,
	// not the second: no cell starts after it anyway.
	pctx, stop := UntilDrained(ctx, o.Drain)
	prepare(pctx, o)
	stop()
	outs := output.NewManager(o.Outputs, o.Log)
	if err := outs.Start(); err != nil {
		out.EndReason, out.EndedAt = EndIOError, o.Clock.Now()
		outs.Stop(output.End{Reason: out.EndReason, Planned: out.Planned})
		return out, fmt.Errorf("run stopped: %w", err)
	}

	g, gctx := errgroup.WithContext(ctx)
	r := &sweep{o: &o, cfg: o.Config, g: g, ctx: gctx, out: out, outs: outs,
		global: make(chan struct{}, o.Config.Run.Concurrency),
		psem:   map[string]chan struct{}{},
		limits: map[string]*limiter{},
		budget: newBudget(o.Budget), dispatched: map[results.Key]bool{},
		cells: make([][]plan.Cell, len(o.Plan.Suites)),
	}
	if grader.HasExternal(o.Config.PromptSet) {
		r.grader = grader.New(grader.Options{Judges: o.Providers, Concurrency: o.Config.Run.JudgeConcurrency,
			Timeout: time.Duration(o.Config.Run.Timeout), Now: o.Clock.Now, Secrets: o.Secrets})
		r.backlog = make(chan struct{}, o.Config.Run.Concurrency+gradeBacklog*o.Config.Run.JudgeConcurrency)
	}
	for _, c := range o.Plan.Cells {
		r.cells[c.Suite] = append(r.cells[c.Suite], c)
		if r.psem[c.Provider.Name] == nil {
			r.psem[c.Provider.Name] = make(chan struct{}, c.Provider.Concurrency)
			r.limits[c.Provider.Name] = newLimiter(c.Provider.Concurrency, nil)
		}
	}
	for _, l := range o.Plan.Lanes() {
		g.Go(func() error {
			r.lane(l)
			return nil
		})
	}
	err := g.Wait()
	r.ends.Wait()
	budgetStop := err == nil && ctx.Err() == nil && r.budget.exhausted()
	if budgetStop {
		err = r.recordNotRun()
	}
	out.EndedAt = o.Clock.Now()
	switch {
	case err != nil:
		out.EndReason = EndIOError
		err = fmt.Errorf("run stopped: %w", err)
	case ctx.Err() != nil:
		out.EndReason = EndAborted
	case budgetStop:
		out.EndReason = EndBudget
	case r.drained || out.Recorded < out.Planned:
		out.EndReason = EndInterrupted
	default:
		out.EndReason = EndFinished
	}
	if serr := outs.Stop(output.End{Reason: out.EndReason, Planned: out.Planned, Recorded: out.Recorded}); serr != nil && err == nil {
		err = serr
	}
	return out, err
}

// sweep is one Run in progress.
type sweep struct {
	o      *Options
	cfg    *config.Config
	g      *errgroup.Group
	ctx    context.Context // cancelled when the run aborts or a write fails
	global chan struct{}
	psem   map[string]chan struct{} // by provider name
	// limits are the entries' adaptive concurrency (limit.go), by
	// provider name: a cell waits for its entry's after its slot.
	limits map[string]*limiter
	cells  [][]plan.Cell // by suite index
	outs   *output.Manager
	ends   sync.WaitGroup // interleaved suites' SuiteEnd calls
	// grader runs the external checks (llm_judge, command) of a cell
	// after it has given its slots back; nil when no prompt has one.
	// backlog bounds the cells started and not yet recorded that have
	// such checks, so a slow judge holds back new cells, not memory.
	grader  *grader.Grader
	backlog chan struct{}
	// budget is run.max_cost_usd (nil: none); dispatched the cells
	// started, so those it stopped can be recorded as not run.
	budget     *budget
	dispatched map[results.Key]bool

	mu      sync.Mutex // guards out and drained, and orders the records
	out     *Outcome
	drained bool
}

// lane runs the suites of one server: one at a time, or all mixed when
// run.interleave says so.
func (r *sweep) lane(l plan.Lane) {
	w := r.watch(l)
	defer w.stop()
	if r.cfg.Run.Interleave {
		r.mixed(l, w)
		return
	}
	for _, si := range l.Suites {
		if !r.suite(si, w) {
			return
		}
	}
}

// suite runs one suite: its start hook (the before snapshot), its warm-up,
// its cells, and once the last has ended its end hook (the after
// snapshot), so nothing else of this server runs inside its window. It
// returns false when the run stops starting cells.
func (r *sweep) suite(si int, w *serverWatch) bool {
	if r.stopping() {
		return false
	}
	s := r.o.Plan.Suites[si]
	r.outs.SuiteStart(s)
	w.begin(s)
	r.warmup(si, w)
	if len(s.Stages) > 0 {
		ok := r.staged(si, w)
		w.end(s)
		r.outs.SuiteEnd(s)
		return ok
	}
	var wg sync.WaitGroup
	ok := true
	for _, c := range r.cells[si] {
		if !r.dispatch(c, &wg, w) {
			ok = false
			break
		}
	}
	wg.Wait()
	w.end(s)
	r.outs.SuiteEnd(s)
	return ok
}

// mixedStarts bounds the interleaved suites started at once.
const mixedStarts = 16

// mixed runs a lane's suites together, taking their cells in turn, for
// load tests of a server that holds several models (run.interleave). Each
// suite still gets its SuiteStart, SuiteEnd and warm-up; their windows overlap.
func (r *sweep) mixed(l plan.Lane, w *serverWatch) {
	if r.stopping() {
		return
	}
	wgs := make([]sync.WaitGroup, len(l.Suites))
	next := make([]int, len(l.Suites))
	// The windows overlap anyway: the suites' before snapshots and warm-ups
	// run side by side (each snapshot measures CPU over a fraction of a
	// second, which one after the other would hold a lane of many suites
	// for minutes).
	var starts errgroup.Group
	starts.SetLimit(mixedStarts)
	for _, si := range l.Suites {
		starts.Go(func() error {
			r.outs.SuiteStart(r.o.Plan.Suites[si])
			w.begin(r.o.Plan.Suites[si])
			r.warmup(si, w)
			return nil
		})
	}
	starts.Wait()
	end := func(i int) {
		r.ends.Add(1)
		go func() {
			defer r.ends.Done()
			wgs[i].Wait()
			w.end(r.o.Plan.Suites[l.Suites[i]])
			r.outs.SuiteEnd(r.o.Plan.Suites[l.Suites[i]])
		}()
	}
	ended := make([]bool, len(l.Suites))
	for left := true; left; {
		left = false
		for i, si := range l.Suites {
			if next[i] == len(r.cells[si]) {
				continue
			}
			if !r.dispatch(r.cells[si][next[i]], &wgs[i], w) {
				for j := range l.Suites {
					if !ended[j] {
						end(j)
					}
				}
				return
			}
			next[i]++
			if next[i] == len(r.cells[si]) {
				ended[i] = true
				end(i)
			} else {
				left = true
			}
		}
	}
}

// stopping says whether the run has stopped starting cells (drained or
// aborted), noting a drain.
func (r *sweep) stopping() bool {
	if isClosed(r.o.Drain) {
		r.noteDrain()
		return true
	}
	return r.ctx.Err() != nil || r.budget.exhausted()
}

func (r *sweep) noteDrain() {
	r.mu.Lock()
	r.drained = r.drained || isClosed(r.o.Drain)
	r.mu.Unlock()
}

// slots takes a slot of the provider's, then its place under the
// provider's adaptive limit, then one of the run's, or reports that the
// run stopped starting cells; release gives them back. The pace is the
// cell's hold on the limit, with how long it waited for it.
func (r *sweep) slots(provider string) (pace *cellPace, release func(), ok bool) {
	psem := r.psem[provider]
	if !acquire(r.ctx, r.o.Drain, psem) {
		r.noteDrain()
		return nil, nil, false
	}
	lim := r.limits[provider]
	asked := r.o.Clock.Now()
	epoch, limit, queued, ok := lim.acquire(r.ctx, r.o.Drain, false)
	if !ok {
		<-psem
		r.noteDrain()
		return nil, nil, false
	}
	pace = &cellPace{l: lim, epoch: epoch, limit: limit, held: true, at: lim.clock.Now()}
	if queued {
		pace.waited = r.o.Clock.Now().Sub(asked)
	}
	if !acquire(r.ctx, r.o.Drain, r.global) {
		pace.end()
		<-psem
		r.noteDrain()
		return nil, nil, false
	}
	return pace, func() { <-r.global; pace.end(); <-psem }, true
}

// gradeBacklog is how many cells with external checks may wait for the
// checks per slot of run.judge_concurrency, beyond run.concurrency.
const gradeBacklog = 8

// dispatch starts one cell once it has its slots; false means the run
// stopped starting cells. The cell gives its slots back when its stream
// has ended: its external checks (grader) run after, on slots of their
// own, so they are in none of its timings and hold no other cell back.
func (r *sweep) dispatch(c plan.Cell, wg *sync.WaitGroup, w *serverWatch) bool {
	var cost float64
	if r.budget != nil {
		cost, _ = r.budget.Projector.Cell(c)
		if !r.budget.take(r.ctx, r.o.Drain, cost) {
			r.noteDrain()
			return false
		}
	}
	graded := r.grader != nil && hasExternal(c.Prompt)
	if graded && !acquire(r.ctx, r.o.Drain, r.backlog) {
		r.budget.settle(cost, 0)
		r.noteDrain()
		return false
	}
	pace, release, ok := r.slots(c.Provider.Name)
	if !ok {
		if graded {
			<-r.backlog
		}
		r.budget.settle(cost, 0)
		return false
	}
	r.mu.Lock()
	r.dispatched[c.Key()] = true
	r.mu.Unlock()
	wg.Add(1)
	prov := r.o.Providers[c.Provider.Name]
	r.g.Go(func() error {
		defer wg.Done()
		if graded {
			defer func() { <-r.backlog }()
		}
		rec, run := runCellTimed(providers.WithPacer(r.ctx, pace), r.cfg, r.o.Clock, prov, c, r.outs.TraceParent(c))
		pace.note(rec)
		// Residency is a fact of the server a Resident provider speaks to:
		// another kind on the same endpoint (the Responses API, say) names
		// its models its own way, and is never judged by /api/ps.
		_, resident := prov.(providers.Resident)
		if resident && !run.loadReported && w != nil && !rec.ColdStart && !run.sent.IsZero() && w.cold(c.Model, run.sent, run.firstOrEnd) {
			rec.ColdStart = true
		}
		release()
		if graded && grader.Needs(c.Prompt, rec) {
			r.grader.Grade(r.ctx, c.Prompt, rec, r.outs.JudgeTraceParent(c))
			finish(rec, r.cfg, prov.Secrets())
		}
		err := r.record(rec)
		r.budget.settle(cost, Spent(rec, cost))
		return err
	})
	return true
}

// recordNotRun records the cells the budget did not start, in plan order:
// skipped_unavailable / budget_exhausted, each saying what was spent.
func (r *sweep) recordNotRun() error {
	why := r.budget.why()
	for _, c := range r.o.Plan.Cells {
		r.mu.Lock()
		started := r.dispatched[c.Key()]
		r.mu.Unlock()
		if started {
			continue
		}
		if err := r.notRun(c, 0, FailBudgetExhausted, why); err != nil {
			return err
		}
	}
	return nil
}

// hasExternal says whether a prompt has an external check.
func hasExternal(p *prompts.Prompt) bool {
	for _, s := range p.Checks() {
		if s.External() {
			return true
		}
	}
	return false
}

// record hands a finished cell to the outputs, one record at a time: an
// error is results.jsonl's, and stops the run.
func (r *sweep) record(rec *results.Record) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.outs.AddRecord(rec); err != nil {
		return err
	}
	r.out.Recorded++
	r.out.ByStatus[rec.AvailabilityStatus]++
	return nil
}

// acquire takes a slot unless the run is draining or cancelled.
func acquire(ctx context.Context, drain <-chan struct{}, sem chan struct{}) bool {
	if isClosed(drain) || ctx.Err() != nil {
		return false
	}
	select {
	case sem <- struct{}{}:
		// A drain that raced the slot wins: no new cell after Ctrl-C.
		if isClosed(drain) {
			<-sem
			return false
		}
		return true
	case <-drain:
		return false
	case <-ctx.Done():
		return false
	}
}

func isClosed(ch <-chan struct{}) bool {
	if ch == nil {
		return false
	}
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// prepare lets providers do their once-per-run work, each with its models
// and the models it judges with.
func prepare(ctx context.Context, o Options) {
	judged := map[string][]string{}
	for i := range o.Config.PromptSet {
		for _, s := range o.Config.PromptSet[i].Checks() {
			if s.Type == validators.TypeLLMJudge && !slices.Contains(judged[s.Judge], s.Model) {
				judged[s.Judge] = append(judged[s.Judge], s.Model)
			}
		}
	}
	for _, p := range o.Config.Providers {
		pr, ok := o.Providers[p.Name].(providers.Preparer)
		if !ok {
			continue
		}
		if ctx.Err() != nil {
			return
		}
		models := slices.Clone(p.Models)
		for _, m := range judged[p.Name] {
			if !slices.Contains(models, m) {
				models = append(models, m)
			}
		}
		if len(models) == 0 {
			continue
		}
		// A server that is not there is said once, at the run's end, with
		// what to start; its cells are recorded skipped_unavailable.
		if err := pr.Prepare(ctx, models, o.Log); err != nil && ctx.Err() == nil && !providers.Unreachable(err) {
			fmt.Fprintf(o.Log, "prepare %s: %s\n", p.Name, o.Providers[p.Name].Secrets().Clean(err.Error(), maxErrorMessage))
		}
	}
}
