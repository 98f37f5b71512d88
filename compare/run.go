package compare

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"

	"bench/results"
	"bench/rundir"
	"bench/stats"
)

// runData is what compare reads of one run directory in its first pass.
type runData struct {
	dir  string
	id   string
	info *rundir.RunInfo // nil when run.json is absent (a killed run)
	cfg  *configFile     // nil when config.json is absent
	inv  *inventoryFile  // nil when inventory.json is absent
	// cells by key; keys in file order.
	cells map[results.Key]*cell
	keys  []results.Key
	// prompts by id, from config.json.
	prompts  map[string]*promptDef
	warnings []string
	strs     map[string]string
	// groupPrompts: which prompts each group has cells of (built on use).
	groupPrompts map[groupKey]map[string]bool
}

// cell is one results line reduced to what the comparison needs.
type cell struct {
	line      int
	status    string
	success   bool
	objPass   *bool
	violation *string
	toolUse   *bool
	failType  string
	coldStart bool
	expected  []string
	names     []string
	digest    digest
	digestOK  bool
	ttft      *float64
	e2e       *float64
	tps       *float64
}

// reached says the cell reached the model: availability ok or error, and
// not cancelled by the user. Cells that did not (skipped_unavailable,
// auth_error, rate_limited, cancelled) are infrastructure failures.
func (c *cell) reached() bool {
	return (c.status == results.StatusOK || c.status == results.StatusError) && c.failType != results.FailCancelled
}

// infraStatus names why a cell did not reach the model.
func (c *cell) infraStatus() string {
	if c.failType == results.FailCancelled {
		return results.FailCancelled
	}
	return c.status
}

// passed is bench's quality outcome of a cell: it reached the model, got a
// usable answer (success), its validator did not fail (objective_pass is
// not false) and, on a tool prompt, it used the expected tools
// (tool_use_success is not false).
func (c *cell) passed() bool {
	return c.reached() && c.success && (c.objPass == nil || *c.objPass) && (c.toolUse == nil || *c.toolUse)
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
	} `json:"providers"`
	PromptSet []*promptDef `json:"prompt_set"`
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

func (e *InputError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %v", e.File, e.Line, e.Err)
	}
	return fmt.Sprintf("%s: %v", e.File, e.Err)
}

func (e *InputError) Unwrap() error { return e.Err }

// loadRun reads a run directory's side files and makes the first pass over
// its results.jsonl. It only reads.
func loadRun(dir string) (*runData, error) {
	if err := rundir.Check(dir); err != nil {
		return nil, &InputError{File: dir, Err: errors.New(trimPrefix(err.Error(), dir+": "))}
	}
	r := &runData{dir: dir, id: filepath.Base(filepath.Clean(dir)), cells: map[results.Key]*cell{}, strs: map[string]string{}}
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
	data, err := os.ReadFile(path)
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

// intern keeps one copy of each repeated string (keys, statuses, tool
// names), so a large run costs memory per cell, not per string.
func (r *runData) intern(s string) string {
	if v, ok := r.strs[s]; ok {
		return v
	}
	r.strs[s] = s
	return s
}

func (r *runData) internAll(ss []string) []string {
	if len(ss) == 0 {
		return nil
	}
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = r.intern(s)
	}
	return out
}

// readResults is the first pass: every line decoded lean, each cell kept
// as a cell. Any bad line is an error naming the file and line; a cell key
// recorded twice is one too.
func (r *runData) readResults() error {
	path := rundir.Path(r.dir, rundir.ResultsFile)
	err := scanLines(path, nil, decodeLean, r.add)
	var le *LineError
	switch {
	case errors.As(err, &le):
		return &InputError{File: path, Line: le.Line, Err: le.Err}
	case err != nil:
		return &InputError{File: path, Err: err}
	}
	if len(r.cells) == 0 {
		return &InputError{File: path, Err: errors.New("no results: the run recorded no cell")}
	}
	return nil
}

// add keeps one decoded line as a cell.
func (r *runData) add(line int, rec *leanRecord) error {
	k := rec.key()
	k = results.Key{Provider: r.intern(k.Provider), ProviderType: r.intern(k.ProviderType), Model: r.intern(k.Model),
		ThinkingLevel: r.intern(k.ThinkingLevel), PromptID: r.intern(k.PromptID), Repetition: k.Repetition}
	if prev, ok := r.cells[k]; ok {
		return &LineError{Line: line, Err: fmt.Errorf("repeats the cell of line %d (%s)", prev.line, keyString(k))}
	}
	for _, v := range []struct {
		name string
		v    *float64
	}{{"ttft_ms", rec.TTFTMS}, {"e2e_ms", rec.E2EMS}, {"tokens_per_s", rec.TokensPerS}} {
		if v.v != nil && math.Abs(*v.v) > stats.MaxAbs {
			return &LineError{Line: line, Err: fmt.Errorf("%s is %g, beyond any latency or rate", v.name, *v.v)}
		}
	}
	d, ok := rec.snapshotDigest()
	c := &cell{line: line, status: r.intern(rec.AvailabilityStatus), success: rec.Success, objPass: rec.ObjectivePass, violation: rec.Violation,
		toolUse: rec.ToolUseSuccess, failType: r.intern(deref(rec.FailureType)), coldStart: rec.ColdStart != nil && *rec.ColdStart,
		expected: r.internAll(rec.ExpectedTools), names: r.internAll(rec.ToolCalls), digest: d, digestOK: ok,
		ttft: rec.TTFTMS, e2e: rec.E2EMS, tps: rec.TokensPerS}
	r.cells[k] = c
	r.keys = append(r.keys, k)
	return nil
}

// keyString names a cell in messages.
func keyString(k results.Key) string {
	s := k.Provider + "/" + k.Model
	if k.ThinkingLevel != "" {
		s += " (" + k.ThinkingLevel + ")"
	}
	return fmt.Sprintf("%s %s rep %d", s, k.PromptID, k.Repetition)
}

// sortedKeys returns the union of two runs' keys: base's order, then the
// new run's keys base lacks.
func sortedKeys(base, cur *runData) []results.Key {
	out := slices.Clone(base.keys)
	for _, k := range cur.keys {
		if _, ok := base.cells[k]; !ok {
			out = append(out, k)
		}
	}
	return out
}
