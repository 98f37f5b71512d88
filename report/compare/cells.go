package compare

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"

	"bench/internal/record/agentsnap"
	"bench/internal/record/results"
	"bench/internal/record/rundir"
)

// promptChanges finds the prompts whose definition differs between the
// runs' config.json prompt sets.
func (c *comparison) promptChanges() {
	c.changed = map[string][]agentsnap.Change{}
	if c.base.prompts == nil || c.cur.prompts == nil {
		return
	}
	origin, rescored := rescorePair(c.base, c.cur)
	if rescored {
		c.res.Rescored = &Rescored{OriginRunID: origin, Prompts: []PromptChange{}}
	}
	var ids []string
	for id := range c.base.prompts {
		if _, ok := c.cur.prompts[id]; ok {
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	for _, id := range ids {
		b, n := c.base.prompts[id], c.cur.prompts[id]
		var ch []agentsnap.Change
		for _, part := range []struct {
			path     string
			from, to json.RawMessage
		}{
			{"prompt.system", agentsnap.JSONValue(b.System), agentsnap.JSONValue(n.System)},
			{"prompt.prompt", agentsnap.JSONValue(b.Prompt), agentsnap.JSONValue(n.Prompt)},
			{"prompt.tools", b.Tools, n.Tools},
			{"prompt.max_turns", b.MaxTurns, n.MaxTurns},
			{"prompt.validator", b.Validator, n.Validator},
			{"prompt.validators", b.Validators, n.Validators},
		} {
			if !sameValue(part.from, part.to) {
				ch = append(ch, agentsnap.Change{Path: part.path, From: agentsnap.OrNull(part.from), To: agentsnap.OrNull(part.to)})
			}
		}
		if rescored && onlyChecks(ch) {
			if len(ch) > 0 {
				c.res.Rescored.Prompts = append(c.res.Rescored.Prompts, PromptChange{PromptID: id, Changes: ch})
			}
			continue
		}
		if len(ch) > 0 {
			c.changed[id] = ch
			c.res.ChangedPrompts = append(c.res.ChangedPrompts, PromptChange{PromptID: id, Changes: ch})
		}
	}
}

// onlyChecks says every change is to the prompt's checks.
func onlyChecks(ch []agentsnap.Change) bool {
	for _, c := range ch {
		if c.Path != "prompt.validator" && c.Path != "prompt.validators" {
			return false
		}
	}
	return true
}

// rescorePair says whether the runs hold the same cells judged twice: one
// (or both) was written by bench rescore, and both come from one run,
// named by its id and started at the same instant (a rescore keeps its
// source's run.json times), so two runs that merely share an id are not a
// pair.
func rescorePair(b, n *runData) (origin string, ok bool) {
	if b.info == nil || n.info == nil || (b.info.RescoredFrom == nil && n.info.RescoredFrom == nil) {
		return "", false
	}
	of := func(r *runData) string {
		if f := r.info.RescoredFrom; f != nil && f.OriginRunID != "" {
			return f.OriginRunID
		}
		return r.info.RunID
	}
	if of(b) != of(n) || !b.info.StartedAt.Equal(n.info.StartedAt) {
		return "", false
	}
	return of(b), true
}

var jsonNull = json.RawMessage("null")

// sameValue compares two JSON texts as values (key order and spacing do
// not matter); absent, null, [] and {} are all "none".
func sameValue(a, b json.RawMessage) bool {
	if bytes.Equal(a, b) {
		return true
	}
	va, vb := decodeAny(a), decodeAny(b)
	return reflect.DeepEqual(va, vb)
}

func decodeAny(r json.RawMessage) any {
	if len(bytes.TrimSpace(r)) == 0 {
		return nil
	}
	var v any
	if json.Unmarshal(r, &v) != nil {
		return string(r)
	}
	switch x := v.(type) {
	case []any:
		if len(x) == 0 {
			return nil
		}
	case map[string]any:
		if len(x) == 0 {
			return nil
		}
	}
	return v
}

// pending is a cell pair whose snapshots differ: the second pass builds
// both snapshots and diffs them.
type pending struct {
	out        *Cell
	b, n       *cell
	toolPrompt bool
	base       *agentsnap.Snapshot
	// baseTurns is the base cell's trajectory, when it has one, for the
	// new side's first differing turn.
	baseTurns []turnSig
}

// judgeCells gives every key of either run its verdict. Pairs whose
// snapshot digests are equal are judged on the first pass's facts; the
// others get a second pass over both results files that reads only their
// lines and diffs their snapshots.
func (c *comparison) judgeCells() error {
	c.union = unionKeys(c.base, c.cur)
	c.res.Cells = make([]*Cell, 0, len(c.union))
	var todo []*pending
	for _, k := range c.union {
		out := c.newCell(k)
		c.res.Cells = append(c.res.Cells, out)
		b, n := c.base.cell(k), c.cur.cell(k)
		if b != nil {
			out.BaseLine = b.line
		}
		if n != nil {
			out.NewLine = n.line
		}
		switch {
		case n == nil && c.cur.unfinished() != "" && c.base.reached(b) && c.cur.planned(k):
			// The new run meant to run the cell and did not (a partial
			// merge, an interrupted run): the model was not reached. A
			// cell its config does not plan stays missing.
			out.Verdict, out.Category = Regression, Availability
			out.Reasons = []string{"in the base run only: the new run " + c.cur.unfinished() + ", and this cell has no record"}
		case n == nil:
			out.Verdict, out.Reasons = Missing, []string{"in the base run only"}
		case b == nil:
			out.Verdict, out.Reasons = New, []string{"in the new run only"}
		case c.changed[out.PromptID] != nil:
			out.Verdict, out.Changes = Changed, c.changed[out.PromptID]
			out.Reasons = []string{"the prompt changed between the runs: not judged"}
		case !c.base.reached(b) || !c.cur.reached(n):
			c.judgeInfra(out, b, n)
		case b.has(fCheckError) || n.has(fCheckError):
			c.judgeUnjudged(out, b, n)
		case b.has(fDigestOK) && n.has(fDigestOK) && b.digest == n.digest:
			c.judgeQuality(out, b, n, nil, c.toolPrompt(out.PromptID, b, n))
		default:
			todo = append(todo, &pending{out: out, b: b, n: n, toolPrompt: c.toolPrompt(out.PromptID, b, n)})
		}
	}
	if len(todo) > 0 {
		if err := c.secondPass(todo); err != nil {
			return err
		}
	}
	for _, out := range c.res.Cells {
		c.res.Counts[out.Verdict]++
		// Drift is a finding only when it fails the gate; otherwise the
		// cells list it, and 100,000 reworded answers add nothing here.
		if out.Verdict == Regression || (out.Verdict == Drift && c.opt.failsOn(DriftCat)) {
			c.addFinding(Finding{Category: out.Category, Scope: "cell", Provider: out.Provider, ProviderType: out.ProviderType,
				Model: out.Model, ThinkingLevel: out.ThinkingLevel, PromptID: out.PromptID, Repetition: &out.Repetition,
				Message: cellSummary(out)})
		}
	}
	return nil
}

// noChanges is every unchanged cell's change list: shared, so 100,000
// matches cost no allocation (appending to it allocates a new one).
var noChanges = []agentsnap.Change{}

func (c *comparison) newCell(k cellKey) *Cell {
	t := c.base.tab
	out := &Cell{Provider: t.str(k.provider), ProviderType: t.str(k.providerType), Model: t.str(k.model), PromptID: t.str(k.prompt),
		Repetition: k.rep, Changes: noChanges[:0:0], k: k}
	if k.stage != 0 {
		out.Stage = t.str(k.stage)
	}
	if k.thinking != 0 {
		out.ThinkingLevel = &t.strs[k.thinking]
	}
	return out
}

// toolPrompt says the prompt is about tools: it offers tools, or its
// validator expects tool calls.
func (c *comparison) toolPrompt(promptID string, b, n *cell) bool {
	if b.expected != 0 || n.expected != 0 {
		return true
	}
	for _, r := range []*runData{c.base, c.cur} {
		if p := r.prompts[promptID]; p != nil && p.offersTools() {
			return true
		}
	}
	return false
}

// judgeInfra judges a pair where a side never reached the model.
func (c *comparison) judgeInfra(out *Cell, b, n *cell) {
	t := c.base.tab
	bs, ns := c.base.infraStatus(b), c.cur.infraStatus(n)
	if bs != ns {
		out.Changes = append(out.Changes, change("availability_status", bs, ns))
	}
	if b.failType != n.failType {
		out.Changes = append(out.Changes, change("failure_type", nullable(t.str(b.failType)), nullable(t.str(n.failType))))
	}
	if c.base.reached(b) {
		out.Verdict, out.Category = Regression, Availability
		out.Reasons = []string{fmt.Sprintf("%s -> %s: the new run did not reach the model", t.str(b.status), ns)}
		return
	}
	out.Verdict = Unavailable
	if c.cur.reached(n) {
		out.Reasons = []string{"the base run did not reach the model: nothing to judge against"}
	} else {
		out.Reasons = []string{"neither run reached the model"}
	}
}

// judgeUnjudged judges a pair where a side's judge or command validator
// gave no verdict (check_errors, objective_pass null): its quality is
// unknown, never a pass. The new run's is an availability regression (the
// gate cannot vouch for the cell; bench rescore judges it again when the
// check works); the base run's leaves nothing to judge against.
func (c *comparison) judgeUnjudged(out *Cell, b, n *cell) {
	if n.has(fCheckError) {
		out.Changes = append(out.Changes, change("check_errors", b.has(fCheckError), true))
	}
	if !b.has(fCheckError) {
		out.Verdict, out.Category = Regression, Availability
		out.Reasons = []string{"the new run's check gave no verdict (check_errors): the cell is not judged"}
		return
	}
	out.Verdict = Unavailable
	if n.has(fCheckError) {
		out.Reasons = []string{"neither run's check gave a verdict (check_errors)"}
	} else {
		out.Reasons = []string{"the base run's check gave no verdict (check_errors): nothing to judge against"}
	}
}

// judgeQuality judges a pair where both sides reached the model. diff is
// nil when the snapshots are equal (equal digests).
func (c *comparison) judgeQuality(out *Cell, b, n *cell, diff *agentsnap.Result, toolPrompt bool) {
	var reg, imp []string
	bp, np := c.base.passed(b), c.cur.passed(n)
	switch {
	case bp && !np:
		reg = append(reg, "pass -> fail")
		out.Changes = append(out.Changes, change("pass", true, false))
		if why := c.failWhy(n); why != "" {
			out.Changes = append(out.Changes, agentsnap.Change{Path: "why", From: jsonNull, To: agentsnap.JSONValue(why)})
		}
	case !bp && np:
		imp = append(imp, "fail -> pass")
		out.Changes = append(out.Changes, change("pass", false, true))
	}
	if lost := c.lostTools(b, n); len(lost) > 0 {
		reg = append(reg, "expected tool call lost: "+strings.Join(lost, ", "))
		expected := c.base.tab.listOf(b.expected)
		out.Changes = append(out.Changes, change("expected_tools", c.calledExpected(b, expected), c.calledExpected(n, expected)))
	}
	out.Agentsnap = agentsnap.AgentsnapPassed
	drift := false
	if diff != nil {
		out.Agentsnap = diff.Agentsnap
		switch diff.Agentsnap {
		case agentsnap.AgentsnapRegression:
			reg = append(reg, "new error")
		case agentsnap.AgentsnapToolsReordered, agentsnap.AgentsnapToolsChanged:
			if toolPrompt && namesChanged(diff) {
				reg = append(reg, "tool calls "+strings.ToLower(strings.TrimPrefix(diff.Agentsnap, "TOOLS_"))+" on a tool prompt")
			} else {
				drift = true
			}
		case agentsnap.AgentsnapOutputDrift:
			drift = true
		}
		out.Changes = append(out.Changes, diff.Changes...)
		for _, ig := range diff.Ignored {
			if ig.Path == "error" { // a failure that changed its text: shown, judged as drift
				out.Changes = append(out.Changes, ig)
				drift = true
				continue
			}
			out.Ignored = append(out.Ignored, ig)
		}
	}
	switch {
	case len(reg) > 0:
		out.Verdict, out.Category, out.Reasons = Regression, Quality, reg
	case len(imp) > 0:
		out.Verdict, out.Reasons = Improvement, imp
	case drift || len(out.Changes) > 0:
		out.Verdict, out.Category = Drift, DriftCat
		out.Reasons = []string{driftReason(out)}
	default:
		out.Verdict = Match
	}
	c.hold(out)
}

// namesChanged says the diff is about which tools were called or their
// order, not only their arguments.
func namesChanged(d *agentsnap.Result) bool {
	for _, ch := range d.Changes {
		if ch.Path == "tools[].name" || ch.Path == "tools[].order" {
			return true
		}
	}
	return false
}

func driftReason(out *Cell) string {
	var parts []string
	for _, ch := range out.Changes {
		p := ch.Path
		if rest, ok := strings.CutPrefix(p, "tools["); ok && !strings.HasPrefix(rest, "]") {
			p = "tools[]" + rest[strings.IndexByte(rest, ']')+1:] // tools[2].args -> tools[].args
		}
		if !slices.Contains(parts, p) {
			parts = append(parts, p)
		}
	}
	return "changed, still as it was on pass/fail: " + strings.Join(parts, ", ")
}

// failWhy is the reason a new cell failed: its violation or failure type.
func (c *comparison) failWhy(n *cell) string {
	switch {
	case n.violation != nil:
		return *n.violation
	case n.failType != 0:
		return c.cur.tab.str(n.failType)
	case n.toolUse == triFalse:
		return "tool_use_success false"
	}
	return ""
}

// calledExpected lists the expected tools a cell called, in call order.
func (c *comparison) calledExpected(x *cell, expected []string) []string {
	out := []string{}
	for _, name := range c.base.tab.listOf(x.names) {
		if slices.Contains(expected, name) && !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	return out
}

// lostTools are the expected tools the base cell called and the new one
// did not.
func (c *comparison) lostTools(b, n *cell) []string {
	var lost []string
	names := c.base.tab.listOf(n.names)
	for _, t := range c.calledExpected(b, c.base.tab.listOf(b.expected)) {
		if !slices.Contains(names, t) {
			lost = append(lost, t)
		}
	}
	return lost
}

func change(path string, from, to any) agentsnap.Change {
	return agentsnap.Change{Path: path, From: agentsnap.JSONValue(from), To: agentsnap.JSONValue(to)}
}

func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// secondPass reads the lines of the pending pairs in both results files,
// builds their snapshots as bench run does and judges them on the diff.
// Base snapshots are held until their new side is read, at most
// secondPassChunk pairs at a time: memory stays bounded however many cells
// differ, at the cost of one more read of both files per chunk.
func (c *comparison) secondPass(todo []*pending) error {
	for len(todo) > 0 {
		chunk := todo[:min(len(todo), secondPassChunk)]
		todo = todo[len(chunk):]
		baseLines := make(map[int]*pending, len(chunk))
		curLines := make(map[int]*pending, len(chunk))
		for _, p := range chunk {
			baseLines[p.b.line] = p
			curLines[p.n.line] = p
		}
		err := c.readSnapshots(c.base, baseLines, func(p *pending, s *agentsnap.Snapshot, rec *results.Record) {
			p.base, p.baseTurns = s, turnSigs(rec.TurnDetails)
		})
		if err != nil {
			return err
		}
		err = c.readSnapshots(c.cur, curLines, func(p *pending, s *agentsnap.Snapshot, rec *results.Record) {
			if cur := turnSigs(rec.TurnDetails); p.baseTurns != nil || cur != nil {
				p.out.Diverged = firstDivergence(p.baseTurns, cur)
			}
			p.baseTurns = nil
			d := agentsnap.Diff(p.base, s)
			c.judgeQuality(p.out, p.b, p.n, &d, p.toolPrompt)
			p.base = nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// secondPassChunk bounds the base snapshots held at once (each about the
// size of its answer).
const secondPassChunk = 20_000

// readSnapshots decodes the chosen lines of r's results.jsonl in full and
// hands each cell's snapshot to fn.
func (c *comparison) readSnapshots(r *runData, lines map[int]*pending, fn func(p *pending, s *agentsnap.Snapshot, rec *results.Record)) error {
	path := rundir.Path(r.dir, rundir.ResultsFile)
	seen := 0
	o := scanOptions
	o.Lines = func(line int) bool { return lines[line] != nil }
	_, _, err := results.Scan(path, o, func(line int, rec *results.Record) error {
		p := lines[line]
		if p.out.key() != rec.Key() {
			return &results.LineError{Line: line, Err: errors.New("the file changed while it was being compared")}
		}
		input := ""
		if pd := r.prompts[rec.PromptID]; pd != nil {
			input = agentsnap.Input(pd.System, pd.Prompt)
		}
		fn(p, agentsnap.FromRecord(rec, input), rec)
		seen++
		return nil
	})
	switch {
	case err != nil:
		return inputError(path, err)
	case seen != len(lines):
		return &InputError{File: path, Err: fmt.Errorf("the file changed while it was being compared (%d of %d lines found again)", seen, len(lines))}
	}
	return nil
}

// short shows a JSON value in one-line messages as text: a string's
// contents in quotation marks (not a JSON literal with its escapes),
// anything else as compact JSON, cut.
func short(v json.RawMessage) string {
	var s string
	if t := bytes.TrimSpace(v); len(t) == 0 || string(t) == "null" {
		return "null"
	}
	if json.Unmarshal(v, &s) == nil {
		return quote(s, 80)
	}
	return compact(v, 80)
}
