package resources

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shirou/gopsutil/v3/cpu"

	"bench/config"
	"bench/internal/record/rundir"
	"bench/run/plan"
)

// scripted is a machine whose readings the test sets: in the normal phase
// each reading adds 25 busy and 75 idle seconds (25 % busy) and leaves the
// server's CPU time alone; in the spike phase it adds 100 busy seconds
// (100 %) and 1000 s of server CPU, with memory and RSS far above normal.
type scripted struct {
	mu         sync.Mutex
	spike      bool
	user, idle float64
	srvTime    float64
}

const (
	normalMem, spikeMem uint64 = 1000, 9000
	normalRSS, spikeRSS uint64 = 2000, 99999
)

func (m *scripted) set(spike bool) {
	m.mu.Lock()
	m.spike = spike
	m.mu.Unlock()
}

// burst adds busy time between two readings: the next CPU share spans it.
func (m *scripted) burst() {
	m.mu.Lock()
	m.user += 1000
	m.srvTime += 1000
	m.mu.Unlock()
}

func (m *scripted) read(_ context.Context, srv *serverProc) probe {
	m.mu.Lock()
	defer m.mu.Unlock()
	p := probe{at: time.Now(), mem: normalMem}
	rss := normalRSS
	if m.spike {
		m.user += 100
		m.srvTime += 1000
		p.mem, rss = spikeMem, spikeRSS
	} else {
		m.user += 25
		m.idle += 75
	}
	p.cpu = []cpu.TimesStat{{User: m.user, Idle: m.idle}}
	if srv != nil {
		p.tree = treeTimes{srv.pid: m.srvTime}
		p.rss = &rss
	}
	return p
}

// fixedSnap is every snapshot: below every normal reading, so a peak is
// the readings' own.
func fixedSnap(_ context.Context, _ string, srv *serverProc, _ string) *rundir.Snapshot {
	mem, cpuPct := uint64(500), 5.0
	s := &rundir.Snapshot{MemUsed: &mem, CPUPercent: &cpuPct, TakenAt: time.Now().UTC()}
	if srv != nil {
		rss, pct := uint64(600), 5.0
		s.Server = &rundir.Server{PID: srv.pid, RSSBytes: &rss, CPUPercent: &pct}
	}
	return s
}

// watched is a Recorder with the scripted machine and every seam recorded.
type watched struct {
	*Recorder
	machine *scripted

	mu       sync.Mutex
	started  []string
	readings map[string][]*reading
	windows  map[string][2]time.Time
}

func newWatched(t *testing.T) *watched {
	w := &watched{Recorder: NewRecorder(t.TempDir()), machine: &scripted{},
		readings: map[string][]*reading{}, windows: map[string][2]time.Time{}}
	w.Interval = 5 * time.Millisecond
	w.read = w.machine.read
	w.snap = fixedSnap
	w.feedStarted = func(target string) {
		w.mu.Lock()
		w.started = append(w.started, target)
		w.mu.Unlock()
	}
	w.seenReading = func(target string, rd *reading) {
		w.mu.Lock()
		w.readings[target] = append(w.readings[target], rd)
		w.mu.Unlock()
	}
	w.windowed = func(base string, from, to time.Time) {
		w.mu.Lock()
		w.windows[base] = [2]time.Time{from, to}
		w.mu.Unlock()
	}
	return w
}

// waitReading waits until a reading of target taken after since meets ok.
func (w *watched) waitReading(t *testing.T, target string, since time.Time, ok func(*reading) bool) *reading {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		w.mu.Lock()
		for _, rd := range w.readings[target] {
			if rd.at.After(since) && ok(rd) {
				w.mu.Unlock()
				return rd
			}
		}
		w.mu.Unlock()
		time.Sleep(time.Millisecond)
	}
	t.Fatalf("no reading of %s after %v came", target, since)
	return nil
}

// readingsIn waits for n readings of target after since (any kind).
func (w *watched) readingsIn(t *testing.T, target string, since time.Time, n int) {
	t.Helper()
	for i := 0; i < n; i++ {
		since = w.waitReading(t, target, since, func(*reading) bool { return true }).at
	}
}

func readSeries(t *testing.T, dir, base string) []rundir.Sample {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, base+rundir.SamplesSuffix))
	if err != nil {
		t.Fatal(err)
	}
	var out []rundir.Sample
	for i, l := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
		var s rundir.Sample
		if err := json.Unmarshal([]byte(l), &s); err != nil {
			t.Fatalf("%s line %d: %v", base, i+1, err)
		}
		out = append(out, s)
	}
	return out
}

// Suites in flight on one target take the readings of one sampler: three
// overlapping suites of one server start one sampler, a suite without a
// server another; the samplers stop with their last suite, and a suite
// after that starts a new one. Each suite's series is exactly the shared
// readings taken inside its window, and a spike between two suites'
// windows is in neither's peaks, only in the peaks of the suite whose
// window spans it.
func TestOverlappingSuitesShareOneSampler(t *testing.T) {
	w := newWatched(t)
	url := localServer(t)
	srv := config.Server{Endpoint: url}
	suite := func(model string) plan.Suite {
		return plan.Suite{Provider: "ollama_openai", ProviderType: "ollama_openai", Server: srv, Model: model}
	}
	long, a, b := suite("long"), suite("a"), suite("b")
	cli := plan.Suite{Provider: "claude", ProviderType: "claude_code_cli", Model: "sonnet"}
	target := "pid " + strconv.Itoa(os.Getpid())

	w.SuiteStart(long)
	w.SuiteStart(cli)
	w.SuiteStart(a)
	w.readingsIn(t, target, time.Now(), 4)
	w.SuiteEnd(a)
	aEnd := time.Now()
	// a's peaks are already written: nothing after its window reaches them.

	// The spike: only `long` is in flight on the server. Wait for a
	// reading whose CPU span lies wholly in it.
	w.machine.set(true)
	spike := w.waitReading(t, target, aEnd, func(rd *reading) bool {
		return rd.sample.CPUPercent != nil && *rd.sample.CPUPercent == 100
	})
	w.machine.set(false)
	w.waitReading(t, target, spike.at, func(rd *reading) bool { return *rd.sample.MemUsed == normalMem })
	// A burst just before b starts: the share that spans it is not b's.
	w.machine.burst()
	w.SuiteStart(b)
	w.readingsIn(t, target, time.Now(), 4)
	w.SuiteEnd(b)
	w.SuiteEnd(long)
	w.SuiteEnd(cli)

	w.mu.Lock()
	started := append([]string(nil), w.started...)
	w.mu.Unlock()
	if len(started) != 2 || started[0] != target || started[1] != "no server" {
		t.Fatalf("samplers started %q, want one for %q and one for the machine alone", started, target)
	}
	w.Recorder.mu.Lock()
	left := len(w.feeds)
	w.Recorder.mu.Unlock()
	if left != 0 {
		t.Errorf("%d samplers still running after every suite ended", left)
	}
	// The next suite finds no sampler running and starts one.
	after := suite("after")
	w.SuiteStart(after)
	w.SuiteEnd(after)
	if w.mu.Lock(); len(w.started) != 3 {
		t.Errorf("samplers started %q, want a third for the suite after", w.started)
	}
	w.mu.Unlock()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}

	// The spike lies between a's window and b's.
	wa, wb := w.windows[rundir.ResourceFiles(a.Provider, "a", nil).JSON], w.windows[rundir.ResourceFiles(b.Provider, "b", nil).JSON]
	if !spike.at.After(wa[1]) || !spike.at.Before(wb[0]) {
		t.Fatalf("spike at %v not between a's end %v and b's start %v", spike.at, wa[1], wb[0])
	}

	for _, s := range []plan.Suite{long, a, b, cli} {
		base := rundir.FileBase(s.Provider, s.Model, nil)
		win := w.windows[rundir.ResourceFiles(s.Provider, s.Model, nil).JSON]
		key := target
		if s.Server.Endpoint == "" {
			key = "no server"
		}
		// The series is the shared readings inside the window, a CPU share
		// kept only when its span lies inside too.
		var want []rundir.Sample
		for _, rd := range w.readings[key] {
			if rd.at.Before(win[0]) || rd.at.After(win[1]) {
				continue
			}
			v := rd.sample
			if rd.cpuFrom.Before(win[0]) {
				// The shares measured over the CPU's span go with it.
				v.CPUPercent, v.StealPercent, v.CPUPressurePercent = nil, nil, nil
			}
			if rd.srvFrom.Before(win[0]) {
				v.ServerCPUPercent = nil
			}
			want = append(want, v)
		}
		got := readSeries(t, w.dir, base)
		if len(got) < 2 || len(got) != len(want) {
			t.Fatalf("%s: %d series lines, want the %d readings in its window (at least its start and end)", base, len(got), len(want))
		}
		for i := range got {
			gj, _ := json.Marshal(got[i])
			wj, _ := json.Marshal(want[i])
			if string(gj) != string(wj) {
				t.Errorf("%s line %d: %s, want %s", base, i+1, gj, wj)
			}
			if got[i].TimeMS < win[0].UnixMilli() || got[i].TimeMS > win[1].UnixMilli() {
				t.Errorf("%s line %d at %d outside its window [%d, %d]", base, i+1, got[i].TimeMS, win[0].UnixMilli(), win[1].UnixMilli())
			}
		}
		if got[0].CPUPercent != nil || got[0].ServerCPUPercent != nil {
			t.Errorf("%s: first line %+v has a CPU share measured from before its window", base, got[0])
		}
	}

	peak := func(s plan.Suite) *rundir.Peak {
		rec, err := rundir.ReadSuite(w.dir, s.Provider, s.Model, s.ThinkingLevel)
		if err != nil || rec == nil || rec.Peak == nil {
			t.Fatalf("%s: %+v, %v", s.Model, rec, err)
		}
		return rec.Peak
	}
	// a's window ends before the spike and b's starts after it: their
	// peaks and means are the normal readings' (b's first CPU share, which
	// was measured over the spike, is not its own).
	for _, s := range []plan.Suite{a, b} {
		p := peak(s)
		if *p.MemUsed != normalMem || *p.ServerRSS != normalRSS || *p.CPUPercent != 25 || *p.CPUPercentMean != 25 || *p.ServerCPUPercent != 5 {
			t.Errorf("%s: peak %s, want only normal readings (mem %d, rss %d, cpu 25, server cpu 5 from its snapshots)", s.Model, js(p), normalMem, normalRSS)
		}
	}
	// long spans the spike.
	pl := peak(long)
	if *pl.MemUsed != spikeMem || *pl.ServerRSS != spikeRSS || *pl.CPUPercent != 100 || *pl.ServerCPUPercent < 1000 {
		t.Errorf("long: peak %s, want the spike's", js(pl))
	}
	// The machine alone: no server figures, with their reason.
	pc := peak(cli)
	if pc.ServerRSS != nil || pc.Unavailable["server_rss_bytes"] == "" || *pc.MemUsed != spikeMem {
		t.Errorf("cli: peak %s", js(pc))
	}
}

// A reading asked for by a join or a leave a moment after another gives
// memory but no CPU share: the next reading measures from the older
// baseline, so no share is taken over a handful of clock ticks.
func TestShortSpansGiveNoCPUShare(t *testing.T) {
	m := &scripted{}
	f := newFeed(nil, time.Hour, m.read, nil)
	ctx := context.Background()
	first := f.take(ctx)
	if first.sample.CPUPercent != nil || first.sample.MemUsed == nil {
		t.Fatalf("baseline reading %+v", first.sample)
	}
	soon := f.take(ctx)
	if soon.sample.CPUPercent != nil || soon.sample.MemUsed == nil {
		t.Errorf("reading a moment after the baseline %+v: want memory, no CPU share", soon.sample)
	}
	f.minSpan = 0
	later := f.take(ctx)
	if later.sample.CPUPercent == nil || *later.sample.CPUPercent != 25 || !later.cpuFrom.Equal(first.at) {
		t.Errorf("next reading %+v from %v: want 25 %% measured from the baseline at %v", later.sample, later.cpuFrom, first.at)
	}
}

// A reading taken before a suite joined is not the suite's, and a reading
// inside its window whose CPU share spans time before the window (here a
// burst around the join) counts for the suites already in flight, not for
// the new one; the next share is the new one's.
func TestShareFromBeforeTheWindowIsNotTheSuites(t *testing.T) {
	m := &scripted{}
	f := newFeed(&serverProc{pid: 7}, time.Hour, m.read, nil)
	f.minSpan = 0
	ctx := context.Background()
	old, young := newTally(time.Hour, true, nil), newTally(time.Hour, true, nil)
	f.join(old)
	f.deliver(f.take(ctx)) // the baseline, inside old's window
	f.deliver(f.take(ctx))
	// A reading under way when young joins is not young's.
	pending := f.take(ctx)
	f.join(young)
	f.deliver(pending)
	if young.samples != 0 || old.samples != 3 {
		t.Fatalf("a reading taken before young joined: young has %d samples, old %d", young.samples, old.samples)
	}
	m.burst()
	rd := f.take(ctx)
	f.deliver(rd)
	if rd.sample.CPUPercent == nil || *rd.sample.CPUPercent < 90 || rd.sample.ServerCPUPercent == nil {
		t.Fatalf("the reading after the burst: %+v", rd.sample)
	}
	if *old.cpuMax != *rd.sample.CPUPercent || *old.srvCPU != *rd.sample.ServerCPUPercent {
		t.Errorf("old suite: cpu peak %v, server %v; want the burst's %v, %v", *old.cpuMax, *old.srvCPU, *rd.sample.CPUPercent, *rd.sample.ServerCPUPercent)
	}
	if young.samples != 1 || young.cpuMax != nil || young.srvCPU != nil || young.memMax == nil {
		t.Errorf("young suite: %d samples, cpu %v, server cpu %v: want the reading without the burst's shares", young.samples, young.cpuMax, young.srvCPU)
	}
	f.deliver(f.take(ctx))
	if young.cpuMax == nil || *young.cpuMax != 25 || young.srvCPU == nil || *young.srvCPU != 0 {
		t.Errorf("young suite's next share: cpu %v, server %v; want 25 and 0", young.cpuMax, young.srvCPU)
	}
}

// The server found for an endpoint is looked up once per run: the cache
// answers while the process lives, and a process that is not the one
// found (same pid, other start time) is looked up afresh.
func TestServerCache(t *testing.T) {
	ctx := context.Background()
	var c serverCache
	url := localServer(t)
	srv, reason := c.find(ctx, config.Server{Endpoint: url})
	if srv == nil || srv.pid != int32(os.Getpid()) || srv.created == 0 {
		t.Fatalf("found %+v (%s), want this process with its start time", srv, reason)
	}
	if !srv.alive(ctx) {
		t.Fatal("this process is not alive")
	}
	// Nothing listens on port 1: only the cache can answer with a server.
	closed := config.Server{Endpoint: "http://127.0.0.1:1"}
	c.m[closed.Endpoint+"\x00"] = &cachedServer{looked: true, srv: srv}
	if got, _ := c.find(ctx, closed); got != srv {
		t.Errorf("cached server not used: %+v", got)
	}
	// Same pid, another start time: not the process found, look again.
	stale := &serverProc{pid: srv.pid, created: srv.created - 1000}
	c.m[url+"\x00"] = &cachedServer{looked: true, srv: stale}
	if got, _ := c.find(ctx, config.Server{Endpoint: url}); got == stale || got == nil || got.created != srv.created {
		t.Errorf("stale entry kept: %+v", got)
	}
	// Not found is remembered too, with its reason.
	other := config.Server{Endpoint: "http://127.0.0.1:2"}
	none, why := c.find(ctx, other)
	if none != nil || !strings.Contains(why, "port 2") || !c.m[other.Endpoint+"\x00"].looked {
		t.Errorf("port 2: %+v, %q", none, why)
	}
}

func js(v any) string { b, _ := json.Marshal(v); return string(b) }

// The CPU other work used is the machine's busy time less bench's own and
// the server tree's, over one span, in percent of one core; it is left
// out when the server's share spans another stretch of time.
func TestOtherCPUIsWhatNeitherBenchNorTheServerUsed(t *testing.T) {
	at := time.Unix(1_800_000_000, 0)
	var busy, idle, self, srvTime float64
	step := func(dBusy, dIdle, dSelf, dSrv float64) {
		at = at.Add(time.Second)
		busy, idle, self, srvTime = busy+dBusy, idle+dIdle, self+dSelf, srvTime+dSrv
	}
	read := func(_ context.Context, srv *serverProc) probe {
		p := probe{at: at, cpu: []cpu.TimesStat{{User: busy, Idle: idle}}, self: self, selfOK: true}
		if srv != nil {
			p.tree = treeTimes{srv.pid: srvTime}
		}
		return p
	}
	other := func(rd *reading) float64 {
		t.Helper()
		if rd.sample.OtherCPUPercent == nil {
			t.Fatalf("no other_cpu_percent in %+v", rd.sample)
		}
		return *rd.sample.OtherCPUPercent
	}

	// Four cores: 1.5 busy, of which bench 0.2 and the server 0.5.
	f := newFeed(&serverProc{pid: 7}, time.Second, read, nil)
	ctx := context.Background()
	if rd := f.take(ctx); rd.sample.OtherCPUPercent != nil {
		t.Errorf("the first reading has no span, yet other = %v", *rd.sample.OtherCPUPercent)
	}
	step(1.5, 2.5, 0.2, 0.5)
	if got := other(f.take(ctx)); math.Abs(got-80) > 1e-9 {
		t.Errorf("other CPU %v%%, want 80%%", got)
	}
	// Only bench and the server busy: nothing else.
	step(0.7, 3.3, 0.2, 0.5)
	if got := other(f.take(ctx)); math.Abs(got) > 1e-9 {
		t.Errorf("other CPU %v%%, want 0", got)
	}
	// Without a server: the machine less bench.
	m := newFeed(nil, time.Second, read, nil)
	m.take(ctx)
	step(1, 3, 0.25, 0)
	if got := other(m.take(ctx)); math.Abs(got-75) > 1e-9 {
		t.Errorf("no server: other CPU %v%%, want 75%%", got)
	}
	// A server share over another span (its baseline is younger): none.
	f.treeAt = f.cpuAt.Add(time.Millisecond)
	step(1, 3, 0.1, 0.1)
	if rd := f.take(ctx); rd.sample.OtherCPUPercent != nil {
		t.Errorf("spans differ, yet other = %v", *rd.sample.OtherCPUPercent)
	}
}

func TestParsePressure(t *testing.T) {
	got, err := parsePressure([]byte("some avg10=85.67 avg60=88.47 avg300=83.88 total=2448004414\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n"))
	if err != nil || got != 2448004414 {
		t.Errorf("%d %v", got, err)
	}
	for _, bad := range []string{"", "full avg10=0 total=3\n", "some avg10=1 total=x\n"} {
		if _, err := parsePressure([]byte(bad)); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

// CPU pressure is the growth of /proc/pressure/cpu's "some" total over a
// span, as a share of the span; steal is the stolen share of the CPU
// time. A machine without the pressure file gives no figure, and the
// suite's peak says why.
func TestPressureAndSteal(t *testing.T) {
	at := time.Unix(1_800_000_000, 0)
	var idle, steal float64
	var stall uint64
	stallErr := error(nil)
	read := func(context.Context, *serverProc) probe {
		return probe{at: at, cpu: []cpu.TimesStat{{User: 1, Idle: idle, Steal: steal}}, stall: stall, stallErr: stallErr}
	}
	f := newFeed(nil, time.Second, read, nil)
	ctx := context.Background()
	f.take(ctx)
	// One second: 0.3 s with a task waiting, of 2 s of CPU time 0.2 stolen.
	at, idle, steal, stall = at.Add(time.Second), 1.8, 0.2, 300_000
	rd := f.take(ctx)
	if p := rd.sample.CPUPressurePercent; p == nil || math.Abs(*p-30) > 1e-9 {
		t.Errorf("pressure %v, want 30", p)
	}
	if s := rd.sample.StealPercent; s == nil || math.Abs(*s-10) > 1e-9 {
		t.Errorf("steal %v, want 10", s)
	}
	tl := newTally(time.Second, false, nil)
	tl.from = at.Add(-2 * time.Second)
	tl.add(rd)
	stallErr = errNoPressure
	at = at.Add(time.Second)
	tl.add(f.take(ctx))
	if p := tl.peak(); p.CPUPressurePercentMean == nil || *p.CPUPressurePercentMean != 30 || p.StealPercentMean == nil {
		t.Errorf("peak %s", js(p))
	}
	// Only readings without the file: no figure, and the reason.
	tl = newTally(time.Second, false, nil)
	tl.from = at.Add(-2 * time.Second)
	at = at.Add(time.Second)
	tl.add(f.take(ctx))
	if p := tl.peak(); p.CPUPressurePercentMean != nil || !strings.Contains(p.Unavailable["cpu_pressure_percent_mean"], "/proc/pressure/cpu") {
		t.Errorf("no pressure file: peak %s", js(p))
	}
}

// A suite's server readings go to its own _server.jsonl, opened at the
// first one, in order; a suite whose server said nothing has no file, and
// a reading after the suite ended is dropped.
func TestServerReadings(t *testing.T) {
	w := newWatched(t)
	a := plan.Suite{Provider: "p", Model: "a"}
	b := plan.Suite{Provider: "p", Model: "b"}
	w.SuiteStart(a)
	w.SuiteStart(b)
	one, two := 1.0, 2.0
	w.ServerReading(a, rundir.ServerSample{TimeUS: 10, Server: "vllm", Running: &one})
	w.ServerReading(a, rundir.ServerSample{TimeUS: 20, Server: "vllm", Running: &two})
	w.SuiteEnd(a)
	w.SuiteEnd(b)
	w.ServerReading(a, rundir.ServerSample{TimeUS: 30, Running: &two})
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(rundir.Path(w.dir, rundir.ResourceFiles("p", "a", nil).Server))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	got, warns, err := rundir.ReadServerSamples(f, "a")
	if err != nil || len(warns) > 0 || len(got) != 2 || *got[1].Running != 2 || got[0].TimeUS != 10 {
		t.Fatalf("readings %+v, warnings %v, err %v", got, warns, err)
	}
	if _, err := os.Stat(rundir.Path(w.dir, rundir.ResourceFiles("p", "b", nil).Server)); !os.IsNotExist(err) {
		t.Errorf("a server file for a suite without readings: %v", err)
	}
}
