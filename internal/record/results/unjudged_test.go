package results

import (
	"strings"
	"testing"
)

// A group is unjudged when a kind of its external checks gave none of its
// answers a verdict: a judge down for the group's every cell (though its
// command validators answered), or command validators that never did. A
// judge that answered some cells leaves the group judged; a group with no
// external check is never unjudged; a record of an older bench (without
// external_checks) is read by its check errors.
func TestUnjudged(t *testing.T) {
	pass := true
	judged := func(provider string, verdict string, checks int, errs ...CheckError) *Record {
		r := &Record{Provider: provider, Model: "m", ExternalChecks: checks, CheckErrors: errs}
		if verdict != "" {
			r.Judge = &Judge{Verdict: verdict, Reason: "r"}
		}
		if len(errs) == 0 {
			r.ObjectivePass = &pass
		}
		return r
	}
	down := CheckError{Type: JudgeError, Check: "llm_judge", Message: "connection_refused: dial tcp"}
	broken := CheckError{Type: "validator_error", Check: "command", Message: "exit 2"}
	var u Unjudged
	for _, r := range []*Record{
		judged("down", VerdictError, 2, down), // judge down, command answered
		judged("down", VerdictError, 1, down),
		judged("down", "", 1), // a prompt with only a command validator
		judged("half", "pass", 1),
		judged("half", VerdictError, 1, down),
		judged("cmd", "", 1, broken),
		judged("cmd", "", 1, broken),
		judged("none", "", 0),
		{Provider: "old", Model: "m", CheckErrors: []CheckError{down}, Judge: &Judge{Verdict: VerdictError}},
	} {
		u.Add(r)
	}
	var got []string
	for _, g := range u.Groups() {
		got = append(got, g.Label()+":"+g.Check+":"+string(rune('0'+g.Cells)))
	}
	if want := "cmd/m:command:2 down/m:llm_judge:2 old/m:llm_judge:1"; strings.Join(got, " ") != want {
		t.Errorf("unjudged groups %q, want %q", strings.Join(got, " "), want)
	}
	line := UnjudgedLine(u.Groups())
	if !strings.HasPrefix(line, "no verdict from the external checks of cmd/m (its command on 2 cells: validator_error: exit 2), down/m (its llm_judge on 2 cells: judge_error: connection_refused: dial tcp)") {
		t.Errorf("line %q", line)
	}
	if UnjudgedLine(nil) != "" {
		t.Error("a run with every group judged has a line")
	}
}
