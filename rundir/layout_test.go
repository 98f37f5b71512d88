package rundir

import "testing"

// Every name of the package is one entry of Layout, a suite's resource
// files are the resource entries, and each entry says what merge does.
func TestLayout(t *testing.T) {
	level := "high"
	f := ResourceFiles("ollama_openai", "llama3.2:3b", &level)
	for name, want := range map[string]MergeRule{
		ConfigFile: Own, InventoryFile: Own, ResultsFile: Own, RunFile: Own, ShardsDir: Own,
		SummaryJSON: Rebuild, SummaryMD: Rebuild, TiersFile: Rebuild, ReportHTML: Rebuild, JUnitFile: Rebuild,
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
	if f.JSON != "resources_ollama_openai_llama3.2_3b_high.json" || SamplesOf("d/"+f.JSON) != "d/"+f.Samples {
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
