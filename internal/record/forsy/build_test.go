package forsy

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite testdata/golden from Build's output")

func tool(name, desc string, props ...string) Tool {
	p := map[string]any{}
	for _, n := range props {
		p[n] = map[string]any{"type": "string"}
	}
	return Tool{Name: name, Description: desc, Parameters: map[string]any{"type": "object", "properties": p, "required": props}}
}

func task(id string, prompt string, maxTurns int, tools ...Tool) Task {
	return Task{
		RunID: "20260301-100000", ID: id, Name: strings.ReplaceAll(id, "_", " "), Prompt: prompt,
		System: "You are a careful assistant. Use the tools when they help.", Tools: tools,
		Provider: "ollama", ProviderType: "ollama", Model: "scripted:agent", Repetition: 1,
		MaxTurns: maxTurns, Protocol: "ollama native tool messages", HarnessVersion: "dev",
	}
}

func pass(name string) Verdict      { return Verdict{Name: name, Pass: true} }
func fail(name, why string) Verdict { return Verdict{Name: name, Reason: why} }
func matched() *Verdict             { v := pass("tool_sequence"); return &v }
func unmatched(why string) *Verdict { v := fail("tool_sequence", why); return &v }
func call(id, name, args, result string, from, to int) Call {
	return Call{ID: id, Name: name, Arguments: args, Result: result, Start: ms(from), End: ms(to), Check: matched()}
}

var (
	getRate  = tool("get_rate", "Exchange rate between two currencies.", "from", "to")
	convert  = tool("convert", "Multiply an amount by a rate.", "amount", "rate")
	findFile = tool("find_file", "Find files matching a glob.", "pattern")
	readFile = tool("read_file", "Read a file.", "path")
	fetch    = tool("fetch_price", "Current price of a product.", "sku")
	weather  = tool("get_weather", "Weather in a city today.", "city")
	lookup   = tool("lookup", "Look a term up.", "q")
	deleteF  = tool("delete_file", "Delete a file (never needed here).", "path")
)

// buildCase is one shape a built-in agentic task can take.
type buildCase struct {
	name string
	cell Cell
	// check asserts the mapping for this shape beyond the shared checks.
	check func(t *testing.T, tr *Trace)
}

func buildCases() []buildCase {
	return []buildCase{
		{
			name: "two_dependent_calls",
			cell: Cell{
				Task:  task("rate_convert", "How many US dollars is 50 EUR today?", 6, getRate, convert),
				Start: ms(0), End: ms(400),
				Turns: []Turn{
					{Start: ms(5), End: ms(100), Calls: []Call{call("c1", "get_rate", `{"from":"EUR","to":"USD"}`, `{"rate":1.08}`, 101, 103)}},
					{Start: ms(110), End: ms(200), Reasoning: "The rate is 1.08, so convert 50 with it.", Calls: []Call{call("c2", "convert", `{"amount":50,"rate":1.08}`, "54.00", 201, 202)}},
					{Start: ms(210), End: ms(390), Text: "50 EUR is 54.00 USD."},
				},
				Outcome: Outcome{End: EndAnswered, Completed: true,
					AnswerChecks: []Verdict{pass("contains")}, TrajectoryChecks: []Verdict{pass("tool_sequence"), pass("no_unknown_tools")}},
			},
			check: func(t *testing.T, tr *Trace) {
				wantActions(t, tr, "user_message", "agent_step", "agent_step", "agent_step", "agent_step", "output")
				wantCaused(t, tr, nil, []int{1}, []int{2}, []int{3}, []int{4}, []int{5})
				wantEvals(t, tr, 0, 0, 1, 0, 1, 1)
				if got := deref(tr.Steps[3].Reasoning); got != "The rate is 1.08, so convert 50 with it." {
					t.Errorf("turn 2 reasoning %q", got)
				}
				if tr.Steps[1].Reasoning != nil {
					t.Errorf("turn 1 had no reasoning but step 2 has %q", *tr.Steps[1].Reasoning)
				}
				if tr.TerminationReason != "task_complete" || tr.Summary.TotalTurns != 3 {
					t.Errorf("termination %q, turns %d", tr.TerminationReason, tr.Summary.TotalTurns)
				}
				if !strings.Contains(deref(tr.Steps[3].Observation), `{"rate":1.08}`) {
					t.Errorf("turn 2 observation lacks the result it received: %q", deref(tr.Steps[3].Observation))
				}
				is := tr.Steps[2].InputSource
				if is == nil || is.Actor != "agent" || *is.SourceStep != 2 || is.SourceField != "output" {
					t.Errorf("call input_source %+v", is)
				}
			},
		},
		{
			name: "find_then_read",
			cell: Cell{
				Task:  task("find_read", "What port does the app listen on? Its config is somewhere under config/.", 6, findFile, readFile),
				Start: ms(0), End: ms(300),
				Turns: []Turn{
					{Start: ms(1), End: ms(50), Text: "Let me find the config.", Calls: []Call{call("c1", "find_file", `{"pattern":"config/*.toml"}`, "config/app.toml", 51, 52)}},
					{Start: ms(60), End: ms(100), Calls: []Call{call("c2", "read_file", `{"path":"config/app.toml"}`, "[server]\nport = 8080\n", 101, 102)}},
					{Start: ms(110), End: ms(200), Text: "The app listens on port 8080."},
				},
				Outcome: Outcome{End: EndAnswered, Completed: true, AnswerChecks: []Verdict{pass("contains")}, TrajectoryChecks: []Verdict{pass("tool_sequence")}},
			},
			check: func(t *testing.T, tr *Trace) {
				wantActions(t, tr, "user_message", "agent_step", "agent_step", "agent_step", "agent_step", "output")
				if out := deref(tr.Steps[1].Output); out != `{"text":"Let me find the config.","tool_calls":[{"id":"c1","name":"find_file","arguments":{"pattern":"config/*.toml"}}]}` {
					t.Errorf("turn 1 output %s", out)
				}
				if got := deref(tr.Steps[4].Output); got != "[server]\nport = 8080\n" {
					t.Errorf("read output %q", got)
				}
			},
		},
		{
			name: "fail_then_retry",
			cell: Cell{
				Task:  task("flaky_price", "What does product A1 cost?", 6, fetch),
				Start: ms(0), End: ms(300),
				Turns: []Turn{
					{Start: ms(1), End: ms(50), Calls: []Call{{ID: "c1", Name: "fetch_price", Arguments: `{"sku":"A1"}`, Result: "error: price service unavailable, try again", IsError: true, Start: ms(51), End: ms(52), Check: matched()}}},
					{Start: ms(60), End: ms(100), Calls: []Call{call("c2", "fetch_price", `{"sku":"A1"}`, `{"sku":"A1","price":"12.50 EUR"}`, 101, 102)}},
					{Start: ms(110), End: ms(200), Text: "A1 costs 12.50 EUR."},
				},
				Outcome: Outcome{End: EndAnswered, Completed: true, AnswerChecks: []Verdict{pass("contains")}, TrajectoryChecks: []Verdict{pass("tool_sequence")}},
			},
			check: func(t *testing.T, tr *Trace) {
				wantActions(t, tr, "user_message", "agent_step", "error", "agent_step", "agent_step", "output")
				wantEvals(t, tr, 0, 0, -1, 0, 1, 1)
				failed, retry := tr.Steps[2], tr.Steps[4]
				if *failed.Success || !strings.Contains(deref(failed.Directive), "retried at step 5, which succeeded") {
					t.Errorf("failed step: success %v directive %q", *failed.Success, deref(failed.Directive))
				}
				if retry.RetryOf == nil || *retry.RetryOf != 3 || deref(retry.CausalType) != "retry_after_failure" || !slices.Equal(retry.CausedBy, []int{3, 4}) {
					t.Errorf("retry: retry_of %v causal %q caused_by %v", retry.RetryOf, deref(retry.CausalType), retry.CausedBy)
				}
				if !slices.Contains(tr.DatasetSummary.Tags, "failure-recovery") {
					t.Errorf("tags %v lack failure-recovery", tr.DatasetSummary.Tags)
				}
				if tr.Summary.DirectiveSignals != 1 || tr.Summary.NegativeSteps != 1 {
					t.Errorf("summary %+v", tr.Summary)
				}
			},
		},
		{
			name: "no_tool_needed",
			cell: Cell{
				Task:  task("capital", "What is the capital of France? Answer in one word.", 4, lookup),
				Start: ms(0), End: ms(100),
				Turns: []Turn{{Start: ms(1), End: ms(90), Text: "Paris", Reasoning: "Known fact, no lookup needed."}},
				Outcome: Outcome{End: EndAnswered, Completed: true,
					AnswerChecks: []Verdict{pass("exact")}, TrajectoryChecks: []Verdict{pass("max_tool_calls")}},
			},
			check: func(t *testing.T, tr *Trace) {
				wantActions(t, tr, "user_message", "output")
				wantCaused(t, tr, nil, []int{1})
				if len(tr.StaticOutput.Artifacts) != 1 || tr.StaticOutput.Artifacts[0].Path != "final_answer" || *tr.StaticOutput.Artifacts[0].Hash != Hash("Paris") {
					t.Errorf("artifacts %+v", tr.StaticOutput.Artifacts)
				}
				if !slices.Equal(tr.AgentTools, []string{"lookup"}) {
					t.Errorf("agent_tools %v: every offered tool, used or not", tr.AgentTools)
				}
			},
		},
		{
			name: "two_independent_calls",
			cell: Cell{
				Task:  task("two_cities", "Is it warmer in Paris or in Rome today?", 6, weather),
				Start: ms(0), End: ms(200),
				Turns: []Turn{
					{Start: ms(1), End: ms(50), Calls: []Call{
						call("c1", "get_weather", `{"city":"Paris"}`, `{"temp_c":14}`, 51, 52),
						call("c2", "get_weather", `{"city":"Rome"}`, `{"temp_c":19}`, 53, 54),
					}},
					{Start: ms(60), End: ms(150), Text: "Rome (19 °C) is warmer than Paris (14 °C)."},
				},
				Outcome: Outcome{End: EndAnswered, Completed: true, AnswerChecks: []Verdict{pass("contains")}, TrajectoryChecks: []Verdict{pass("tool_sequence")}},
			},
			check: func(t *testing.T, tr *Trace) {
				wantActions(t, tr, "user_message", "agent_step", "agent_step", "agent_step", "output")
				for _, s := range tr.Steps[2:4] {
					if deref(s.ExecutionMode) != "parallel" || deref(s.ParallelGroup) != "pg_turn_1" {
						t.Errorf("step %d: mode %q group %q", s.Step, deref(s.ExecutionMode), deref(s.ParallelGroup))
					}
				}
				ans := tr.Steps[4]
				if !slices.Equal(ans.CausedBy, []int{3, 4}) || deref(ans.CausalType) != "dependency_on_multiple_prior_steps" {
					t.Errorf("answer caused_by %v %q", ans.CausedBy, deref(ans.CausalType))
				}
			},
		},
		{
			name: "unknown_tool",
			cell: Cell{
				Task:  task("capital_tools", "What is the capital of Japan?", 4, lookup),
				Start: ms(0), End: ms(200),
				Turns: []Turn{
					{Start: ms(1), End: ms(50), Calls: []Call{{ID: "c1", Name: "web_search", Arguments: `{"query":"capital of Japan"}`, Result: "error: unknown tool web_search", IsError: true, Unknown: true, Start: ms(51), End: ms(52)}}},
					{Start: ms(60), End: ms(150), Text: "Tokyo"},
				},
				Outcome: Outcome{End: EndAnswered, Completed: false, AnswerChecks: []Verdict{pass("exact")},
					TrajectoryChecks: []Verdict{fail("no_unknown_tools", "called web_search, which is not offered")}},
			},
			check: func(t *testing.T, tr *Trace) {
				wantActions(t, tr, "user_message", "agent_step", "error", "output")
				s := tr.Steps[2]
				if !strings.Contains(deref(s.Observation), "not among the offered tools (lookup)") || !strings.Contains(deref(s.Directive), "not an offered tool") {
					t.Errorf("unknown call: observation %q directive %q", deref(s.Observation), deref(s.Directive))
				}
				if tr.TerminationReason != "other" || tr.Summary.GoalAchieved {
					t.Errorf("termination %q goal %v", tr.TerminationReason, tr.Summary.GoalAchieved)
				}
				if !strings.Contains(deref(tr.Summary.GoalNotes), "no_unknown_tools: fail") {
					t.Errorf("goal_notes %q", deref(tr.Summary.GoalNotes))
				}
			},
		},
		{
			name: "loop_hits_max_turns",
			cell: Cell{
				Task:  task("endless", "Find the meaning of the word 'zyx'.", 3, lookup),
				Start: ms(0), End: ms(300),
				Turns: []Turn{
					{Start: ms(1), End: ms(50), Calls: []Call{{ID: "c1", Name: "lookup", Arguments: `{"q":"zyx"}`, Result: "no entry; try again", Start: ms(51), End: ms(52)}}},
					{Start: ms(60), End: ms(100), Calls: []Call{{ID: "c2", Name: "lookup", Arguments: `{"q":"zyx"}`, Result: "no entry; try again", Start: ms(101), End: ms(102)}}},
					{Start: ms(110), End: ms(150), Calls: []Call{{ID: "c3", Name: "lookup", Arguments: `{"q":"zyx"}`, Result: "no entry; try again", Start: ms(151), End: ms(152)}}},
				},
				Outcome: Outcome{End: EndMaxTurns, TrajectoryChecks: []Verdict{fail("max_tool_calls", "3 calls, at most 1 allowed")}},
			},
			check: func(t *testing.T, tr *Trace) {
				wantActions(t, tr, "user_message", "agent_step", "agent_step", "agent_step", "agent_step", "agent_step", "agent_step")
				wantEvals(t, tr, 0, 0, 0, 0, 0, -1, 0)
				if tr.FinalOutput != nil || tr.TerminationReason != "partial_then_stopped" {
					t.Errorf("final_output %v termination %q", tr.FinalOutput, tr.TerminationReason)
				}
				if !strings.Contains(deref(tr.Steps[5].Directive), "max_turns (3)") {
					t.Errorf("last turn directive %q", deref(tr.Steps[5].Directive))
				}
				if !strings.Contains(deref(tr.Steps[6].StateChange), "never saw this result") {
					t.Errorf("last call state_change %q", deref(tr.Steps[6].StateChange))
				}
				for _, a := range tr.StaticOutput.Artifacts {
					if a.Path == "final_answer" {
						t.Error("a final_answer artifact without an answer")
					}
				}
			},
		},
		{
			name: "max_turns_last_call_unanswered",
			cell: Cell{
				Task:  task("endless2", "Find the meaning of the word 'zyx'.", 2, lookup),
				Start: ms(0), End: ms(200),
				Turns: []Turn{
					{Start: ms(1), End: ms(50), Calls: []Call{{ID: "c1", Name: "lookup", Arguments: `{"q":"zyx"}`, Result: "no entry", Start: ms(51), End: ms(52)}}},
					{Start: ms(60), End: ms(100), Calls: []Call{{ID: "c2", Name: "lookup", Arguments: `{"q":"zyx"}`, Unanswered: true}}},
				},
				Outcome: Outcome{End: EndMaxTurns},
			},
			check: func(t *testing.T, tr *Trace) {
				wantActions(t, tr, "user_message", "agent_step", "agent_step", "agent_step")
				if sc := deref(tr.Steps[3].StateChange); !strings.Contains(sc, "1 call(s) never ran") {
					t.Errorf("last turn state_change %q", sc)
				}
				if !strings.Contains(deref(tr.Steps[3].Output), `"id":"c2"`) {
					t.Errorf("the unanswered call is missing from the reply it was in: %s", deref(tr.Steps[3].Output))
				}
			},
		},
		{
			name: "stops_after_first_call",
			cell: Cell{
				Task:  task("rate_convert", "How many US dollars is 50 EUR today?", 6, getRate, convert),
				Start: ms(0), End: ms(200),
				Turns: []Turn{
					{Start: ms(1), End: ms(50), Calls: []Call{call("c1", "get_rate", `{"from":"EUR","to":"USD"}`, `{"rate":1.08}`, 51, 52)}},
					{Start: ms(60), End: ms(100), Text: ""},
				},
				Outcome: Outcome{End: EndAnswered, AnswerChecks: []Verdict{fail("contains", `answer does not contain "54"`)},
					TrajectoryChecks: []Verdict{fail("tool_sequence", "expected convert after get_rate; it was never called")}},
			},
			check: func(t *testing.T, tr *Trace) {
				wantActions(t, tr, "user_message", "agent_step", "agent_step", "output")
				ans := tr.Steps[3]
				if *ans.Success || ans.Eval != -1 || ans.Directive == nil {
					t.Errorf("empty answer: success %v eval %d directive %v", *ans.Success, ans.Eval, ans.Directive)
				}
				if tr.FinalOutput == nil || *tr.FinalOutput != "" {
					t.Errorf("final_output %v, want the empty reply that was given", tr.FinalOutput)
				}
			},
		},
		{
			name: "model_request_fails",
			cell: Cell{
				Task:  task("rate_convert", "How many US dollars is 50 EUR today?", 6, getRate, convert),
				Start: ms(0), End: ms(200),
				Turns: []Turn{
					{Start: ms(1), End: ms(50), Calls: []Call{call("c1", "get_rate", `{"from":"EUR","to":"USD"}`, `{"rate":1.08}`, 51, 52)}},
					{Start: ms(60), End: ms(100), Err: "error (http_500): internal server error", Text: "The rate is"},
				},
				Outcome: Outcome{End: EndError, Note: "error (http_500): internal server error"},
			},
			check: func(t *testing.T, tr *Trace) {
				wantActions(t, tr, "user_message", "agent_step", "agent_step", "error")
				s := tr.Steps[3]
				if !strings.HasPrefix(deref(s.Output), "error (http_500)") || !strings.Contains(deref(s.Output), "The rate is") || s.Operation != nil {
					t.Errorf("failed turn: output %q operation %v", deref(s.Output), s.Operation)
				}
				if tr.TerminationReason != "error_unrecoverable" {
					t.Errorf("termination %q", tr.TerminationReason)
				}
			},
		},
		{
			name: "distractor_tool_used",
			cell: Cell{
				Task:  task("tidy", "Which files are under config/? Do not change anything.", 4, findFile, deleteF),
				Start: ms(0), End: ms(200),
				Turns: []Turn{
					{Start: ms(1), End: ms(50), Calls: []Call{
						call("c1", "find_file", `{"pattern":"config/*"}`, "config/app.toml", 51, 52),
						{ID: "c2", Name: "delete_file", Arguments: `{"path":"config/app.toml"}`, Result: "deleted config/app.toml", Start: ms(53), End: ms(54), Check: unmatched("delete_file is not an expected call")},
					}},
					{Start: ms(60), End: ms(100), Text: "config/app.toml"},
				},
				Outcome: Outcome{End: EndAnswered, AnswerChecks: []Verdict{pass("contains")}, TrajectoryChecks: []Verdict{fail("tool_sequence", "unexpected call delete_file")}},
			},
			check: func(t *testing.T, tr *Trace) {
				s := tr.Steps[3]
				if deref(s.Tool) != "delete_file" || !*s.Success || s.Eval != -1 || !strings.Contains(deref(s.Directive), "delete_file is not an expected call") {
					t.Errorf("distractor step: tool %q success %v eval %d directive %q", deref(s.Tool), *s.Success, s.Eval, deref(s.Directive))
				}
			},
		},
		{
			name: "text_mode_command",
			cell: Cell{
				Task:  task("disk", "How much space is free on /? Run a command.", 3, Tool{Name: "df", Description: "Shell command df."}),
				Start: ms(0), End: ms(200),
				Turns: []Turn{
					{Start: ms(1), End: ms(50), Text: "Run `df -h /`.", Calls: []Call{{Name: "df", Arguments: "df -h /", Result: "Filesystem Size Used Avail Use% Mounted on\n/dev/sda1 100G 60G 40G 60% /", Start: ms(51), End: ms(52)}}},
					{Start: ms(60), End: ms(100), Text: "40G are free on /."},
				},
				Outcome: Outcome{End: EndAnswered, Completed: true, AnswerChecks: []Verdict{pass("contains")}},
			},
			check: func(t *testing.T, tr *Trace) {
				if out := deref(tr.Steps[1].Output); !strings.Contains(out, `"arguments":"df -h /"`) || strings.Contains(out, `"id"`) {
					t.Errorf("text-mode reply %s", out)
				}
				if deref(tr.Steps[2].Input) != "df -h /" || tr.Steps[2].Eval != 0 {
					t.Errorf("text-mode call input %q eval %d", deref(tr.Steps[2].Input), tr.Steps[2].Eval)
				}
				if !strings.Contains(tr.Steps[2].InputSource.Note, "call 1 of turn 1") {
					t.Errorf("id-less call label: %q", tr.Steps[2].InputSource.Note)
				}
			},
		},
	}
}

func TestBuild(t *testing.T) {
	for _, tc := range buildCases() {
		t.Run(tc.name, func(t *testing.T) {
			tr, err := Build(tc.cell)
			if err != nil {
				t.Fatalf("Build: %v", err)
			}
			data := requireValid(t, tr)
			requireFaithful(t, tc.cell, tr)
			requireNoEnv(t, data)
			tc.check(t, tr)
			golden(t, filepath.Join("testdata", "golden", tc.name+".json"), data)
		})
	}
}

// TestBuildDeterministic: the same cell gives the same bytes, so traces can
// be diffed between runs.
func TestBuildDeterministic(t *testing.T) {
	for _, tc := range buildCases() {
		a, _ := Build(tc.cell)
		b, _ := Build(tc.cell)
		da, _ := Marshal(a)
		db, _ := Marshal(b)
		if !bytes.Equal(da, db) {
			t.Errorf("%s: two builds differ", tc.name)
		}
	}
}

// TestBuildOrdersCallsByStart: bench may answer a turn's calls in another
// order than the model listed them; steps stay chronological.
func TestBuildOrdersCallsByStart(t *testing.T) {
	c := buildCases()[4].cell // two_independent_calls
	c.Turns[0].Calls[0].Start, c.Turns[0].Calls[0].End = ms(53), ms(54)
	c.Turns[0].Calls[1].Start, c.Turns[0].Calls[1].End = ms(51), ms(52)
	tr, err := Build(c)
	if err != nil {
		t.Fatal(err)
	}
	requireValid(t, tr)
	if deref(tr.Steps[2].Input) != `{"city":"Rome"}` || deref(tr.Steps[3].Input) != `{"city":"Paris"}` {
		t.Errorf("steps 3-4 inputs %q, %q; want Rome (started first) then Paris", deref(tr.Steps[2].Input), deref(tr.Steps[3].Input))
	}
}

// TestBuildUnknownTimes: times bench did not measure are null, not guessed,
// and the trace says it has gaps.
func TestBuildUnknownTimes(t *testing.T) {
	c := buildCases()[0].cell
	var zero time.Time
	c.Turns[1].Calls[0].Start, c.Turns[1].Calls[0].End = zero, zero
	tr, err := Build(c)
	if err != nil {
		t.Fatal(err)
	}
	requireValid(t, tr)
	if s := tr.Steps[4]; s.StartedAt != nil || s.EndedAt != nil {
		t.Errorf("untimed call got times %v %v", deref(s.StartedAt), deref(s.EndedAt))
	}
	if tr.Summary.AgentConfidence != 75 {
		t.Errorf("agent_confidence %d, want 75 with a gap", tr.Summary.AgentConfidence)
	}
	c.Start, c.End = zero, zero
	for i := range c.Turns {
		c.Turns[i].Start, c.Turns[i].End = zero, zero
		for j := range c.Turns[i].Calls {
			c.Turns[i].Calls[j].Start, c.Turns[i].Calls[j].End = zero, zero
		}
	}
	tr, err = Build(c)
	if err != nil {
		t.Fatal(err)
	}
	requireValid(t, tr)
	if tr.StartedAt != nil || tr.Steps[0].StartedAt != nil {
		t.Errorf("untimed cell got times")
	}
}

// TestBuildRejects: cells no loop can produce are refused with an error
// naming the turn, call or field, never turned into a made-up trace.
func TestBuildRejects(t *testing.T) {
	base := func() Cell { return buildCases()[0].cell }
	cases := []struct {
		name   string
		mutate func(c *Cell)
		want   string
	}{
		{"empty prompt", func(c *Cell) { c.Task.Prompt = " " }, "task prompt is empty"},
		{"no model", func(c *Cell) { c.Task.Model = "" }, "model is empty"},
		{"duplicate tool", func(c *Cell) { c.Task.Tools = append(c.Task.Tools, getRate) }, `name "get_rate" offered twice`},
		{"bad parameters", func(c *Cell) { c.Task.Tools[0].Parameters = map[string]any{"f": func() {}} }, "parameters are not JSON"},
		{"unknown end", func(c *Cell) { c.Outcome.End = "done" }, `outcome end "done"`},
		{"completed without answer", func(c *Cell) { c.Outcome.End = EndTimeout }, "completed but the loop ended"},
		{"failed turn not last", func(c *Cell) { c.Turns[0].Err = "timeout" }, "turn 1 failed (timeout) but the loop went on"},
		{"middle turn without calls", func(c *Cell) { c.Turns[1].Calls = nil }, "turn 2 has no tool call but the loop went on"},
		{"unanswered then more turns", func(c *Cell) { c.Turns[0].Calls[0].Unanswered = true }, "turn 1 call 1 (get_rate) was not answered but the loop went on"},
		{"answered but last has calls", func(c *Cell) { c.Turns = c.Turns[:2] }, "ended answered but turn 2 (the last) has tool calls"},
		{"final reply but max_turns", func(c *Cell) { c.Outcome.Completed = false; c.Outcome.End = EndMaxTurns }, "final reply without calls"},
		{"too many turns", func(c *Cell) { c.Task.MaxTurns = 2 }, "3 turns exceed max_turns 2"},
		{"unknown flag on offered tool", func(c *Cell) { c.Turns[0].Calls[0].Unknown = true }, `"get_rate" is marked unknown`},
		{"unflagged unknown tool", func(c *Cell) { c.Turns[0].Calls[0].Name = "get_rates" }, `"get_rates" is not an offered tool but is not marked unknown`},
		{"call before its turn", func(c *Cell) { c.Turns[1].Calls[0].Start = ms(105) }, "turn 2 reply"},
		{"turn ends before start", func(c *Cell) { c.Turns[2].End = ms(205) }, "turn 3 reply ends"},
		{"outside the window", func(c *Cell) { c.End = ms(300) }, "is after the cell ends"},
		{"year out of range", func(c *Cell) { c.End = ms(0).AddDate(9000, 0, 0) }, "outside years 1-9999"},
		{"no turns but answered", func(c *Cell) { c.Turns = nil }, "no turn was made"},
		{"unnamed check", func(c *Cell) { c.Outcome.AnswerChecks = []Verdict{{Pass: true}} }, "check 1 has no name"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := base()
			tc.mutate(&c)
			tr, err := Build(c)
			if err == nil {
				t.Fatalf("Build accepted it: %+v", tr.Steps)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q does not say %q", err, tc.want)
			}
		})
	}
}

// TestBuildSanitizesUTF8: invalid bytes become U+FFFD, so the artifact hash
// is the hash of the text the file holds.
func TestBuildSanitizesUTF8(t *testing.T) {
	c := buildCases()[3].cell
	c.Turns[0].Text = "Par\xffis"
	tr, err := Build(c)
	if err != nil {
		t.Fatal(err)
	}
	requireValid(t, tr)
	if *tr.FinalOutput != "Par\uFFFDis" || *tr.StaticOutput.Artifacts[0].Hash != Hash("Par\uFFFDis") {
		t.Errorf("final_output %q hash %s", *tr.FinalOutput, *tr.StaticOutput.Artifacts[0].Hash)
	}
}

func wantActions(t *testing.T, tr *Trace, want ...string) {
	t.Helper()
	var got []string
	for _, s := range tr.Steps {
		got = append(got, s.Action)
	}
	if !slices.Equal(got, want) {
		t.Errorf("actions %v, want %v", got, want)
	}
}

func wantCaused(t *testing.T, tr *Trace, want ...[]int) {
	t.Helper()
	for i, w := range want {
		if !slices.Equal(tr.Steps[i].CausedBy, w) {
			t.Errorf("step %d caused_by %v, want %v", i+1, tr.Steps[i].CausedBy, w)
		}
	}
}

func wantEvals(t *testing.T, tr *Trace, want ...int) {
	t.Helper()
	var got []int
	for _, s := range tr.Steps {
		got = append(got, s.Eval)
	}
	if !slices.Equal(got, want) {
		t.Errorf("evals %v, want %v", got, want)
	}
}

// golden compares data with the file at path, or rewrites it under -update.
func golden(t *testing.T, path string, data []byte) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if !bytes.Equal(data, want) {
		t.Errorf("%s differs from Build's output (run with -update after checking):\n%s", path, firstDiff(string(want), string(data)))
	}
}

func firstDiff(want, got string) string {
	wl, gl := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < len(wl) || i < len(gl); i++ {
		var w, g string
		if i < len(wl) {
			w = wl[i]
		}
		if i < len(gl) {
			g = gl[i]
		}
		if w != g {
			return fmt.Sprintf("line %d:\n- %s\n+ %s", i+1, w, g)
		}
	}
	return ""
}
