package runner

import (
	"context"
	"fmt"
	"io"
	"sync"
	"time"

	"bench/internal/record/rundir"
	"bench/providers"
	"bench/run/output"
	"bench/run/plan"
	"bench/run/servermetrics"
)

// serverWatch reads one lane's server on the run's clock, one goroutine
// for everything bench asks the server about itself: which models it
// holds (a Resident provider's /api/ps, for cold starts and residency)
// and its Prometheus /metrics (the suite's metrics_url), every interval.
// Each reading is stamped when the tick began and handed, through the
// outputs' WithServerReadings, to every suite running on the lane, so it
// lands in the suite's server file on the same clock as its stages'
// stage_start_us and its cells' ended_at_us. A suite's begin and end
// take a reading too (so a suite shorter than the interval has its
// own). Between suites it asks nothing but the residency.
type serverWatch struct {
	res      *residency // nil: no provider of the lane lists its models
	scrape   *scrapeState
	interval time.Duration
	provs    map[string]providers.Provider
	clock    Clock
	outs     *output.Manager
	log      io.Writer
	server   string // the lane, in messages
	stopc    chan struct{}
	done     chan struct{}

	mu     sync.Mutex
	active []plan.Suite
	// tickMu makes the readings one at a time: the loop's, and the one
	// each suite's begin and end take, so every suite has a reading at
	// each end of its window (its counters' first and last values), however
	// short it is.
	tickMu sync.Mutex
}

// scrapeState is a lane's metrics scraping: the scraper, and what has
// been said about it.
type scrapeState struct {
	sc *servermetrics.Scraper
	// explicit: the entry named metrics_url; a kind's default that finds
	// no /metrics is a note, not a warning.
	explicit bool
	fails    int
	off      bool
}

// maxScrapeFails stops scraping a server whose /metrics keeps failing
// (refused, timed out, 5xx).
const maxScrapeFails = 5

// watch starts the lane's watcher when there is something to ask: a
// provider that can list what the server holds, or a suite whose entry
// scrapes metrics. nil when there is neither.
func (r *sweep) watch(l plan.Lane) *serverWatch {
	w := &serverWatch{provs: r.o.Providers, clock: r.o.Clock, outs: r.outs, log: r.o.Log, server: l.Key, interval: ResidencyInterval,
		stopc: make(chan struct{}), done: make(chan struct{})}
	for _, si := range l.Suites {
		s := r.o.Plan.Suites[si]
		if p, ok := r.o.Providers[s.Provider].(providers.Resident); ok && w.res == nil {
			w.res = &residency{prov: p, clock: r.o.Clock, keep: time.Duration(r.cfg.Run.Timeout) + residencyKeep, server: l.Key, log: r.o.Log}
		}
		if s.Server.Metrics != "" && w.scrape == nil {
			w.scrape = &scrapeState{sc: servermetrics.New(s.Server.Metrics), explicit: r.explicitMetrics(s.Provider)}
			w.interval = s.Server.MetricsInterval
			if w.interval <= 0 {
				w.interval = ResidencyInterval
			}
		}
	}
	if w.res == nil && w.scrape == nil {
		return nil
	}
	go w.loop()
	return w
}

// explicitMetrics says the entry named its metrics_url itself.
func (r *sweep) explicitMetrics(provider string) bool {
	for _, p := range r.cfg.Providers {
		if p.Name == provider {
			return p.MetricsURL != ""
		}
	}
	return false
}

func (w *serverWatch) loop() {
	defer close(w.done)
	t := time.NewTicker(w.interval)
	defer t.Stop()
	for {
		w.tick()
		select {
		case <-w.stopc:
			return
		case <-t.C:
		}
	}
}

func (w *serverWatch) stop() {
	if w == nil {
		return
	}
	close(w.stopc)
	<-w.done
}

// begin and end bracket a suite on the lane: readings taken in between
// are its own.
func (w *serverWatch) begin(s plan.Suite) {
	if w == nil {
		return
	}
	w.mu.Lock()
	w.active = append(w.active, s)
	w.mu.Unlock()
	w.tick()
}

func (w *serverWatch) end(s plan.Suite) {
	if w == nil {
		return
	}
	w.tick()
	w.mu.Lock()
	defer w.mu.Unlock()
	for i, a := range w.active {
		if suiteOf(a) == suiteOf(s) {
			w.active = append(w.active[:i], w.active[i+1:]...)
			return
		}
	}
}

// suiteOf identifies a suite among those of a lane.
func suiteOf(s plan.Suite) string {
	k := s.Provider + "\x00" + s.Model
	if s.ThinkingLevel != nil {
		k += "\x00" + *s.ThinkingLevel
	}
	return k
}

// tick reads the server once: its residency always (cells are judged on
// it between suites too, after a warm-up), its metrics while a suite
// runs; the reading goes to each running suite.
func (w *serverWatch) tick() {
	w.tickMu.Lock()
	defer w.tickMu.Unlock()
	w.mu.Lock()
	active := append([]plan.Suite(nil), w.active...)
	w.mu.Unlock()
	at := w.clock.Now()
	var smp rundir.ServerSample
	var models []string
	held := false
	if w.res != nil {
		models, held = w.res.poll()
	}
	if len(active) == 0 {
		return
	}
	if w.scrape != nil && !w.scrape.off {
		smp = w.scrapeOnce()
	}
	if held {
		smp.Models = models
		if smp.Models == nil {
			smp.Models = []string{}
		}
	}
	if smp.Empty() && !held {
		return
	}
	smp.TimeUS = at.UnixMicro()
	for _, s := range active {
		// A suite gets what its own entry asks of the server, whichever
		// suite of the lane started the watcher: a shard that runs it
		// alone records the same.
		one := smp
		if s.Server.Metrics == "" {
			one = rundir.ServerSample{TimeUS: smp.TimeUS, Models: smp.Models}
		}
		_, resident := w.provs[s.Provider].(providers.Resident)
		if !resident {
			one.Models = nil
		}
		if one.Empty() && one.Models == nil {
			continue
		}
		if held && resident {
			in := false
			for _, m := range models {
				if w.res.prov.SameModel(m, s.Model) {
					in = true
					break
				}
			}
			one.ModelHeld = &in
		}
		w.outs.ServerReading(s, one)
	}
}

// scrapeOnce scrapes the metrics, saying each problem once: a server
// that answers with no Prometheus text (or none bench maps) is not asked
// again; one that keeps failing is given up after maxScrapeFails.
func (w *serverWatch) scrapeOnce() rundir.ServerSample {
	st := w.scrape
	ctx, cancel := context.WithTimeout(context.Background(), servermetrics.Timeout)
	smp, notes, err := st.sc.Scrape(ctx)
	cancel()
	for _, n := range notes {
		fmt.Fprintf(w.log, "bench: warning: %s: metrics %s: %s\n", w.server, st.sc.URL(), n)
	}
	switch {
	case err == nil:
		st.fails = 0
		return smp
	case servermetrics.IsPermanent(err):
		st.off = true
		level := "warning: "
		if !st.explicit {
			level = ""
		}
		fmt.Fprintf(w.log, "bench: %s%s: metrics %s: %v; the server's metrics are not read (metrics_url says where they are, or off)\n", level, w.server, st.sc.URL(), err)
	default:
		if st.fails++; st.fails >= maxScrapeFails {
			st.off = true
			if !providers.Unreachable(err) {
				fmt.Fprintf(w.log, "bench: warning: %s: metrics %s: %d scrapes in a row failed, the last: %v; not scraped any more\n", w.server, st.sc.URL(), st.fails, err)
			}
		}
	}
	return rundir.ServerSample{}
}

// cold is the lane's residency verdict on a cell (false without one).
func (w *serverWatch) cold(model string, from, to time.Time) bool {
	return w != nil && w.res != nil && w.res.cold(model, from, to)
}

// poll reads what the server holds now (after a warm-up).
func (w *serverWatch) poll() {
	if w != nil && w.res != nil {
		w.res.poll()
	}
}
