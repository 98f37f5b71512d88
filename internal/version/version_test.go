package version

import (
	"runtime/debug"
	"testing"
)

func TestResolve(t *testing.T) {
	rev := []debug.BuildSetting{{Key: "vcs.revision", Value: "0123456789abcdef0123"}}
	dirty := append(rev, debug.BuildSetting{Key: "vcs.modified", Value: "true"})
	cases := []struct {
		name  string
		bi    debug.BuildInfo
		stamp string
		want  string
	}{
		{"release", debug.BuildInfo{Main: debug.Module{Version: "v1.2.3"}, Settings: rev}, "x", "v1.2.3"},
		{"stamp wins over vcs", debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: rev}, "v0-5-gabc", "v0-5-gabc"},
		{"vcs", debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: rev}, "", "devel+0123456789ab"},
		{"vcs dirty", debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: dirty}, "", "devel+0123456789ab-dirty"},
		{"nothing", debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, "", "(devel)"},
	}
	for _, c := range cases {
		if got := resolve(&c.bi, c.stamp); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}
