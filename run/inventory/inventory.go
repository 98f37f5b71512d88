// Package inventory writes inventory.json: what can be known about the host,
// the bench build and each configured provider without running a prompt.
// Whatever cannot be found is recorded with its error, never guessed; API
// keys are reported as set or not, never their value.
//
// Layer: the run (an output: written once, before the sweep).
package inventory

import (
	"context"
	"runtime"
	"runtime/debug"
	"sync"
	"time"

	"github.com/shirou/gopsutil/v3/cpu"
	"github.com/shirou/gopsutil/v3/host"
	"github.com/shirou/gopsutil/v3/mem"

	"bench/config"
	"bench/internal/record/rundir"
	"bench/internal/version"
	"bench/providers"
)

// Timeout bounds each probe (an HTTP call or a --version run).
const Timeout = 5 * time.Second

// Inventory is inventory.json.
type Inventory struct {
	GeneratedAt time.Time  `json:"generated_at"`
	Host        Host       `json:"host"`
	Bench       Bench      `json:"bench"`
	Providers   []Provider `json:"providers"`
}

// Host describes the machine. Null fields have their reason in Unavailable.
type Host struct {
	Hostname      string            `json:"hostname"`
	OS            string            `json:"os"`
	Platform      string            `json:"platform"`
	PlatformVer   string            `json:"platform_version"`
	Kernel        string            `json:"kernel"`
	Arch          string            `json:"arch"`
	CPUModel      *string           `json:"cpu_model"`
	CoresPhysical *int              `json:"cores_physical"`
	CoresLogical  *int              `json:"cores_logical"`
	MemTotal      *uint64           `json:"mem_total_bytes"`
	Unavailable   map[string]string `json:"unavailable,omitempty"`
}

// Bench is the running binary's build.
type Bench struct {
	GoVersion string `json:"go_version"`
	// Version is the main module's version ("(devel)" for a local build).
	Version  string            `json:"version"`
	Module   string            `json:"module"`
	Settings map[string]string `json:"build_settings,omitempty"`
}

// Provider is one configured provider entry and what its probe learned.
type Provider struct {
	Name   string   `json:"name"`
	Type   string   `json:"type"`
	Models []string `json:"models"`
	*providers.Probe
}

// Write gathers the inventory and writes runDir/inventory.json atomically.
func Write(ctx context.Context, runDir string, cfg *config.Config, provs map[string]providers.Provider) (*Inventory, error) {
	inv := Gather(ctx, cfg, provs)
	return inv, rundir.WriteJSON(rundir.Path(runDir, rundir.InventoryFile), inv)
}

// Gather probes the host, the build and every provider of cfg, the
// providers side by side (each probe is bounded by its kind).
func Gather(ctx context.Context, cfg *config.Config, provs map[string]providers.Provider) *Inventory {
	inv := &Inventory{GeneratedAt: time.Now().UTC(), Bench: gatherBench(), Providers: make([]Provider, len(cfg.Providers))}
	// A probe of a silent server waits no longer than a cell would.
	ctx = providers.WithProbeBound(ctx, time.Duration(cfg.Run.Timeout))
	var wg sync.WaitGroup
	for i, p := range cfg.Providers {
		inv.Providers[i] = Provider{Name: p.Name, Type: p.Type, Models: p.Models}
		if inv.Providers[i].Models == nil {
			inv.Providers[i].Models = []string{}
		}
		wg.Go(func() {
			prov := provs[p.Name]
			pr := prov.Probe(ctx)
			// The one scrub of what a probe learned from a server or a CLI.
			pr.Clean(prov.Secrets())
			inv.Providers[i].Probe = pr
		})
	}
	inv.Host = gatherHost(ctx)
	wg.Wait()
	return inv
}

func gatherHost(ctx context.Context) Host {
	h := Host{OS: runtime.GOOS, Arch: runtime.GOARCH, Unavailable: map[string]string{}}
	if info, err := host.InfoWithContext(ctx); err != nil {
		h.Unavailable["platform"] = err.Error()
	} else {
		h.Hostname, h.Platform, h.PlatformVer, h.Kernel = info.Hostname, info.Platform, info.PlatformVersion, info.KernelVersion
		if info.KernelArch != "" {
			h.Arch = info.KernelArch
		}
	}
	if infos, err := cpu.InfoWithContext(ctx); err != nil || len(infos) == 0 || infos[0].ModelName == "" {
		h.Unavailable["cpu_model"] = reason(err, "no CPU model reported")
	} else {
		h.CPUModel = &infos[0].ModelName
	}
	for _, c := range []struct {
		logical bool
		dst     **int
		field   string
	}{{false, &h.CoresPhysical, "cores_physical"}, {true, &h.CoresLogical, "cores_logical"}} {
		if n, err := cpu.CountsWithContext(ctx, c.logical); err != nil || n <= 0 {
			h.Unavailable[c.field] = reason(err, "no count reported")
		} else {
			*c.dst = &n
		}
	}
	if v, err := mem.VirtualMemoryWithContext(ctx); err != nil {
		h.Unavailable["mem_total_bytes"] = err.Error()
	} else {
		h.MemTotal = &v.Total
	}
	if len(h.Unavailable) == 0 {
		h.Unavailable = nil
	}
	return h
}

func reason(err error, fallback string) string {
	if err != nil {
		return err.Error()
	}
	return fallback
}

func gatherBench() Bench {
	b := Bench{GoVersion: runtime.Version(), Version: version.String()}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return b
	}
	b.Module = info.Main.Path
	b.Settings = map[string]string{}
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision", "vcs.time", "vcs.modified", "GOOS", "GOARCH", "-race", "CGO_ENABLED":
			b.Settings[s.Key] = s.Value
		}
	}
	return b
}

// Read reads runDir/inventory.json back (a resumed run's, for snapshot
// fingerprints).
func Read(runDir string) (*Inventory, error) {
	var inv Inventory
	if err := rundir.ReadJSON(rundir.Path(runDir, rundir.InventoryFile), &inv); err != nil {
		return nil, err
	}
	return &inv, nil
}
