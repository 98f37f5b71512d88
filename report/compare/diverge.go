package compare

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strings"

	"bench/internal/record/results"
)

// Divergence is where two trajectories of a cell part: the first turn
// (1-based) that differs and what differs in it, as a person would say it:
// "convert_temperature value 18 → 81; result error".
type Divergence struct {
	Turn int    `json:"turn"`
	What string `json:"what"`
	// Kind is the same for every cell that diverged the same way (the
	// turn, the tool and what of it changed), without the values: the
	// root causes group by it.
	Kind string `json:"kind"`
}

// String is "turn 2: convert_temperature value 18 → 81; result error".
func (d *Divergence) String() string { return fmt.Sprintf("turn %d: %s", d.Turn, d.What) }

// turnSig is what of a turn the comparison of trajectories looks at.
type turnSig struct {
	text  string
	err   string
	calls []callSig
}

type callSig struct {
	name, resultHash, result string
	args                     json.RawMessage
	isError, unknown         bool
}

// maxSigText bounds the texts a signature keeps (for messages only; the
// result hash compares results whole).
const maxSigText = 120

func turnSigs(turns []results.Turn) []turnSig {
	if len(turns) == 0 {
		return nil
	}
	out := make([]turnSig, len(turns))
	for i, t := range turns {
		s := turnSig{text: oneLine(t.Text, maxSigText), err: oneLine(t.Error, maxSigText)}
		for _, c := range t.Calls {
			s.calls = append(s.calls, callSig{name: c.Name, resultHash: c.ResultHash, result: oneLine(c.Result, maxSigText),
				args: append(json.RawMessage(nil), c.Arguments...), isError: c.IsError, unknown: c.Unknown})
		}
		out[i] = s
	}
	return out
}

// firstDivergence compares two trajectories turn by turn and describes
// the first turn that differs; nil when none does.
func firstDivergence(base, cur []turnSig) *Divergence {
	for i := 0; i < max(len(base), len(cur)); i++ {
		switch {
		case i >= len(base):
			return &Divergence{Turn: i + 1, What: "a turn the base run did not take: " + turnText(cur[i]), Kind: "extra turn"}
		case i >= len(cur):
			return &Divergence{Turn: i + 1, What: "no such turn (the base run went on: " + turnText(base[i]) + ")", Kind: "fewer turns"}
		}
		if what, kind := turnDiff(base[i], cur[i]); what != "" {
			return &Divergence{Turn: i + 1, What: what, Kind: fmt.Sprintf("turn %d: %s", i+1, kind)}
		}
	}
	return nil
}

// turnDiff says what differs between two turns, and its kind.
func turnDiff(b, n turnSig) (what, kind string) {
	var parts, kinds []string
	for j := 0; j < max(len(b.calls), len(n.calls)); j++ {
		switch {
		case j >= len(b.calls):
			parts, kinds = append(parts, "a new call "+callText(n.calls[j])), append(kinds, "new call "+n.calls[j].name)
			continue
		case j >= len(n.calls):
			parts, kinds = append(parts, "no call where the base called "+callText(b.calls[j])), append(kinds, "lost call "+b.calls[j].name)
			continue
		}
		bc, nc := b.calls[j], n.calls[j]
		if bc.name != nc.name {
			parts, kinds = append(parts, bc.name+" → "+nc.name), append(kinds, bc.name+" → "+nc.name)
			continue
		}
		var p []string
		if args, keys := argsDiff(bc.args, nc.args); args != "" {
			p = append(p, nc.name+" "+args)
			kinds = append(kinds, nc.name+" arguments "+keys)
		}
		switch {
		case nc.isError && !bc.isError:
			p = append(p, "result error")
			if nc.unknown && !bc.unknown {
				p[len(p)-1] += " (unknown tool)"
			}
		case bc.resultHash != nc.resultHash || (bc.resultHash == "" && bc.result != nc.result):
			p = append(p, fmt.Sprintf("result %s → %s", quote(bc.result, 40), quote(nc.result, 40)))
		}
		if len(p) > 0 {
			if len(kinds) == 0 || !strings.HasPrefix(kinds[len(kinds)-1], nc.name+" arguments") {
				kinds = append(kinds, nc.name+" result")
			}
			parts = append(parts, strings.Join(p, "; "))
		}
	}
	if len(parts) == 0 && len(b.calls) == 0 && b.text != n.text {
		parts, kinds = append(parts, fmt.Sprintf("answer %s → %s", quote(b.text, 60), quote(n.text, 60))), append(kinds, "answer")
	}
	if len(parts) == 0 && b.err != n.err {
		parts, kinds = append(parts, fmt.Sprintf("error %s → %s", quote(b.err, 60), quote(n.err, 60))), append(kinds, "error")
	}
	return strings.Join(parts, "; "), strings.Join(kinds, "; ")
}

// argsDiff lists the argument keys whose values differ, "value 18 → 81,
// to "F" → "C"", and the keys alone for the kind; "" when the arguments
// are equal as JSON values.
func argsDiff(a, b json.RawMessage) (what, keys string) {
	var ma, mb map[string]any
	if json.Unmarshal(a, &ma) != nil || json.Unmarshal(b, &mb) != nil {
		if sameValue(a, b) {
			return "", ""
		}
		return fmt.Sprintf("arguments %s → %s", compact(a, 60), compact(b, 60)), "(whole)"
	}
	var names []string
	for k := range ma {
		names = append(names, k)
	}
	for k := range mb {
		if _, ok := ma[k]; !ok {
			names = append(names, k)
		}
	}
	sort.Strings(names)
	var parts, changed []string
	for _, k := range names {
		va, oka := ma[k]
		vb, okb := mb[k]
		if oka == okb && reflect.DeepEqual(va, vb) {
			continue
		}
		changed = append(changed, k)
		parts = append(parts, fmt.Sprintf("%s %s → %s", k, valueText(va, oka), valueText(vb, okb)))
	}
	return strings.Join(parts, ", "), strings.Join(changed, ",")
}

func valueText(v any, ok bool) string {
	if !ok {
		return "(absent)"
	}
	b, err := json.Marshal(v)
	if err != nil {
		return "?"
	}
	return oneLine(string(b), 40)
}

func compact(v json.RawMessage, n int) string {
	var b bytes.Buffer
	if json.Compact(&b, v) != nil {
		return oneLine(string(v), n)
	}
	return oneLine(b.String(), n)
}

func callText(c callSig) string { return c.name + " " + compact(c.args, 60) }

func turnText(t turnSig) string {
	if len(t.calls) > 0 {
		var names []string
		for _, c := range t.calls {
			names = append(names, callText(c))
		}
		return strings.Join(names, ", ")
	}
	if t.err != "" {
		return "error " + quote(t.err, 60)
	}
	return "answer " + quote(t.text, 60)
}

// quote shows a text as text in quotation marks, on one line and cut.
func quote(s string, n int) string { return "\"" + oneLine(s, n) + "\"" }
