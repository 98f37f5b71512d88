package compare

import (
	"path/filepath"
	"strings"
	"testing"

	"bench/internal/record/rundir"
)

// writeLoad writes a suite's resource file with the CPU other work used.
func writeLoad(t *testing.T, run, provider, model string, other float64) {
	t.Helper()
	rec := rundir.SuiteRecord{Provider: provider, ProviderType: "ollama_openai", Model: model,
		Peak: &rundir.Peak{Samples: 10, IntervalMS: 500, OtherCPUPercentMean: &other}}
	mustWriteJSON(t, filepath.Join(run, rundir.FileBase(provider, model, nil)+".json"), rec)
}

// A latency regression that came with the machine busier with other work
// by half a core or more is not judged ("machine load"): its findings
// stay listed with the figures, do not fail the gate, and a warning says
// so; with FailOnSuspect they fail it. The same load difference without
// a latency change, or a regression on a machine as quiet as before,
// gives no warning, and the regression fails the gate as ever.
func TestMachineLoadWarning(t *testing.T) {
	for _, tc := range []struct {
		name     string
		slower   float64
		busyBase float64
		warn     bool
	}{
		{"slower and busier", 2, 10, true},
		{"slower, same load", 2, 140, false},
		{"busier, same speed", 1, 10, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			base := writeLargeRun(t, dir, "base", 960, 0, 0, 1)
			cur := writeLargeRun(t, dir, "new", 960, 0, 0, tc.slower)
			writeLoad(t, base, "prov0", "model-0:7b", tc.busyBase)
			writeLoad(t, cur, "prov0", "model-0:7b", 150)
			writeLoad(t, base, "prov0", "model-1:7b", 5) // the new run did not measure it
			res, err := Compare(base, cur, DefaultOptions())
			if err != nil {
				t.Fatal(err)
			}
			var warned []string
			for _, w := range res.Warnings {
				if strings.Contains(w, "other work on the machine") {
					warned = append(warned, w)
				}
			}
			if tc.warn != (len(warned) == 1) || len(warned) > 1 {
				t.Errorf("warnings %q (regressed %v)", warned, res.Regressed())
			}
			if tc.warn && !strings.Contains(warned[0], "prov0/model-0:7b: other work on the machine used 1.5 cores on average during the new run's suite, 0.1 during the base run's: "+
				"its 3 latency regressions are not judged (machine load)") {
				t.Errorf("warning %q", warned[0])
			}
			suspects, failing := 0, 0
			for _, f := range res.Findings {
				if f.Category == Latency && f.Provider == "prov0" && f.Model == "model-0:7b" {
					if f.Suspect == WhyMachineLoad {
						suspects++
					}
					if f.FailsGate {
						failing++
					}
				}
			}
			if tc.warn && (suspects != 3 || failing != 0 || res.Groups[0].Latency[MetricTTFT].NotJudged != WhyMachineLoad) {
				t.Errorf("machine load: %d suspect findings, %d failing; ttft %+v", suspects, failing, res.Groups[0].Latency[MetricTTFT])
			}
			if !tc.warn && tc.slower > 1 && (suspects != 0 || failing == 0) {
				t.Errorf("same load: %d suspect findings, %d failing", suspects, failing)
			}
			if tc.warn {
				opt := DefaultOptions()
				opt.FailOnSuspect = true
				res2, _ := Compare(base, cur, opt)
				n := 0
				for _, f := range res2.Findings {
					if f.Provider == "prov0" && f.Model == "model-0:7b" && f.Suspect == WhyMachineLoad && f.FailsGate {
						n++
					}
				}
				if n != 3 {
					t.Errorf("--fail-on-suspect: %d suspect findings fail the gate, want 3", n)
				}
			}
			if tc.slower > 1 && !res.Regressed() {
				t.Error("the latency regression no longer fails the gate")
			}
			loads := 0
			for _, g := range res.Groups {
				switch g.Label() {
				case "prov0/model-0:7b":
					if g.OtherLoad == nil || *g.OtherLoad.Base != tc.busyBase || *g.OtherLoad.New != 150 {
						t.Errorf("%s: load %+v", g.Label(), g.OtherLoad)
					}
					loads++
				case "prov0/model-1:7b":
					if g.OtherLoad == nil || *g.OtherLoad.Base != 5 || g.OtherLoad.New != nil {
						t.Errorf("%s: load %+v", g.Label(), g.OtherLoad)
					}
					loads++
				default:
					if g.OtherLoad != nil {
						t.Errorf("%s: load %+v from no file", g.Label(), g.OtherLoad)
					}
				}
			}
			if loads != 2 {
				t.Errorf("%d groups with a load", loads)
			}
		})
	}
}
