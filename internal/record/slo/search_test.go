package slo

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// ddc is a server of c slots serving each request in service seconds,
// first come first served, with its first token ttft0 after service
// starts: the fake server of the end-to-end test, without a clock.
type ddc struct {
	c              int
	service, ttft0 float64
}

// capacity is the most it answers per second.
func (s ddc) capacity() float64 { return float64(s.c) / s.service }

// openLoop is a stage of n requests sent at a constant rate: the tally of
// those whose TTFT (queue wait plus ttft0) is within limit seconds.
func (s ddc) openLoop(rate float64, n int, limit float64) Tally {
	free := make([]float64, s.c)
	t := Tally{}
	for i := range n {
		at := float64(i) / rate
		k := 0
		for j := range free {
			if free[j] < free[k] {
				k = j
			}
		}
		start := math.Max(at, free[k])
		free[k] = start + s.service
		t.Sent++
		if start-at+s.ttft0 <= limit {
			t.Good++
		} else {
			if t.Missed == nil {
				t.Missed = map[string]int{}
			}
			t.Missed["ttft_ms"]++
		}
	}
	return t
}

// closedLoop is a stage of n requests over streams streams: every
// request meets the limit while the streams fit the slots, none once
// they queue a whole service behind.
func (s ddc) closedLoop(streams, n int, limit float64) Tally {
	t := Tally{Sent: n}
	wait := 0.0
	if streams > s.c {
		wait = math.Ceil(float64(streams-s.c)/float64(s.c)) * s.service
	}
	if wait+s.ttft0 <= limit {
		t.Good = n
	} else {
		t.Missed = map[string]int{"ttft_ms": n}
	}
	return t
}

// run drives a search against the server as the runner does.
func run(s *Search, srv ddc, n int, limit float64) ([]Outcome, Limit) {
	var done []Outcome
	for {
		st := s.Next(done, 32)
		if st.End != "" {
			break
		}
		o := Outcome{Stage: StageName(len(done)), Level: st.Level, Probe: st.Probe}
		switch {
		case st.Probe:
			o.Throughput = math.Min(float64(int(st.Level)), float64(srv.c)) / srv.service
			o.Tally = srv.closedLoop(int(st.Level), n, limit)
		case s.Mode() == ModeConcurrency:
			o.Tally = srv.closedLoop(int(st.Level), n, limit)
		default:
			o.Tally = srv.openLoop(st.Level, n, limit)
		}
		done = append(done, o)
		if len(done) > 100 {
			panic("search does not end")
		}
	}
	return done, s.Evaluate(done, 32)
}

// trueLimit is the highest rate whose stage the judge passes, found by
// scanning upward in steps of 0.05 % from half the capacity (the judge's
// verdict on this server is monotone in the rate).
func trueLimit(s *Search, srv ddc, n int, limit float64) float64 {
	best := 0.0
	for r := srv.capacity() / 2; r < 2*srv.capacity(); r *= 1.0005 {
		if ok, _, _ := s.Judge(srv.openLoop(r, n, limit)); ok {
			best = r
		}
	}
	return best
}

// The search lands within its tolerance (5 %, 3 %) of the true limit in
// at most 8 stages on
// servers whose capacity spans two orders of magnitude, with the limits
// the end-to-end test uses (TTFT within 100 ms of an unqueued request's),
// and on tighter and looser limits.
func TestSearchFindsLimit(t *testing.T) {
	for _, srv := range []ddc{{4, 0.2, 0.05}, {8, 0.2, 0.05}, {16, 0.2, 0.05}, {2, 1, 0.1}, {64, 0.1, 0.02}} {
		for _, c := range []struct{ margin, tol float64 }{{0.02, 0.05}, {0.1, 0.05}, {0.5, 0.05}, {0.1, 0.03}, {0.5, 0.03}} {
			margin := c.margin
			// A server with more slots than the probe's 32 streams answers
			// more than the probe measured: a doubling and a bisection more.
			most := 8
			if srv.c > 32 {
				most = 10
			}
			s := &Search{MaxStages: 10, Tolerance: c.tol}
			s.Defaults()
			limit := srv.ttft0 + margin
			n := max(120, 16*srv.c) // a burst of a few times the slots is answered whatever the rate
			want := trueLimit(s, srv, n, limit)
			done, l := run(s, srv, n, limit)
			errPct := 100 * (l.Level/want - 1)
			t.Logf("tolerance %g, c=%d service %gs margin %gs: capacity %.2f/s, true limit %.2f/s, found %.2f/s in [%.2f, %.2f] (%+.1f %%), %d stages, %s",
				c.tol, srv.c, srv.service, margin, srv.capacity(), want, l.Level, l.Bracket[0], l.Bracket[1], errPct, len(done), l.End)
			if s.MaxStages = most; !l.Found {
				t.Errorf("not found: %+v", l)
			}
			if l = s.Evaluate(done, 32); !l.Converged {
				t.Errorf("not found or not converged: %+v", l)
			}
			if len(done) > most {
				t.Errorf("%d stages, want at most %d", len(done), most)
			}
			if math.Abs(errPct) > 100*c.tol {
				t.Errorf("found %.3f, true limit %.3f: %+.1f %%", l.Level, want, errPct)
			}
			if l.Level > want+1e-9 {
				t.Errorf("the limit %.3f passed above the true limit %.3f", l.Level, want)
			}
		}
	}
}

// A concurrency search finds the server's slots: every stream beyond them
// queues a whole service behind.
func TestSearchConcurrency(t *testing.T) {
	for _, c := range []int{1, 3, 8, 24} {
		s := &Search{Concurrency: &Bracket{Auto: true}, MaxStages: 16}
		s.Defaults()
		srv := ddc{c, 0.2, 0.05}
		done, l := run(s, srv, 120, 0.1)
		if !l.Converged || l.Level != float64(c) || l.Bracket[1] != float64(c+1) {
			t.Errorf("slots %d: %+v after %d stages", c, l, len(done))
		}
		if len(done) > 2*int(math.Log2(float64(c))+2) {
			t.Errorf("slots %d: %d stages", c, len(done))
		}
	}
}

// The ends other than convergence: a bracket that never fails, one whose
// bottom fails, a probe that answered nothing, max_stages, and a run
// stopped mid-search.
func TestSearchEnds(t *testing.T) {
	srv := ddc{4, 0.2, 0.05}
	s := &Search{Rate: &Bracket{Lo: 1, Hi: 8}}
	s.Defaults()
	done, l := run(s, srv, 120, 0.1)
	if l.End != EndNeverFailed || l.Found || l.Level != 8 || len(done) != 4 || !strings.Contains(l.Why, "above the bracket") {
		t.Errorf("never failed: %+v, %d stages", l, len(done))
	}
	s = &Search{Rate: &Bracket{Lo: 40, Hi: 80}}
	s.Defaults()
	done, l = run(s, srv, 120, 0.1)
	if l.End != EndFailedAtBottom || l.Found || l.Bracket[1] != 40 || len(done) != 1 || l.FirstFailed != 0 {
		t.Errorf("failed at bottom: %+v, %d stages", l, len(done))
	}
	s = &Search{}
	s.Defaults()
	st := s.Next([]Outcome{{Probe: true, Level: 32, Tally: Tally{Sent: 10, Unanswered: 10}}}, 32)
	if st.End != EndProbeFailed {
		t.Errorf("probe failed: %+v", st)
	}
	s.MaxStages = 3
	done, l = run(s, srv, 120, 0.1)
	if l.End != EndMaxStages || len(done) != 3 || l.Converged {
		t.Errorf("max stages: %+v, %d stages", l, len(done))
	}
	s.MaxStages = 8
	if l := s.Evaluate(done, 32); l.End != EndUnfinished {
		t.Errorf("unfinished: %+v", l)
	}
}

// A stage is judged on its interval's lower bound: 95 of 100 is not
// enough for 95 %, 100 of 100 is; a stage that sent nothing fails.
func TestSearchJudge(t *testing.T) {
	s := &Search{}
	s.Defaults()
	for _, c := range []struct {
		good, sent int
		pass       bool
	}{{95, 100, false}, {100, 100, true}, {99, 100, false}, {198, 200, true}, {0, 0, false}, {5, 5, false}} {
		ok, lo, hi := s.Judge(Tally{Sent: c.sent, Good: c.good})
		if ok != c.pass || lo > hi {
			t.Errorf("%d/%d: pass %v [%.4f, %.4f], want pass %v", c.good, c.sent, ok, lo, hi, c.pass)
		}
	}
	// R's prop.test(95, 100, correct = FALSE)$conf.int: 0.8882 0.9785.
	lo, hi := WilsonZ(95, 100, ZFor(0.95))
	if math.Abs(lo-0.88821) > 1e-4 || math.Abs(hi-0.97846) > 1e-4 {
		t.Errorf("Wilson 95/100: [%.5f, %.5f]", lo, hi)
	}
}

func TestBracketYAMLAndJSON(t *testing.T) {
	for src, want := range map[string]string{
		"auto":     "",
		"[1, 64]":  "",
		"[64, 1]":  "the top must be above the bottom",
		"[0, 4]":   "more than 0",
		"[1]":      "auto or [lo, hi]",
		"fast":     "auto or [lo, hi]",
		"[1, 'x']": "not a level",
	} {
		var b Bracket
		var n yaml.Node
		if err := yaml.Unmarshal([]byte(src), &n); err != nil {
			t.Fatal(err)
		}
		err := n.Content[0].Decode(&b)
		if (err == nil) != (want == "") || (err != nil && !strings.Contains(err.Error(), want)) {
			t.Errorf("%s: %v, want %q", src, err, want)
		}
		if err != nil {
			continue
		}
		j, _ := json.Marshal(b)
		var back Bracket
		if err := json.Unmarshal(j, &back); err != nil || back != b {
			t.Errorf("%s: JSON %s read back as %+v (%v)", src, j, back, err)
		}
	}
}
