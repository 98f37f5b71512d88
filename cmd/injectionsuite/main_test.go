package main

import (
	"bytes"
	"os"
	"testing"
)

// The committed suite is what the generator writes: edit the tasks,
// styles or instructions here and run `go run ./cmd/injectionsuite`.
func TestCommittedSuiteIsGenerated(t *testing.T) {
	got, err := os.ReadFile("../../prompts/injection.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if want := Suite(); !bytes.Equal(got, want) {
		t.Errorf("prompts/injection.yaml is not what cmd/injectionsuite writes (%d bytes, want %d): run go run ./cmd/injectionsuite", len(got), len(want))
	}
	if !bytes.Equal(Suite(), Suite()) {
		t.Error("two draws differ: the suite must be deterministic")
	}
}
