package compare

import (
	"path/filepath"
	"strings"
	"testing"

	"bench/internal/record/rundir"
)

// writeLoad writes a suite's resource file with the CPU other work used
// (the machine's cores not recorded).
func writeLoad(t *testing.T, run, provider, model string, other float64) {
	t.Helper()
	writeSuite(t, run, provider, model, 0, &rundir.Peak{Samples: 10, IntervalMS: 500, OtherCPUPercentMean: &other})
}

// writeSuite writes a suite's resource file: its peak, and the machine's
// cores in the before snapshot (0: not recorded).
func writeSuite(t *testing.T, run, provider, model string, cores int, peak *rundir.Peak) {
	t.Helper()
	rec := rundir.SuiteRecord{Provider: provider, ProviderType: "ollama_openai", Model: model, Peak: peak}
	if cores > 0 {
		rec.Before = &rundir.Snapshot{CPUCount: &cores}
	}
	mustWriteJSON(t, filepath.Join(run, rundir.FileBase(provider, model, nil)+".json"), rec)
}

// A latency regression that came with the machine busier with other work
// by half a core or more is not judged ("machine busy"): its findings
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
			if tc.warn && !strings.Contains(warned[0], "prov0/model-0:7b: other work on the machine rose by 1.4 cores during the new run's suite: other work 0.10 cores base, 1.50 cores new: "+
				"its 3 latency regressions are not judged (machine busy)") {
				t.Errorf("warning %q", warned[0])
			}
			suspects, failing := 0, 0
			for _, f := range res.Findings {
				if f.Category == Latency && f.Provider == "prov0" && f.Model == "model-0:7b" {
					if f.Suspect == WhyMachineBusy {
						suspects++
					}
					if f.FailsGate {
						failing++
					}
				}
			}
			if tc.warn && (suspects != 3 || failing != 0 || res.Groups[0].Latency[MetricTTFT].NotJudged != WhyMachineBusy) {
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
					if f.Provider == "prov0" && f.Model == "model-0:7b" && f.Suspect == WhyMachineBusy && f.FailsGate {
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

// writeBusy writes a suite's resource file with the machine's cores, the
// CPU other work used, and the CPU pressure (nil: a machine without
// /proc/pressure, said in the peak's unavailable reasons).
func writeBusy(t *testing.T, run, provider, model string, cores int, other float64, pressure *float64) {
	t.Helper()
	peak := &rundir.Peak{Samples: 10, IntervalMS: 500, OtherCPUPercentMean: &other, CPUPressurePercentMean: pressure}
	if pressure == nil {
		peak.Unavailable = map[string]string{"cpu_pressure_percent_mean": "no /proc/pressure/cpu on this machine (a kernel without pressure stall information)"}
	}
	writeSuite(t, run, provider, model, cores, peak)
}

// A machine kept busy by other work during both runs (1.97 and 1.96 of
// 2 cores: no rise for the rise rule to see) is said, not judged: every
// latency comparison of the group is not judged ("machine busy") with the
// figures, slower or not, and a slower run does not fail the gate (it
// does with --fail-on-suspect); a quality regression on such a night
// still fails it. The setup lists the other work base -> new always; a
// machine without /proc/pressure is said in one line.
func TestBusyMachineIsSaidNotJudged(t *testing.T) {
	dir := t.TempDir()
	base := writeLargeRun(t, dir, "base", 960, 0, 0, 1)
	cur := writeLargeRun(t, dir, "new", 960, 0, 0, 1.4)
	for _, m := range []string{"model-0:7b", "model-1:7b"} {
		writeBusy(t, base, "prov0", m, 2, 197, ptrTo(85.0))
		writeBusy(t, cur, "prov0", m, 2, 196, nil)
	}
	res, err := Compare(base, cur, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	// The groups measured on the busy machine fail nothing; the others
	// (no resource file) are judged as ever, and their slower latency
	// fails the gate.
	for _, f := range res.Findings {
		if f.Provider == "prov0" && (f.Model == "model-0:7b" || f.Model == "model-1:7b") && f.FailsGate {
			t.Errorf("a busy suite's finding fails the gate: %+v", f)
		}
	}
	if !res.Regressed() {
		t.Errorf("the unmeasured groups' slower latency passed: %s", verdictLine(res))
	}
	busyGroups := 0
	for _, g := range res.Groups {
		if g.Provider != "prov0" || (g.Model != "model-0:7b" && g.Model != "model-1:7b") {
			continue
		}
		busyGroups++
		if g.OtherLoad == nil || !g.OtherLoad.BusyBase || !g.OtherLoad.BusyNew {
			t.Errorf("%s: load %+v", g.Label(), g.OtherLoad)
		}
		for _, m := range Metrics {
			if v := g.Latency[m]; v.NotJudged != WhyMachineBusy || !strings.Contains(v.Reason, "other work 1.97/2 cores base, 1.96/2 cores new; CPU pressure 85 % base, - new") {
				t.Errorf("%s %s: %s %q: %s", g.Label(), m, v.Change, v.NotJudged, v.Reason)
			}
			for _, p := range g.Prompts {
				if v := p.Latency[m]; v.Judged() {
					t.Errorf("%s %s %s judged on a busy machine: %s", g.Label(), p.PromptID, m, v.Change)
				}
			}
		}
	}
	if busyGroups != 2 {
		t.Fatalf("%d busy groups", busyGroups)
	}
	var text strings.Builder
	WriteText(&text, res)
	for _, w := range []string{"other work (busiest suite)  1.97/2 cores, CPU pressure 85 %  ->  1.96/2 cores",
		"the new run's machine gave no CPU pressure figure (no /proc/pressure/cpu on this machine",
		"not judged (machine busy)", "machine busy"} {
		if !strings.Contains(text.String(), w) {
			t.Errorf("no %q in:\n%s", w, text.String())
		}
	}
	if n := strings.Count(text.String(), "gave no CPU pressure figure"); n != 1 {
		t.Errorf("the missing pressure file said %d times", n)
	}
	opt := DefaultOptions()
	opt.FailOnSuspect = true
	r, _ := Compare(base, cur, opt)
	n := 0
	for _, f := range r.Findings {
		if f.Provider == "prov0" && f.Model == "model-0:7b" && f.Suspect == WhyMachineBusy && f.FailsGate {
			n++
		}
	}
	if n == 0 {
		t.Error("--fail-on-suspect: a slower busy night's findings do not fail the gate")
	}
	// A real quality regression on such a night still fails the gate.
	broken := writeLargeRun(t, dir, "broken", 960, 0, 2, 1)
	for _, m := range []string{"model-0:7b", "model-1:7b"} {
		writeBusy(t, broken, "prov0", m, 2, 196, ptrTo(80.0))
	}
	r, _ = Compare(base, broken, DefaultOptions())
	quality := 0
	for _, f := range r.Findings {
		if f.Provider == "prov0" && f.Model == "model-0:7b" && f.Category == Quality && f.FailsGate && f.Suspect == "" {
			quality++
		}
	}
	if quality == 0 || !r.Regressed() {
		t.Errorf("a quality regression on a busy night: %d failing quality findings; %s", quality, verdictLine(r))
	}
}
