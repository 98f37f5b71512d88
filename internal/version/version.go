// Package version says which bench is running, for run.json, inventory.json,
// snapshots and traces.
//
// Layer: internal helpers (imports no bench package).
package version

import (
	"runtime/debug"
	"sync"
)

// stamp is set at link time by builds that know better than the module
// (scripts pass -ldflags "-X bench/internal/version.stamp=$(git describe)"
// where VCS stamping is off, as under `go run` or GOFLAGS=-buildvcs=false).
var stamp string

// String is the running bench's version: the module's release version when
// it has one, else the link-time stamp, else the VCS revision the binary
// was built from ("devel+<12 hex>", "-dirty" for uncommitted changes), else
// the commit the checkout it was built from is at now ("devel+<12 hex>-checkout":
// VCS stamping off, as under GOFLAGS=-buildvcs=false, and the source still
// there), else "(devel)".
var String = sync.OnceValue(func() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		if stamp != "" {
			return stamp
		}
		return "(unknown)"
	}
	v := resolve(bi, stamp)
	if v == "(devel)" {
		if rev, ok := checkoutRev(sourceDir()); ok {
			return "devel+" + rev[:12] + "-checkout"
		}
	}
	return v
})

func resolve(bi *debug.BuildInfo, stamp string) string {
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	if stamp != "" {
		return stamp
	}
	var rev, dirty string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				dirty = "-dirty"
			}
		}
	}
	if len(rev) >= 12 {
		return "devel+" + rev[:12] + dirty
	}
	return "(devel)"
}
