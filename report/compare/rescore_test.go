package compare

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"bench/internal/record/results"
	"bench/internal/record/rundir"
)

// A rescored pair holds the same answers judged twice: a prompt whose
// checks alone changed is judged, and exactly the verdicts the change
// moved are regressions or improvements. Two runs that only share an id
// are not a pair.
func TestRescoredPair(t *testing.T) {
	dir := t.TempDir()
	start := time.Date(2026, 3, 1, 2, 0, 0, 0, time.UTC)
	recs := func(p0 bool) []*results.Record {
		r0 := rec("P0", 0)
		if !p0 {
			r0 = rec("P0", 0, failing(`expected exactly "ANSWER P0", got "answer P0"`))
		}
		r2 := rec("P2", 0, failing("no tool call, expected one of [df]"))
		if !p0 {
			r2 = rec("P2", 0)
		}
		return []*results.Record{r0, rec("P1", 0, withCalls([]string{"get_memory_usage"}, call("get_memory_usage", `{}`))), r2}
	}
	changed := defaultPrompts()
	changed[0].Validator = json.RawMessage(`{"type":"exact","value":"ANSWER P0"}`)
	changed[2].Validator = json.RawMessage(`{"type":"noop"}`)
	base := writeRun(t, dir, runSpec{id: "night", recs: recs(true), info: &rundir.RunInfo{StartedAt: start, EndReason: "finished"}})
	newDir := writeRun(t, dir, runSpec{id: "night_rescored", prompts: changed, recs: recs(false), info: &rundir.RunInfo{StartedAt: start, EndReason: "finished",
		RescoredFrom: &rundir.RescoreSource{RunID: "night", OriginRunID: "night"}}})
	res, err := Compare(base, newDir, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, c := range res.Cells {
		got[c.PromptID] = c.Verdict + "/" + c.Category
	}
	if want := map[string]string{"P0": "regression/quality", "P1": "match/", "P2": "improvement/"}; !equalMaps(got, want) {
		t.Errorf("verdicts %v, want %v", got, want)
	}
	if res.Rescored == nil || res.Rescored.OriginRunID != "night" || len(res.Rescored.Prompts) != 2 || len(res.ChangedPrompts) != 0 {
		t.Fatalf("rescored = %+v, changed %+v", res.Rescored, res.ChangedPrompts)
	}
	var b strings.Builder
	WriteText(&b, res)
	if !strings.Contains(b.String(), "rescored: both runs hold run night's cells; the checks of 2 prompts changed (P0, P2) and their cells are judged") {
		t.Errorf("text:\n%s", b.String())
	}
	// The same id started at another time: another run, so P0 and P2 changed.
	other := writeRun(t, dir, runSpec{id: "night_other", prompts: changed, recs: recs(false), info: &rundir.RunInfo{StartedAt: start.Add(24 * time.Hour),
		RescoredFrom: &rundir.RescoreSource{RunID: "night", OriginRunID: "night"}}})
	res, err = Compare(base, other, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	if res.Rescored != nil || len(res.ChangedPrompts) != 2 || res.Counts[Changed] != 2 {
		t.Errorf("not a pair: rescored %+v, changed %+v, counts %v", res.Rescored, res.ChangedPrompts, res.Counts)
	}
	// A rescore that changed a prompt's text (bench rescore refuses it, a
	// hand edit does not): that prompt is changed all the same.
	edited := defaultPrompts()
	edited[0].Prompt = "Say it twice: alpha"
	res, err = Compare(base, writeRun(t, dir, runSpec{id: "night_edited", prompts: edited, recs: recs(true),
		info: &rundir.RunInfo{StartedAt: start, RescoredFrom: &rundir.RescoreSource{OriginRunID: "night"}}}), DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	if res.Rescored == nil || len(res.ChangedPrompts) != 1 || res.ChangedPrompts[0].PromptID != "P0" {
		t.Errorf("edited text: rescored %+v, changed %+v", res.Rescored, res.ChangedPrompts)
	}
}

func equalMaps(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// A cell whose judge gave no verdict is never a pass: in the new run it
// fails the gate as availability, in the base run it is not judged, and
// neither counts in the pass rates.
func TestCheckErrorCells(t *testing.T) {
	dir := t.TempDir()
	judgeErr := func(r *results.Record) {
		r.ObjectivePass = nil
		r.CheckErrors = []results.CheckError{{Type: results.JudgeError, Check: "llm_judge", Message: "connection_refused"}}
	}
	base := writeRun(t, dir, runSpec{id: "base", recs: []*results.Record{rec("P0", 0), rec("P0", 1, judgeErr), rec("P0", 2, judgeErr)}})
	cur := writeRun(t, dir, runSpec{id: "new", recs: []*results.Record{rec("P0", 0, judgeErr), rec("P0", 1), rec("P0", 2, judgeErr)}})
	res, err := Compare(base, cur, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"regression/availability", "unavailable/", "unavailable/"}
	for _, c := range res.Cells {
		if got := c.Verdict + "/" + c.Category; got != want[c.Repetition] {
			t.Errorf("rep %d: %s, want %s (%v)", c.Repetition, got, want[c.Repetition], c.Reasons)
		}
	}
	if !res.Regressed() || res.Failing[Availability] == 0 {
		t.Errorf("the gate passed a night the judge was down: %s %v", res.Verdict, res.Failing)
	}
	if g := res.Groups[0]; g.PassRate.BaseN != 0 || g.PassRate.NewN != 0 {
		t.Errorf("pass rate counted unjudged cells: %+v", g.PassRate)
	}
}
