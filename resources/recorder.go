package resources

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/shirou/gopsutil/v3/cpu"
	"github.com/shirou/gopsutil/v3/mem"

	"bench/plan"
	"bench/rundir"
	"bench/runner"
)

// DefaultInterval is how often the sampler reads the machine during a suite.
const DefaultInterval = 500 * time.Millisecond

// Recorder implements runner.SuiteHooks and runner.WarmupHook: it brackets
// each suite with snapshots, samples in between (appending each reading to
// the suite's samples file), records the suite's warm-up, and writes the
// suite's resource files into the run directory. The runner runs a
// server's suites one at a time, so a suite's window holds only its own
// cells on that server; suites of other servers (and interleaved ones) may
// overlap, so state is kept per suite.
type Recorder struct {
	dir string
	// Interval is the sampler's period (DefaultInterval when zero). Set it
	// before the first suite starts.
	Interval time.Duration

	mu     sync.Mutex
	active map[string]*suiteRun
	errs   []error
}

// NewRecorder records into runDir.
func NewRecorder(runDir string) *Recorder {
	return &Recorder{dir: runDir, active: map[string]*suiteRun{}}
}

type suiteRun struct {
	rec     rundir.SuiteRecord
	base    string
	srv     *serverProc
	reason  string
	refs    int
	stop    chan struct{}
	done    chan struct{}
	sampler *sampler
	// mu guards rec while the warm-up and the end update it.
	mu sync.Mutex
}

func suiteKey(s plan.Suite) string {
	k := s.Provider + "\x00" + s.Model + "\x00"
	if s.ThinkingLevel != nil {
		k += "=" + *s.ThinkingLevel
	}
	return k
}

// SuiteStart takes the before snapshot, writes it, and starts the sampler.
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
		rec:  rundir.SuiteRecord{Provider: s.Provider, ProviderType: s.ProviderType, Model: s.Model, ThinkingLevel: s.ThinkingLevel},
		base: rundir.FileBase(s.Provider, s.Model, s.ThinkingLevel),
		refs: 1,
		stop: make(chan struct{}),
		done: make(chan struct{}),
	}
	r.active[key] = run
	r.mu.Unlock()

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	run.srv, run.reason = findServer(ctx, s.Server)
	run.rec.Before = take(ctx, r.dir, run.srv, run.reason)
	r.record(rundir.WriteFile(filepath.Join(r.dir, run.base+"_before.txt"), []byte(renderSnapshot("before", &run.rec, run.rec.Before, nil))))
	r.record(rundir.WriteJSON(filepath.Join(r.dir, run.base+".json"), &run.rec))

	interval := r.Interval
	if interval <= 0 {
		interval = DefaultInterval
	}
	run.sampler = newSampler(run.srv, interval)
	// The readings themselves, one line each as they are taken (appended:
	// a resumed suite adds to its series; a killed run keeps what it had).
	series, err := os.OpenFile(filepath.Join(r.dir, run.base+SamplesSuffix), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	r.record(err)
	run.sampler.series = series
	go func() {
		defer close(run.done)
		run.sampler.loop(run.stop)
	}()
}

// SuiteEnd stops the sampler, takes the after snapshot and writes the
// suite's after file and structured record.
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
	close(run.stop)
	<-run.done
	r.record(run.sampler.closeSeries())
	peak := run.sampler.peak()

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	after := take(ctx, r.dir, run.srv, run.reason)
	run.mu.Lock()
	defer run.mu.Unlock()
	run.rec.After = after
	run.rec.Peak = windowPeak(peak, run.rec.Before, after)
	r.record(rundir.WriteFile(filepath.Join(r.dir, run.base+"_after.txt"), []byte(renderSnapshot("after", &run.rec, run.rec.After, run.rec.Peak))))
	r.record(rundir.WriteJSON(filepath.Join(r.dir, run.base+".json"), &run.rec))
}

// SuiteWarmup records the suite's warm-up (its load time) in the suite's
// structured record (runner.WarmupHook).
func (r *Recorder) SuiteWarmup(s plan.Suite, w runner.Warmup) {
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
	r.record(rundir.WriteJSON(filepath.Join(r.dir, run.base+".json"), &run.rec))
}

func msFine(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// windowPeak is the peak over the suite's whole window: the sampler's
// maxima raised to the snapshots that bracket it, so a peak never sits
// below the before or after figure shown beside it (the sampler starts
// just after the before snapshot and stops just before the after one).
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

// SamplesSuffix names a suite's sample series: beside its
// resources_<provider>_<model>[_<thinking>].json, the file with this suffix
// holds one Sample per line, in time order (report.html's resource
// timeline).
const SamplesSuffix = "_samples.jsonl"

// Sample is one reading of the sampler, one line of a samples file. A null
// figure was not measured at that moment (the first reading has no CPU
// share: it is the baseline).
type Sample struct {
	// TimeMS is when the reading was taken, in Unix milliseconds.
	TimeMS int64 `json:"t_ms"`
	// CPUPercent is the whole machine's busy share since the last reading.
	CPUPercent *float64 `json:"cpu_percent"`
	// MemUsed is the machine's used memory, in bytes.
	MemUsed *uint64 `json:"mem_used_bytes"`
	// ServerRSS is the model server tree's resident memory, in bytes.
	ServerRSS *uint64 `json:"server_rss_bytes"`
	// ServerCPUPercent is the server tree's CPU since the last reading, in
	// percent of one core.
	ServerCPUPercent *float64 `json:"server_cpu_percent"`
}

// sampler reads the machine every interval, keeps maxima and writes each
// reading to its series. Each reading is a few /proc files and one short
// line, so it costs the suite close to nothing.
type sampler struct {
	srv       *serverProc
	interval  time.Duration
	series    *os.File // nil: no series file
	seriesErr error

	mu       sync.Mutex
	samples  int
	cpuMax   *float64
	cpuSum   float64
	cpuN     int
	memMax   *uint64
	rssMax   *uint64
	srvCPU   *float64
	problems map[string]string

	lastCPU  []cpu.TimesStat
	lastTree treeTimes
	lastAt   time.Time
}

func newSampler(srv *serverProc, interval time.Duration) *sampler {
	return &sampler{srv: srv, interval: interval, problems: map[string]string{}}
}

func (s *sampler) loop(stop <-chan struct{}) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s.sample(ctx) // baseline for the first interval's deltas
	t := time.NewTicker(s.interval)
	defer t.Stop()
	for {
		select {
		case <-stop:
			s.sample(ctx)
			return
		case <-t.C:
			s.sample(ctx)
		}
	}
}

func (s *sampler) sample(ctx context.Context) {
	now := time.Now()
	ct, cerr := cpu.TimesWithContext(ctx, false)
	vm, merr := mem.VirtualMemoryWithContext(ctx)
	var tree treeTimes
	var rss *uint64
	if s.srv != nil {
		tree, rss, _ = s.srv.read(ctx)
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	s.samples++
	line := Sample{TimeMS: now.UnixMilli(), ServerRSS: rss}
	if cerr != nil {
		s.problems["cpu_percent"] = cerr.Error()
	} else if s.lastCPU != nil {
		if p, err := busyPercent(s.lastCPU, nil, ct, nil); err == nil {
			s.cpuMax = maxF(s.cpuMax, p)
			s.cpuSum += p
			s.cpuN++
			line.CPUPercent = &p
		}
	}
	if cerr == nil {
		s.lastCPU = ct
	}
	if merr != nil {
		s.problems["mem_used_bytes"] = merr.Error()
	} else {
		s.memMax = maxU(s.memMax, vm.Used)
		line.MemUsed = &vm.Used
	}
	if rss != nil {
		s.rssMax = maxU(s.rssMax, *rss)
	}
	if s.lastTree != nil {
		if p, ok := treeCPU(s.lastTree, tree, now.Sub(s.lastAt)); ok {
			s.srvCPU = maxF(s.srvCPU, p)
			line.ServerCPUPercent = &p
		}
	}
	s.lastTree, s.lastAt = tree, now
	s.write(&line)
}

// write appends a reading to the series; the first failure is kept and
// ends the series, the peaks go on.
func (s *sampler) write(line *Sample) {
	if s.series == nil || s.seriesErr != nil {
		return
	}
	b, err := json.Marshal(line)
	if err == nil {
		_, err = s.series.Write(append(b, '\n'))
	}
	if err != nil {
		s.seriesErr = fmt.Errorf("resources: samples: %w", err)
	}
}

// closeSeries closes the series file and returns its first error.
func (s *sampler) closeSeries() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.series == nil {
		return s.seriesErr
	}
	err := s.series.Close()
	s.series = nil
	if s.seriesErr != nil {
		return s.seriesErr
	}
	return err
}

func (s *sampler) peak() *rundir.Peak {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := &rundir.Peak{
		Samples:          s.samples,
		IntervalMS:       s.interval.Milliseconds(),
		CPUPercent:       s.cpuMax,
		MemUsed:          s.memMax,
		ServerRSS:        s.rssMax,
		ServerCPUPercent: s.srvCPU,
		Unavailable:      map[string]string{},
	}
	if s.cpuN > 0 {
		m := s.cpuSum / float64(s.cpuN)
		p.CPUPercentMean = &m
	}
	for k, v := range s.problems {
		p.Unavailable[k] = v
	}
	na := func(field, reason string) {
		if _, ok := p.Unavailable[field]; !ok {
			p.Unavailable[field] = reason
		}
	}
	if p.CPUPercent == nil {
		na("cpu_percent", "fewer than two CPU readings during the suite")
		na("cpu_percent_mean", "fewer than two CPU readings during the suite")
	}
	if p.MemUsed == nil {
		na("mem_used_bytes", "no memory reading during the suite")
	}
	if s.srv == nil {
		na("server_rss_bytes", "no local model server found")
		na("server_cpu_percent", "no local model server found")
	} else {
		if p.ServerRSS == nil {
			na("server_rss_bytes", "could not read the server's memory")
		}
		if p.ServerCPUPercent == nil {
			na("server_cpu_percent", "fewer than two readings of the server's CPU times")
		}
	}
	if len(p.Unavailable) == 0 {
		p.Unavailable = nil
	}
	return p
}

func maxF(cur *float64, v float64) *float64 {
	if cur == nil || v > *cur {
		return &v
	}
	return cur
}

func maxU(cur *uint64, v uint64) *uint64 {
	if cur == nil || v > *cur {
		return &v
	}
	return cur
}
