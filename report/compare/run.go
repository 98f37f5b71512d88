package compare

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"bench/internal/record/pricing"
	"bench/internal/record/results"
	"bench/internal/record/rundir"
	"bench/internal/record/slo"
	"bench/report/stats"
)

// runData is what compare reads of one run directory in its first pass.
type runData struct {
	dir  string
	id   string
	info *rundir.RunInfo // nil when run.json is absent (a killed run)
	cfg  *configFile     // nil when config.json is absent
	inv  *inventoryFile  // nil when inventory.json is absent
	// cells in file order; index finds one by key.
	cells []cell
	index map[cellKey]int32
	// dupCells are the cells recorded more than once (a resumed run's
	// cells it ran again), dupLines the records a later one replaced.
	dupCells map[cellKey]bool
	dupLines int
	// prompts by id, from config.json.
	prompts  map[string]*promptDef
	warnings []string
	// tab interns the strings of both runs, so keys compare across them.
	tab *table
	// groupPrompts: which prompts each group has cells of (built on use).
	groupPrompts map[groupKey]map[uint32]bool
	// load is the cells of load stages (not the warm-up) by key, for
	// capacity (capacity.go); slo is config.json's slo block, which
	// decides their goodput.
	load map[cellKey]*loadCell
	slo  *slo.SLO
	// unjudged finds the groups no external check gave a verdict on (a
	// night whose judge was down): said aloud of either run.
	unjudged results.Unjudged
}

// cellKey is a cell's full key with its strings interned: small to hash
// and to keep 100,000 of.
type cellKey struct {
	provider, providerType, model, thinking, prompt uint32
	rep                                             int
	// stage is the cell's load stage (0: none).
	stage uint32
}

// cell is one results line reduced to what the comparison needs (about a
// hundred bytes).
type cell struct {
	key      cellKey
	line     int
	status   uint32 // interned availability_status
	failType uint32 // interned failure_type, "" for none
	expected uint32 // interned expected_tools list
	names    uint32 // interned tool_calls list
	category uint32 // interned category, "" for none
	objPass  tri
	toolUse  tri
	// injStyle is an injection attack cell's style (interned, "" for any
	// other cell); followed and utility its injection_followed and
	// utility (a clean twin's utility is not compared).
	injStyle uint32
	followed tri
	utility  tri
	flags    cellFlags
	digest   digest
	ttft     float64
	e2e      float64
	tps      float64
	cost     float64 // cost_usd, when fCost
	// violation is kept for failing cells only.
	violation *string
}

// tri is a JSON boolean that may be null.
type tri int8

const (
	triNull tri = iota
	triFalse
	triTrue
)

func triOf(b *bool) tri {
	switch {
	case b == nil:
		return triNull
	case *b:
		return triTrue
	}
	return triFalse
}

// ptr is the boolean as a pointer again (nil for null).
func (t tri) ptr() *bool {
	if t == triNull {
		return nil
	}
	v := t == triTrue
	return &v
}

type cellFlags uint8

const (
	fSuccess cellFlags = 1 << iota
	fColdStart
	fDigestOK
	fTTFT
	fE2E
	fTPS
	fCost
	// fCheckError: a check gave no verdict and none failed the cell
	// (check_errors, objective_pass null): its quality is unknown.
	fCheckError
)

func (c *cell) has(f cellFlags) bool { return c.flags&f != 0 }

// table interns strings and string lists as small integers.
type table struct {
	ids   map[string]uint32
	strs  []string
	lists map[string]uint32
	vals  [][]string
}

func newTable() *table {
	t := &table{ids: map[string]uint32{}, lists: map[string]uint32{}}
	t.id("")
	t.list(nil)
	return t
}

func (t *table) id(s string) uint32 {
	if v, ok := t.ids[s]; ok {
		return v
	}
	v := uint32(len(t.strs))
	t.ids[s] = v
	t.strs = append(t.strs, s)
	return v
}

func (t *table) str(id uint32) string { return t.strs[id] }

// list interns a string list (tool names); the empty list is 0.
func (t *table) list(ss []string) uint32 {
	var kb strings.Builder
	for _, s := range ss { // length-prefixed: injective whatever the names hold
		kb.WriteString(strconv.Itoa(len(s)))
		kb.WriteByte(':')
		kb.WriteString(s)
	}
	k := kb.String()
	if v, ok := t.lists[k]; ok {
		return v
	}
	v := uint32(len(t.vals))
	t.lists[k] = v
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = t.str(t.id(s))
	}
	t.vals = append(t.vals, out)
	return v
}

func (t *table) listOf(id uint32) []string { return t.vals[id] }

// reached says the cell reached the model: availability ok or error, and
// not cancelled by the user. Cells that did not (skipped_unavailable,
// auth_error, rate_limited, cancelled) are infrastructure failures.
func (r *runData) reached(c *cell) bool {
	st := r.tab.str(c.status)
	return (st == results.StatusOK || st == results.StatusError) && r.tab.str(c.failType) != results.FailCancelled
}

// infraStatus names why a cell did not reach the model.
func (r *runData) infraStatus(c *cell) string {
	if ft := r.tab.str(c.failType); ft == results.FailCancelled {
		return ft
	}
	return r.tab.str(c.status)
}

// passed is bench's quality outcome of a cell: it reached the model, got a
// usable answer (success), its validator did not fail (objective_pass is
// not false) and, on a tool prompt, it used the expected tools
// (tool_use_success is not false).
func (r *runData) passed(c *cell) bool {
	return r.reached(c) && c.has(fSuccess) && c.objPass != triFalse && c.toolUse != triFalse
}

// configFile is the part of config.json compare reads.
type configFile struct {
	Run struct {
		ID             string          `json:"id"`
		Concurrency    int             `json:"concurrency"`
		Repetitions    int             `json:"repetitions"`
		Timeout        json.RawMessage `json:"timeout"`
		MaxOutputBytes int             `json:"max_output_bytes"`
	} `json:"run"`
	Providers []struct {
		Name        string   `json:"name"`
		Type        string   `json:"type"`
		Concurrency int      `json:"concurrency"`
		Models      []string `json:"models"`
		// ThinkingLevels are the entry's levels (null: none).
		ThinkingLevels []*string `json:"thinking_levels"`
		// Load is the entry's load block (the run-wide one when it has
		// none of its own), for its SLO search.
		Load *loadBlock `json:"load"`
	} `json:"providers"`
	PromptSet []*promptDef `json:"prompt_set"`
	// SLO is the slo block (goodput's limits), kept raw to compare.
	SLO json.RawMessage `json:"slo"`
}

// loadBlock is the part of a load block compare reads: the SLO search,
// kept raw so that a block it cannot read costs its limit only.
type loadBlock struct {
	Concurrency int             `json:"concurrency"`
	Search      json.RawMessage `json:"search"`
}

// promptDef is one prompt of config.json's prompt_set: the parts that
// decide what a cell is asked and how it is judged.
type promptDef struct {
	ID         string          `json:"id"`
	System     string          `json:"system"`
	Prompt     string          `json:"prompt"`
	Tools      json.RawMessage `json:"tools"`
	MaxTurns   json.RawMessage `json:"max_turns"`
	Validator  json.RawMessage `json:"validator"`
	Validators json.RawMessage `json:"validators"`
}

// offersTools says the prompt offers the model tools.
func (p *promptDef) offersTools() bool {
	t := bytes.TrimSpace(p.Tools)
	return len(t) > 0 && string(t) != "null" && string(t) != "[]"
}

// inventoryFile is the part of inventory.json compare reads.
type inventoryFile struct {
	Host struct {
		Hostname     string  `json:"hostname"`
		OS           string  `json:"os"`
		Platform     string  `json:"platform"`
		PlatformVer  string  `json:"platform_version"`
		Kernel       string  `json:"kernel"`
		Arch         string  `json:"arch"`
		CPUModel     *string `json:"cpu_model"`
		CoresLogical *int    `json:"cores_logical"`
		MemTotal     *uint64 `json:"mem_total_bytes"`
	} `json:"host"`
	Bench struct {
		GoVersion string `json:"go_version"`
		Version   string `json:"version"`
	} `json:"bench"`
	Providers []invProvider `json:"providers"`
}

// InputError is a run directory compare cannot read: not one, or a file in
// it that is missing, unreadable or malformed. File names the file; Line
// is 0 when the problem is not on one line.
type InputError struct {
	File string
	Line int
	Err  error
}

// Error names the file, the line when there is one, and the problem.
func (e *InputError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %v", e.File, e.Line, e.Err)
	}
	return fmt.Sprintf("%s: %v", e.File, e.Err)
}

// Unwrap gives the problem.
func (e *InputError) Unwrap() error { return e.Err }

// loadRun reads a run directory's side files and makes the first pass over
// its results.jsonl, interning into tab. It only reads.
func loadRun(dir string, tab *table) (*runData, error) {
	if err := rundir.Check(dir); err != nil {
		return nil, &InputError{File: dir, Err: errors.New(trimPrefix(err.Error(), dir+": "))}
	}
	r := &runData{dir: dir, id: filepath.Base(filepath.Clean(dir)), index: map[cellKey]int32{}, tab: tab}
	if err := r.readSideFiles(); err != nil {
		return nil, err
	}
	if err := r.readResults(); err != nil {
		return nil, err
	}
	return r, nil
}

func trimPrefix(s, prefix string) string {
	if len(s) >= len(prefix) && s[:len(prefix)] == prefix {
		return s[len(prefix):]
	}
	return s
}

// readSideFiles reads config.json, run.json and inventory.json. Each may
// be absent (a warning: the comparison is then less complete); a present
// one that does not parse is an error.
func (r *runData) readSideFiles() error {
	var cfg configFile
	switch ok, err := readJSON(rundir.Path(r.dir, rundir.ConfigFile), &cfg); {
	case err != nil:
		return err
	case ok:
		r.cfg = &cfg
		r.prompts = map[string]*promptDef{}
		for i, p := range cfg.PromptSet {
			if p == nil || p.ID == "" {
				return &InputError{File: rundir.Path(r.dir, rundir.ConfigFile), Err: fmt.Errorf("prompt_set[%d]: no id", i)}
			}
			r.prompts[p.ID] = p
		}
		if t := bytes.TrimSpace(cfg.SLO); len(t) > 0 && string(t) != "null" {
			var slo slo.SLO
			if err := json.Unmarshal(t, &slo); err != nil {
				return &InputError{File: rundir.Path(r.dir, rundir.ConfigFile), Err: fmt.Errorf("slo: %w", err)}
			}
			if !slo.Empty() {
				r.slo = &slo
			}
		}
		if cfg.Run.ID != "" {
			r.id = cfg.Run.ID
		}
	default:
		r.warnings = append(r.warnings, fmt.Sprintf("%s has no %s: its prompts cannot be checked for changes", r.dir, rundir.ConfigFile))
	}
	var info rundir.RunInfo
	switch ok, err := readJSON(rundir.Path(r.dir, rundir.RunFile), &info); {
	case err != nil:
		return err
	case ok:
		r.info = &info
		if info.RunID != "" {
			r.id = info.RunID
		}
	default:
		r.warnings = append(r.warnings, fmt.Sprintf("%s has no %s: the run did not end normally", r.dir, rundir.RunFile))
	}
	var inv inventoryFile
	switch ok, err := readJSON(rundir.Path(r.dir, rundir.InventoryFile), &inv); {
	case err != nil:
		return err
	case ok:
		r.inv = &inv
	}
	return nil
}

// readJSON decodes path into v; ok is false when the file does not exist.
// A file that does not parse is an InputError with the line.
func readJSON(path string, v any) (ok bool, err error) {
	data, err := rundir.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, &InputError{File: path, Err: err}
	}
	if err := json.Unmarshal(data, v); err != nil {
		line := 0
		var se *json.SyntaxError
		var te *json.UnmarshalTypeError
		switch {
		case errors.As(err, &se):
			line = lineOf(data, se.Offset)
		case errors.As(err, &te):
			line = lineOf(data, te.Offset)
		}
		return false, &InputError{File: path, Line: line, Err: err}
	}
	return true, nil
}

func lineOf(data []byte, offset int64) int {
	offset = min(max(offset, 0), int64(len(data)))
	return bytes.Count(data[:offset], []byte("\n")) + 1
}

// inputError names the file, and the line when the scan gave one.
func inputError(path string, err error) error {
	if le := (*results.LineError)(nil); errors.As(err, &le) {
		return &InputError{File: path, Line: le.Line, Err: le.Err}
	}
	return &InputError{File: path, Err: err}
}

// readResults is the first pass: every line read (see scanOptions), each
// cell kept as a cell. Any bad line is an error naming the file and line.
// A cell recorded more than once counts by its last record, as in bench
// report: a resumed run appends a new record for each cell it ran again.
func (r *runData) readResults() error {
	path := rundir.Path(r.dir, rundir.ResultsFile)
	if n := estimateLines(path); n > 0 {
		r.cells = make([]cell, 0, n)
		r.index = make(map[cellKey]int32, n)
	}
	if _, _, err := results.Scan(path, scanOptions, r.add); err != nil {
		return inputError(path, err)
	}
	if len(r.cells) == 0 {
		return &InputError{File: path, Err: errors.New("no results: the run recorded no cell")}
	}
	if r.dupLines > 0 {
		r.warnings = append(r.warnings, fmt.Sprintf("%s: %s recorded more than once (%s, e.g. cells a resumed run ran again); each is compared by its last record",
			path, plural(len(r.dupCells), "cell is", "cells are"), plural(r.dupLines, "extra line", "extra lines")))
	}
	return nil
}

// estimateLines guesses a results file's line count from its size and its
// first lines, so the cells are allocated once rather than grown (0 when
// the file cannot be read: the scan then says why).
func estimateLines(path string) int {
	f, err := rundir.Open(path, 0)
	if err != nil {
		return 0
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return 0
	}
	head := make([]byte, 64<<10)
	n, _ := io.ReadFull(f, head)
	lines := bytes.Count(head[:n], []byte("\n"))
	if lines == 0 {
		return 0
	}
	est := st.Size()/int64(n/lines) + 16
	return int(min(est, 4<<20))
}

// add keeps one decoded line as a cell; a later line of the same cell
// replaces it.
func (r *runData) add(line int, rec *results.Record) error {
	t := r.tab
	k := cellKey{provider: t.id(rec.Provider), providerType: t.id(rec.ProviderType), model: t.id(rec.Model),
		prompt: t.id(rec.PromptID), rep: rec.Repetition}
	if rec.Stage != "" {
		k.stage = t.id(rec.Stage)
	}
	if rec.ThinkingLevel != nil {
		k.thinking = t.id(*rec.ThinkingLevel)
	}
	c := cell{key: k, line: line, status: t.id(rec.AvailabilityStatus), failType: t.id(deref(rec.FailureType)),
		expected: t.list(rec.ExpectedTools), names: t.list(rec.ToolCalls), category: t.id(rec.Category), objPass: triOf(rec.ObjectivePass), toolUse: triOf(rec.ToolUseSuccess)}
	var ttft *float64
	if rec.TTFTMS != nil {
		v := float64(*rec.TTFTMS)
		ttft = &v
	}
	e2e := float64(rec.E2EMS)
	for _, v := range []struct {
		name string
		v    *float64
		dst  *float64
		flag cellFlags
	}{{"ttft_ms", ttft, &c.ttft, fTTFT}, {"e2e_ms", &e2e, &c.e2e, fE2E}, {"tokens_per_s", rec.TokensPerS, &c.tps, fTPS}} {
		if v.v == nil {
			continue
		}
		if math.Abs(*v.v) > stats.MaxAbs {
			return &results.LineError{Line: line, Err: fmt.Errorf("%s is %g, beyond any latency or rate", v.name, *v.v)}
		}
		*v.dst = *v.v
		c.flags |= v.flag
	}
	var ok bool
	c.digest, ok = snapshotDigest(rec)
	for _, f := range []struct {
		on   bool
		flag cellFlags
	}{{rec.Success, fSuccess}, {rec.ColdStart, fColdStart}, {ok, fDigestOK},
		{rec.ObjectivePass == nil && len(rec.CheckErrors) > 0, fCheckError}} {
		if f.on {
			c.flags |= f.flag
		}
	}
	if rec.CostUSD != nil && pricing.ValidCost(*rec.CostUSD) {
		c.cost, c.flags = *rec.CostUSD, c.flags|fCost
	}
	r.unjudged.Add(rec)
	if in := rec.Injection; in != nil && in.Role == results.InjectionAttack && in.Style != "" {
		c.injStyle, c.followed, c.utility = t.id(in.Style), triOf(rec.InjectionFollowed), triOf(rec.Utility)
	}
	if c.objPass == triFalse && rec.Violation != nil {
		c.violation = rec.Violation
	}
	r.addLoad(k, rec)
	if prev, ok := r.index[k]; ok {
		if r.dupCells == nil {
			r.dupCells = map[cellKey]bool{}
		}
		r.dupCells[k] = true
		r.dupLines++
		r.cells[prev] = c
		return nil
	}
	if len(r.cells) >= math.MaxInt32 {
		return &results.LineError{Line: line, Err: errors.New("more cells than compare can hold")}
	}
	r.index[k] = int32(len(r.cells))
	r.cells = append(r.cells, c)
	return nil
}

// cell returns the run's cell of key k, or nil.
func (r *runData) cell(k cellKey) *cell {
	i, ok := r.index[k]
	if !ok {
		return nil
	}
	return &r.cells[i]
}

// keyString names a cell in messages.
func keyString(k results.Key) string {
	s := k.Provider + "/" + k.Model
	if k.ThinkingLevel != "" {
		s += " (" + k.ThinkingLevel + ")"
	}
	if k.Stage != "" {
		s += " stage " + k.Stage
	}
	return fmt.Sprintf("%s %s rep %d", s, k.PromptID, k.Repetition)
}

// unionKeys returns the union of two runs' keys: base's order, then the
// new run's keys base lacks.
func unionKeys(base, cur *runData) []cellKey {
	out := make([]cellKey, 0, len(base.cells))
	for i := range base.cells {
		out = append(out, base.cells[i].key)
	}
	for i := range cur.cells {
		if _, ok := base.index[cur.cells[i].key]; !ok {
			out = append(out, cur.cells[i].key)
		}
	}
	return out
}

// planned says whether the run's config.json plans cell k (its provider
// entry, model, thinking level, prompt and repetition); without a
// config.json nothing says it was not.
func (r *runData) planned(k cellKey) bool {
	if r.cfg == nil {
		return true
	}
	str := r.tab.str
	if k.rep < 0 || (r.cfg.Run.Repetitions > 0 && k.rep >= r.cfg.Run.Repetitions) {
		return false
	}
	if _, ok := r.prompts[str(k.prompt)]; !ok && len(r.prompts) > 0 {
		return false
	}
	for _, p := range r.cfg.Providers {
		if p.Name != str(k.provider) || (p.Type != "" && p.Type != str(k.providerType)) || !slices.Contains(p.Models, str(k.model)) {
			continue
		}
		if len(p.ThinkingLevels) == 0 {
			return str(k.thinking) == ""
		}
		for _, l := range p.ThinkingLevels {
			if (l == nil && str(k.thinking) == "") || (l != nil && *l == str(k.thinking)) {
				return true
			}
		}
	}
	return false
}

// unfinished says how the run did not finish, from its run.json ("" when
// it finished, or has no run.json to say): a cell missing from such a run
// was planned and never ran, which compare judges as availability.
func (r *runData) unfinished() string {
	switch {
	case r.info == nil:
		return ""
	case r.info.EndReason != "finished":
		return "ended " + r.info.EndReason
	case r.info.Merge != nil && (len(r.info.Merge.Missing) > 0 || len(r.info.Merge.Problems) > 0):
		return "was merged from incomplete shards"
	}
	return ""
}
