package forsy

import (
	"testing"
	"time"
)

// FuzzBuild builds cells from random bytes and text. Build must never panic;
// a cell a loop can produce must be accepted; every trace Build returns must
// pass Validate, ValidateJSON and the upstream schema, and hold exactly the
// turns and answered calls of the cell. The seeds run in plain `go test`.
func FuzzBuild(f *testing.F) {
	f.Add([]byte{}, "")
	f.Add([]byte{2, 3, 1, 0, 1, 1, 1, 0, 0, 2, 0, 0, 1, 1}, `{"rate":1.08}`)
	f.Add([]byte{3, 5, 0, 2, 9, 2, 3, 1, 4, 1, 1, 0, 2, 2, 7, 7, 1, 3, 0}, "error: try again")
	f.Add([]byte{1, 4, 4, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1}, "no entry")
	f.Add([]byte{0, 2, 0, 2, 5, 5, 2, 2, 2, 2}, "Par\xffis \u2028 <b>&</b>")
	f.Add([]byte{4, 3, 0, 0, 0, 3, 0, 0, 0, 0, 6, 6, 6, 6}, "ls -la /tmp")
	f.Add([]byte{255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255}, "x")
	f.Add([]byte{2, 2, 0, 1, 0, 0, 0, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, "")
	f.Fuzz(func(t *testing.T, data []byte, text string) {
		c, wellFormed := fuzzCell(data, text)
		tr, err := Build(c)
		if err != nil {
			if wellFormed {
				t.Fatalf("Build rejected a cell a loop can produce: %v", err)
			}
			return
		}
		requireValid(t, tr)
		requireFaithful(t, sanitize(c), tr)
	})
}

// bytesSource hands out the fuzz bytes one at a time, then zeros.
type bytesSource struct {
	b []byte
	i int
}

func (s *bytesSource) next(n int) int {
	if n <= 0 {
		return 0
	}
	if s.i >= len(s.b) {
		return 0
	}
	v := int(s.b[s.i])
	s.i++
	return v % n
}

// fuzzCell makes a cell from the bytes. Most are well formed (what a loop
// can produce); one byte may ask for a single corruption, and then the cell
// is reported as not well formed.
func fuzzCell(data []byte, text string) (Cell, bool) {
	s := &bytesSource{b: data}
	pool := []string{"get_rate", "convert", "find_file", "read_file"}
	nTools := s.next(len(pool) + 1)
	var tools []Tool
	for _, n := range pool[:nTools] {
		tools = append(tools, Tool{Name: n, Description: text, Parameters: map[string]any{"type": "object", "description": text}})
	}
	nTurns := s.next(6)
	maxTurns := s.next(8)
	now := origin
	tick := func() time.Time { now = now.Add(time.Duration(s.next(40)) * time.Millisecond); return now }
	texts := []string{"", text, `{"a":1}`, "[" + text, "error: " + text, "42"}
	pick := func() string { return texts[s.next(len(texts))] }

	c := Cell{
		Task: Task{RunID: "fuzz", ID: "task_" + text, Name: text, Prompt: "Q: " + text, System: pick(), Tools: tools,
			Provider: "p", Model: "m" + text, ThinkingLevel: pick(), Repetition: s.next(3), Protocol: pick()},
		Start: origin,
	}
	call := func(id int) Call {
		name := "zz_unknown"
		if nTools > 0 && s.next(5) != 0 {
			name = pool[s.next(nTools)]
		}
		cl := Call{Name: name, Arguments: pick(), Result: pick(), Unknown: name == "zz_unknown"}
		if s.next(2) == 0 {
			cl.ID = "c" + string(rune('0'+id%10))
		}
		cl.IsError = cl.Unknown || s.next(3) == 0
		if s.next(7) != 0 {
			cl.Start, cl.End = tick(), tick()
		}
		switch s.next(3) {
		case 1:
			cl.Check = &Verdict{Name: "tool_sequence", Pass: true}
		case 2:
			cl.Check = &Verdict{Name: "tool_sequence", Reason: pick()}
		}
		return cl
	}
	end := EndAnswered
	for k := 0; k < nTurns; k++ {
		tn := Turn{Text: pick(), Reasoning: pick()}
		if s.next(9) != 0 {
			tn.Start, tn.End = tick(), tick()
		}
		if k < nTurns-1 {
			for j := 0; j < 1+s.next(3); j++ {
				tn.Calls = append(tn.Calls, call(k*3+j))
			}
			c.Turns = append(c.Turns, tn)
			continue
		}
		switch s.next(4) {
		case 1: // the loop stopped with calls pending or answered
			for j := 0; j < 1+s.next(3); j++ {
				cl := call(k*3 + j)
				cl.Unanswered = s.next(3) == 0
				tn.Calls = append(tn.Calls, cl)
			}
			end = []End{EndMaxTurns, EndTimeout, EndCancelled, EndError}[s.next(4)]
			if end == EndMaxTurns {
				maxTurns = nTurns
			}
		case 2: // the request failed
			tn.Err = "error (" + pick() + ")"
			if s.next(2) == 0 {
				tn.Calls = []Call{{Name: "get_rate", Arguments: pick(), Unanswered: true, Unknown: nTools == 0}}
			}
			end = []End{EndError, EndTimeout, EndCancelled}[s.next(3)]
		}
		c.Turns = append(c.Turns, tn)
	}
	if nTurns == 0 {
		end = []End{EndError, EndTimeout, EndCancelled}[s.next(3)]
	}
	if maxTurns > 0 && maxTurns < nTurns {
		maxTurns = nTurns
	}
	c.Task.MaxTurns = maxTurns
	c.Outcome = Outcome{End: end, Completed: end == EndAnswered && s.next(2) == 0, Note: pick()}
	for i := 0; i < s.next(3); i++ {
		c.Outcome.AnswerChecks = append(c.Outcome.AnswerChecks, Verdict{Name: "contains", Pass: s.next(2) == 0, Reason: pick()})
		c.Outcome.TrajectoryChecks = append(c.Outcome.TrajectoryChecks, Verdict{Name: "tool_sequence", Pass: s.next(2) == 0, Reason: pick()})
	}
	c.End = tick()

	// One corruption, sometimes.
	switch s.next(12) {
	case 1:
		c.End = origin.Add(-time.Second)
	case 2:
		if len(c.Turns) > 0 && !c.Turns[0].Start.IsZero() {
			c.Turns[0].Start, c.Turns[0].End = c.Turns[0].End.Add(time.Millisecond), c.Turns[0].Start
		} else {
			return c, true
		}
	case 3:
		c.Outcome.End = "nope"
	case 4:
		if len(c.Turns) > 1 {
			c.Turns[0].Err = "boom"
		} else {
			return c, true
		}
	case 5:
		c.Task.Model = ""
	default:
		return c, true
	}
	return c, false
}
