package resources

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"sync"
	"syscall"
	"time"

	"bench/internal/record/results"
	"bench/internal/record/rundir"
	"bench/run/output"
	"bench/run/plan"
)

// DefaultInterval is how often the sampler reads the machine during a suite.
const DefaultInterval = 500 * time.Millisecond

// Recorder is the run's resource output (output.WithSuites, WithWarmup,
// WithStop): it brackets each suite with snapshots, samples in between (appending each reading to
// the suite's samples file), records the suite's warm-up, and writes the
// suite's resource files into the run directory. The runner runs a
// server's suites one at a time, so a suite's window holds only its own
// cells on that server; suites of other servers (and interleaved ones) may
// overlap, so state is kept per suite.
//
// Sampling is shared: the suites in flight that measure the same target
// (the machine plus the same server process, or the machine alone) take
// the readings of one sampler, started by the first of them and stopped
// when the last ends. Each suite keeps the readings taken inside its own
// window, so its series and peaks are its own by time. The window opens as
// SuiteStart returns (after the before snapshot) and closes at the reading
// SuiteEnd asks for (before the after snapshot); a CPU share is the
// suite's only if the span it measures lies inside the window.
type Recorder struct {
	dir string
	// Interval is the sampler's period (DefaultInterval when zero). Set it
	// before the first suite starts.
	Interval time.Duration

	servers serverCache

	mu     sync.Mutex
	active map[string]*suiteRun
	feeds  map[string]*feedRef // by target
	errs   []error

	// Test seams, nil in production: the sampler's reading, the snapshot,
	// and a look at each shared reading, each sampler started and each
	// suite's window.
	read        func(context.Context, *serverProc) probe
	snap        func(ctx context.Context, dir string, srv *serverProc, reason string) *rundir.Snapshot
	seenReading func(target string, rd *reading)
	feedStarted func(target string)
	windowed    func(suiteFile string, from, to time.Time)
}

// NewRecorder records into runDir.
func NewRecorder(runDir string) *Recorder {
	return &Recorder{dir: runDir, active: map[string]*suiteRun{}, feeds: map[string]*feedRef{}}
}

// feedRef is a target's sampler and how many suites in flight use it.
type feedRef struct {
	feed *feed
	refs int
}

type suiteRun struct {
	rec    rundir.SuiteRecord
	files  rundir.SuiteFiles
	srv    *serverProc
	reason string
	refs   int
	target string
	feed   *feed
	tally  *tally
	// mu guards rec while the warm-up and the end update it.
	mu sync.Mutex
	// server is the suite's server file, opened at its first reading;
	// srvMu guards it (readings come on the lane's watcher, the end on the
	// lane).
	srvMu     sync.Mutex
	server    *os.File
	serverErr error
	closed    bool
}

func suiteKey(s plan.Suite) string {
	k := s.Provider + "\x00" + s.Model + "\x00"
	if s.ThinkingLevel != nil {
		k += "=" + *s.ThinkingLevel
	}
	return k
}

// targetKey names what a suite's sampler measures: the server process, or
// the machine alone when the suite has none.
func targetKey(srv *serverProc) string {
	if srv == nil {
		return "no server"
	}
	return "pid " + strconv.Itoa(int(srv.pid))
}

// SuiteStart takes the before snapshot, writes it, and joins the sampler
// of the suite's target (starting it if no suite in flight uses it).
func (r *Recorder) SuiteStart(s plan.Suite) {
	key := suiteKey(s)
	r.mu.Lock()
	if run := r.active[key]; run != nil {
		// The same suite started again before it ended: keep one bracket.
		run.refs++
		r.mu.Unlock()
		return
	}
	run := &suiteRun{
		rec:   rundir.SuiteRecord{Provider: s.Provider, ProviderType: s.ProviderType, Model: s.Model, ThinkingLevel: s.ThinkingLevel},
		files: rundir.ResourceFiles(s.Provider, s.Model, s.ThinkingLevel),
		refs:  1,
	}
	r.active[key] = run
	r.mu.Unlock()

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	run.srv, run.reason = r.servers.find(ctx, s.Server)
	run.rec.Before = r.take(ctx, run.srv, run.reason)
	r.record(rundir.WriteFile(rundir.Path(r.dir, run.files.Before), []byte(renderSnapshot("before", &run.rec, run.rec.Before, nil))))
	r.record(rundir.WriteJSON(rundir.Path(r.dir, run.files.JSON), &run.rec))

	// The readings themselves, one line each as they are taken (appended:
	// a resumed suite adds to its series; a killed run keeps what it had;
	// a symlink in its place is refused, not written through).
	series, err := os.OpenFile(rundir.Path(r.dir, run.files.Samples), os.O_WRONLY|os.O_CREATE|os.O_APPEND|syscall.O_NOFOLLOW, 0o644)
	r.record(err)
	if err != nil {
		series = nil
	}
	run.tally = newTally(r.interval(), run.srv != nil, series)
	run.target = targetKey(run.srv)
	run.feed = r.joinFeed(run.target, run.srv)
	run.feed.join(run.tally)
}

func (r *Recorder) interval() time.Duration {
	if r.Interval <= 0 {
		return DefaultInterval
	}
	return r.Interval
}

// joinFeed returns the target's sampler, started for the first suite.
func (r *Recorder) joinFeed(target string, srv *serverProc) *feed {
	r.mu.Lock()
	defer r.mu.Unlock()
	ref := r.feeds[target]
	if ref == nil {
		var seen func(*reading)
		if r.seenReading != nil {
			seen = func(rd *reading) { r.seenReading(target, rd) }
		}
		ref = &feedRef{feed: newFeed(srv, r.interval(), r.read, seen)}
		r.feeds[target] = ref
		if r.feedStarted != nil {
			r.feedStarted(target)
		}
		go ref.feed.loop()
	}
	ref.refs++
	return ref.feed
}

// leaveFeed ends the suite's window on its target's sampler, stopping the
// sampler when the suite was the last to use it.
func (r *Recorder) leaveFeed(run *suiteRun) {
	r.mu.Lock()
	ref := r.feeds[run.target]
	ref.refs--
	last := ref.refs == 0
	if last {
		delete(r.feeds, run.target)
	}
	r.mu.Unlock()
	run.feed.leave(run.tally, last)
	if r.windowed != nil {
		r.windowed(run.files.JSON, run.tally.from, run.tally.to)
	}
}

func (r *Recorder) take(ctx context.Context, srv *serverProc, reason string) *rundir.Snapshot {
	if r.snap != nil {
		return r.snap(ctx, r.dir, srv, reason)
	}
	return take(ctx, r.dir, srv, reason)
}

// SuiteEnd ends the suite's sampling, takes the after snapshot and writes
// the suite's after file and structured record.
func (r *Recorder) SuiteEnd(s plan.Suite) {
	key := suiteKey(s)
	r.mu.Lock()
	run := r.active[key]
	if run == nil {
		r.mu.Unlock()
		r.record(fmt.Errorf("resources: suite %s/%s ended without starting", s.Provider, s.Model))
		return
	}
	run.refs--
	if run.refs > 0 {
		r.mu.Unlock()
		return
	}
	delete(r.active, key)
	r.mu.Unlock()
	r.finish(run)
}

func (r *Recorder) finish(run *suiteRun) {
	r.leaveFeed(run)
	r.record(run.closeServer())
	r.record(run.tally.closeSeries())
	peak := run.tally.peak()

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	after := r.take(ctx, run.srv, run.reason)
	run.mu.Lock()
	defer run.mu.Unlock()
	run.rec.After = after
	run.rec.Peak = windowPeak(peak, run.rec.Before, after)
	r.record(rundir.WriteFile(rundir.Path(r.dir, run.files.After), []byte(renderSnapshot("after", &run.rec, run.rec.After, run.rec.Peak))))
	r.record(rundir.WriteJSON(rundir.Path(r.dir, run.files.JSON), &run.rec))
}

// ServerReading appends a reading of the suite's model server to the
// suite's server file (output.WithServerReadings), opened at the first
// one: a suite whose server said nothing has no such file. The first
// write error is kept and ends the file; readings after the suite ended
// are dropped.
func (r *Recorder) ServerReading(s plan.Suite, smp rundir.ServerSample) {
	r.mu.Lock()
	run := r.active[suiteKey(s)]
	r.mu.Unlock()
	if run == nil {
		return
	}
	run.srvMu.Lock()
	defer run.srvMu.Unlock()
	if run.closed || run.serverErr != nil {
		return
	}
	if run.server == nil {
		// Appended, as the samples: a resumed suite adds to its readings.
		f, err := os.OpenFile(rundir.Path(r.dir, run.files.Server), os.O_WRONLY|os.O_CREATE|os.O_APPEND|syscall.O_NOFOLLOW, 0o644)
		if err != nil {
			run.serverErr = fmt.Errorf("resources: server readings: %w", err)
			return
		}
		run.server = f
	}
	b, err := json.Marshal(&smp)
	if err == nil {
		_, err = run.server.Write(append(b, '\n'))
	}
	if err != nil {
		run.serverErr = fmt.Errorf("resources: server readings: %w", err)
	}
}

// closeServer closes the suite's server file: later readings are dropped.
func (run *suiteRun) closeServer() error {
	run.srvMu.Lock()
	defer run.srvMu.Unlock()
	run.closed = true
	if run.server != nil {
		if err := run.server.Close(); err != nil && run.serverErr == nil {
			run.serverErr = err
		}
		run.server = nil
	}
	return run.serverErr
}

// SuiteWarmup records the suite's warm-up (its load time) in the suite's
// structured record (output.WithWarmup).
func (r *Recorder) SuiteWarmup(s plan.Suite, w output.Warmup) {
	r.mu.Lock()
	run := r.active[suiteKey(s)]
	r.mu.Unlock()
	if run == nil {
		return
	}
	wu := &rundir.Warmup{LoadMS: msFine(w.Load)}
	if w.ServerLoad != nil {
		v := msFine(*w.ServerLoad)
		wu.ServerLoadMS = &v
	}
	if w.Err != nil {
		wu.Error = w.Err.Error()
	}
	run.mu.Lock()
	defer run.mu.Unlock()
	run.rec.Warmup = wu
	r.record(rundir.WriteJSON(rundir.Path(r.dir, run.files.JSON), &run.rec))
}

func msFine(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// windowPeak is the peak over the suite's whole window: the sampler's
// maxima raised to the snapshots that bracket it, so a peak never sits
// below the before or after figure shown beside it (the suite's window
// opens just after the before snapshot and closes just before the after
// one).
// Samples and the mean stay the sampler's.
func windowPeak(p *rundir.Peak, snaps ...*rundir.Snapshot) *rundir.Peak {
	for _, s := range snaps {
		if s == nil {
			continue
		}
		p.CPUPercent = maxPtrF(p.CPUPercent, s.CPUPercent)
		p.MemUsed = maxPtrU(p.MemUsed, s.MemUsed)
		if s.Server != nil {
			p.ServerRSS = maxPtrU(p.ServerRSS, s.Server.RSSBytes)
			p.ServerCPUPercent = maxPtrF(p.ServerCPUPercent, s.Server.CPUPercent)
		}
	}
	for field, v := range map[string]bool{"cpu_percent": p.CPUPercent != nil, "mem_used_bytes": p.MemUsed != nil,
		"server_rss_bytes": p.ServerRSS != nil, "server_cpu_percent": p.ServerCPUPercent != nil} {
		if v {
			delete(p.Unavailable, field)
		}
	}
	if len(p.Unavailable) == 0 {
		p.Unavailable = nil
	}
	return p
}

func maxPtrF(cur, v *float64) *float64 {
	if v == nil {
		return cur
	}
	return maxF(cur, *v)
}

func maxPtrU(cur, v *uint64) *uint64 {
	if v == nil {
		return cur
	}
	return maxU(cur, *v)
}

// AddRecord takes nothing from a record: a suite's resources are measured
// around its cells, not from them.
func (r *Recorder) AddRecord(*results.Record) error { return nil }

// Stop is Close, when the run has ended (output.WithStop): snapshots are
// context, not results, so a failed one is the run's warning.
func (r *Recorder) Stop() error {
	if err := r.Close(); err != nil {
		return fmt.Errorf("resource snapshots: %w", err)
	}
	return nil
}

// Close ends every suite still open (a run that stopped early) so its after
// files are written, and returns the errors met while writing files.
func (r *Recorder) Close() error {
	r.mu.Lock()
	runs := make([]*suiteRun, 0, len(r.active))
	for k, run := range r.active {
		runs = append(runs, run)
		delete(r.active, k)
	}
	r.mu.Unlock()
	for _, run := range runs {
		r.finish(run)
	}
	return r.Err()
}

// Err returns the errors met so far writing resource files, joined.
func (r *Recorder) Err() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return errors.Join(r.errs...)
}

func (r *Recorder) record(err error) {
	if err == nil {
		return
	}
	r.mu.Lock()
	r.errs = append(r.errs, err)
	r.mu.Unlock()
}
