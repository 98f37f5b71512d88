package rescore

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"bench/internal/record/results"
	"bench/internal/record/rundir"
)

// run writes a small run directory: two prompts, one cell each.
func run(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "night")
	os.MkdirAll(filepath.Join(dir, rundir.TracesDir), 0o755)
	w, err := results.Create(filepath.Join(dir, rundir.ResultsFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"P0", "P1"} {
		w.Write(&results.Record{RecordType: "result", RunID: "night", Provider: "ollama", ProviderType: "ollama", Model: "m", PromptID: id,
			AvailabilityStatus: "ok", Success: true, RawOutput: "OK", ToolCalls: []string{}, ToolCallDetails: []results.ToolCall{}, ObjectivePass: &[]bool{true}[0]})
	}
	w.Close()
	os.WriteFile(filepath.Join(dir, rundir.ConfigFile), []byte(`{"run":{"id":"night"},"providers":[{"name":"ollama","type":"ollama","models":["m"]}],"prompts":{"files":[]},
"prompt_set":[{"id":"P0","name":"p0","prompt":"Reply with exactly: OK","validator":{"type":"exact","value":"OK"}},
{"id":"P1","name":"p1","prompt":"Say OK","validator":{"type":"max_words","value":1}}]}`), 0o644)
	os.WriteFile(filepath.Join(dir, rundir.TracesDir, "t.jsonl"), []byte("{}\n"), 0o644)
	return dir
}

func TestRescoreKeepsWhatTodayLacks(t *testing.T) {
	src := run(t)
	today := filepath.Join(t.TempDir(), "today.yaml")
	os.WriteFile(today, []byte("prompts:\n  - id: P0\n    prompt: \"Reply with exactly: OK\"\n    validator: {type: exact, value: \"NO\"}\n  - id: P9\n    prompt: new\n    validator: {type: noop}\n"), 0o644)
	var log bytes.Buffer
	out := filepath.Join(filepath.Dir(src), "night_rescored")
	res, err := Run(context.Background(), Options{Run: src, Out: out, Prompts: []string{today}, Version: "v-test", Log: &log})
	if err != nil {
		t.Fatal(err)
	}
	if res.Records != 2 || res.Moved != 1 {
		t.Errorf("records %d moved %d", res.Records, res.Moved)
	}
	for _, want := range []string{"1 of the run's prompts are not among today's and keep their checks: P1", "1 of today's prompts are not in the run"} {
		if !strings.Contains(log.String(), want) {
			t.Errorf("log lacks %q:\n%s", want, log.String())
		}
	}
	if _, err := os.Stat(filepath.Join(out, rundir.TracesDir)); err == nil {
		t.Error("traces/ carried over")
	}
	info, err := rundir.ReadRunInfo(out)
	if err != nil || info.RescoredFrom.OriginRunID != "night" || info.RescoredFrom.Prompts[0] != today || info.EndReason != "unknown" {
		t.Errorf("run.json %+v %v", info, err)
	}
	// A rescore of the rescore keeps the first run as its origin.
	res2, err := Run(context.Background(), Options{Run: out, Out: out + "_again", Version: "v-test"})
	if err != nil || res2.Moved != 0 {
		t.Fatalf("again: %v %+v", err, res2)
	}
	if info, _ := rundir.ReadRunInfo(out + "_again"); info.RescoredFrom.OriginRunID != "night" || info.RescoredFrom.RunID != "night_rescored" {
		t.Errorf("rescore of a rescore: %+v", info.RescoredFrom)
	}
}

// Stopped part-way, a rescore leaves no directory: half-judged cells are
// no run.
func TestRescoreInterrupted(t *testing.T) {
	src := run(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	out := filepath.Join(filepath.Dir(src), "stopped")
	_, err := Run(ctx, Options{Run: src, Out: out})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v", err)
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("an interrupted rescore left its directory")
	}
}
