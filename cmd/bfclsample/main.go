// Command bfclsample writes bench's BFCL sample (validators/bfcl/data) from a copy of
// BFCL's data directory: for each category, the cases bfcl.Pick draws and
// their possible answers, each line as it is in the source file, byte for
// byte. It is run by hand when the sample is renewed, never by bench or
// its tests:
//
//	git -C GORILLA show COMMIT:berkeley-function-call-leaderboard/bfcl_eval/data/BFCL_v4_simple_python.json > src/BFCL_v4_simple_python.json
//	(likewise the other categories, and possible_answer/)
//	go run ./cmd/bfclsample -src src -out validators/bfcl/data
//
// It prints how many cases each file held and the ids it kept.
//
// Layer: command (a maintainer's tool; never run by bench or its tests).
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"bench/validators/bfcl"
)

func main() {
	src := flag.String("src", "", "directory with BFCL's category files and possible_answer/")
	out := flag.String("out", "validators/bfcl/data", "where to write the sample")
	flag.Parse()
	if *src == "" {
		fmt.Fprintln(os.Stderr, "usage: bfclsample -src DIR [-out validators/bfcl/data]")
		os.Exit(2)
	}
	if err := run(*src, *out); err != nil {
		fmt.Fprintln(os.Stderr, "bfclsample:", err)
		os.Exit(1)
	}
}

func run(src, out string) error {
	for i, c := range bfcl.Categories {
		cases, err := readLines(filepath.Join(src, c.File))
		if err != nil {
			return err
		}
		keep := bfcl.Pick(i, len(cases))
		if err := writeLines(filepath.Join(out, c.File), cases, keep); err != nil {
			return err
		}
		if c.Name != bfcl.Irrelevance {
			answers, err := readLines(filepath.Join(src, bfcl.AnswerDir, c.File))
			if err != nil {
				return err
			}
			if len(answers) != len(cases) {
				return fmt.Errorf("%s: %d cases, %d possible answers", c.File, len(cases), len(answers))
			}
			if err := writeLines(filepath.Join(out, bfcl.AnswerDir, c.File), answers, keep); err != nil {
				return err
			}
		}
		fmt.Printf("%s: %d of %d cases: lines %v\n", c.File, len(keep), len(cases), keep)
	}
	return nil
}

func readLines(path string) ([][]byte, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out [][]byte
	for _, l := range bytes.Split(data, []byte("\n")) {
		if len(bytes.TrimSpace(l)) > 0 {
			out = append(out, l)
		}
	}
	return out, nil
}

func writeLines(path string, lines [][]byte, keep []int) error {
	var b bytes.Buffer
	for _, i := range keep {
		b.Write(lines[i])
		b.WriteByte('\n')
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, b.Bytes(), 0o644)
}
