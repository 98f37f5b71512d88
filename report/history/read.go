package history

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"bench/internal/record/rundir"
)

// DirName is the default --out when history is given one directory of
// runs: DIR/history. It is skipped when DIR is scanned for runs.
const DirName = "history"

// runJSON is the part of run.json history reads. Unknown fields (a later
// bench's) are ignored.
type runJSON struct {
	SchemaVersion *int      `json:"schema_version"`
	RunID         string    `json:"run_id"`
	BenchVersion  string    `json:"bench_version"`
	StartedAt     time.Time `json:"started_at"`
	EndReason     string    `json:"end_reason"`
	CellsPlanned  int       `json:"cells_planned"`
	CellsRecorded int       `json:"cells_recorded"`
	// RescoredFrom is set on a bench rescore copy: the same night's
	// cells, judged again.
	RescoredFrom *struct {
		RunID       string    `json:"run_id"`
		OriginRunID string    `json:"origin_run_id"`
		At          time.Time `json:"at"`
	} `json:"rescored_from"`
}

// configJSON is the part of config.json history reads: the settings that
// change what a figure measures (concurrency, repetitions, timeouts, the
// load profile) and each prompt's checks.
type configJSON struct {
	Run struct {
		Concurrency    int             `json:"concurrency"`
		Repetitions    int             `json:"repetitions"`
		Timeout        json.RawMessage `json:"timeout"`
		MaxOutputBytes int             `json:"max_output_bytes"`
	} `json:"run"`
	Load      json.RawMessage `json:"load"`
	Providers []struct {
		Name        string          `json:"name"`
		Concurrency int             `json:"concurrency"`
		Load        json.RawMessage `json:"load"`
	} `json:"providers"`
	PromptSet []struct {
		ID         string          `json:"id"`
		Validator  json.RawMessage `json:"validator"`
		Validators json.RawMessage `json:"validators"`
	} `json:"prompt_set"`
}

// percentiles is a summary.json distribution's percentiles.
type percentiles struct {
	P50 *float64 `json:"p50"`
	P95 *float64 `json:"p95"`
}

// summaryJSON is the part of summary.json history reads.
type summaryJSON struct {
	PromptIDs []string `json:"prompt_ids"`
	Groups    []struct {
		Provider          string      `json:"provider"`
		Model             string      `json:"model"`
		ThinkingLevel     *string     `json:"thinking_level"`
		ObjectivePassRate *float64    `json:"objective_pass_rate"`
		LatencyMS         percentiles `json:"latency_ms"`
		TTFTMS            percentiles `json:"ttft_ms"`
		TokensPerS        percentiles `json:"tokens_per_s"`
		// CostUSDTotal over NCostKnown is the mean cost of a priced
		// cell: a figure that does not grow with the run's size.
		CostUSDTotal *float64 `json:"cost_usd_total"`
		NCostKnown   int      `json:"n_cost_known"`
	} `json:"groups"`
}

// tiersJSON is the part of tiers.json history reads.
type tiersJSON struct {
	Ranking []struct {
		Provider           string   `json:"provider"`
		Model              string   `json:"model"`
		ThinkingLevel      *string  `json:"thinking_level"`
		ToolUseSuccessRate *float64 `json:"tool_use_success_rate"`
	} `json:"ranking"`
}

// inventoryJSON is the part of inventory.json history reads.
type inventoryJSON struct {
	Providers []struct {
		Name          string  `json:"name"`
		ServerVersion *string `json:"server_version"`
		CLIVersion    *string `json:"cli_version"`
		ServerModels  []struct {
			Name   string `json:"name"`
			Digest string `json:"digest"`
		} `json:"server_models"`
	} `json:"providers"`
}

// runRead is one run directory as read: its run, its figures per group,
// and what to warn about.
type runRead struct {
	run      Run
	figures  map[groupKey]map[string]float64
	order    []groupKey
	warnings []string
	skip     bool
	// origin is the run whose cells these are (run.json's rescored_from's
	// origin, else the run's own id), rescoredAt when a rescore judged
	// them (zero for the run itself).
	origin     string
	rescoredAt time.Time
}

// FindRuns lists the run directories of the arguments: each argument is a
// run directory (it holds run.json or results.jsonl) or a directory of
// them, scanned one level deep. Directories that are neither are warned
// about, and skipped.
func FindRuns(args []string) (dirs []string, warnings []string, err error) {
	for _, a := range args {
		st, err := os.Stat(a)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", a, errors.Unwrap(err))
		}
		if !st.IsDir() {
			return nil, nil, fmt.Errorf("%s: not a directory", a)
		}
		if isRunDir(a) {
			dirs = append(dirs, a)
			continue
		}
		entries, err := os.ReadDir(a)
		if err != nil {
			return nil, nil, err
		}
		n := 0
		for _, e := range entries {
			if !e.IsDir() || e.Name() == DirName || strings.HasPrefix(e.Name(), ".") {
				continue
			}
			p := filepath.Join(a, e.Name())
			if !isRunDir(p) {
				warnings = append(warnings, fmt.Sprintf("%s: not a run directory (no %s or %s): skipped", p, rundir.RunFile, rundir.ResultsFile))
				continue
			}
			dirs = append(dirs, p)
			n++
		}
		if n == 0 {
			warnings = append(warnings, fmt.Sprintf("%s: holds no run directory", a))
		}
	}
	return dirs, warnings, nil
}

func isRunDir(p string) bool {
	for _, f := range []string{rundir.RunFile, rundir.ResultsFile} {
		if _, err := os.Stat(filepath.Join(p, f)); err == nil {
			return true
		}
	}
	return false
}

// readRuns reads the run directories on every core, keeping their order.
func readRuns(dirs []string) []*runRead {
	out := make([]*runRead, len(dirs))
	var wg sync.WaitGroup
	next := make(chan int)
	for range runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			for i := range next {
				out[i] = readRun(dirs[i])
			}
		})
	}
	for i := range dirs {
		next <- i
	}
	close(next)
	wg.Wait()
	return out
}

// readJSON decodes a file of the run; a missing file is (false, nil).
func readJSON(dir, name string, v any) (bool, error) {
	b, err := rundir.ReadFile(filepath.Join(dir, name))
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if err := json.Unmarshal(b, v); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			line := 1 + strings.Count(string(b[:min(int(se.Offset), len(b))]), "\n")
			return false, fmt.Errorf("%s line %d: %v", name, line, err)
		}
		return false, fmt.Errorf("%s: %v", name, err)
	}
	return true, nil
}

// knownSchema is the run.json schema_version history understands (none
// is written today; a later bench may).
const knownSchema = 1

// readRun reads one run directory's four files.
func readRun(dir string) *runRead {
	r := &runRead{run: Run{Dir: dir, ID: filepath.Base(dir)}, figures: map[groupKey]map[string]float64{}}
	warn := func(format string, a ...any) { r.warnings = append(r.warnings, dir+": "+fmt.Sprintf(format, a...)) }
	var ri runJSON
	ok, err := readJSON(dir, rundir.RunFile, &ri)
	switch {
	case err != nil:
		warn("%v: skipped", err)
		r.skip = true
		return r
	case !ok:
		warn("no %s (the run was killed, or is still running): skipped", rundir.RunFile)
		r.skip = true
		return r
	}
	if ri.SchemaVersion != nil && *ri.SchemaVersion > knownSchema {
		warn("%s has schema_version %d, from a later bench than this one (which reads %d): read as far as understood", rundir.RunFile, *ri.SchemaVersion, knownSchema)
	}
	r.run.ID, r.run.StartedAt, r.run.BenchVersion, r.run.EndReason = ri.RunID, ri.StartedAt, ri.BenchVersion, ri.EndReason
	r.run.CellsPlanned, r.run.CellsRecorded = ri.CellsPlanned, ri.CellsRecorded
	if r.run.ID == "" {
		r.run.ID = filepath.Base(dir)
	}
	r.origin = r.run.ID
	if rf := ri.RescoredFrom; rf != nil {
		r.origin, r.rescoredAt, r.run.RescoredFrom = rf.OriginRunID, rf.At, rf.RunID
		if r.origin == "" {
			r.origin = rf.RunID
		}
	}
	var sum summaryJSON
	ok, err = readJSON(dir, rundir.SummaryJSON, &sum)
	switch {
	case err != nil:
		warn("%v: skipped", err)
		r.skip = true
		return r
	case !ok:
		warn("no %s (bench report %s writes it): skipped", rundir.SummaryJSON, dir)
		r.skip = true
		return r
	}
	r.run.prompts = sum.PromptIDs
	for _, g := range sum.Groups {
		k := groupKey{g.Provider, g.Model, deref(g.ThinkingLevel)}
		f := r.group(k)
		put(f, PassRate, g.ObjectivePassRate)
		put(f, TTFTP50, g.TTFTMS.P50)
		put(f, TTFTP95, g.TTFTMS.P95)
		put(f, E2EP50, g.LatencyMS.P50)
		put(f, E2EP95, g.LatencyMS.P95)
		put(f, TPSP50, g.TokensPerS.P50)
		put(f, TPSP95, g.TokensPerS.P95)
		if g.CostUSDTotal != nil && g.NCostKnown > 0 {
			perCell := *g.CostUSDTotal / float64(g.NCostKnown)
			put(f, CostUSD, &perCell)
		}
	}
	var tiers tiersJSON
	if ok, err := readJSON(dir, rundir.TiersFile, &tiers); err != nil {
		warn("%v: its tool-use figures are left out", err)
	} else if !ok {
		warn("no %s: its tool-use figures are left out", rundir.TiersFile)
	}
	for _, t := range tiers.Ranking {
		put(r.group(groupKey{t.Provider, t.Model, deref(t.ThinkingLevel)}), ToolUse, t.ToolUseSuccessRate)
	}
	var inv inventoryJSON
	if _, err := readJSON(dir, rundir.InventoryFile, &inv); err != nil {
		warn("%v: its setup (model digests, server versions) is unknown", err)
	}
	var cfg configJSON
	hasCfg, err := readJSON(dir, rundir.ConfigFile, &cfg)
	if err != nil {
		warn("%v: its settings (concurrency, checks) are unknown", err)
		hasCfg = false
	}
	if hasCfg {
		r.run.checks = map[string]string{}
		for _, p := range cfg.PromptSet {
			r.run.checks[p.ID] = fingerprint(p.Validator, p.Validators)
		}
	}
	r.run.setup = map[groupKey]map[string]string{}
	for _, k := range r.order {
		s := map[string]string{"bench version": ri.BenchVersion}
		if hasCfg {
			settings(s, &cfg, k.provider, r.run.checks)
		}
		for _, p := range inv.Providers {
			if p.Name != k.provider {
				continue
			}
			if p.ServerVersion != nil {
				s["server version"] = *p.ServerVersion
			}
			if p.CLIVersion != nil {
				s["CLI version"] = *p.CLIVersion
			}
			for _, m := range p.ServerModels {
				if sameModel(m.Name, k.model) {
					s["model digest"] = m.Digest
				}
			}
		}
		r.run.setup[k] = s
	}
	return r
}

// settings puts into a group's setup what config.json says of how its
// figures were measured: the run's and the entry's concurrency, the other
// run settings and the load profile, and the prompt set's checks.
func settings(s map[string]string, cfg *configJSON, provider string, checks map[string]string) {
	entry, load := 0, cfg.Load
	for _, p := range cfg.Providers {
		if p.Name == provider {
			entry = p.Concurrency
			if len(p.Load) > 0 && string(p.Load) != "null" {
				load = p.Load
			}
		}
	}
	s[SetupConcurrency] = fmt.Sprintf("run %d, entry %d", cfg.Run.Concurrency, entry)
	s[SetupRunSettings] = fmt.Sprintf("repetitions %d, timeout %s, max_output_bytes %d", cfg.Run.Repetitions, strings.Trim(string(cfg.Run.Timeout), `"`), cfg.Run.MaxOutputBytes)
	if len(load) > 0 && string(load) != "null" {
		s[SetupRunSettings] += ", load " + compact(load)
	}
	ids := make([]string, 0, len(checks))
	for id := range checks {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	h := sha256.New()
	for _, id := range ids {
		fmt.Fprintf(h, "%s\x00%s\x00", id, checks[id])
	}
	s[SetupChecks] = "sha256:" + hex.EncodeToString(h.Sum(nil))[:12]
}

// fingerprint identifies a prompt's checks by their JSON, compacted.
func fingerprint(parts ...json.RawMessage) string {
	h := sha256.New()
	for _, p := range parts {
		h.Write([]byte(compact(p)))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// compact is JSON without its spaces (as written, when it does not parse).
func compact(raw json.RawMessage) string {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return string(raw)
	}
	return b.String()
}

// sameModel: "m" is "m:latest", as Ollama names them.
func sameModel(a, b string) bool {
	canon := func(s string) string {
		if !strings.Contains(s, ":") {
			return s + ":latest"
		}
		return s
	}
	return canon(a) == canon(b)
}

func (r *runRead) group(k groupKey) map[string]float64 {
	f := r.figures[k]
	if f == nil {
		f = map[string]float64{}
		r.figures[k] = f
		r.order = append(r.order, k)
	}
	return f
}

func put(f map[string]float64, metric string, v *float64) {
	if v != nil {
		f[metric] = *v
	}
}

// orderRuns sorts the runs read by run.json's started_at (then directory
// name), drops the skipped ones, keeps one run of each night (see
// oneANight), and numbers the rest.
func orderRuns(reads []*runRead) []*runRead {
	kept := slices.DeleteFunc(slices.Clone(reads), func(r *runRead) bool { return r.skip })
	kept = oneANight(kept)
	sort.SliceStable(kept, func(i, j int) bool {
		a, b := kept[i].run, kept[j].run
		if !a.StartedAt.Equal(b.StartedAt) {
			return a.StartedAt.Before(b.StartedAt)
		}
		return a.Dir < b.Dir
	})
	for i, r := range kept {
		r.run.Index = i
	}
	return kept
}

// oneANight keeps one run of each origin: a bench rescore copy holds the
// same night's cells (the same timings, judged again), so it and the run
// it came from are one night, not two. The newest judging is kept (the
// latest rescore, else the run itself), and the others are named in a
// warning of the one kept.
func oneANight(runs []*runRead) []*runRead {
	// Runs of one id that are not rescore copies are distinct nights (a
	// nightly job reuses its run id); a copy belongs to the latest run of
	// its origin id that started before its first cell.
	night := map[*runRead]string{}
	for _, r := range runs {
		if r.rescoredAt.IsZero() {
			night[r] = r.origin + "\x00" + r.run.StartedAt.String()
		}
	}
	for _, r := range runs {
		if !r.rescoredAt.IsZero() {
			var of *runRead
			for _, o := range runs {
				if o.rescoredAt.IsZero() && o.origin == r.origin && !o.run.StartedAt.After(r.run.StartedAt) && (of == nil || o.run.StartedAt.After(of.run.StartedAt)) {
					of = o
				}
			}
			if of != nil {
				night[r] = night[of]
			} else {
				night[r] = r.origin
			}
		}
	}
	best := map[string]*runRead{}
	for _, r := range runs {
		if b, ok := best[night[r]]; !ok || r.rescoredAt.After(b.rescoredAt) || (r.rescoredAt.Equal(b.rescoredAt) && r.run.Dir > b.run.Dir) {
			best[night[r]] = r
		}
	}
	var out []*runRead
	for _, r := range runs {
		b := best[night[r]]
		if b == r {
			out = append(out, r)
			continue
		}
		b.warnings = append(b.warnings, fmt.Sprintf("%s: the same night's cells as %s (run %s; bench rescore): counted once, by the newest judging (%s)", r.run.Dir, b.run.Dir, r.origin, b.run.Dir))
	}
	return out
}
