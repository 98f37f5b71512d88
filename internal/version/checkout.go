package version

import (
	"bufio"
	"os"
	"path/filepath"
	"runtime"
	"strings"
)

// sourceDir is the directory this file was compiled from ("" under
// -trimpath, which keeps no paths).
func sourceDir() string {
	_, file, _, ok := runtime.Caller(0)
	if !ok || !filepath.IsAbs(file) {
		return ""
	}
	return filepath.Dir(file)
}

// checkoutRev is the commit the git checkout holding dir is at: its
// HEAD, followed through a branch ref (loose or packed) and a worktree's
// gitdir file. It reads the files git keeps and runs no git; ok is false
// where there is no checkout or it cannot be read, and for a checkout of
// some other module than bench's (the first go.mod up from dir must be
// bench's).
func checkoutRev(dir string) (string, bool) {
	for d := dir; d != "" && d != filepath.Dir(d); d = filepath.Dir(d) {
		if mod, err := os.ReadFile(filepath.Join(d, "go.mod")); err == nil {
			if !isModule(string(mod)) {
				return "", false
			}
			return gitRev(filepath.Join(d, ".git"))
		}
	}
	return "", false
}

// isModule says the go.mod's module line names bench exactly.
func isModule(mod string) bool {
	line, _, _ := strings.Cut(strings.TrimSpace(mod), "\n")
	return strings.TrimSpace(line) == "module bench"
}

// gitRev reads the commit HEAD names in the .git at path (a directory,
// or a worktree's file naming one).
func gitRev(path string) (string, bool) {
	st, err := os.Stat(path)
	if err != nil {
		return "", false
	}
	gitDir := path
	if !st.IsDir() {
		b, err := os.ReadFile(path)
		dir, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir: ")
		if err != nil || !ok {
			return "", false
		}
		if !filepath.IsAbs(dir) {
			dir = filepath.Join(filepath.Dir(path), dir)
		}
		gitDir = dir
	}
	// A worktree keeps its HEAD; its refs are the common dir's.
	common := gitDir
	if b, err := os.ReadFile(filepath.Join(gitDir, "commondir")); err == nil {
		c := strings.TrimSpace(string(b))
		if !filepath.IsAbs(c) {
			c = filepath.Join(gitDir, c)
		}
		common = c
	}
	head, err := os.ReadFile(filepath.Join(gitDir, "HEAD"))
	if err != nil {
		return "", false
	}
	h := strings.TrimSpace(string(head))
	ref, isRef := strings.CutPrefix(h, "ref: ")
	if !isRef {
		return hexRev(h)
	}
	for _, d := range []string{gitDir, common} {
		if b, err := os.ReadFile(filepath.Join(d, filepath.FromSlash(ref))); err == nil {
			return hexRev(strings.TrimSpace(string(b)))
		}
	}
	f, err := os.Open(filepath.Join(common, "packed-refs"))
	if err != nil {
		return "", false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rev, name, ok := strings.Cut(sc.Text(), " "); ok && name == ref {
			return hexRev(rev)
		}
	}
	return "", false
}

// hexRev is s when it is a whole commit id.
func hexRev(s string) (string, bool) {
	if len(s) != 40 && len(s) != 64 {
		return "", false
	}
	for _, c := range s {
		if !strings.ContainsRune("0123456789abcdef", c) {
			return "", false
		}
	}
	return s, true
}
