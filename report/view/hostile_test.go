package view

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"bench/internal/record/rundir"
)

// Issue 31, item 8, for bench view, which reads run directories like the
// other readers: every file it reads or serves, made a FIFO nobody
// writes, a symlink to /dev/zero or (for the side files) a file past its
// bound, is refused as it is by the other commands, never waited on nor
// read forever; the list goes on showing the other runs. Before, a FIFO
// as run.json hung the list and one as report.html hung its request.
func TestHostileFilesInAView(t *testing.T) {
	files := []string{rundir.RunFile, rundir.ConfigFile, rundir.InventoryFile, rundir.SummaryJSON, rundir.ResultsFile, rundir.ReportHTML}
	kinds := []struct {
		name  string
		plant func(path string) error
	}{
		{"a FIFO", func(p string) error { return syscall.Mkfifo(p, 0o644) }},
		{"a symlink to /dev/zero", func(p string) error { return os.Symlink("/dev/zero", p) }},
	}
	for _, k := range kinds {
		for _, name := range files {
			t.Run(k.name+"/"+name, func(t *testing.T) {
				root := t.TempDir()
				writeRun(t, filepath.Join(root, "good"), "good", 1, 2, 1, plain)
				dir := filepath.Join(root, "bad")
				writeRun(t, dir, "bad", 1, 2, 1, plain)
				path := filepath.Join(dir, name)
				os.Remove(path)
				if err := k.plant(path); err != nil {
					t.Fatal(err)
				}
				s, err := New([]string{root})
				if err != nil {
					t.Fatal(err)
				}
				srv := httptest.NewServer(s.Handler())
				defer srv.Close()
				var l RunList
				if code, body := hostileGet(t, srv, "/api/runs", &l); code != 200 {
					t.Fatalf("/api/runs: %d %s", code, body)
				}
				runs := byDir(l)
				if runs["good"] == nil || runs["bad"] == nil {
					t.Fatalf("the list lost a run: %v", keysOf(runs))
				}
				id := runs["bad"].ID
				for _, p := range []string{"/api/cells?run=" + id, "/run/" + id + "/" + name} {
					if code, body := hostileGet(t, srv, p, nil); code == 200 && len(body) > 1<<20 {
						t.Errorf("%s: %d, %d bytes of %s served", p, code, len(body), k.name)
					}
				}
				if code, _ := hostileGet(t, srv, "/run/"+id+"/"+name, nil); code == 200 {
					t.Errorf("/run/%s/%s as %s: served, want a refusal", id, name, k.name)
				}
			})
		}
	}
}

// hostileGet is getB with a deadline far past what a request takes on a
// busy machine: one still running then waits on a FIFO or reads an
// endless device, and would never end.
func hostileGet(t *testing.T, srv *httptest.Server, path string, v any) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL+path, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s: %v (it hangs)", path, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 2<<20))
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if v != nil && resp.StatusCode == 200 {
		if err := json.Unmarshal(body, v); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
	}
	return resp.StatusCode, strings.TrimSpace(string(body))
}
