package resources

import (
	"context"
	"strings"
	"sync"

	"github.com/shirou/gopsutil/v3/process"

	"bench/config"
)

// serverCache remembers, for the length of a run, which process serves
// each endpoint: looking it up lists every TCP socket and every process's
// open files, which a run of hundreds of suites on one server would
// otherwise do hundreds of times. A found server is checked to be the same
// live process (pid and start time) before it is used again; one that went
// away (a restarted server) is looked up afresh. A server not found stays
// not found for the run: its suites fail to reach it anyway.
type serverCache struct {
	mu sync.Mutex
	m  map[string]*cachedServer
}

type cachedServer struct {
	mu     sync.Mutex // held during a lookup: suites starting together wait for one
	looked bool
	srv    *serverProc
	reason string
}

func (c *serverCache) find(ctx context.Context, t config.Server) (*serverProc, string) {
	key := t.Endpoint + "\x00" + strings.Join(t.ProcessNames, "\x00")
	c.mu.Lock()
	if c.m == nil {
		c.m = map[string]*cachedServer{}
	}
	e := c.m[key]
	if e == nil {
		e = &cachedServer{}
		c.m[key] = e
	}
	c.mu.Unlock()

	e.mu.Lock()
	defer e.mu.Unlock()
	if e.looked && (e.srv == nil || e.srv.alive(ctx)) {
		return e.srv, e.reason
	}
	e.srv, e.reason = findServer(ctx, t)
	e.looked = ctx.Err() == nil // a lookup cut short is not an answer
	return e.srv, e.reason
}

// alive says whether the server's pid is still the process found: same
// start time, so a pid reused by another process does not pass.
func (sp *serverProc) alive(ctx context.Context) bool {
	p, err := process.NewProcessWithContext(ctx, sp.pid)
	if err != nil {
		return false
	}
	ct, err := p.CreateTimeWithContext(ctx)
	return err == nil && ct == sp.created
}
