// Package answers renders answers.html: every answer of a run, prompt by
// prompt, each group's beside the others, so a person choosing a model
// reads what the models said instead of opening results.jsonl in an
// editor. For each cell it shows the answer text, the reasoning (folded),
// the native tool calls with their arguments, the validator's verdict and
// violation, the error, TTFT, end-to-end latency, tokens and cost; an
// agentic cell shows its trajectory turn by turn (the model's text, each
// tool call with its arguments, the scripted result, errors, unknown and
// unsafe calls marked). A person filters by prompt, by verdict (failed
// only, prompts the groups disagree on) and by provider, and switches
// between repetitions.
//
// It is a page of its own beside report.html, so report.html stays as
// fast as it was; report.html links to it. Like report.html it is one
// self-contained file that works from a file:// URL and loads nothing:
// the data is JSON inlined through html/template (which escapes <, >, &,
// U+2028 and U+2029 inside the script), and the page's script only ever
// sets model text with textContent.
//
// # Budget
//
// The page stays usable at 100 models × 100 prompts × 10 repetitions
// (100,000 cells): each answer is cut at a per-text cap, MaxTextBytes (2
// KiB) for a run of up to 6,144 cells and less for a larger one (half of
// BudgetBytes over the cells, never under MinTextBytes: 128 B at 100,000
// cells), the other texts (reasoning, violation, a turn's text, a call's
// arguments or result) at a half or a quarter of that, and once the texts
// kept reach BudgetBytes (24 MiB) the rest are left out and counted.
// Every cut text says how long it was and where the whole of it is: its
// cell's line in results.jsonl. Identical texts are kept once.
//
// Layer: verdicts (reads results.jsonl through results; renders what
// report computed).
package answers

import (
	"bufio"
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"math"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"bench/internal/format"
	"bench/internal/record/results"
	"bench/internal/record/rundir"
	"bench/report"
)

// Caps of the page (see the package comment).
const (
	// MaxTextBytes is the most of one text the page shows.
	MaxTextBytes = 2 << 10
	// MinTextBytes is the least an answer is cut to, however many cells.
	MinTextBytes = 128
	// BudgetBytes bounds the texts of the whole page.
	BudgetBytes = 24 << 20
	// MaxTurns and MaxCalls bound an agentic cell's turns and a turn's
	// calls shown; the rest are counted.
	MaxTurns = 30
	MaxCalls = 10
)

// Flags of a turn's call, as the page's data packs them.
const (
	flagError = 1 << iota
	flagUnknown
	flagWrongArgs
	flagUnanswered
	flagFailFirst
	flagUnsafe
	flagSchemaInvalid
	// flagInjected: the call's result carried the cell's planted
	// instruction; flagObeys: the call did what it asked.
	flagInjected
	flagObeys
)

// Page is answers.html's data, inlined as JSON. Groups are in
// report.Ranked's order, prompts in the summary's.
type Page struct {
	RunID   string   `json:"run_id"`
	Groups  []Group  `json:"groups"`
	Prompts []Prompt `json:"prompts"`
	// Reps is the largest repetition number + 1.
	Reps int `json:"reps"`
	// Strings holds every text once; cells refer to them by index.
	Strings []string `json:"strings"`
	// Cells are the cells, each an array (see Cell).
	Cells []Cell `json:"cells"`
	// Cap is the per-text cap this page used; Budget the whole page's;
	// Dropped counts texts left out once the budget was reached.
	Cap     int `json:"cap"`
	Budget  int `json:"budget"`
	Dropped int `json:"dropped"`
	// Source is results.jsonl's name, for the notes of cut texts.
	Source string `json:"source"`
	// NoQuestions says why the prompts' questions are not shown (no
	// config.json, or one without a prompt_set); "" when they are.
	NoQuestions string `json:"no_questions,omitempty"`
}

// Group is one (provider, model, thinking level).
type Group struct {
	Label    string `json:"label"`
	Provider string `json:"provider"`
}

// Prompt is a prompt id and name, and what it asked when config.json
// says (Q).
type Prompt struct {
	ID   string    `json:"id"`
	Name string    `json:"name"`
	Q    *Question `json:"q,omitempty"`
}

// Question is what a prompt asked and what a pass needed, from the run
// directory's config.json (prompt_set): the texts are Strings indexes
// (-1 none), each cut at MaxTextBytes.
type Question struct {
	Text   int32 `json:"text"`
	System int32 `json:"system"`
	// Tools are the tools offered: [name, description, parameters].
	Tools [][3]int32 `json:"tools,omitempty"`
	// Checks are the checks a pass needed, one text each ("exact: value
	// \"4\"").
	Checks []int32 `json:"checks,omitempty"`
	// Forbidden are the offered tools the prompt forbids.
	Forbidden []int32 `json:"forbidden,omitempty"`
	// MaxTurns is an agentic task's turn limit (0: one turn).
	MaxTurns int `json:"max_turns,omitempty"`
	// Injection, on a prompt-injection case, is [planted text, style,
	// goal, carrier, target]: the page marks the planted text in the
	// carrier's result.
	Injection []int32 `json:"injection,omitempty"`
}

// Cell is one cell, packed as a JSON array to keep 100,000 of them small:
//
//	[group, prompt, repetition, line, status, verdict, text, text_bytes,
//	 kept_bytes, reasoning, violation, error, ttft_ms, e2e_ms,
//	 output_tokens, cost_usd, calls, turns, redacted]
//
// status is a Strings index of the availability status (with the failure
// type after a colon when there is one); verdict 1 passed, 0 failed its
// check, -1 no check, -2 did not succeed, -3 answered but an external
// check gave no verdict (check_errors; error holds the first); the texts
// are Strings indexes
// (-1 none); text_bytes the answer's whole length as streamed, kept_bytes
// what results.jsonl kept of it (they differ only for an answer cut at
// max_output_bytes, raw_output_truncated: one only the scrub shortened is
// whole); redacted 1 when bench replaced a secret in the answer
// (raw_output_redacted); calls [[name, args, flags]];
// turns [[text, error, [[name, args, result, flags]], more_calls]] and,
// after the last turn shown, the number of turns not shown.
//
// In memory it is a struct of the numbers (128 bytes, where the array of
// 18 interfaces took 288 and a box for most numbers): a page holds every
// cell of the run until it is written (issue 21, item 7: 100,000 cells).
type Cell struct {
	group, prompt, rep, line, status, verdict, text, textBytes, keptBytes, reasoning, violation, errText int32

	ttft     *int64
	e2e      int64
	out      *int
	cost     *float64
	calls    [][3]int
	turns    []any
	redacted bool
}

// MarshalJSON writes the cell as the array described above.
func (c Cell) MarshalJSON() ([]byte, error) { return c.appendJSON(nil) }

// appendJSON appends the cell's array to b as encoding/json writes it
// ([19]any of its values): by hand, since a page of a million cells spent
// more time in json.Marshal's reflection than reading their answers.
func (c *Cell) appendJSON(b []byte) ([]byte, error) {
	b = append(b, '[')
	for _, v := range [...]int32{c.group, c.prompt, c.rep, c.line, c.status, c.verdict, c.text, c.textBytes, c.keptBytes, c.reasoning, c.violation, c.errText} {
		b = strconv.AppendInt(b, int64(v), 10)
		b = append(b, ',')
	}
	b = appendPtr(b, c.ttft, func(b []byte, v int64) []byte { return strconv.AppendInt(b, v, 10) })
	b = strconv.AppendInt(append(b, ','), c.e2e, 10)
	b = appendPtr(append(b, ','), c.out, func(b []byte, v int) []byte { return strconv.AppendInt(b, int64(v), 10) })
	b = append(b, ',')
	if c.cost == nil {
		b = append(b, "null"...)
	} else {
		f := *c.cost
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return nil, &json.UnsupportedValueError{Value: reflect.ValueOf(f), Str: strconv.FormatFloat(f, 'g', -1, 64)}
		}
		b = appendFloat(b, f)
	}
	b = append(b, ',')
	if c.calls == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i, call := range c.calls {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendInts(b, call[:])
		}
		b = append(b, ']')
	}
	b = append(b, ',')
	if c.turns == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i, t := range c.turns {
			if i > 0 {
				b = append(b, ',')
			}
			switch t := t.(type) {
			case int: // the turns not shown
				b = strconv.AppendInt(b, int64(t), 10)
			case []any: // [text, error, calls, more_calls]
				b = strconv.AppendInt(append(strconv.AppendInt(append(b, '['), int64(t[0].(int)), 10), ','), int64(t[1].(int)), 10)
				b = append(b, ",["...)
				for j, call := range t[2].([][4]int) {
					if j > 0 {
						b = append(b, ',')
					}
					b = appendInts(b, call[:])
				}
				b = strconv.AppendInt(append(b, "],"...), int64(t[3].(int)), 10)
				b = append(b, ']')
			}
		}
		b = append(b, ']')
	}
	if c.redacted {
		b = append(b, ",1"...)
	} else {
		b = append(b, ",0"...)
	}
	return append(b, ']'), nil
}

func appendPtr[T any](b []byte, p *T, f func([]byte, T) []byte) []byte {
	if p == nil {
		return append(b, "null"...)
	}
	return f(b, *p)
}

func appendInts(b []byte, vs []int) []byte {
	b = append(b, '[')
	for i, v := range vs {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, int64(v), 10)
	}
	return append(b, ']')
}

// appendFloat writes f as encoding/json writes a float64: the shortest
// decimal, in exponent form below 1e-6 and from 1e21, its exponent
// without a leading zero.
func appendFloat(b []byte, f float64) []byte {
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b
}

// Builder collects the cells of a run, one record at a time.
type Builder struct {
	page  *Page
	cap   int
	used  int
	index map[string]int32
	// find finds a record's group in the summary; rank is the page's
	// place of each (report.Ranked's order), by the summary's index.
	find   *report.GroupFinder
	rank   []int32
	prompt map[string]int
	// cells holds each cell's place in page.Cells by key, so a later
	// record of a cell (a resumed run) replaces the earlier one; nil when
	// the records come each cell once (Build over a summary's counted
	// lines), so a run of 100,000 cells holds no index of them.
	cells map[results.Key]int
	// sink, when set, takes each cell instead of page.Cells (a Pass's
	// replays of its tape); frozen says the page's texts are all interned:
	// text looks them up only (a replay that writes the cells).
	sink   func(Cell)
	frozen bool
}

// NewBuilder starts the page of the run s summarises; cells is how many
// cells the run has (the per-text cap depends on it).
func NewBuilder(s *report.Summary, cells int) *Builder {
	b := &Builder{page: &Page{RunID: s.RunID, Budget: BudgetBytes, Source: rundir.ResultsFile, Strings: []string{}, Cells: []Cell{},
		NoQuestions: "the run directory's " + rundir.ConfigFile + " was not read"},
		index: map[string]int32{}, prompt: map[string]int{}, cells: map[results.Key]int{}}
	b.cap = TextCap(cells)
	b.page.Cap = b.cap
	b.find = report.NewGroupFinder(s)
	b.rank = make([]int32, len(s.Groups))
	b.page.Groups = make([]Group, 0, len(s.Groups))
	for r, i := range report.RankedIndex(s) {
		g := s.Groups[i]
		b.rank[i] = int32(r)
		b.page.Groups = append(b.page.Groups, Group{Label: g.Label(), Provider: g.Provider})
	}
	for _, p := range s.Prompts {
		b.prompt[p.ID] = len(b.page.Prompts)
		b.page.Prompts = append(b.page.Prompts, Prompt{ID: p.ID, Name: p.Name})
	}
	return b
}

// TextCap is the answer's cap in a run of n cells: half the budget goes to
// the answers, the rest to the other texts.
func TextCap(n int) int {
	if n <= 0 {
		return MaxTextBytes
	}
	return min(MaxTextBytes, max(MinTextBytes, BudgetBytes/(2*n)))
}

// text interns s cut at n bytes (at a rune boundary, invalid UTF-8
// replaced as JSON will): its index, or -1 for "". Past the budget a text
// is dropped (-1) and counted.
func (b *Builder) text(s string, n int) int32 {
	if s == "" {
		return -1
	}
	s = cut(s, n)
	if i, ok := b.index[s]; ok {
		return i
	}
	if b.frozen {
		// Not interned: it was dropped, and counted, the first time.
		return -1
	}
	if b.used+len(s) > BudgetBytes {
		b.page.Dropped++
		return -1
	}
	b.used += len(s)
	s = strings.Clone(s) // s may be a borrowed text's (results.ScanOptions.Borrow)
	b.index[s] = int32(len(b.page.Strings))
	b.page.Strings = append(b.page.Strings, s)
	return b.index[s]
}

// cut keeps at most n bytes of s, ending on a whole rune, with invalid
// bytes replaced by U+FFFD (JSON cannot carry them).
func cut(s string, n int) string {
	if len(s) > n {
		// Only the start is kept: when it is valid up to a whole rune
		// that spans byte n, the rest (a 3 KB answer cut at 128 bytes)
		// need not be checked, as it cannot change the start.
		k := n
		for k > 0 && !utf8.RuneStart(s[k]) {
			k--
		}
		if r, size := utf8.DecodeRuneInString(s[k:]); k > 0 && (r != utf8.RuneError || size > 1) && k+size > n && utf8.ValidString(s[:k]) {
			return s[:k]
		}
	}
	if !utf8.ValidString(s) {
		s = string(bytes.ToValidUTF8([]byte(s), []byte("\uFFFD")))
	}
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// Add takes one record (with its bulky fields: answer, reasoning, tool
// calls) found at line of results.jsonl. It keeps no reference to r.
func (b *Builder) Add(line int, r *results.Record) {
	e := entryOf(line, r, MaxTextBytes)
	if b.cells != nil {
		b.add(&e, r.Key())
		return
	}
	b.add(&e, results.Key{})
}

// entry is what the page takes of one record: its texts (cut at a cap of
// at least the page's, see entryOf), numbers, calls and turns. Builder.Add
// makes one of each record it is given; a Collector keeps them on a tape
// while results.jsonl is read and hands them to a Builder once the
// summary (the groups' order, the cells' count and so the cap) stands.
type entry struct {
	provider, model, promptID string
	thinking                  *string
	line, rep, verdict        int
	status, text              string
	textBytes, keptBytes      int
	redacted                  bool
	reasoning, violation, err string
	ttft                      *int64
	e2e                       int64
	out                       *int
	cost                      *float64
	// calls are a single-turn cell's first MaxCalls tool calls; turns an
	// agentic cell's first MaxTurns, moreTurns those past them.
	calls     []entryCall
	turns     []entryTurn
	moreTurns int
}

type entryCall struct {
	name, args, result string
	flags              int
}

type entryTurn struct {
	text, err string
	calls     []entryCall
	moreCalls int
}

// entryOf is the entry of r, found at line, its texts cut as a page of
// answer cap textCap would cut them at most (the page cuts them again at
// its own cap, which is no larger: cut(cut(s, a), b) is cut(s, b) for
// b <= a).
func entryOf(line int, r *results.Record, textCap int) entry {
	status := r.AvailabilityStatus
	if r.FailureType != nil && *r.FailureType != "" {
		status += ": " + *r.FailureType
	}
	verdict := -2
	errText := deref(r.ErrorMessage)
	if r.AvailabilityStatus == results.StatusOK && r.Success {
		switch {
		case r.ObjectivePass == nil && len(r.CheckErrors) > 0:
			verdict = -3
			if errText == "" {
				errText = r.CheckErrors[0].Type + ": " + r.CheckErrors[0].Message
			}
		case r.ObjectivePass == nil:
			verdict = -1
		case *r.ObjectivePass:
			verdict = 1
		default:
			verdict = 0
		}
	}
	small, part := max(textCap/2, 64), max(textCap/4, 64)
	// The answer's whole length is the streamed one only when
	// max_output_bytes cut it: one the scrub alone shortened is whole.
	whole := len(r.RawOutput)
	if r.RawOutputTruncated {
		whole = max(r.RawOutputBytes, whole)
	}
	e := entry{provider: r.Provider, model: r.Model, thinking: r.ThinkingLevel, promptID: r.PromptID, line: line, rep: r.Repetition, verdict: verdict,
		status: cut(status, 200), text: cut(r.RawOutput, textCap), textBytes: whole, keptBytes: len(r.RawOutput), redacted: r.RawOutputRedacted,
		reasoning: cut(r.Reasoning, small), violation: cut(deref(r.Violation), small), err: cut(errText, small),
		ttft: r.TTFTMS, e2e: r.E2EMS, out: r.OutputTokens, cost: r.CostUSD, moreTurns: -1}
	if len(r.TurnDetails) == 0 {
		// A single-turn cell's tool calls: [[name, args, flags]] (an
		// unsafe action, arguments that fail the tool's schema).
		for i, c := range r.ToolCallDetails {
			if i == MaxCalls {
				break
			}
			flags := 0
			if c.Unsafe {
				flags |= flagUnsafe
			}
			if c.SchemaValid != nil && !*c.SchemaValid {
				flags |= flagSchemaInvalid
			}
			e.calls = append(e.calls, entryCall{name: cut(c.Name, 200), args: cut(argsText(c.Arguments), small), flags: flags})
		}
		return e
	}
	for i, t := range r.TurnDetails {
		if i == MaxTurns {
			e.moreTurns = len(r.TurnDetails) - MaxTurns
			break
		}
		et := entryTurn{text: cut(t.Text, part), err: cut(t.Error, part), calls: []entryCall{}, moreCalls: max(0, len(t.Calls)-MaxCalls)}
		for j, c := range t.Calls {
			if j == MaxCalls {
				break
			}
			flags := 0
			for _, f := range []struct {
				on  bool
				bit int
			}{{c.IsError, flagError}, {c.Unknown, flagUnknown}, {c.WrongArgs, flagWrongArgs}, {c.Unanswered, flagUnanswered}, {c.FailFirst, flagFailFirst}, {c.Unsafe, flagUnsafe},
				{c.SchemaValid != nil && !*c.SchemaValid, flagSchemaInvalid}, {c.Injected, flagInjected}, {c.ObeysInjection, flagObeys}} {
				if f.on {
					flags |= f.bit
				}
			}
			et.calls = append(et.calls, entryCall{name: cut(c.Name, 200), args: cut(argsText(c.Arguments), part), result: cut(c.Result, part), flags: flags})
		}
		e.turns = append(e.turns, et)
	}
	return e
}

// add makes e a cell of the page (a later entry of key, when the Builder
// indexes its cells, replaces the earlier). The texts are interned in the
// order the page has always taken them: status, answer, reasoning,
// violation, error, then the calls, then each turn's calls before its
// text and error.
func (b *Builder) add(e *entry, key results.Key) {
	gi := b.find.Find(e.provider, e.model, e.thinking)
	if gi < 0 {
		return
	}
	g := b.rank[gi]
	p, ok := b.prompt[e.promptID]
	if !ok {
		return
	}
	small := max(b.cap/2, 64)
	c := Cell{group: int32(g), prompt: int32(p), rep: int32(e.rep), line: int32(e.line), status: b.text(e.status, 200), verdict: int32(e.verdict),
		text: b.text(e.text, b.cap), textBytes: int32(e.textBytes), keptBytes: int32(e.keptBytes), redacted: e.redacted,
		reasoning: b.text(e.reasoning, small), violation: b.text(e.violation, small), errText: b.text(e.err, small),
		ttft: e.ttft, e2e: e.e2e, out: e.out, cost: e.cost, calls: b.calls(e), turns: b.turns(e)}
	if b.cells != nil {
		if i, ok := b.cells[key]; ok {
			b.page.Cells[i] = c
			return
		}
		b.cells[key] = len(b.page.Cells)
	}
	if b.sink != nil {
		b.sink(c)
	} else {
		b.page.Cells = append(b.page.Cells, c)
	}
	b.page.Reps = max(b.page.Reps, e.rep+1)
}

// calls are a single-turn cell's tool calls: [[name, args, flags]].
func (b *Builder) calls(e *entry) [][3]int {
	small := max(b.cap/2, 64)
	var out [][3]int
	for _, c := range e.calls {
		out = append(out, [3]int{int(b.text(c.name, 200)), int(b.text(c.args, small)), c.flags})
	}
	return out
}

// turns are an agentic cell's trajectory.
func (b *Builder) turns(e *entry) []any {
	part := max(b.cap/4, 64)
	var out []any
	for _, t := range e.turns {
		calls := [][4]int{}
		for _, c := range t.calls {
			calls = append(calls, [4]int{int(b.text(c.name, 200)), int(b.text(c.args, part)), int(b.text(c.result, part)), c.flags})
		}
		out = append(out, []any{int(b.text(t.text, part)), int(b.text(t.err, part)), calls, t.moreCalls})
	}
	if e.moreTurns >= 0 {
		out = append(out, e.moreTurns)
	}
	return out
}

// argsText shows a call's arguments as their JSON text, compact.
func argsText(a json.RawMessage) string {
	if len(a) == 0 {
		return ""
	}
	if !spaceOutsideStrings(a) {
		// Compact already, as the writer writes them (or not JSON, which
		// is shown as it is): json.Compact would give a back.
		return string(a)
	}
	var b bytes.Buffer
	if json.Compact(&b, a) == nil {
		return b.String()
	}
	return string(a)
}

// spaceOutsideStrings says whether a has JSON whitespace outside its
// strings (as far as a is JSON: a string's escapes are stepped over).
func spaceOutsideStrings(a []byte) bool {
	in := false
	for i := 0; i < len(a); i++ {
		switch c := a[i]; {
		case in && c == '\\':
			i++
		case c == '"':
			in = !in
		case !in && (c == ' ' || c == '\t' || c == '\n' || c == '\r'):
			return true
		}
	}
	return false
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// Page returns the page's data; the Builder is done.
func (b *Builder) Page() *Page { return b.page }

var (
	//go:embed assets/answers.html.tmpl
	pageSource string
	//go:embed assets/answers.js
	appJS string
	//go:embed assets/answers.css
	appCSS string

	// pageTemplate is parsed when a page is first written, not at every
	// start of the binary.
	pageTemplate = sync.OnceValue(func() *template.Template {
		return template.Must(template.New("answers.html").Parse(pageSource))
	})
)

type view struct {
	RunID     string
	Counts    string
	Cap       int
	Budget    string
	Dropped   int
	Data      any // the *Page, or WriteFile's marker
	AppJS     template.JS
	AppCSS    template.CSS
	ReportRef string
}

// newView is the template's view of p, a page of n cells.
func newView(p *Page, n int) view {
	return view{RunID: p.RunID, Cap: p.Cap, Budget: fmt.Sprintf("%d MiB", p.Budget>>20), Dropped: p.Dropped, Data: p,
		AppJS: template.JS(appJS), AppCSS: template.CSS(appCSS), ReportRef: rundir.ReportHTML,
		Counts: fmt.Sprintf("%s, %s, %s", format.Plural(n, "cell"), format.Plural(len(p.Groups), "group"), format.Plural(len(p.Prompts), "prompt"))}
}

// Write renders answers.html of p to w, the page built whole in memory
// (WriteFile streams the same bytes to a file).
func Write(w io.Writer, p *Page) error {
	v := newView(p, len(p.Cells))
	var buf bytes.Buffer
	if err := pageTemplate().Execute(&buf, v); err != nil {
		return fmt.Errorf("render %s: %w", rundir.AnswersHTML, err)
	}
	_, err := w.Write(buf.Bytes())
	return err
}

// WriteFile writes answers.html of p to path (atomically), as Write
// would, byte for byte, but streamed: the page's data is encoded an item
// at a time into the file, so the ~15 MB page of 100,000 cells is never
// held whole, nor its JSON, nor the template's escaped copy of it (issue
// 21, item 7).
func WriteFile(path string, p *Page) error {
	return writeFile(path, p, cellsOf(p))
}

// cells are a page's cells in order: how many, and each handed to yield
// (a Pass's come from its tape, not from Page.Cells); json, when not nil,
// writes them as the array's items, already encoded and separated.
type cells struct {
	n    int
	each func(yield func(Cell) error) error
	json func(w io.Writer) error
}

// cellsOf are p.Cells.
func cellsOf(p *Page) cells {
	return cells{n: len(p.Cells), each: func(yield func(Cell) error) error {
		for _, c := range p.Cells {
			if err := yield(c); err != nil {
				return err
			}
		}
		return nil
	}}
}

func writeFile(path string, p *Page, cs cells) error {
	f, err := rundir.CreateAtomic(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 256<<10)
	if err := writeStreamed(w, p, cs); err != nil {
		f.Abort()
		return err
	}
	if err := w.Flush(); err != nil {
		f.Abort()
		return err
	}
	return f.Commit()
}

// dataMarker stands for the page's data in the rendered template, which
// writeStreamed then cuts at it.
const dataMarker = "bench-answers-data-\ufffe-here"

// marker marshals as dataMarker's JSON string.
type marker struct{}

func (marker) MarshalJSON() ([]byte, error) { return json.Marshal(dataMarker) }

// writeStreamed renders the page around a marker and writes the data in
// its place, the arrays of groups, prompts, strings and cells (cs, in
// Cells' place) one item at a time: the bytes are those of Write, which
// html/template gives json.Marshal's output (already escaping <, >, &,
// U+2028 and U+2029).
func writeStreamed(w io.Writer, p *Page, cs cells) error {
	v := newView(p, cs.n)
	v.Data = marker{}
	var page bytes.Buffer
	if err := pageTemplate().Execute(&page, v); err != nil {
		return fmt.Errorf("render %s: %w", rundir.AnswersHTML, err)
	}
	mark, _ := json.Marshal(dataMarker)
	head, tail, ok := bytes.Cut(page.Bytes(), mark)
	if !ok || bytes.Contains(tail, mark) {
		// The run's own text holds the marker: the page the plain way.
		whole := *p
		whole.Cells = make([]Cell, 0, cs.n)
		if err := cs.each(func(c Cell) error {
			whole.Cells = append(whole.Cells, c)
			return nil
		}); err != nil {
			return err
		}
		return Write(w, &whole)
	}
	if _, err := w.Write(head); err != nil {
		return err
	}
	// The page without its arrays, then each array's items in the place
	// of its null, in the struct's order.
	shell := *p
	shell.Groups, shell.Prompts, shell.Strings, shell.Cells = nil, nil, nil, nil
	data, err := json.Marshal(&shell)
	if err != nil {
		return fmt.Errorf("render %s: %w", rundir.AnswersHTML, err)
	}
	each := func(n int, item func(i int) any) func(yield func(any) error) error {
		return func(yield func(any) error) error {
			for i := range n {
				if err := yield(item(i)); err != nil {
					return err
				}
			}
			return nil
		}
	}
	arrays := []struct {
		key  string
		null bool
		each func(yield func(any) error) error
	}{
		{"groups", p.Groups == nil, each(len(p.Groups), func(i int) any { return &p.Groups[i] })},
		{"prompts", p.Prompts == nil, each(len(p.Prompts), func(i int) any { return &p.Prompts[i] })},
		{"strings", p.Strings == nil, each(len(p.Strings), func(i int) any { return p.Strings[i] })},
		{"cells", p.Cells == nil, func(yield func(any) error) error {
			return cs.each(func(c Cell) error { return yield(&c) })
		}},
	}
	for _, a := range arrays {
		null := []byte(`"` + a.key + `":null`)
		at := bytes.Index(data, null)
		if at < 0 {
			return fmt.Errorf("render %s: no %s in the page's data", rundir.AnswersHTML, a.key)
		}
		at += len(null) - len("null")
		if _, err := w.Write(data[:at]); err != nil {
			return err
		}
		data = data[at+len("null"):]
		if a.null {
			io.WriteString(w, "null")
			continue
		}
		io.WriteString(w, "[")
		if a.key == "cells" && cs.json != nil {
			if err := cs.json(w); err != nil {
				return err
			}
			io.WriteString(w, "]")
			continue
		}
		first := true
		var buf []byte
		if err := a.each(func(v any) error {
			var item []byte
			var err error
			if c, ok := v.(*Cell); ok {
				buf, err = c.appendJSON(buf[:0])
				item = buf
			} else {
				item, err = json.Marshal(v)
			}
			if err != nil {
				return fmt.Errorf("render %s: %w", rundir.AnswersHTML, err)
			}
			if !first {
				io.WriteString(w, ",")
			}
			first = false
			_, err = w.Write(item)
			return err
		}); err != nil {
			return err
		}
		io.WriteString(w, "]")
	}
	if _, err := w.Write(data); err != nil {
		return err
	}
	_, err = w.Write(tail)
	return err
}
