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
}

// Cell is one cell, packed as a JSON array to keep 100,000 of them small:
//
//	[group, prompt, repetition, line, status, verdict, text, text_bytes,
//	 kept_bytes, reasoning, violation, error, ttft_ms, e2e_ms,
//	 output_tokens, cost_usd, calls, turns]
//
// status is a Strings index of the availability status (with the failure
// type after a colon when there is one); verdict 1 passed, 0 failed its
// check, -1 no check, -2 did not succeed, -3 answered but an external
// check gave no verdict (check_errors; error holds the first); the texts
// are Strings indexes
// (-1 none); text_bytes the answer's whole length as streamed, kept_bytes
// what results.jsonl kept of it (max_output_bytes); calls [[name, args,
// flags]];
// turns [[text, error, [[name, args, result, flags]], more_calls]] and,
// after the last turn shown, the number of turns not shown.
//
// In memory it is a struct of the numbers (128 bytes, where the array of
// 18 interfaces took 288 and a box for most numbers): a page holds every
// cell of the run until it is written (issue 21, item 7: 100,000 cells).
type Cell struct {
	group, prompt, rep, line, status, verdict, text, textBytes, keptBytes, reasoning, violation, errText int32

	ttft  *int64
	e2e   int64
	out   *int
	cost  *float64
	calls [][3]int
	turns []any
}

// MarshalJSON writes the cell as the array described above.
func (c Cell) MarshalJSON() ([]byte, error) {
	return json.Marshal([18]any{int(c.group), int(c.prompt), int(c.rep), int(c.line), int(c.status), int(c.verdict),
		int(c.text), int(c.textBytes), int(c.keptBytes), int(c.reasoning), int(c.violation), int(c.errText),
		c.ttft, c.e2e, c.out, c.cost, c.calls, c.turns})
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
	if b.used+len(s) > BudgetBytes {
		b.page.Dropped++
		return -1
	}
	b.used += len(s)
	b.index[s] = int32(len(b.page.Strings))
	b.page.Strings = append(b.page.Strings, s)
	return b.index[s]
}

// cut keeps at most n bytes of s, ending on a whole rune, with invalid
// bytes replaced by U+FFFD (JSON cannot carry them).
func cut(s string, n int) string {
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
	gi := b.find.Find(r.Provider, r.Model, r.ThinkingLevel)
	if gi < 0 {
		return
	}
	g := b.rank[gi]
	p, ok := b.prompt[r.PromptID]
	if !ok {
		return
	}
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
	small := max(b.cap/2, 64)
	c := Cell{group: int32(g), prompt: int32(p), rep: int32(r.Repetition), line: int32(line), status: b.text(status, 200), verdict: int32(verdict),
		text: b.text(r.RawOutput, b.cap), textBytes: int32(max(r.RawOutputBytes, len(r.RawOutput))), keptBytes: int32(len(r.RawOutput)),
		reasoning: b.text(r.Reasoning, small), violation: b.text(deref(r.Violation), small), errText: b.text(errText, small),
		ttft: r.TTFTMS, e2e: r.E2EMS, out: r.OutputTokens, cost: r.CostUSD, calls: b.calls(r), turns: b.turns(r)}
	if b.cells != nil {
		if i, ok := b.cells[r.Key()]; ok {
			b.page.Cells[i] = c
			return
		}
		b.cells[r.Key()] = len(b.page.Cells)
	}
	b.page.Cells = append(b.page.Cells, c)
	b.page.Reps = max(b.page.Reps, r.Repetition+1)
}

// calls are a single-turn cell's tool calls: [[name, args, flags]] (an
// unsafe action, arguments that fail the tool's schema).
func (b *Builder) calls(r *results.Record) [][3]int {
	if len(r.TurnDetails) > 0 || len(r.ToolCallDetails) == 0 {
		return nil
	}
	small := max(b.cap/2, 64)
	var out [][3]int
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
		out = append(out, [3]int{int(b.text(c.Name, 200)), int(b.text(argsText(c.Arguments), small)), flags})
	}
	return out
}

// turns are an agentic cell's trajectory.
func (b *Builder) turns(r *results.Record) []any {
	if len(r.TurnDetails) == 0 {
		return nil
	}
	part := max(b.cap/4, 64)
	var out []any
	for i, t := range r.TurnDetails {
		if i == MaxTurns {
			out = append(out, len(r.TurnDetails)-MaxTurns)
			break
		}
		calls := [][4]int{}
		for j, c := range t.Calls {
			if j == MaxCalls {
				break
			}
			flags := 0
			for _, f := range []struct {
				on  bool
				bit int
			}{{c.IsError, flagError}, {c.Unknown, flagUnknown}, {c.WrongArgs, flagWrongArgs}, {c.Unanswered, flagUnanswered}, {c.FailFirst, flagFailFirst}, {c.Unsafe, flagUnsafe},
				{c.SchemaValid != nil && !*c.SchemaValid, flagSchemaInvalid}} {
				if f.on {
					flags |= f.bit
				}
			}
			calls = append(calls, [4]int{int(b.text(c.Name, 200)), int(b.text(argsText(c.Arguments), part)), int(b.text(c.Result, part)), flags})
		}
		out = append(out, []any{int(b.text(t.Text, part)), int(b.text(t.Error, part)), calls, max(0, len(t.Calls)-MaxCalls)})
	}
	return out
}

// argsText shows a call's arguments as their JSON text, compact.
func argsText(a json.RawMessage) string {
	if len(a) == 0 {
		return ""
	}
	var b bytes.Buffer
	if json.Compact(&b, a) == nil {
		return b.String()
	}
	return string(a)
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

	pageTemplate = template.Must(template.New("answers.html").Parse(pageSource))
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

func newView(p *Page) view {
	return view{RunID: p.RunID, Cap: p.Cap, Budget: fmt.Sprintf("%d MiB", p.Budget>>20), Dropped: p.Dropped, Data: p,
		AppJS: template.JS(appJS), AppCSS: template.CSS(appCSS), ReportRef: rundir.ReportHTML,
		Counts: fmt.Sprintf("%s, %s, %s", format.Plural(len(p.Cells), "cell"), format.Plural(len(p.Groups), "group"), format.Plural(len(p.Prompts), "prompt"))}
}

// Write renders answers.html of p to w, the page built whole in memory
// (WriteFile streams the same bytes to a file).
func Write(w io.Writer, p *Page) error {
	v := newView(p)
	var buf bytes.Buffer
	if err := pageTemplate.Execute(&buf, v); err != nil {
		return fmt.Errorf("render %s: %w", rundir.AnswersHTML, err)
	}
	_, err := w.Write(buf.Bytes())
	return err
}

// Pass is answers.html's pass over a run, started (Start) and not yet
// finished.
type Pass struct {
	dir string
	s   *report.Summary
	b   *Builder
}

// Start begins answers.html's pass over the run s summarises: what the
// page needs of the summary's groups (their labels, keys and ranking
// order) is taken now, so the caller may let them go
// (report.Summary.DropGroups) before Finish reads the answers.
func Start(dir string, s *report.Summary) *Pass {
	n := s.NRecords - s.NDuplicateLines
	p := &Pass{dir: dir, s: s, b: NewBuilder(s, n)}
	p.b.Questions(dir)
	if s.FromRunDir() {
		p.b.cells = nil
		p.b.page.Cells = make([]Cell, 0, max(n, 0))
	}
	return p
}

// Finish reads the answers and writes dir/answers.html.
func (p *Pass) Finish() error {
	var err error
	if p.s.FromRunDir() {
		err = p.s.EachCountedLine(false, p.b.Add)
	} else {
		_, _, err = results.ReadFile(rundir.Path(p.dir, rundir.ResultsFile), false, func(line int, r *results.Record) error {
			p.b.Add(line, r)
			return nil
		})
	}
	if err != nil {
		return fmt.Errorf("%s %s: %w", rundir.AnswersHTML, p.dir, err)
	}
	return WriteFile(rundir.Path(p.dir, rundir.AnswersHTML), p.b.Page())
}

// WriteFile writes answers.html of p to path (atomically), as Write
// would, byte for byte, but streamed: the page's data is encoded an item
// at a time into the file, so the ~15 MB page of 100,000 cells is never
// held whole, nor its JSON, nor the template's escaped copy of it (issue
// 21, item 7).
func WriteFile(path string, p *Page) error {
	f, err := rundir.CreateAtomic(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 256<<10)
	if err := writeStreamed(w, p); err != nil {
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
// its place, the arrays of groups, prompts, strings and cells one item at
// a time: the bytes are those of Write, which html/template gives
// json.Marshal's output (already escaping <, >, &, U+2028 and U+2029).
func writeStreamed(w io.Writer, p *Page) error {
	v := newView(p)
	v.Data = marker{}
	var page bytes.Buffer
	if err := pageTemplate.Execute(&page, v); err != nil {
		return fmt.Errorf("render %s: %w", rundir.AnswersHTML, err)
	}
	mark, _ := json.Marshal(dataMarker)
	head, tail, ok := bytes.Cut(page.Bytes(), mark)
	if !ok || bytes.Contains(tail, mark) {
		// The run's own text holds the marker: the page the plain way.
		return Write(w, p)
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
	arrays := []struct {
		key  string
		n    int
		item func(i int) any
	}{
		{"groups", len(p.Groups), func(i int) any { return &p.Groups[i] }},
		{"prompts", len(p.Prompts), func(i int) any { return &p.Prompts[i] }},
		{"strings", len(p.Strings), func(i int) any { return p.Strings[i] }},
		{"cells", len(p.Cells), func(i int) any { return p.Cells[i] }},
	}
	nils := []bool{p.Groups == nil, p.Prompts == nil, p.Strings == nil, p.Cells == nil}
	for k, a := range arrays {
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
		if nils[k] {
			io.WriteString(w, "null")
			continue
		}
		io.WriteString(w, "[")
		for i := range a.n {
			item, err := json.Marshal(a.item(i))
			if err != nil {
				return fmt.Errorf("render %s: %w", rundir.AnswersHTML, err)
			}
			if i > 0 {
				io.WriteString(w, ",")
			}
			if _, err := w.Write(item); err != nil {
				return err
			}
		}
		io.WriteString(w, "]")
	}
	if _, err := w.Write(data); err != nil {
		return err
	}
	_, err = w.Write(tail)
	return err
}
