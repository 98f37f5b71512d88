package resources

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/shirou/gopsutil/v3/cpu"
	"github.com/shirou/gopsutil/v3/mem"
	"github.com/shirou/gopsutil/v3/process"

	"bench/internal/record/rundir"
)

// probe is what one reading of a target gets from the system: the raw
// counters, before any share is worked out.
type probe struct {
	at     time.Time
	cpu    []cpu.TimesStat
	cpuErr error
	mem    uint64
	memErr error
	tree   treeTimes // nil: no server
	rss    *uint64
	// self is bench's own CPU seconds (user and system); selfOK says it
	// was read.
	self   float64
	selfOK bool
	// stall is the CPU pressure's "some" total in microseconds
	// (readPressure); stallErr why it could not be read.
	stall    uint64
	stallErr error
}

// selfProc is bench's own process, for its CPU times.
var selfProc = sync.OnceValues(func() (*process.Process, error) { return process.NewProcess(int32(os.Getpid())) })

// readTarget reads the machine and the server's tree (srv nil: the machine
// only). It is a few /proc files plus one walk of the process table.
func readTarget(ctx context.Context, srv *serverProc) probe {
	p := probe{at: time.Now()}
	p.cpu, p.cpuErr = cpu.TimesWithContext(ctx, false)
	if vm, err := mem.VirtualMemoryWithContext(ctx); err != nil {
		p.memErr = err
	} else {
		p.mem = vm.Used
	}
	if srv != nil {
		p.tree, p.rss, _ = srv.read(ctx)
	}
	if sp, err := selfProc(); err == nil {
		if t, err := sp.TimesWithContext(ctx); err == nil {
			p.self, p.selfOK = t.User+t.System, true
		}
	}
	p.stall, p.stallErr = readPressure()
	return p
}

// reading is one shared reading of a target, as every suite in flight on
// it sees it. cpuFrom and srvFrom are where the spans its CPU shares
// measure begin: a suite keeps a share only when its span lies inside the
// suite's window, so a burst just before a suite starts is not its own.
type reading struct {
	at       time.Time
	sample   rundir.Sample
	cpuFrom  time.Time
	srvFrom  time.Time
	problems map[string]string // field -> why it could not be read
}

// feed is the one sampler of a target (the machine plus one server
// process, or the machine alone): every suite in flight that maps to the
// target takes its readings, so N overlapping suites cost one reading per
// tick, not N. It reads every interval, and also as soon as a suite joins
// or leaves (requests that arrive together share one reading), so each
// suite has a reading at both ends of its window whatever its length.
type feed struct {
	srv      *serverProc
	interval time.Duration
	// minSpan is the shortest span a CPU share is measured over: a reading
	// asked for by a join or a leave may come a few milliseconds after a
	// tick, and a share over so few clock ticks is noise that would become
	// every overlapping suite's peak. Such a reading gives memory only and
	// the next one measures CPU from the older baseline.
	minSpan time.Duration
	read    func(context.Context, *serverProc) probe
	seen    func(*reading) // test seam: every shared reading
	kick    chan struct{}
	done    chan struct{}

	mu       sync.Mutex
	subs     map[*tally]struct{}
	detached bool // no suite can join any more: stop once the last has left

	// Baselines of the CPU shares, touched by the loop only.
	cpuBase  []cpu.TimesStat
	cpuAt    time.Time
	selfBase float64
	selfOK   bool
	// stallBase is the pressure total at cpuAt; stallOK says it was read.
	stallBase uint64
	stallOK   bool
	treeBase  treeTimes
	treeAt    time.Time
}

func newFeed(srv *serverProc, interval time.Duration, read func(context.Context, *serverProc) probe, seen func(*reading)) *feed {
	if read == nil {
		read = readTarget
	}
	return &feed{srv: srv, interval: interval, minSpan: interval / 2, read: read, seen: seen,
		kick: make(chan struct{}, 1), done: make(chan struct{}), subs: map[*tally]struct{}{}}
}

// join adds a suite from now on and asks for a reading.
func (f *feed) join(t *tally) {
	f.mu.Lock()
	t.from = time.Now()
	f.subs[t] = struct{}{}
	f.mu.Unlock()
	f.poke()
}

// leave ends a suite's window at the next reading (taken now) and waits
// for it. detach says the suite is the target's last: the feed then stops.
func (f *feed) leave(t *tally, detach bool) {
	f.mu.Lock()
	t.ending, t.endAt = true, time.Now()
	f.detached = f.detached || detach
	f.mu.Unlock()
	f.poke()
	<-t.closed
	if detach {
		<-f.done
	}
}

func (f *feed) poke() {
	select {
	case f.kick <- struct{}{}:
	default: // a reading is already asked for and will start after now
	}
}

func (f *feed) loop() {
	defer close(f.done)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	t := time.NewTicker(f.interval)
	defer t.Stop()
	for {
		// Take the pending request first: this reading answers it.
		select {
		case <-f.kick:
		default:
		}
		if f.deliver(f.take(ctx)) {
			return
		}
		select {
		case <-f.kick:
		case <-t.C:
		}
	}
}

// take makes a shared reading from a probe: memory as read, CPU shares
// since the baselines when they are at least minSpan old.
func (f *feed) take(ctx context.Context) *reading {
	p := f.read(ctx, f.srv)
	rd := &reading{at: p.at, sample: rundir.Sample{TimeMS: p.at.UnixMilli(), ServerRSS: p.rss}}
	// others is the machine's busy CPU seconds less bench's own over the
	// machine share's span; the server's are taken off below.
	others, haveOthers := 0.0, false
	if p.cpuErr != nil {
		rd.problem("cpu_percent", p.cpuErr.Error())
	} else if f.cpuBase == nil || p.at.Sub(f.cpuAt) >= f.minSpan {
		if f.cpuBase != nil {
			if v, err := busyPercent(f.cpuBase, nil, p.cpu, nil); err == nil {
				rd.sample.CPUPercent, rd.cpuFrom = &v, f.cpuAt
				if busy, ok := busySeconds(f.cpuBase, p.cpu); ok && f.selfOK && p.selfOK {
					others, haveOthers = busy-max(0, p.self-f.selfBase), true
				}
				if st, ok := stealPercent(f.cpuBase, p.cpu); ok {
					rd.sample.StealPercent = &st
				}
				if span := p.at.Sub(f.cpuAt).Microseconds(); f.stallOK && p.stallErr == nil && span > 0 && p.stall >= f.stallBase {
					v := min(100, 100*float64(p.stall-f.stallBase)/float64(span))
					rd.sample.CPUPressurePercent = &v
				}
			}
		}
		if p.stallErr != nil {
			rd.problem("cpu_pressure_percent", p.stallErr.Error())
		}
		f.cpuBase, f.cpuAt = p.cpu, p.at
		f.selfBase, f.selfOK = p.self, p.selfOK
		f.stallBase, f.stallOK = p.stall, p.stallErr == nil
	}
	if p.memErr != nil {
		rd.problem("mem_used_bytes", p.memErr.Error())
	} else {
		rd.sample.MemUsed = &p.mem
	}
	if f.srv != nil && (f.treeBase == nil || p.at.Sub(f.treeAt) >= f.minSpan) {
		if f.treeBase != nil {
			if v, ok := treeCPU(f.treeBase, p.tree, p.at.Sub(f.treeAt)); ok {
				rd.sample.ServerCPUPercent, rd.srvFrom = &v, f.treeAt
			}
		}
		f.treeBase, f.treeAt = p.tree, p.at
	}
	if haveOthers {
		span := p.at.Sub(rd.cpuFrom).Seconds()
		switch {
		case f.srv == nil:
		case rd.sample.ServerCPUPercent != nil && rd.srvFrom.Equal(rd.cpuFrom):
			others -= *rd.sample.ServerCPUPercent / 100 * span
		default:
			haveOthers = false // the server's share covers another span
		}
		if haveOthers && span > 0 {
			v := 100 * max(0, others) / span
			rd.sample.OtherCPUPercent = &v
		}
	}
	if f.seen != nil {
		f.seen(rd)
	}
	return rd
}

func (rd *reading) problem(field, why string) {
	if rd.problems == nil {
		rd.problems = map[string]string{}
	}
	rd.problems[field] = why
}

// deliver hands a reading to every suite whose window holds it and closes
// the windows it ends. It reports whether the feed is done.
func (f *feed) deliver(rd *reading) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	for t := range f.subs {
		if rd.at.Before(t.from) {
			continue // taken before the suite joined
		}
		t.add(rd)
		if t.ending && !rd.at.Before(t.endAt) {
			t.to = rd.at
			delete(f.subs, t)
			close(t.closed)
		}
	}
	return f.detached && len(f.subs) == 0
}

// tally is one suite's share of its target's readings: its window, its
// series file and its maxima.
type tally struct {
	interval time.Duration
	server   bool // the target has a server
	closed   chan struct{}

	// Guarded by the feed's mu while the suite is in flight.
	from, to  time.Time
	ending    bool
	endAt     time.Time
	series    *os.File // nil: no series file
	seriesErr error
	samples   int
	cpuMax    *float64
	cpuSum    float64
	cpuN      int
	memMax    *uint64
	rssMax    *uint64
	srvCPU    *float64
	otherSum  float64
	otherN    int
	stealSum  float64
	stealN    int
	stallSum  float64
	stallN    int
	problems  map[string]string
}

func newTally(interval time.Duration, server bool, series *os.File) *tally {
	return &tally{interval: interval, server: server, series: series, closed: make(chan struct{}), problems: map[string]string{}}
}

// view is a reading as the suite sees it: a CPU share measured from
// before the suite's window is not the suite's.
func (t *tally) view(rd *reading) rundir.Sample {
	s := rd.sample
	if s.CPUPercent != nil && rd.cpuFrom.Before(t.from) {
		s.CPUPercent, s.OtherCPUPercent, s.StealPercent, s.CPUPressurePercent = nil, nil, nil, nil
	}
	if s.ServerCPUPercent != nil && rd.srvFrom.Before(t.from) {
		s.ServerCPUPercent = nil
	}
	return s
}

func (t *tally) add(rd *reading) {
	s := t.view(rd)
	t.samples++
	for k, v := range rd.problems {
		t.problems[k] = v
	}
	if s.CPUPercent != nil {
		t.cpuMax = maxF(t.cpuMax, *s.CPUPercent)
		t.cpuSum += *s.CPUPercent
		t.cpuN++
	}
	if s.MemUsed != nil {
		t.memMax = maxU(t.memMax, *s.MemUsed)
	}
	if s.ServerRSS != nil {
		t.rssMax = maxU(t.rssMax, *s.ServerRSS)
	}
	if s.ServerCPUPercent != nil {
		t.srvCPU = maxF(t.srvCPU, *s.ServerCPUPercent)
	}
	if s.OtherCPUPercent != nil {
		t.otherSum += *s.OtherCPUPercent
		t.otherN++
	}
	if s.StealPercent != nil {
		t.stealSum += *s.StealPercent
		t.stealN++
	}
	if s.CPUPressurePercent != nil {
		t.stallSum += *s.CPUPressurePercent
		t.stallN++
	}
	t.write(&s)
}

// write appends a reading to the series; the first failure is kept and
// ends the series, the peaks go on.
func (t *tally) write(line *rundir.Sample) {
	if t.series == nil || t.seriesErr != nil {
		return
	}
	b, err := json.Marshal(line)
	if err == nil {
		_, err = t.series.Write(append(b, '\n'))
	}
	if err != nil {
		t.seriesErr = fmt.Errorf("resources: samples: %w", err)
	}
}

// closeSeries closes the series file and returns its first error. The
// suite has left its feed: nothing else touches the tally.
func (t *tally) closeSeries() error {
	if t.series == nil {
		return t.seriesErr
	}
	err := t.series.Close()
	t.series = nil
	if t.seriesErr != nil {
		return t.seriesErr
	}
	return err
}

// peak is the suite's maxima over its window, once it has left its feed.
func (t *tally) peak() *rundir.Peak {
	p := &rundir.Peak{
		Samples:          t.samples,
		IntervalMS:       t.interval.Milliseconds(),
		CPUPercent:       t.cpuMax,
		MemUsed:          t.memMax,
		ServerRSS:        t.rssMax,
		ServerCPUPercent: t.srvCPU,
		Unavailable:      map[string]string{},
	}
	p.CPUPercentMean = meanOf(t.cpuSum, t.cpuN)
	p.OtherCPUPercentMean = meanOf(t.otherSum, t.otherN)
	p.StealPercentMean = meanOf(t.stealSum, t.stealN)
	p.CPUPressurePercentMean = meanOf(t.stallSum, t.stallN)
	for k, v := range t.problems {
		p.Unavailable[k] = v
	}
	na := func(field, reason string) {
		if _, ok := p.Unavailable[field]; !ok {
			p.Unavailable[field] = reason
		}
	}
	if p.CPUPercent == nil {
		na("cpu_percent", "no CPU reading spanned part of the suite")
		na("cpu_percent_mean", "no CPU reading spanned part of the suite")
	}
	if p.MemUsed == nil {
		na("mem_used_bytes", "no memory reading during the suite")
	}
	if p.OtherCPUPercentMean == nil {
		na("other_cpu_percent_mean", "no reading measured the machine, bench and the server over one span")
	}
	if p.StealPercentMean == nil {
		na("steal_percent_mean", "no CPU reading spanned part of the suite")
	}
	if p.CPUPressurePercentMean == nil {
		if why, ok := p.Unavailable["cpu_pressure_percent"]; ok {
			delete(p.Unavailable, "cpu_pressure_percent")
			na("cpu_pressure_percent_mean", why)
		} else {
			na("cpu_pressure_percent_mean", "no pressure reading spanned part of the suite")
		}
	} else {
		delete(p.Unavailable, "cpu_pressure_percent")
	}
	if !t.server {
		na("server_rss_bytes", "no local model server found")
		na("server_cpu_percent", "no local model server found")
	} else {
		if p.ServerRSS == nil {
			na("server_rss_bytes", "could not read the server's memory")
		}
		if p.ServerCPUPercent == nil {
			na("server_cpu_percent", "no reading of the server's CPU times spanned part of the suite")
		}
	}
	if len(p.Unavailable) == 0 {
		p.Unavailable = nil
	}
	return p
}

// meanOf is sum/n, nil when nothing was summed.
func meanOf(sum float64, n int) *float64 {
	if n == 0 {
		return nil
	}
	m := sum / float64(n)
	return &m
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
