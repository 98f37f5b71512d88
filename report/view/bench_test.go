package view

import (
	"fmt"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// scaleRun writes a run of 100 groups × 100 prompts × 10 repetitions
// (100,000 cells) with answers of about 400 bytes, as a large nightly
// sweep leaves one.
func scaleRun(b *testing.B) (string, string) {
	root := b.TempDir()
	dir := filepath.Join(root, "big")
	filler := strings.Repeat("The model explains its reasoning at some length before it answers. ", 6)
	writeRun(b, dir, "big", 100, 100, 10, func(g, p, rep int) string {
		if g%10 == 3 && p == 42 {
			return filler + "The capital is Canberra."
		}
		return fmt.Sprintf("%sAnswer %d of group %d, try %d.", filler, p, g, rep)
	})
	return root, idOf(mustRealB(b, dir))
}

func mustRealB(b *testing.B, p string) string {
	r, err := filepath.EvalSymlinks(p)
	if err != nil {
		b.Fatal(err)
	}
	return r
}

// BenchmarkFirstView100k is a person's first look at a run of 100,000
// cells: the server started afresh, the run's cells page asked for (the
// index built from results.jsonl, the first rows and the menus sent).
// It reports what the kept index holds (Index.Bytes).
func BenchmarkFirstView100k(b *testing.B) {
	root, id := scaleRun(b)
	var heap float64
	cpu0 := cpuTime()
	for b.Loop() {
		s, err := New([]string{root})
		if err != nil {
			b.Fatal(err)
		}
		srv := httptest.NewServer(s.Handler())
		var a CellsAnswer
		if code, body := getB(b, srv, "/api/cells?run="+id, &a); code != 200 || a.Result.Total != 100_000 {
			b.Fatalf("%d %s", code, body[:min(len(body), 300)])
		}
		heap = float64(s.index.kept(mustRealB(b, filepath.Join(root, "big"))).Bytes()) / (1 << 20)
		srv.Close()
	}
	b.ReportMetric(heap, "index-MiB")
	b.ReportMetric(float64((cpuTime()-cpu0).Milliseconds())/float64(b.N), "cpu-ms/op")
}

// cpuTime is the CPU this process has used (user and system): on a
// machine shared with other work, wall time measures the neighbours too.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkFilter100k is one filter over the same run once its index is
// kept: a verdict, a group and a text searched in every answer.
func BenchmarkFilter100k(b *testing.B) {
	root, id := scaleRun(b)
	s, err := New([]string{root})
	if err != nil {
		b.Fatal(err)
	}
	srv := httptest.NewServer(s.Handler())
	defer srv.Close()
	var a CellsAnswer
	getB(b, srv, "/api/cells?run="+id, &a)
	for _, q := range []string{"&q=canberra", "&verdict=fail&q=answer%2042", "&group=ollama%2Fmodel-013&verdict=pass"} {
		b.Run(strings.NewReplacer("&", "", "%20", " ", "%2F", "/").Replace(q), func(b *testing.B) {
			for b.Loop() {
				if code, body := getB(b, srv, "/api/cells?run="+id+q, &a); code != 200 || a.Result.Matched == 0 {
					b.Fatalf("%d %s", code, body[:min(len(body), 300)])
				}
			}
			b.ReportMetric(a.Result.TookMS, "server-ms")
			b.ReportMetric(float64(a.Result.Matched), "matched")
		})
	}
}

// BenchmarkList100Runs is the list page's data over a directory of 100
// nightly runs, the second time (their descriptions kept while their
// files are unchanged).
func BenchmarkList100Runs(b *testing.B) {
	root := b.TempDir()
	for i := range 100 {
		writeRun(b, filepath.Join(root, fmt.Sprintf("night%03d", i)), fmt.Sprintf("night%03d", i), 4, 25, 3, plain)
	}
	s, err := New([]string{root})
	if err != nil {
		b.Fatal(err)
	}
	srv := httptest.NewServer(s.Handler())
	defer srv.Close()
	var l RunList
	getB(b, srv, "/api/runs", &l)
	for b.Loop() {
		if code, _ := getB(b, srv, "/api/runs", &l); code != 200 || len(l.Runs) != 100 {
			b.Fatalf("%d, %d runs", code, len(l.Runs))
		}
	}
}
