package results_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"bench/internal/record/results"
	"bench/internal/record/results/resultstest"
)

// BenchmarkScanRich reads 20,000 lines of every field (resultstest.Rich,
// about 7 KB each) from memory with the reader's workers, at each detail
// (and as bench report reads, its bulky texts borrowed): MB/s is the
// decoding's throughput, the figure bench report's goal of a gigabyte a
// second rests on.
//
//	go test ./internal/record/results -run '^$' -bench ScanRich -benchmem
func BenchmarkScanRich(b *testing.B) {
	path := filepath.Join(b.TempDir(), "results.jsonl")
	resultstest.Write(b, path, 20_000, resultstest.Rich)
	data := readAll(b, path)
	for _, d := range []struct {
		name string
		o    results.ScanOptions
	}{
		{"aggregates", results.ScanOptions{Detail: results.Aggregates}},
		{"reports", results.ScanOptions{Detail: results.Reports}},
		{"reports-borrowed", results.ScanOptions{Detail: results.Reports, Borrow: true}},
		{"full", results.ScanOptions{Detail: results.Full}},
	} {
		b.Run(d.name, func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				n := 0
				err := results.NewReader(bytes.NewReader(data)).Scan(d.o, func(int, *results.Record) error {
					n++
					return nil
				})
				if err != nil || n != 20_000 {
					b.Fatalf("%d records, %v", n, err)
				}
			}
		})
	}
}

func readAll(tb testing.TB, path string) []byte {
	tb.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	return data
}
