package forsy

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// schemaURL is the upstream schema's own $id; the file is registered under
// it so the compiler never tries to fetch anything.
const schemaURL = "https://forsy.ai/schemas/forsy_trace_schema_v0_1.json"

var (
	schemaOnce sync.Once
	schema     *jsonschema.Schema
	schemaErr  error
)

// upstreamSchema compiles testdata's copy of the upstream JSON Schema once.
func upstreamSchema(tb testing.TB) *jsonschema.Schema {
	tb.Helper()
	schemaOnce.Do(func() {
		f, err := os.Open("testdata/forsy_trace_schema_v0_1.json")
		if err != nil {
			schemaErr = err
			return
		}
		defer f.Close()
		doc, err := jsonschema.UnmarshalJSON(f)
		if err != nil {
			schemaErr = err
			return
		}
		c := jsonschema.NewCompiler()
		if err := c.AddResource(schemaURL, doc); err != nil {
			schemaErr = err
			return
		}
		schema, schemaErr = c.Compile(schemaURL)
	})
	if schemaErr != nil {
		tb.Fatalf("compile upstream schema: %v", schemaErr)
	}
	return schema
}

// schemaCheck validates encoded JSON against the upstream schema.
func schemaCheck(tb testing.TB, data []byte) error {
	tb.Helper()
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		return err
	}
	return upstreamSchema(tb).Validate(inst)
}

// requireValid asserts a built trace passes the upstream schema, Validate,
// and ValidateJSON on its encoding.
func requireValid(tb testing.TB, tr *Trace) []byte {
	tb.Helper()
	if err := Validate(tr); err != nil {
		tb.Fatalf("Validate: %v", err)
	}
	data, err := Marshal(tr)
	if err != nil {
		tb.Fatalf("Marshal: %v", err)
	}
	if err := schemaCheck(tb, data); err != nil {
		tb.Fatalf("upstream schema: %v", err)
	}
	if err := ValidateJSON(data); err != nil {
		tb.Fatalf("ValidateJSON: %v", err)
	}
	return data
}

// requireFaithful asserts that the trace holds what happened and nothing
// else: one step per turn, one step per answered call with its exact
// arguments and result, no step for an unanswered call, the answer iff the
// loop ended answered.
func requireFaithful(tb testing.TB, c Cell, tr *Trace) {
	tb.Helper()
	var answered []Call
	for _, tn := range c.Turns {
		if tn.Err != "" {
			continue
		}
		for _, cl := range tn.Calls {
			if !cl.Unanswered {
				answered = append(answered, cl)
			}
		}
	}
	var callSteps, turnSteps []Step
	for _, s := range tr.Steps[1:] {
		if s.Tool != nil {
			callSteps = append(callSteps, s)
		} else {
			turnSteps = append(turnSteps, s)
		}
	}
	if tr.Steps[0].Action != ActionUserMessage || deref(tr.Steps[0].Input) != c.Task.Prompt {
		tb.Errorf("step 1 is not the user's prompt word for word: %+v", tr.Steps[0])
	}
	if len(turnSteps) != len(c.Turns) {
		tb.Errorf("%d turn steps for %d turns", len(turnSteps), len(c.Turns))
	}
	if len(callSteps) != len(answered) {
		tb.Fatalf("%d call steps for %d answered calls", len(callSteps), len(answered))
	}
	// Calls may be reordered by start time inside a turn; match as multisets.
	left := map[[3]string]int{}
	for _, cl := range answered {
		left[[3]string{cl.Name, cl.Arguments, cl.Result}]++
	}
	for _, s := range callSteps {
		k := [3]string{deref(s.Tool), deref(s.Input), deref(s.Output)}
		if left[k] == 0 {
			tb.Errorf("step %d (%s %s -> %s) matches no call that was made", s.Step, k[0], k[1], k[2])
		}
		left[k]--
	}
	last := len(c.Turns) - 1
	if c.Outcome.End == EndAnswered {
		if tr.FinalOutput == nil || *tr.FinalOutput != c.Turns[last].Text {
			tb.Errorf("final_output %v, want the last reply %q", tr.FinalOutput, c.Turns[last].Text)
		}
		if s := tr.Steps[len(tr.Steps)-1]; s.Action != ActionOutput || deref(s.Output) != c.Turns[last].Text {
			tb.Errorf("last step is not the answer: %+v", s)
		}
	} else if tr.FinalOutput != nil {
		tb.Errorf("final_output %q although the loop ended %s", *tr.FinalOutput, c.Outcome.End)
	}
	if tr.Summary.GoalAchieved != c.Outcome.Completed {
		tb.Errorf("goal_achieved %v, want %v", tr.Summary.GoalAchieved, c.Outcome.Completed)
	}
}

// requireNoEnv asserts no value of the process environment leaks into data.
func requireNoEnv(tb testing.TB, data []byte) {
	tb.Helper()
	for _, kv := range os.Environ() {
		_, v, _ := strings.Cut(kv, "=")
		if len(v) >= 12 && bytes.Contains(data, []byte(v)) {
			name, _, _ := strings.Cut(kv, "=")
			tb.Errorf("the trace contains the value of environment variable %s", name)
		}
	}
}

// clock hands out times from a fixed origin; tests never read the wall
// clock.
var origin = time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)

func ms(n int) time.Time { return origin.Add(time.Duration(n) * time.Millisecond) }

func decode(tb testing.TB, data []byte) map[string]any {
	tb.Helper()
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		tb.Fatal(err)
	}
	return m
}

// Validate is ValidateJSON on t's encoding (as Write checks what it
// writes), for tests that hold a Trace.
func Validate(t *Trace) error {
	if t == nil {
		return errors.New("trace is nil")
	}
	data, err := Marshal(t)
	if err != nil {
		return err
	}
	return ValidateJSON(data)
}
