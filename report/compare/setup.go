package compare

import (
	"fmt"
	"slices"
	"strings"
)

// SetupItem is one line of the runs' setups, as benchstat prints its
// configuration lines: what it is and each run's value ("" when the run
// does not say).
type SetupItem struct {
	Name string `json:"name"`
	Base string `json:"base"`
	New  string `json:"new"`
	Same bool   `json:"same"`
}

// setup lists what the runs' setups say: bench's version, the host, the
// run settings that move latency, each provider's server version and each
// model's digest.
func setup(base, cur *runData) []SetupItem {
	var items []SetupItem
	add := func(name string, get func(r *runData) string) {
		b, n := get(base), get(cur)
		if b == "" && n == "" {
			return
		}
		items = append(items, SetupItem{Name: name, Base: b, New: n, Same: b == n})
	}
	add("bench version", func(r *runData) string {
		if r.info != nil && r.info.BenchVersion != "" {
			return r.info.BenchVersion
		}
		if r.inv != nil {
			return r.inv.Bench.Version
		}
		return ""
	})
	add("go", func(r *runData) string {
		return invField(r, func(i *inventoryFile) string { return i.Bench.GoVersion })
	})
	add("host", func(r *runData) string { return invField(r, func(i *inventoryFile) string { return i.Host.Hostname }) })
	add("os", func(r *runData) string {
		return invField(r, func(i *inventoryFile) string {
			return strings.TrimSpace(strings.Join([]string{i.Host.Platform, i.Host.PlatformVer, i.Host.Arch}, " "))
		})
	})
	add("kernel", func(r *runData) string { return invField(r, func(i *inventoryFile) string { return i.Host.Kernel }) })
	add("cpu", func(r *runData) string {
		return invField(r, func(i *inventoryFile) string {
			s := deref(i.Host.CPUModel)
			if i.Host.CoresLogical != nil {
				s += fmt.Sprintf(" (%d logical cores)", *i.Host.CoresLogical)
			}
			return strings.TrimSpace(s)
		})
	})
	add("memory", func(r *runData) string {
		return invField(r, func(i *inventoryFile) string {
			if i.Host.MemTotal == nil {
				return ""
			}
			return fmt.Sprintf("%.1f GiB", float64(*i.Host.MemTotal)/(1<<30))
		})
	})
	add("end", func(r *runData) string {
		if r.info == nil {
			return "no run.json"
		}
		return fmt.Sprintf("%s, %d/%d cells", r.info.EndReason, r.info.CellsRecorded, r.info.CellsPlanned)
	})
	add("run settings", func(r *runData) string {
		if r.cfg == nil {
			return ""
		}
		return fmt.Sprintf("concurrency %d, repetitions %d, timeout %s", r.cfg.Run.Concurrency, r.cfg.Run.Repetitions,
			strings.Trim(string(r.cfg.Run.Timeout), `"`))
	})
	for _, name := range providerNames(base, cur) {
		add(name+" server version", func(r *runData) string {
			p := findProvider(r, name)
			if p == nil {
				return ""
			}
			if p.ServerVersion != nil {
				return *p.ServerVersion
			}
			return deref(p.CLIVersion)
		})
		for _, model := range providerModels(base, cur, name) {
			add(name+"/"+model+" model digest", func(r *runData) string {
				p := findProvider(r, name)
				if p == nil {
					return ""
				}
				for _, m := range p.ServerModels {
					if m.Name == model || (!strings.Contains(model, ":") && m.Name == model+":latest") {
						return m.Digest
					}
				}
				return ""
			})
		}
	}
	return items
}

// invProvider is one provider of inventory.json and what its probe said.
type invProvider struct {
	Name          string   `json:"name"`
	Type          string   `json:"type"`
	Models        []string `json:"models"`
	ServerVersion *string  `json:"server_version"`
	CLIVersion    *string  `json:"cli_version"`
	ServerModels  []struct {
		Name   string `json:"name"`
		Digest string `json:"digest"`
	} `json:"server_models"`
}

func invField(r *runData, get func(*inventoryFile) string) string {
	if r.inv == nil {
		return ""
	}
	return get(r.inv)
}

func findProvider(r *runData, name string) *invProvider {
	if r.inv == nil {
		return nil
	}
	for i := range r.inv.Providers {
		if r.inv.Providers[i].Name == name {
			return &r.inv.Providers[i]
		}
	}
	return nil
}

// providerNames lists the providers of either inventory, base's first.
func providerNames(base, cur *runData) []string {
	var out []string
	for _, r := range []*runData{base, cur} {
		if r.inv == nil {
			continue
		}
		for _, p := range r.inv.Providers {
			if !slices.Contains(out, p.Name) {
				out = append(out, p.Name)
			}
		}
	}
	return out
}

func providerModels(base, cur *runData, name string) []string {
	var out []string
	for _, r := range []*runData{base, cur} {
		if p := findProvider(r, name); p != nil {
			for _, m := range p.Models {
				if !slices.Contains(out, m) {
					out = append(out, m)
				}
			}
		}
	}
	return out
}
