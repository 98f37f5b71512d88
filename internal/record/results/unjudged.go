package results

import (
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"
)

// Unjudged finds the groups (provider, model, thinking level) left
// without verdicts from their external checks: groups whose llm_judge ran
// on answers and gave none of them a verdict, or whose command validators
// ran and gave none (every such answer has a check error of that kind). A
// judge that is down all night makes such a group, though its command
// validators answer; such a run cannot vouch for the group's quality, so
// bench run, bench merge and bench rescore do not exit 0 on it
// (exitcode.Unjudged), and bench compare says so of a baseline that has
// one. A judge that answered some cells and not others leaves no group
// unjudged (compare counts the cells it did not judge). The zero value is
// ready to use.
type Unjudged struct {
	groups map[unjudgedKey]*unjudgedCount
	order  []unjudgedKey
}

type unjudgedKey struct{ provider, model, thinking string }

// unjudgedCount counts, per kind of external check, the answers it ran
// on and those it gave no verdict on.
type unjudgedCount struct {
	judged, judgeErred, commanded, commandErred int
	// judgeWhy and commandWhy are the first check error of each kind:
	// what the line says went wrong.
	judgeWhy, commandWhy string
}

// UnjudgedGroup is a group without a verdict from its external checks.
type UnjudgedGroup struct {
	Provider, Model, ThinkingLevel string
	// Check is the kind of check that gave no verdict (llm_judge,
	// command); Cells the answers it ran on; Why its first check error
	// ("judge_error: connection_refused: ...").
	Check string
	Cells int
	Why   string
}

// Label names the group as the reports do: provider/model (level).
func (g UnjudgedGroup) Label() string {
	s := g.Provider + "/" + g.Model
	if g.ThinkingLevel != "" {
		s += " (" + g.ThinkingLevel + ")"
	}
	return s
}

// Check kinds, as a CheckError's Check names them (validators' types).
const (
	checkJudge   = "llm_judge"
	checkCommand = "command"
)

// Add counts one record (each cell once: its last record). Which checks
// ran is what the record says: its judge object (one llm_judge a prompt
// at most) and external_checks beyond it (the command validators); a
// record of an older bench, without external_checks, by its check errors.
func (u *Unjudged) Add(r *Record) {
	judged := r.Judge != nil
	commanded := r.ExternalChecks > 0 && (r.ExternalChecks > 1 || !judged)
	var judgeErr, commandErr *CheckError
	for i := range r.CheckErrors {
		switch e := &r.CheckErrors[i]; {
		case e.Check == checkCommand && commandErr == nil:
			commandErr = e
		case e.Check == checkJudge && judgeErr == nil:
			judgeErr = e
		}
	}
	commanded = commanded || commandErr != nil
	judged = judged || judgeErr != nil
	if !judged && !commanded {
		return
	}
	k := unjudgedKey{r.Provider, r.Model, ""}
	if r.ThinkingLevel != nil {
		k.thinking = *r.ThinkingLevel
	}
	if u.groups == nil {
		u.groups = map[unjudgedKey]*unjudgedCount{}
	}
	c := u.groups[k]
	if c == nil {
		c = &unjudgedCount{}
		u.groups[k] = c
		u.order = append(u.order, k)
	}
	if judged {
		c.judged++
		if judgeErr != nil || r.Judge.Verdict == VerdictError {
			c.judgeErred++
			if c.judgeWhy == "" {
				c.judgeWhy = whyOf(judgeErr, r.Judge)
			}
		}
	}
	if commanded {
		c.commanded++
		if commandErr != nil {
			c.commandErred++
			if c.commandWhy == "" {
				c.commandWhy = commandErr.Type + ": " + commandErr.Message
			}
		}
	}
}

func whyOf(e *CheckError, j *Judge) string {
	if e != nil {
		return e.Type + ": " + e.Message
	}
	return JudgeError + ": " + j.Reason
}

// Groups are the groups some kind of whose external checks gave none of
// its answers a verdict, sorted by label (a group once per kind).
func (u *Unjudged) Groups() []UnjudgedGroup {
	var out []UnjudgedGroup
	for _, k := range u.order {
		c := u.groups[k]
		g := UnjudgedGroup{Provider: k.provider, Model: k.model, ThinkingLevel: k.thinking}
		if c.judged > 0 && c.judgeErred == c.judged {
			g.Check, g.Cells, g.Why = checkJudge, c.judged, c.judgeWhy
			out = append(out, g)
		}
		if c.commanded > 0 && c.commandErred == c.commanded {
			g.Check, g.Cells, g.Why = checkCommand, c.commanded, c.commandWhy
			out = append(out, g)
		}
	}
	slices.SortStableFunc(out, func(a, b UnjudgedGroup) int { return strings.Compare(a.Label(), b.Label()) })
	return out
}

// UnjudgedLine says which groups got no verdict, in one line: "no verdict
// from the external checks of p/m (its llm_judge on 12 cells:
// judge_error: ...)"; "" for none. At most three groups are named, the rest counted.
func UnjudgedLine(groups []UnjudgedGroup) string {
	if len(groups) == 0 {
		return ""
	}
	var parts []string
	for i, g := range groups {
		if i == 3 {
			parts = append(parts, fmt.Sprintf("and %d more groups", len(groups)-3))
			break
		}
		why := g.Why
		if len(why) > 200 {
			cut := 200
			for cut > 0 && !utf8.RuneStart(why[cut]) {
				cut--
			}
			why = why[:cut] + "…"
		}
		cells := "cells"
		if g.Cells == 1 {
			cells = "cell"
		}
		parts = append(parts, fmt.Sprintf("%s (its %s on %d %s: %s)", g.Label(), g.Check, g.Cells, cells, why))
	}
	return "no verdict from the external checks of " + strings.Join(parts, ", ")
}

// UnjudgedIn reads the results file at path and returns its groups left
// without verdicts (bench merge over the merged run, bench compare over
// its baseline).
func UnjudgedIn(path string) ([]UnjudgedGroup, error) {
	var u Unjudged
	_, _, err := Scan(path, ScanOptions{Detail: Aggregates}, func(_ int, r *Record) error {
		u.Add(r)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return u.Groups(), nil
}
