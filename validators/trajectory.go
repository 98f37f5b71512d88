package validators

import (
	"fmt"
	"slices"
	"strings"

	"bench/toolparse"
	"bench/validators/scripted"
)

// checkUnknown fails when a call names a tool the task did not offer.
func checkUnknown(calls []toolparse.Call, offered []string) Outcome {
	names := callNames(calls)
	unknown := []string{}
	for _, n := range names {
		if !slices.Contains(offered, n) && !slices.Contains(unknown, n) {
			unknown = append(unknown, n)
		}
	}
	p := map[string]any{"tool_calls": names, "unknown_tools": unknown}
	if len(unknown) == 0 {
		return pass(p)
	}
	return fail(p, "called unknown tool %s, offered [%s]", shorten(strings.Join(unknown, ", ")), shorten(strings.Join(offered, ", ")))
}

func callNames(calls []toolparse.Call) []string {
	names := toolparse.Names(calls)
	if names == nil {
		names = []string{}
	}
	return names
}

// maxSequenceCalls bounds the trajectory a tool_sequence looks at, which
// keeps the check's table small whatever a runaway model did.
const maxSequenceCalls = 1000

// checkSequence finds the expected calls in the trajectory in order, with
// their arguments matching; optional ones may be absent; other calls may
// come before, between and after unless allow_extra is false. It is an
// ordered subsequence match solved as a table over (expected, call), so an
// optional call can never steal a call a later expected call needs.
func (s *Spec) checkSequence(calls []toolparse.Call) Outcome {
	exp := s.Calls
	if len(exp) == 0 {
		return invalid("tool_sequence needs calls")
	}
	names := callNames(calls)
	if len(calls) > maxSequenceCalls {
		calls = calls[:maxSequenceCalls]
	}
	extra := s.allowExtra()
	E, C := len(exp), len(calls)
	args := make([]map[string]any, C)
	for j, c := range calls {
		args[j], _ = scripted.ParseArgs(c.Arguments) // nil when not an object
	}
	// matches[i][j]: call j is expected call i (name and arguments).
	matches := make([][]bool, E)
	for i := range exp {
		matches[i] = make([]bool, C)
		for j := range calls {
			// A call whose arguments failed the tool's JSON Schema is never
			// the expected call, whatever the match says.
			invalid := calls[j].SchemaValid != nil && !*calls[j].SchemaValid
			matches[i][j] = calls[j].Name == exp[i].Name && !invalid && exp[i].Match.MatchesArgs(args[j])
		}
	}
	// ok[i][j]: exp[i:] can be found in calls[j:].
	ok := make([][]bool, E+1)
	for i := range ok {
		ok[i] = make([]bool, C+1)
	}
	for i := E; i >= 0; i-- {
		for j := C; j >= 0; j-- {
			switch {
			case i == E:
				ok[i][j] = extra || j == C
			default:
				v := exp[i].Optional && ok[i+1][j]
				if j < C {
					v = v || (matches[i][j] && ok[i+1][j+1]) || (extra && ok[i][j+1])
				}
				ok[i][j] = v
			}
		}
	}
	wrong := wrongArgs(exp, calls, matches)
	matched := make([]int, E)
	if ok[0][0] {
		for i, j := 0, 0; i < E; {
			switch {
			case j < C && matches[i][j] && ok[i+1][j+1]:
				matched[i] = j
				i, j = i+1, j+1
			case exp[i].Optional && ok[i+1][j]:
				matched[i] = -1
				i++
			default:
				j++ // an extra call
			}
		}
		return pass(map[string]any{"tool_calls": names, "matched": matched, "wrong_args": wrong})
	}
	for i := range matched {
		matched[i] = -1
	}
	return fail(map[string]any{"tool_calls": names, "matched": matched, "wrong_args": wrong}, "%s", s.sequenceViolation(calls, matches))
}

// wrongArgs counts the calls of an expected tool whose arguments match none
// of that tool's expected calls.
func wrongArgs(exp []ExpectedCall, calls []toolparse.Call, matches [][]bool) int {
	n := 0
	for j, c := range calls {
		named, hit := false, false
		for i := range exp {
			if exp[i].Name == c.Name {
				named = true
				hit = hit || matches[i][j]
			}
		}
		if named && !hit {
			n++
		}
	}
	return n
}

// sequenceViolation explains a failed sequence from the furthest point the
// trajectory reached: the first expected call it could not find (with the
// arguments of a same-named call when there is one), or the first call that
// allow_extra: false does not admit.
func (s *Spec) sequenceViolation(calls []toolparse.Call, matches [][]bool) string {
	exp := s.Calls
	extra := s.allowExtra()
	E, C := len(exp), len(calls)
	reach := make([][]bool, E+1)
	for i := range reach {
		reach[i] = make([]bool, C+1)
	}
	reach[0][0] = true
	bi, bj := 0, 0
	for i := 0; i <= E; i++ {
		for j := 0; j <= C; j++ {
			if !reach[i][j] {
				continue
			}
			if i > bi || (i == bi && j > bj) {
				bi, bj = i, j
			}
			if i < E && exp[i].Optional {
				reach[i+1][j] = true
			}
			if i < E && j < C && matches[i][j] {
				reach[i+1][j+1] = true
			}
			if extra && j < C {
				reach[i][j+1] = true
			}
		}
	}
	if bi == E {
		return fmt.Sprintf("unexpected call %d: %s (allow_extra is false)", bj+1, showCall(calls[bj]))
	}
	// The furthest point with bi expected calls found: the earliest j.
	for j := 0; j <= C; j++ {
		if reach[bi][j] {
			bj = j
			break
		}
	}
	want := &exp[bi]
	msg := fmt.Sprintf("missing call %d of %d: %s", bi+1, E, want.String())
	if !extra && bj < C {
		return msg + "; got " + showCall(calls[bj])
	}
	for j := bj; j < C; j++ {
		if calls[j].Name == want.Name {
			return msg + "; got " + showCall(calls[j])
		}
	}
	if C == 0 {
		return msg + "; no tool call was made"
	}
	return msg + "; calls were [" + shorten(strings.Join(callNames(calls), ", ")) + "]"
}

// showCall renders a call as name and arguments, shortened.
func showCall(c toolparse.Call) string {
	a := strings.TrimSpace(string(c.Arguments))
	if a == "" {
		a = "{}"
	}
	return c.Name + " " + shorten(a)
}
