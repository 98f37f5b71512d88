package runner

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"bench/config"
	"bench/providers"
	"bench/run/output"
	"bench/run/plan"
	"bench/validators"
)

// judgeSpec decodes an llm_judge spec.
func judgeSpec(t *testing.T, src string) *validators.Spec {
	t.Helper()
	var s validators.Spec
	if err := yaml.Unmarshal([]byte(src), &s); err != nil {
		t.Fatal(err)
	}
	return &s
}

// The judge runs after the cell, on slots of its own: the cell's clock
// has stopped (its timings hold nothing of the judge), its provider slot
// is free for the next cell while the judge works, and the judge's
// requests never exceed run.judge_concurrency.
func TestJudgingAfterTheCell(t *testing.T) {
	clk := newFakeClock()
	cell := &scripted{stream: func(ctx context.Context, req providers.Request, emit providers.EmitFunc) (*providers.Response, error) {
		emit(providers.Event{Kind: providers.EventRequestStart})
		clk.Advance(10 * time.Millisecond)
		emit(providers.Event{Kind: providers.EventText, Text: "OK"})
		clk.Advance(5 * time.Millisecond)
		return &providers.Response{Text: "OK"}, nil
	}}
	var mu sync.Mutex
	judging, maxJudging := 0, 0
	var seen []string
	release := make(chan struct{})
	judge := &scripted{stream: func(ctx context.Context, req providers.Request, emit providers.EmitFunc) (*providers.Response, error) {
		mu.Lock()
		judging++
		maxJudging = max(maxJudging, judging)
		seen = append(seen, req.Model+": "+req.Prompt)
		mu.Unlock()
		// Hold the judge until every cell has run: the cells cannot be
		// waiting for it.
		select {
		case <-release:
		case <-ctx.Done():
		}
		clk.Advance(3 * time.Second)
		mu.Lock()
		judging--
		mu.Unlock()
		return &providers.Response{Text: `{"verdict": "fail", "reason": "Too short."}`}, nil
	}}
	cfg := testConfig([]config.Provider{
		{Name: "a", Type: "ollama", Concurrency: 1, Models: []string{"m1"}, ThinkingLevels: []*string{nil}},
		{Name: "grader", Type: "ollama", Concurrency: 1},
	}, 4, 1, 1)
	cfg.Run.JudgeConcurrency = 2
	for i := range cfg.PromptSet {
		cfg.PromptSet[i].Validator = judgeSpec(t, "{type: llm_judge, judge: grader, model: judge-m, rubric: \"Is it a greeting?\"}")
	}
	sink := &memSink{}
	pl := plan.New(cfg)
	go func() {
		// Every cell ends before any judge answers, and the judges are
		// held until run.judge_concurrency's 2 are in flight (or, if the
		// bound were 1, long enough that a second would have come): on
		// a busy machine the second judge's goroutine may start well
		// after the last cell.
		for cell.started.Load() < 4 {
			time.Sleep(time.Millisecond)
		}
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
			mu.Lock()
			two := judging >= 2
			mu.Unlock()
			if two {
				break
			}
		}
		close(release)
	}()
	out, err := Run(context.Background(), Options{Config: cfg, Plan: pl, Clock: clk,
		Providers: map[string]providers.Provider{"a": cell, "grader": judge}, Outputs: []output.Output{sink}})
	if err != nil || out.Recorded != 4 {
		t.Fatalf("run: %v, %d recorded", err, out.Recorded)
	}
	if maxJudging != 2 {
		t.Errorf("%d judge requests at once, want run.judge_concurrency's 2", maxJudging)
	}
	for _, r := range sink.recs {
		j := r.Judge
		if j == nil || j.Verdict != "fail" || r.ObjectivePass == nil || *r.ObjectivePass || *r.Violation != "judge: Too short." {
			t.Fatalf("%s: judge %+v pass %v", r.PromptID, j, r.ObjectivePass)
		}
		if r.E2EMS != 15 || *r.TTFTMS != 10 {
			t.Errorf("%s: e2e %d ttft %d: the judge's 3 s must not be in the cell's times", r.PromptID, r.E2EMS, *r.TTFTMS)
		}
		if j.StartedAtMS < r.EndedAtMS || j.LatencyMS < 3000 {
			t.Errorf("%s: judge started %d, cell ended %d, latency %d", r.PromptID, j.StartedAtMS, r.EndedAtMS, j.LatencyMS)
		}
		if last := r.Timeline[len(r.Timeline)-1]; last.Event != "end" || last.AtMS != 15 {
			t.Errorf("%s: the timeline ends with %+v", r.PromptID, last)
		}
	}
	// The judge sees the question and the answer, not who answered.
	for _, s := range seen {
		if !strings.HasPrefix(s, "judge-m: ") || strings.Contains(s, "m1") || strings.Contains(s, `"a"`) || !strings.Contains(s, "say OK") {
			t.Errorf("judge request: %q", s)
		}
	}
}

// A judge outage is judge errors on cells that succeeded, never cell
// errors: every cell is recorded, success stays true, objective_pass is
// null (not judged), and the check error says why.
func TestJudgeOutage(t *testing.T) {
	judge := &scripted{stream: func(ctx context.Context, req providers.Request, emit providers.EmitFunc) (*providers.Response, error) {
		return nil, &providers.Failure{Status: "error", Type: "connection_refused", Message: "dial tcp 127.0.0.1:1: connect: connection refused"}
	}}
	cfg := testConfig([]config.Provider{
		{Name: "a", Type: "ollama", Concurrency: 2, Models: []string{"m1"}, ThinkingLevels: []*string{nil}},
		{Name: "grader", Type: "ollama", Concurrency: 1},
	}, 3, 1, 2)
	cfg.Run.JudgeConcurrency = 1
	cfg.PromptSet[1].Validators = []validators.Spec{*judgeSpec(t, "{type: llm_judge, judge: grader, model: j, rubric: r}")}
	sink := &memSink{}
	out, err := Run(context.Background(), Options{Config: cfg, Plan: plan.New(cfg),
		Providers: map[string]providers.Provider{"a": &scripted{}, "grader": judge}, Outputs: []output.Output{sink}})
	if err != nil || out.Recorded != 3 || out.ByStatus["ok"] != 3 {
		t.Fatalf("run: %v %+v", err, out)
	}
	for _, r := range sink.recs {
		if !r.Success {
			t.Errorf("%s: not a success", r.PromptID)
		}
		if r.PromptID != "P1" {
			if r.Judge != nil || r.CheckErrors != nil {
				t.Errorf("%s has no judge: %+v", r.PromptID, r)
			}
			continue
		}
		if r.ObjectivePass != nil || r.Judge == nil || r.Judge.Verdict != "error" || len(r.CheckErrors) != 1 || r.CheckErrors[0].Type != "judge_error" ||
			!strings.Contains(r.CheckErrors[0].Message, "connection_refused: dial tcp") {
			t.Errorf("P1: pass %v judge %+v errors %+v", r.ObjectivePass, r.Judge, r.CheckErrors)
		}
	}
}
