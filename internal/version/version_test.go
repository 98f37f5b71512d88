package version

import (
	"os"
	"path/filepath"
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

// The checkout's commit is read from the files git keeps: a branch's
// loose ref, a packed one, a detached HEAD, a worktree's gitdir file; not
// from a checkout of another module, nor where there is none.
func TestCheckoutRev(t *testing.T) {
	const rev = "0123456789abcdef0123456789abcdef01234567"
	write := func(t *testing.T, path, data string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	repo := func(t *testing.T, module string) (root, src string) {
		root = t.TempDir()
		write(t, filepath.Join(root, "go.mod"), "module "+module+"\n\ngo 1.26\n")
		src = filepath.Join(root, "internal", "version")
		os.MkdirAll(src, 0o755)
		return root, src
	}
	t.Run("loose ref", func(t *testing.T) {
		root, src := repo(t, "bench")
		write(t, filepath.Join(root, ".git", "HEAD"), "ref: refs/heads/main\n")
		write(t, filepath.Join(root, ".git", "refs", "heads", "main"), rev+"\n")
		if got, ok := checkoutRev(src); !ok || got != rev {
			t.Errorf("%q %v", got, ok)
		}
	})
	t.Run("packed ref", func(t *testing.T) {
		root, src := repo(t, "bench")
		write(t, filepath.Join(root, ".git", "HEAD"), "ref: refs/heads/main\n")
		write(t, filepath.Join(root, ".git", "packed-refs"), "# pack-refs with: peeled fully-peeled sorted\n"+rev+" refs/heads/main\n")
		if got, ok := checkoutRev(src); !ok || got != rev {
			t.Errorf("%q %v", got, ok)
		}
	})
	t.Run("detached", func(t *testing.T) {
		root, src := repo(t, "bench")
		write(t, filepath.Join(root, ".git", "HEAD"), rev+"\n")
		if got, ok := checkoutRev(src); !ok || got != rev {
			t.Errorf("%q %v", got, ok)
		}
	})
	t.Run("worktree", func(t *testing.T) {
		main := t.TempDir()
		write(t, filepath.Join(main, ".git", "packed-refs"), rev+" refs/heads/h-g\n")
		wt := filepath.Join(main, ".git", "worktrees", "g")
		write(t, filepath.Join(wt, "HEAD"), "ref: refs/heads/h-g\n")
		write(t, filepath.Join(wt, "commondir"), "../..\n")
		root, src := repo(t, "bench")
		write(t, filepath.Join(root, ".git"), "gitdir: "+wt+"\n")
		if got, ok := checkoutRev(src); !ok || got != rev {
			t.Errorf("%q %v", got, ok)
		}
	})
	t.Run("another module", func(t *testing.T) {
		root, src := repo(t, "benchmarks")
		write(t, filepath.Join(root, ".git", "HEAD"), rev+"\n")
		if got, ok := checkoutRev(src); ok {
			t.Errorf("%q from another module's checkout", got)
		}
	})
	t.Run("no checkout", func(t *testing.T) {
		_, src := repo(t, "bench")
		if got, ok := checkoutRev(src); ok {
			t.Errorf("%q without .git", got)
		}
	})
}
