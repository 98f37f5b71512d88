package prompts

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"
	"unicode/utf8"

	"gopkg.in/yaml.v3"

	"bench/internal/suggest"
	"bench/internal/yamlerr"
)

// # Prompt sets from data
//
// A data file (CSV with a header row, or JSONL with one object a line)
// and a template make one prompt per row. The template is a YAML file
// holding one prompt under template:, whose string values may hold
// {{column}} placeholders (spaces inside the braces allowed); each is
// replaced by the row's value of that column:
//
//	template:
//	  id: "ticket-{{ticket_id}}"        # required; must name a column
//	  name: "triage {{ticket_id}}"
//	  system: "You triage support tickets."
//	  prompt: |
//	    Label this ticket billing, bug or other. Reply with the label only.
//	    {{body}}
//	  validator: {type: exact, value: "{{label}}"}
//
// The rules:
//
//   - Placeholders fill string values only: the prompt text, system, name,
//     id, and a validator's strings (exact's value, one_of's values, a
//     pattern, a rubric, a command's arguments or expected value...). A
//     number key (max_words' value) takes a number written in the
//     template. A mapping key never holds one. There is no way to write a
//     literal "{{": every "{{" must open a placeholder.
//   - The id comes from the row's own columns (an id column, or a pattern
//     over the columns that identify the row), never from its position, so
//     a row keeps its id when rows are added or removed elsewhere; ids must
//     be unique across the file (and the whole prompt set).
//   - A CSV value is used as written; a JSONL value that is a string as
//     written, a number or boolean as its JSON text, an object or list as
//     compact JSON; null is an error.
//   - Errors name the file and line: a placeholder that names no column
//     (at the template's line), a JSONL row without a column the template
//     uses, a duplicate id, a CSV row with more or fewer fields than the
//     header, text that is not UTF-8, a value that makes a check invalid
//     (at the data file's line, with the row number).

// DataExtensions are the file extensions LoadData reads as data: the
// others are prompt files.
var DataExtensions = []string{".csv", ".jsonl", ".ndjson"}

// IsData says whether path names a data file (by its extension).
func IsData(path string) bool {
	return slices.Contains(DataExtensions, strings.ToLower(filepath.Ext(path)))
}

// maxRowErrors bounds the row errors reported at once: a template mistake
// repeated over 10,000 rows says nothing the first ones do not.
const maxRowErrors = 20

// placeholder matches one {{column}}.
var placeholder = regexp.MustCompile(`\{\{\s*([^{}]*?)\s*\}\}`)

// LoadData reads a data file and a template and returns one prompt per
// row, in the file's order, each with Source the data file and Line its
// row's line.
func LoadData(dataPath, templatePath string) ([]Prompt, error) {
	t, err := readTemplate(templatePath)
	if err != nil {
		return nil, err
	}
	d, err := readData(dataPath)
	if err != nil {
		return nil, err
	}
	if err := t.checkColumns(d); err != nil {
		return nil, err
	}
	return t.expand(d)
}

// dataTemplate is a template file, read and checked.
type dataTemplate struct {
	path string
	root *yaml.Node
	node *yaml.Node // the prompt mapping under template:
	// uses are the placeholders' columns, each with the first node that
	// names it.
	uses  map[string]*yaml.Node
	order []string
	// parts are each value's text cut at its placeholders, so a row is
	// filled by joining, not by matching again.
	parts map[*yaml.Node][]part
}

// part is a piece of a value: literal text, or a placeholder's column.
type part struct {
	text   string
	column bool
}

// promptKeys are the keys a prompt (so a template) takes.
var promptKeys = func() []string {
	var out []string
	t := reflect.TypeFor[Prompt]()
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("yaml"), ",")
		if name != "" && name != "-" {
			out = append(out, name)
		}
	}
	return out
}()

// Bounds of a template file: its size, and its YAML nodes once its
// aliases are followed. Every row copies the template's nodes, aliases
// expanded (fillNode), so an alias of an alias of a list... (a "billion
// laughs" of 716 bytes) would be billions of nodes a row; yaml.v3's own
// alias budget applies only when a document is decoded into values, not
// into the nodes a template is read as.
const (
	MaxTemplateBytes = 1 << 20
	MaxTemplateNodes = 10_000
)

func readTemplate(path string) (*dataTemplate, error) {
	data, err := readBounded(path, MaxTemplateBytes)
	if err != nil {
		return nil, fmt.Errorf("read template: %w", err)
	}
	if err := yamlerr.CheckUTF8(path, data); err != nil {
		return nil, err
	}
	t := &dataTemplate{path: path, root: &yaml.Node{}, uses: map[string]*yaml.Node{}, parts: map[*yaml.Node][]part{}}
	if err := yaml.Unmarshal(data, t.root); err != nil {
		return nil, yamlerr.Wrap(path, t.root, err)
	}
	fail := func(n *yaml.Node, field, msg string) error {
		e := yamlerr.At(n, field, msg)
		e.File = path
		if e.Line == 0 {
			e.Line = 1
		}
		return e
	}
	if budget := MaxTemplateNodes; !withinNodes(t.root, &budget) {
		return nil, fail(nil, "template", fmt.Sprintf("more than %d YAML nodes once its aliases are followed: a template is one prompt (each row copies it whole)", MaxTemplateNodes))
	}
	if len(t.root.Content) == 0 || t.root.Content[0].Kind != yaml.MappingNode {
		return nil, fail(nil, "template", "want a mapping with one key, template:, holding one prompt with {{column}} placeholders")
	}
	top := t.root.Content[0]
	for i := 0; i+1 < len(top.Content); i += 2 {
		k := top.Content[i]
		if k.Value != "template" {
			return nil, fail(k, k.Value, fmt.Sprintf("unknown field %q: a template file holds only template:", k.Value))
		}
		t.node = yamlerr.Resolve(top.Content[i+1])
	}
	if t.node == nil || t.node.Kind != yaml.MappingNode {
		return nil, fail(top, "template", "missing or not a mapping: it holds one prompt (id, prompt, validator...) with {{column}} placeholders")
	}
	var errs []error
	idNode := (*yaml.Node)(nil)
	for i := 0; i+1 < len(t.node.Content); i += 2 {
		k := t.node.Content[i]
		if !slices.Contains(promptKeys, k.Value) {
			errs = append(errs, fail(k, "template."+k.Value, fmt.Sprintf("unknown field %q%s", k.Value, suggest.Hint(k.Value, promptKeys))))
		}
		if k.Value == "id" {
			idNode = t.node.Content[i+1]
		}
		if k.Value == "injection" {
			errs = append(errs, fail(k, "template.injection", "an injection case is written in a prompt file, beside the clean twin whose task it runs; a data file's rows cannot be cases"))
		}
	}
	errs = append(errs, t.scan(t.node, "template")...)
	switch {
	case idNode == nil:
		errs = append(errs, fail(t.node, "template.id", "missing: say where each row's id comes from, like id: \"{{id}}\" or id: \"case-{{ticket}}-{{lang}}\""))
	case idNode.Kind != yaml.ScalarNode || !placeholder.MatchString(idNode.Value):
		errs = append(errs, fail(idNode, "template.id", "must name the columns that identify a row, like \"{{id}}\" or \"case-{{ticket}}-{{lang}}\" (not the row's number, which changes when rows are added)"))
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	// The template itself must be a valid prompt: what no row's values
	// can fix is reported once, at the template's line.
	var p Prompt
	if err := t.node.Decode(&p); err != nil {
		return nil, yamlerr.Wrap(path, t.root, err)
	}
	p.Line = t.node.Line
	at := func(_, line int, field, msg string) error {
		return &yamlerr.Error{File: path, Line: line, Field: "template." + field, Msg: msg}
	}
	if errs := check(path, []Prompt{p}, []*yaml.Node{t.node}, filepath.Dir(path), at); len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return t, nil
}

// withinNodes says whether n holds at most *budget nodes, aliases
// followed (each use counts its whole target, a cycle runs out the
// budget), spending the budget as it counts.
func withinNodes(n *yaml.Node, budget *int) bool {
	for ; n != nil; n = n.Alias {
		if *budget--; *budget < 0 {
			return false
		}
		for _, c := range n.Content {
			if !withinNodes(c, budget) {
				return false
			}
		}
		if n.Kind != yaml.AliasNode {
			return true
		}
	}
	return true
}

// readBounded reads a regular file of at most max bytes.
func readBounded(path string, max int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", path)
	}
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > max {
		return nil, fmt.Errorf("%s is larger than %d MiB", path, max>>20)
	}
	return data, nil
}

// scan collects the placeholders of every value under n and checks that
// each "{{" opens one and that no key holds one.
func (t *dataTemplate) scan(n *yaml.Node, path string) []error {
	var errs []error
	fail := func(n *yaml.Node, field, msg string) {
		errs = append(errs, &yamlerr.Error{File: t.path, Line: n.Line, Field: field, Msg: msg})
	}
	var walk func(n *yaml.Node, path string)
	walk = func(n *yaml.Node, path string) {
		switch n.Kind {
		case yaml.MappingNode:
			for i := 0; i+1 < len(n.Content); i += 2 {
				k := n.Content[i]
				if strings.Contains(k.Value, "{{") {
					fail(k, path+"."+k.Value, "a key holds no placeholder: placeholders fill values")
					continue
				}
				walk(n.Content[i+1], path+"."+k.Value)
			}
		case yaml.SequenceNode:
			for i, c := range n.Content {
				walk(c, fmt.Sprintf("%s[%d]", path, i))
			}
		case yaml.AliasNode:
			walk(n.Alias, path)
		case yaml.ScalarNode:
			rest := n.Value
			var parts []part
			for {
				i := strings.Index(rest, "{{")
				if i < 0 {
					break
				}
				loc := placeholder.FindStringSubmatchIndex(rest[i:])
				if loc == nil || loc[0] != 0 {
					fail(n, path, fmt.Sprintf("%q opens no placeholder: write {{column}} (there is no literal \"{{\")", shorten(rest[i:], 20)))
					return
				}
				name := rest[i+loc[2] : i+loc[3]]
				if name == "" {
					fail(n, path, "empty placeholder {{}}: name a column")
					return
				}
				if _, ok := t.uses[name]; !ok {
					t.uses[name] = n
					t.order = append(t.order, name)
				}
				parts = append(parts, part{text: rest[:i]}, part{text: name, column: true})
				rest = rest[i+loc[1]:]
			}
			if parts != nil {
				t.parts[n] = append(parts, part{text: rest})
			}
		}
	}
	walk(n, path)
	return errs
}

func shorten(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n]) + "…"
}

// dataRow is one row of a data file.
type dataRow struct {
	num, line int
	vals      map[string]string
	// null names the columns a JSONL row set to null.
	null []string
}

// dataFile is a data file's rows and the columns it has.
type dataFile struct {
	path    string
	columns []string
	rows    []dataRow
	jsonl   bool
}

// Bounds of a data file. It is streamed a line at a time, never read
// whole: a file of any size costs one line's buffer and the rows it
// holds, and a file with no line ends (a sparse gigabyte of zeros) is
// refused at its first MiB.
const (
	// MaxDataLine is the longest line a data file may hold, and
	// MaxDataRecord the most a CSV record may span (a quoted value over
	// several lines).
	MaxDataLine   = 1 << 20
	MaxDataRecord = 4 << 20
	// MaxDataRows is the most rows a data file may hold: as many prompts
	// as the plan may have cells.
	MaxDataRows = 1_000_000
)

// maxDataRows is MaxDataRows, lowered by tests.
var maxDataRows = MaxDataRows

func readData(path string) (*dataFile, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read data file: %w", err)
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && !st.Mode().IsRegular() {
		return nil, &yamlerr.Error{File: path, Line: 1, Msg: "not a regular file: a data file is a CSV or JSONL file"}
	}
	lr := newLineReader(path, f)
	var d *dataFile
	if strings.ToLower(filepath.Ext(path)) == ".csv" {
		d, err = readCSV(path, lr)
	} else {
		d, err = readJSONL(path, lr)
	}
	if err != nil {
		return nil, err
	}
	if len(d.rows) == 0 {
		return nil, &yamlerr.Error{File: path, Line: 1, Msg: "no rows: nothing to make prompts of"}
	}
	return d, nil
}

// lineReader hands a data file out a line at a time, each at most
// MaxDataLine bytes and UTF-8 (a byte-order mark at the start dropped);
// it is also the io.Reader the CSV reader reads, counting the bytes of
// the record being read (mark starts a new one). A line too long, text
// that is not UTF-8 or a record too long is a *yamlerr.Error at its line
// that ends the reading (the rest cannot be told apart into rows).
type lineReader struct {
	path string
	br   *bufio.Reader
	// line is the number of the last line read; rest is what of it the
	// CSV reader has not been given yet.
	line int
	rest []byte
	// record counts the bytes handed out since the last mark.
	record int
	err    error
}

func newLineReader(path string, r io.Reader) *lineReader {
	return &lineReader{path: path, br: bufio.NewReaderSize(r, MaxDataLine)}
}

// next returns the next line, with its line end, or io.EOF.
func (l *lineReader) next() ([]byte, error) {
	if l.err != nil {
		return nil, l.err
	}
	b, err := l.br.ReadSlice('\n')
	switch {
	case errors.Is(err, bufio.ErrBufferFull):
		l.err = &yamlerr.Error{File: l.path, Line: l.line + 1, Msg: fmt.Sprintf("a line longer than %d MiB: a data file holds one row a line (is it a data file?)", MaxDataLine>>20)}
		return nil, l.err
	case err == io.EOF && len(b) == 0:
		l.err = io.EOF
		return nil, l.err
	case err != nil && err != io.EOF:
		l.err = fmt.Errorf("read data file %s: %w", l.path, err)
		return nil, l.err
	}
	l.line++
	if l.line == 1 {
		b = bytes.TrimPrefix(b, []byte("\xEF\xBB\xBF"))
	}
	if !utf8.Valid(b) {
		l.err = &yamlerr.Error{File: l.path, Line: l.line, Msg: "not UTF-8 text; save the file as UTF-8"}
		return nil, l.err
	}
	return b, nil
}

// Read is the file for the CSV reader, line by line.
func (l *lineReader) Read(p []byte) (int, error) {
	if len(l.rest) == 0 {
		b, err := l.next()
		if err != nil {
			return 0, err
		}
		l.rest = b
	}
	n := copy(p, l.rest)
	l.rest = l.rest[n:]
	if l.record += n; l.record > MaxDataRecord {
		l.err = &yamlerr.Error{File: l.path, Line: l.line, Msg: fmt.Sprintf("a record longer than %d MiB (an unclosed quote?)", MaxDataRecord>>20)}
		return n, l.err
	}
	return n, nil
}

// mark starts counting a new record.
func (l *lineReader) mark() { l.record = 0 }

// fatal says err ended the reading (see lineReader).
func fatal(err error) bool {
	var ye *yamlerr.Error
	return errors.As(err, &ye) || !errors.As(err, new(*csv.ParseError))
}

// rowErrors collects a data file's row errors: the first maxRowErrors,
// and how many more, so a file of bad rows is read to its end in bounded
// memory and says how bad it is.
type rowErrors struct {
	path string
	errs []error
	more int
}

func (r *rowErrors) add(err error) {
	if len(r.errs) < maxRowErrors {
		r.errs = append(r.errs, err)
	} else {
		r.more++
	}
}

// err is every error collected, then "and N more", or nil.
func (r *rowErrors) err() error {
	if r.more > 0 {
		r.errs = append(r.errs, fmt.Errorf("%s: and %d more problems like these", r.path, r.more))
	}
	return errors.Join(r.errs...)
}

// tooMany is the error of a data file past MaxDataRows.
func tooMany(path string, line int) error {
	return &yamlerr.Error{File: path, Line: line, Msg: fmt.Sprintf("more than %d rows: a prompt set that large would plan more cells than a run may have", maxDataRows)}
}

func readCSV(path string, lr *lineReader) (*dataFile, error) {
	r := csv.NewReader(lr)
	r.ReuseRecord = false
	d := &dataFile{path: path}
	header, err := r.Read()
	if err == io.EOF {
		return nil, &yamlerr.Error{File: path, Line: 1, Msg: "empty: a CSV data file starts with a header row naming its columns"}
	}
	if err != nil {
		return nil, csvError(path, 0, err)
	}
	seen := map[string]int{}
	for i, h := range header {
		h = strings.TrimSpace(h)
		header[i] = h
		if h == "" {
			return nil, &yamlerr.Error{File: path, Line: 1, Field: "header", Msg: fmt.Sprintf("column %d has no name", i+1)}
		}
		if j, dup := seen[h]; dup {
			return nil, &yamlerr.Error{File: path, Line: 1, Field: "header", Msg: fmt.Sprintf("column %q is named twice (columns %d and %d)", h, j+1, i+1)}
		}
		seen[h] = i
	}
	d.columns = header
	errs := rowErrors{path: path}
	for num := 1; ; num++ {
		lr.mark()
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			if fatal(err) {
				errs.add(csvError(path, num, err))
				break
			}
			errs.add(csvError(path, num, err))
			continue
		}
		if num > maxDataRows {
			line, _ := r.FieldPos(0)
			errs.add(tooMany(path, line))
			break
		}
		if len(errs.errs) > 0 {
			continue // a file with errors makes no prompts: its rows are not kept
		}
		line, _ := r.FieldPos(0)
		vals := make(map[string]string, len(header))
		for i, h := range header {
			vals[h] = rec[i]
		}
		d.rows = append(d.rows, dataRow{num: num, line: line, vals: vals})
	}
	if err := errs.err(); err != nil {
		return nil, err
	}
	return d, nil
}

// csvError places a CSV reader's error at its line, with the row.
func csvError(path string, num int, err error) error {
	var ye *yamlerr.Error
	if errors.As(err, &ye) {
		return ye
	}
	var pe *csv.ParseError
	if !errors.As(err, &pe) {
		return fmt.Errorf("%s: %w", path, err)
	}
	field := "header"
	if num > 0 {
		field = fmt.Sprintf("row %d", num)
	}
	msg := pe.Err.Error()
	if errors.Is(pe.Err, csv.ErrFieldCount) {
		msg = "a ragged row: its number of fields differs from the header's (quote a value that holds a comma)"
	}
	return &yamlerr.Error{File: path, Line: pe.StartLine, Field: field, Msg: msg}
}

func readJSONL(path string, lr *lineReader) (*dataFile, error) {
	d := &dataFile{path: path, jsonl: true}
	errs := rowErrors{path: path}
	cols := map[string]bool{}
	rows := 0
	for {
		raw, err := lr.next()
		if err == io.EOF {
			break
		}
		if err != nil {
			errs.add(err)
			break
		}
		line := lr.line
		raw = bytes.TrimSpace(raw)
		if len(raw) == 0 {
			continue
		}
		if rows++; rows > maxDataRows {
			errs.add(tooMany(path, line))
			break
		}
		fail := func(msg string) {
			errs.add(&yamlerr.Error{File: path, Line: line, Field: fmt.Sprintf("row %d", line), Msg: msg})
		}
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		var obj map[string]any
		if err := dec.Decode(&obj); err != nil || obj == nil {
			fail("not a JSON object (a JSONL data file has one object a line)")
			continue
		}
		if dec.More() {
			fail("text after the JSON object (one object a line)")
			continue
		}
		if len(errs.errs) > 0 {
			continue // a file with errors makes no prompts: its rows are not kept
		}
		row := dataRow{num: line, line: line, vals: make(map[string]string, len(obj))}
		keys := make([]string, 0, len(obj))
		for k := range obj {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			v := obj[k]
			if !cols[k] {
				cols[k] = true
				d.columns = append(d.columns, k)
			}
			switch x := v.(type) {
			case nil:
				row.null = append(row.null, k)
			case string:
				row.vals[k] = x
			case json.Number:
				row.vals[k] = x.String()
			case bool:
				row.vals[k] = fmt.Sprint(x)
			default:
				b, _ := json.Marshal(x)
				row.vals[k] = string(b)
			}
		}
		d.rows = append(d.rows, row)
	}
	if err := errs.err(); err != nil {
		return nil, err
	}
	return d, nil
}

// checkColumns refuses a placeholder that names no column of the data
// file, at the template's line.
func (t *dataTemplate) checkColumns(d *dataFile) error {
	var errs []error
	for _, name := range t.order {
		if slices.Contains(d.columns, name) {
			continue
		}
		n := t.uses[name]
		msg := fmt.Sprintf("unknown placeholder {{%s}}: %s has no such column%s (columns: %s)", name, filepath.Base(d.path),
			suggest.Hint(name, d.columns), strings.Join(d.columns, ", "))
		errs = append(errs, &yamlerr.Error{File: t.path, Line: n.Line, Field: "template", Msg: msg})
	}
	return errors.Join(errs...)
}

// expand makes each row's prompt: the template with the row's values,
// decoded and checked as a prompt file's prompt is, each problem at the
// row's line.
func (t *dataTemplate) expand(d *dataFile) ([]Prompt, error) {
	out := make([]Prompt, 0, len(d.rows))
	errs := rowErrors{path: d.path}
	ids := map[string]int{}
	dir := filepath.Dir(t.path)
	for ri := range d.rows {
		row := &d.rows[ri]
		at := func(_, _ int, field, msg string) error {
			return &yamlerr.Error{File: d.path, Line: row.line, Field: fmt.Sprintf("row %d: %s", row.num, field), Msg: msg}
		}
		var rowErrs []error
		for _, name := range t.order {
			switch {
			case slices.Contains(row.null, name):
				rowErrs = append(rowErrs, at(0, 0, name, fmt.Sprintf("null, and the template uses {{%s}} (give a value)", name)))
			case !hasKey(row.vals, name):
				rowErrs = append(rowErrs, at(0, 0, name, fmt.Sprintf("no column %q, and the template uses {{%s}}", name, name)))
			}
		}
		var p Prompt
		if len(rowErrs) == 0 {
			n := t.fillNode(t.node, row.vals)
			if err := n.Decode(&p); err != nil {
				rowErrs = append(rowErrs, decodeErrors(err, d.path, t.path, row)...)
			} else {
				p.Line = t.node.Line
				ps := []Prompt{p}
				rowErrs = append(rowErrs, check(d.path, ps, []*yaml.Node{n}, dir, func(_, line int, field, msg string) error {
					return &yamlerr.Error{File: d.path, Line: row.line, Field: fmt.Sprintf("row %d: %s (template %s:%d)", row.num, field, filepath.Base(t.path), line), Msg: msg}
				})...)
				p = ps[0]
				p.Line = row.line
			}
		}
		if len(rowErrs) == 0 {
			if j, dup := ids[p.ID]; dup {
				o := d.rows[j]
				rowErrs = append(rowErrs, at(0, 0, "id", fmt.Sprintf("duplicate prompt id %q (also row %d, line %d): make template.id name the columns that tell rows apart", p.ID, o.num, o.line)))
			} else {
				ids[p.ID] = ri
			}
		}
		for _, e := range rowErrs {
			errs.add(e)
		}
		if len(rowErrs) == 0 {
			out = append(out, p)
		}
	}
	if err := errs.err(); err != nil {
		return nil, err
	}
	return out, nil
}

func hasKey(m map[string]string, k string) bool {
	_, ok := m[k]
	return ok
}

// decodeErrors places the decoding errors of a row's prompt at the row.
func decodeErrors(err error, dataPath, templatePath string, row *dataRow) []error {
	var out []error
	for _, e := range yamlerr.Flatten(yamlerr.Wrap(templatePath, nil, err)) {
		var ye *yamlerr.Error
		field, line, msg := "", 0, e.Error()
		if errors.As(e, &ye) {
			field, line, msg = ye.Field, ye.Line, ye.Msg
		}
		f := fmt.Sprintf("row %d", row.num)
		if field != "" {
			f += ": " + field
		}
		if line > 0 {
			f += fmt.Sprintf(" (template %s:%d)", filepath.Base(templatePath), line)
		}
		out = append(out, &yamlerr.Error{File: dataPath, Line: row.line, Field: f, Msg: msg})
	}
	return out
}

// fillNode copies the template's node tree with every placeholder of a
// value replaced by the row's value. Aliases are copied as what they
// point to; tags and lines are kept (a filled value stays a string).
func (t *dataTemplate) fillNode(n *yaml.Node, vals map[string]string) *yaml.Node {
	if n.Kind == yaml.AliasNode {
		return t.fillNode(n.Alias, vals)
	}
	c := *n
	c.Anchor = ""
	if parts, ok := t.parts[n]; ok {
		var b strings.Builder
		for _, p := range parts {
			if p.column {
				b.WriteString(vals[p.text])
			} else {
				b.WriteString(p.text)
			}
		}
		c.Value, c.Tag = b.String(), "!!str"
	}
	if len(n.Content) > 0 {
		c.Content = make([]*yaml.Node, len(n.Content))
		for i, k := range n.Content {
			c.Content[i] = t.fillNode(k, vals)
		}
	}
	return &c
}
