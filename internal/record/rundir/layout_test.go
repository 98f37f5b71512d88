package rundir

import (
	"path"
	"testing"
)

// Every name of the package is one entry of Layout, a suite's resource
// files are the resource entries, and each entry says what merge does.
func TestLayout(t *testing.T) {
	level := "high"
	f := ResourceFiles("ollama_openai", "llama3.2:3b", &level)
	for name, want := range map[string]MergeRule{
		ConfigFile: Own, InventoryFile: Own, ResultsFile: Own, RunFile: Own, ShardsDir: Own,
		SummaryJSON: Rebuild, SummaryMD: Rebuild, TiersFile: Rebuild, ReportHTML: Rebuild, AnswersHTML: Rebuild, JUnitFile: Rebuild,
		f.JSON: Gather, f.Before: Gather, f.After: Gather, f.Samples: Gather,
		SnapshotsDir: Gather, TracesDir: Gather, ForsyDir: Gather,
		CompareDir: Drop, LockFile: Drop,
	} {
		e, ok := Lookup(name)
		if !ok || e.Merge != want || e.Writer == "" || e.About == "" {
			t.Errorf("%s: entry %+v, found %v; want merge rule %d", name, e, ok, want)
		}
		if (e.Merge == Rebuild) != e.Report {
			t.Errorf("%s: rebuilt by bench report %v but by bench merge %v", name, e.Report, e.Merge == Rebuild)
		}
	}
	for name, want := range map[string]RescoreRule{
		ConfigFile: Rewrite, ResultsFile: Rewrite, RunFile: Rewrite, InventoryFile: Keep, ShardsDir: Keep,
		SummaryJSON: Rescored, SummaryMD: Rescored, TiersFile: Rescored, ReportHTML: Rescored, JUnitFile: Rescored, ForsyDir: Rescored,
		f.JSON: Keep, f.Before: Keep, f.After: Keep, f.Samples: Keep, SnapshotsDir: Keep,
		TracesDir: Leave, CompareDir: Leave, LockFile: Leave,
	} {
		if e, _ := Lookup(name); e.Rescore != want {
			t.Errorf("%s: rescore rule %d, want %d", name, e.Rescore, want)
		}
		if e, _ := Lookup(name); e.Report && e.Rescore != Rescored {
			t.Errorf("%s: bench report rebuilds it, and bench rescore does not", name)
		}
	}
	if f.JSON != "resources_ollama_openai_llama3.2_3b_high_724b6262.json" || SamplesOf("d/"+f.JSON) != "d/"+f.Samples {
		t.Errorf("resource files %+v", f)
	}
	if _, ok := Lookup("notes.txt"); ok {
		t.Error("a name the layout does not declare was found")
	}
	seen := map[string]bool{}
	for _, e := range Layout {
		if seen[e.Name] {
			t.Errorf("%s declared twice", e.Name)
		}
		seen[e.Name] = true
	}
}

// The files the formats name in the per-cell folders match the layout's
// patterns (the golden run directory checks real ones).
func TestFolderPatterns(t *testing.T) {
	for _, c := range []struct{ dir, file string }{
		{SnapshotsDir, "ollama_openai__qwen3-4b__none__p3__r0__1f0c6a39c2d5e4b7.json"},
		{TracesDir, "2026-02-17T150000Z_bench-run_0af7651916cd43dd8448eb211c80319c.jsonl"},
		{ForsyDir, "bench_run_ollama_demo_A1_r0_1a2b3c4d.json"},
	} {
		e, ok := Lookup(c.dir)
		if m, _ := path.Match(e.Files, c.file); !ok || !e.Dir || !m {
			t.Errorf("%s/%s does not match the layout's %+v", c.dir, c.file, e)
		}
	}
}
