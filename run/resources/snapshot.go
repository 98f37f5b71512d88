// Package resources records what a model's suite cost the machine: a
// snapshot before and after each suite (CPU, load, memory, swap, disk,
// processes, and the local model server's RSS and CPU), and a light sampler
// in between that keeps the peaks. Every figure the platform cannot give is
// null with a reason in Unavailable, never a made-up 0.
//
// Layer: the run (an output: brackets each suite through the runner's suite
// hooks).
package resources

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"bench/config"
	"bench/internal/record/rundir"

	"github.com/shirou/gopsutil/v3/cpu"
	"github.com/shirou/gopsutil/v3/disk"
	"github.com/shirou/gopsutil/v3/load"
	"github.com/shirou/gopsutil/v3/mem"
	psnet "github.com/shirou/gopsutil/v3/net"
	"github.com/shirou/gopsutil/v3/process"
)

func init() {
	// The boot time is read for every process's stat file otherwise (a
	// read of /proc/stat each); it does not change while bench runs.
	process.EnableBootTimeCache(true)
}

// cpuWindow is how long a snapshot measures CPU use over: long enough to be
// a figure, short enough not to hold a suite back.
const cpuWindow = 200 * time.Millisecond

// take is Take with the server already looked up (srv nil: reason says why).
func take(ctx context.Context, outDir string, srv *serverProc, srvReason string) *rundir.Snapshot {
	s := &rundir.Snapshot{Unavailable: map[string]string{}}
	na := func(field string, err error) { s.Unavailable[field] = err.Error() }

	cpu0, cpuErr := cpu.TimesWithContext(ctx, false)
	tree0, _, _ := srv.read(ctx)
	start := time.Now()

	if n, err := cpu.CountsWithContext(ctx, true); err != nil || n <= 0 {
		na("cpu_count", orErr(err, "no CPU count reported"))
	} else {
		s.CPUCount = &n
	}
	if l, err := load.AvgWithContext(ctx); err != nil {
		for _, f := range []string{"load1", "load5", "load15"} {
			na(f, err)
		}
	} else {
		s.Load1, s.Load5, s.Load15 = &l.Load1, &l.Load5, &l.Load15
	}
	if v, err := mem.VirtualMemoryWithContext(ctx); err != nil {
		for _, f := range []string{"mem_total_bytes", "mem_used_bytes", "mem_available_bytes"} {
			na(f, err)
		}
	} else {
		s.MemTotal, s.MemUsed, s.MemAvailable = &v.Total, &v.Used, &v.Available
	}
	if sw, err := mem.SwapMemoryWithContext(ctx); err != nil {
		na("swap_total_bytes", err)
		na("swap_used_bytes", err)
	} else {
		s.SwapTotal, s.SwapUsed = &sw.Total, &sw.Used
	}
	s.DiskPath = outDir
	if abs, err := filepath.Abs(outDir); err == nil {
		s.DiskPath = abs
	}
	if u, err := disk.UsageWithContext(ctx, s.DiskPath); err != nil {
		for _, f := range []string{"disk_total_bytes", "disk_used_bytes", "disk_free_bytes"} {
			na(f, err)
		}
	} else {
		s.DiskTotal, s.DiskUsed, s.DiskFree = &u.Total, &u.Used, &u.Free
	}
	if n, err := dirBytes(outDir); err != nil {
		na("out_dir_bytes", err)
	} else {
		s.OutDirBytes = &n
	}
	if pids, err := process.PidsWithContext(ctx); err != nil {
		na("process_count", err)
	} else {
		n := len(pids)
		s.ProcessCount = &n
	}

	// Sleep out the rest of the CPU window, then read the counters again.
	if rest := cpuWindow - time.Since(start); rest > 0 {
		select {
		case <-ctx.Done():
		case <-time.After(rest):
		}
	}
	cpu1, cpuErr1 := cpu.TimesWithContext(ctx, false)
	tree1, rss, nproc := srv.read(ctx)
	elapsed := time.Since(start)
	s.CPUWindowMS = elapsed.Milliseconds()
	if p, err := busyPercent(cpu0, cpuErr, cpu1, cpuErr1); err != nil {
		na("cpu_percent", err)
	} else {
		s.CPUPercent = &p
	}
	if srv == nil {
		s.Unavailable["server"] = srvReason
	} else {
		s.Server = &rundir.Server{PID: srv.pid, Name: srv.name, FoundBy: srv.foundBy, Processes: nproc, RSSBytes: rss}
		if pct, ok := treeCPU(tree0, tree1, elapsed); ok {
			s.Server.CPUPercent = &pct
		}
		if s.Server.RSSBytes == nil {
			s.Unavailable["server.rss_bytes"] = "could not read the server's memory (permission?)"
		}
		if s.Server.CPUPercent == nil {
			s.Unavailable["server.cpu_percent"] = "could not read the server's CPU times (permission?)"
		}
	}
	s.TakenAt = time.Now().UTC()
	if len(s.Unavailable) == 0 {
		s.Unavailable = nil
	}
	return s
}

func orErr(err error, msg string) error {
	if err != nil {
		return err
	}
	return errors.New(msg)
}

// busyPercent is the machine's busy share between two cpu.Times readings.
func busyPercent(t0 []cpu.TimesStat, err0 error, t1 []cpu.TimesStat, err1 error) (float64, error) {
	if err := errors.Join(err0, err1); err != nil {
		return 0, fmt.Errorf("read CPU times: %w", err)
	}
	if len(t0) != 1 || len(t1) != 1 {
		return 0, errors.New("the platform gave no total CPU times")
	}
	tot0, idle0 := totalIdle(t0[0])
	tot1, idle1 := totalIdle(t1[0])
	if tot1 <= tot0 {
		return 0, errors.New("CPU counters did not advance over the window")
	}
	busy := 100 * ((tot1 - tot0) - (idle1 - idle0)) / (tot1 - tot0)
	return min(100, max(0, busy)), nil
}

// busySeconds is the CPU seconds all cores together spent busy between
// two readings of the total times.
func busySeconds(t0, t1 []cpu.TimesStat) (float64, bool) {
	if len(t0) != 1 || len(t1) != 1 {
		return 0, false
	}
	tot0, idle0 := totalIdle(t0[0])
	tot1, idle1 := totalIdle(t1[0])
	if tot1 <= tot0 {
		return 0, false
	}
	return max(0, (tot1-tot0)-(idle1-idle0)), true
}

// stealPercent is the share of the CPU time between two readings that
// the hypervisor gave other guests (steal): a virtual machine's noisy
// neighbours, which no process of this machine shows.
func stealPercent(t0, t1 []cpu.TimesStat) (float64, bool) {
	if len(t0) != 1 || len(t1) != 1 {
		return 0, false
	}
	tot0, _ := totalIdle(t0[0])
	tot1, _ := totalIdle(t1[0])
	if tot1 <= tot0 {
		return 0, false
	}
	return min(100, max(0, 100*(t1[0].Steal-t0[0].Steal)/(tot1-tot0))), true
}

// totalIdle follows gopsutil's own busy computation: guest time is already
// counted in user time on Linux.
func totalIdle(t cpu.TimesStat) (total, idle float64) {
	total = t.User + t.System + t.Idle + t.Nice + t.Iowait + t.Irq + t.Softirq + t.Steal
	return total, t.Idle + t.Iowait
}

// dirBytes sums the sizes of the regular files under dir.
func dirBytes(dir string) (uint64, error) {
	var n uint64
	err := filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() {
			if info, err := d.Info(); err == nil {
				n += uint64(info.Size())
			}
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("size of %s: %w", dir, err)
	}
	return n, nil
}

// serverProc is a found server: its root pid and how it was found.
type serverProc struct {
	pid     int32
	name    string
	foundBy string
	created int64 // start time (Unix ms), to tell a reused pid apart

	// parents are the parent pids of the processes seen so far (tree);
	// members the tree as last listed, at listed.
	mu      sync.Mutex
	parents map[int32]int32
	members []int32
	listed  time.Time
}

// treeRelist is how long a listing of the server's tree serves the
// readings after it: the process table is listed again (and a new child
// of the server found) at most this long after the last listing. Listing
// /proc's 500 entries is most of a reading's cost (BenchmarkSamplerReading);
// a model server's processes change when it loads a model, not between
// two readings.
const treeRelist = 2 * time.Second

// findServer looks for the local model server its kind described: the
// process listening on the endpoint's port when the host is this machine,
// else a process of one of the kind's names. It returns nil and the reason
// when there is none.
func findServer(ctx context.Context, t config.Server) (*serverProc, string) {
	if t.Endpoint == "" && len(t.ProcessNames) == 0 {
		return nil, "the provider runs no local model server"
	}
	var reasons []string
	if t.Endpoint == "" {
		// Only names to go by.
	} else if host, port, ok := loopbackPort(t.Endpoint); !ok {
		reasons = append(reasons, fmt.Sprintf("base_url host %q is not this machine", host))
	} else if pid, err := listener(ctx, port); err != nil {
		reasons = append(reasons, err.Error())
	} else {
		p := &serverProc{pid: pid, foundBy: fmt.Sprintf("listening on port %d", port)}
		if proc, err := process.NewProcessWithContext(ctx, pid); err == nil {
			p.name, _ = proc.NameWithContext(ctx)
			p.created, _ = proc.CreateTimeWithContext(ctx)
		}
		return p, ""
	}
	for _, name := range t.ProcessNames {
		if p := byName(ctx, name); p != nil {
			return p, ""
		}
		reasons = append(reasons, fmt.Sprintf("no process named %q", name))
	}
	return nil, strings.Join(reasons, "; ")
}

// loopbackPort returns the port of a base URL whose host is this machine.
func loopbackPort(baseURL string) (host string, port uint32, ok bool) {
	u, err := url.Parse(baseURL)
	if err != nil || u.Host == "" {
		return baseURL, 0, false
	}
	host = u.Hostname()
	local := host == "localhost" || strings.HasSuffix(host, ".localhost")
	if ip := net.ParseIP(host); ip != nil {
		local = ip.IsLoopback() || ip.IsUnspecified()
	}
	if !local {
		return host, 0, false
	}
	ps := u.Port()
	if ps == "" {
		ps = map[string]string{"http": "80", "https": "443"}[u.Scheme]
	}
	n, err := strconv.ParseUint(ps, 10, 16)
	if err != nil || n == 0 {
		return host, 0, false
	}
	return host, uint32(n), true
}

// listener returns the pid of the process listening on a TCP port.
func listener(ctx context.Context, port uint32) (int32, error) {
	conns, err := psnet.ConnectionsWithoutUidsWithContext(ctx, "tcp")
	if err != nil {
		return 0, fmt.Errorf("list TCP listeners: %w", err)
	}
	seen := false
	for _, c := range conns {
		if c.Status == "LISTEN" && c.Laddr.Port == port {
			seen = true
			if c.Pid > 0 {
				return c.Pid, nil
			}
		}
	}
	if seen {
		return 0, fmt.Errorf("port %d is listening but its process cannot be seen (another user's?)", port)
	}
	return 0, fmt.Errorf("no process listening on port %d", port)
}

func byName(ctx context.Context, name string) *serverProc {
	procs, err := process.ProcessesWithContext(ctx)
	if err != nil {
		return nil
	}
	for _, p := range procs {
		if n, err := p.NameWithContext(ctx); err == nil && n == name {
			ct, _ := p.CreateTimeWithContext(ctx)
			return &serverProc{pid: p.Pid, name: n, foundBy: fmt.Sprintf("process name %q", name), created: ct}
		}
	}
	return nil
}

// tree returns the server and its descendants, found through parent
// pids. A call lists the process table (one read of /proc's entries) when
// the last listing is treeRelist old, and reads the parent of a process only the first time it sees its pid:
// the parents of the processes it already knows do not change, so on a
// machine of 500 processes a reading costs one listing and the new
// processes' stat files, not 500 of them (which every reading and every
// snapshot did before, the sampler's largest cost on a busy machine). A
// pid that vanishes is forgotten; one reused by a new process within a
// reading's interval would keep the old parent, which a pid space of
// millions makes unlikely between two readings.
func (sp *serverProc) tree(ctx context.Context) []*process.Process {
	sp.mu.Lock()
	if len(sp.members) > 0 && time.Since(sp.listed) < treeRelist {
		out := make([]*process.Process, len(sp.members))
		for i, pid := range sp.members {
			out[i] = &process.Process{Pid: pid}
		}
		sp.mu.Unlock()
		return out
	}
	sp.mu.Unlock()
	return sp.list(ctx)
}

// list lists the process table for tree, and keeps what it found.
func (sp *serverProc) list(ctx context.Context) []*process.Process {
	pids, err := process.PidsWithContext(ctx)
	if err != nil {
		p, err := process.NewProcessWithContext(ctx, sp.pid)
		if err != nil {
			return nil
		}
		return []*process.Process{p}
	}
	sp.mu.Lock()
	defer sp.mu.Unlock()
	if sp.parents == nil {
		sp.parents = map[int32]int32{}
	}
	seen := make(map[int32]bool, len(pids))
	children := map[int32][]*process.Process{}
	var root *process.Process
	for _, pid := range pids {
		seen[pid] = true
		p := &process.Process{Pid: pid}
		if pid == sp.pid {
			root = p
			continue
		}
		pp, ok := sp.parents[pid]
		if !ok {
			if pp, err = p.PpidWithContext(ctx); err != nil {
				continue // gone already, or not ours to read
			}
			sp.parents[pid] = pp
		}
		children[pp] = append(children[pp], p)
	}
	for pid := range sp.parents {
		if !seen[pid] {
			delete(sp.parents, pid)
		}
	}
	if root == nil {
		return nil
	}
	out := []*process.Process{root}
	for i := 0; i < len(out); i++ {
		out = append(out, children[out[i].Pid]...)
	}
	sp.members = sp.members[:0]
	for _, p := range out {
		sp.members = append(sp.members, p.Pid)
	}
	sp.listed = time.Now()
	return out
}

// treeTimes are the CPU seconds of each process of the tree at one moment.
type treeTimes map[int32]float64

// read walks the server's tree once: CPU seconds per process, total RSS (nil
// when no process's memory could be read) and the number of processes.
func (sp *serverProc) read(ctx context.Context) (treeTimes, *uint64, int) {
	if sp == nil {
		return nil, nil, 0
	}
	tree := sp.tree(ctx)
	times := treeTimes{}
	var rss uint64
	okRSS := false
	for _, p := range tree {
		if t, err := p.TimesWithContext(ctx); err == nil {
			times[p.Pid] = t.User + t.System
		}
		if m, err := p.MemoryInfoWithContext(ctx); err == nil {
			rss += m.RSS
			okRSS = true
		}
	}
	if !okRSS {
		return times, nil, len(tree)
	}
	return times, &rss, len(tree)
}

// treeCPU is the CPU used between two readings by the processes in both, in
// percent of one core.
func treeCPU(t0, t1 treeTimes, elapsed time.Duration) (float64, bool) {
	if elapsed <= 0 || len(t1) == 0 {
		return 0, false
	}
	var used float64
	n := 0
	for pid, b := range t1 {
		if a, ok := t0[pid]; ok {
			used += max(0, b-a)
			n++
		}
	}
	if n == 0 {
		return 0, false
	}
	return 100 * used / elapsed.Seconds(), true
}
