package view

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"bench/internal/format"
	"bench/internal/record/rundir"
	"bench/report"
	"bench/report/compare"
)

// MaxRuns bounds the runs one listing holds; the rest are counted.
const MaxRuns = 10_000

// The states a run is shown in.
const (
	StateFinished   = "finished"
	StateInProgress = "in progress"
	// StatePartial is a run without run.json that no process holds: it
	// was killed, or its writer is on another machine.
	StatePartial = "partial"
	StateCorrupt = "corrupt"
	// StateForeign is a named directory that is no run directory.
	StateForeign = "not a run"
)

// Run is one run directory as the list shows it.
type Run struct {
	// ID names the run in the server's URLs: a hash of its path, so a
	// path never travels in a URL and an unknown one is refused.
	ID string `json:"id"`
	// Dir is its path as the user named it (a named directory, then the
	// path under it).
	Dir   string `json:"dir"`
	RunID string `json:"run_id"`
	// State is one of the State constants, or run.json's end_reason when
	// the run did not finish (interrupted, aborted, io_error); Problem
	// says what is wrong with a partial, corrupt or foreign one.
	State   string `json:"state"`
	Problem string `json:"problem,omitempty"`
	Started string `json:"started,omitempty"`
	Ended   string `json:"ended,omitempty"`
	// Config is what the run swept ("2 providers, 1 model, 25 prompts ×
	// 3 repetitions"); Setup the bench and host that ran it.
	Config string `json:"config,omitempty"`
	Setup  string `json:"setup,omitempty"`
	// Gate is compare/compare.json's verdict (ok, regression) when the
	// run was compared with a baseline, Baseline the baseline run.json
	// names.
	Gate     string `json:"gate,omitempty"`
	Baseline string `json:"baseline,omitempty"`
	// The headline figures, from summary.json: cells counted (for a run
	// in progress, the lines of results.jsonl so far), groups, the best
	// group and its pass rate, the fastest median end-to-end latency.
	Cells     int    `json:"cells"`
	Groups    int    `json:"groups"`
	Best      string `json:"best,omitempty"`
	BestPass  string `json:"best_pass,omitempty"`
	FastestMS string `json:"fastest_e2e_p50,omitempty"`
	// Files are the pages the run has: report.html, answers.html,
	// compare/compare.html, traces/.
	Files []string `json:"files"`

	dir  string // absolute, symlinks resolved
	sort time.Time
}

// runDirFiles are the files that make a directory a run's (one is
// enough: a run being written may have only some).
var runDirFiles = []string{rundir.ResultsFile, rundir.RunFile, rundir.ConfigFile}

// isRunDir says whether dir holds one of a run's files.
func isRunDir(dir string) bool {
	for _, f := range runDirFiles {
		if st, err := os.Stat(filepath.Join(dir, f)); err == nil && st.Mode().IsRegular() {
			return true
		}
	}
	return false
}

// root is one directory the user named.
type root struct {
	given, abs string
}

// scan lists the runs under the roots: a named directory that is a run,
// else its subdirectories that are (two levels down: runs/nightly/DATE).
// A directory whose real path lies outside every root (a symlink out) is
// left out. A named directory that holds no run is listed as foreign.
func (s *Server) scan() ([]*Run, int) {
	var runs []*Run
	more := 0
	seen := map[string]bool{}
	add := func(r *Run) {
		if seen[r.dir] && r.State != StateForeign {
			return
		}
		seen[r.dir] = true
		if len(runs) >= MaxRuns {
			more++
			return
		}
		runs = append(runs, r)
	}
	for _, rt := range s.roots {
		if isRunDir(rt.abs) {
			add(s.describe(rt.abs, rt.given))
			continue
		}
		found := false
		var walk func(dir, shown string, depth int)
		walk = func(dir, shown string, depth int) {
			ents, err := os.ReadDir(dir)
			if err != nil {
				return
			}
			for _, e := range ents {
				name := e.Name()
				if strings.HasPrefix(name, ".") {
					continue
				}
				p := filepath.Join(dir, name)
				real, err := filepath.EvalSymlinks(p)
				if err != nil || !s.inRoots(real) {
					continue
				}
				if st, err := os.Stat(real); err != nil || !st.IsDir() {
					continue
				}
				if isRunDir(real) {
					found = true
					add(s.describe(real, filepath.Join(shown, name)))
				} else if depth < 2 {
					walk(real, filepath.Join(shown, name), depth+1)
				}
			}
		}
		walk(rt.abs, rt.given, 1)
		if !found {
			add(&Run{ID: idOf(rt.abs), Dir: rt.given, State: StateForeign, Files: []string{},
				Problem: fmt.Sprintf("no run directory here: none of %s, %s or %s in it or the folders below it", rundir.ResultsFile, rundir.RunFile, rundir.ConfigFile), dir: rt.abs})
		}
	}
	sort.SliceStable(runs, func(i, j int) bool {
		if !runs[i].sort.Equal(runs[j].sort) {
			return runs[i].sort.After(runs[j].sort)
		}
		return runs[i].Dir < runs[j].Dir
	})
	return runs, more
}

// inRoots says whether the real path p is a named directory or inside one.
func (s *Server) inRoots(p string) bool {
	for _, rt := range s.roots {
		if p == rt.abs || strings.HasPrefix(p, rt.abs+string(filepath.Separator)) {
			return true
		}
	}
	return false
}

func idOf(abs string) string {
	h := sha256.Sum256([]byte(abs))
	return hex.EncodeToString(h[:8])
}

// describeCache keeps each run's description while its files are
// unchanged (their sizes and times), so a listing of a hundred runs reads
// a hundred stats, not a hundred summaries.
type describeCache struct {
	mu sync.Mutex
	m  map[string]cachedRun
}

type cachedRun struct {
	stamp string
	run   *Run
}

// stamp is what changes when a run's files do.
func stamp(dir string) string {
	var b strings.Builder
	for _, f := range []string{rundir.ResultsFile, rundir.RunFile, rundir.ConfigFile, rundir.SummaryJSON, rundir.InventoryFile,
		filepath.Join(rundir.CompareDir, compare.JSONFile), rundir.LockFile} {
		if st, err := os.Stat(filepath.Join(dir, f)); err == nil {
			fmt.Fprintf(&b, "%d.%d;", st.Size(), st.ModTime().UnixNano())
		} else {
			b.WriteString("-;")
		}
	}
	return b.String()
}

// describe reads what the list shows of the run directory dir. A run
// being written is described afresh at every listing.
func (s *Server) describe(dir, shown string) *Run {
	st := stamp(dir)
	held, _ := rundir.Held(dir)
	s.cache.mu.Lock()
	c, ok := s.cache.m[dir]
	s.cache.mu.Unlock()
	if ok && c.stamp == st && !held {
		r := *c.run
		r.Dir = shown
		return &r
	}
	r := readRun(dir, shown, held)
	s.cache.mu.Lock()
	s.cache.m[dir] = cachedRun{stamp: st, run: r}
	s.cache.mu.Unlock()
	return r
}

// maxSideFile bounds the side files the list reads (run.json,
// config.json, inventory.json, summary.json, compare.json): a larger one
// is reported, not read.
const maxSideFile = 64 << 20

// readJSON reads a side file into v: false when it is absent.
func readJSON(path string, v any) (bool, error) {
	f, err := rundir.Open(path, maxSideFile)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	} else if err != nil {
		return false, err
	}
	defer f.Close()
	data, err := io.ReadAll(f)
	if err != nil {
		return false, err
	}
	if err := json.Unmarshal(data, v); err != nil {
		return false, fmt.Errorf("%s: %v", filepath.Base(path), err)
	}
	return true, nil
}

// readRun describes one run directory from its side files; every problem
// becomes the run's state or problem, never an error.
func readRun(dir, shown string, held bool) *Run {
	r := &Run{ID: idOf(dir), Dir: shown, dir: dir, Files: []string{}}
	if st, err := os.Stat(dir); err == nil {
		r.sort = st.ModTime()
	}
	var problems []string
	var info rundir.RunInfo
	hasInfo, err := readJSON(filepath.Join(dir, rundir.RunFile), &info)
	switch {
	case err != nil:
		r.State = StateCorrupt
		problems = append(problems, err.Error())
	case held:
		r.State = StateInProgress
	case !hasInfo:
		r.State = StatePartial
		problems = append(problems, "no "+rundir.RunFile+": the run was killed, or is written on another machine ('bench run --resume' finishes it)")
	case info.EndReason == "finished" || info.EndReason == "":
		r.State = StateFinished
	default:
		r.State = info.EndReason
	}
	if held && r.State == StateCorrupt {
		// run.json being rewritten under a live run: in progress.
		r.State, problems = StateInProgress, nil
	}
	if hasInfo {
		r.RunID, r.Baseline = info.RunID, info.Baseline
		if !info.StartedAt.IsZero() {
			r.Started, r.sort = info.StartedAt.UTC().Format("2006-01-02 15:04:05 UTC"), info.StartedAt
		}
		if !info.EndedAt.IsZero() && !held {
			r.Ended = info.EndedAt.UTC().Format("2006-01-02 15:04:05 UTC")
		}
		r.Setup = "bench " + info.BenchVersion
	}
	if _, err := os.Stat(filepath.Join(dir, rundir.ResultsFile)); err != nil && r.State != StateCorrupt {
		problems = append(problems, "no "+rundir.ResultsFile+" yet")
	}
	if err := describeConfig(dir, r); err != nil {
		problems = append(problems, err.Error())
		if r.State != StateInProgress {
			r.State = StateCorrupt
		}
	}
	describeHost(dir, r)
	var cmp struct {
		Verdict string `json:"verdict"`
	}
	if ok, err := readJSON(filepath.Join(dir, rundir.CompareDir, compare.JSONFile), &cmp); err != nil {
		problems = append(problems, "compare/"+err.Error())
	} else if ok {
		r.Gate = cmp.Verdict
	}
	if held || r.State == StatePartial {
		// No summary yet (or an old one): the lines written so far.
		r.Cells = countLines(filepath.Join(dir, rundir.ResultsFile))
	}
	if !held {
		switch ok, err := describeSummary(dir, r); {
		case err != nil:
			problems = append(problems, err.Error())
			if r.State == StateFinished {
				r.State = StateCorrupt
			}
		case !ok:
			r.Cells = countLines(filepath.Join(dir, rundir.ResultsFile))
			problems = append(problems, "no "+rundir.SummaryJSON+" ('bench report' rebuilds the reports)")
		}
	}
	for _, f := range []string{rundir.ReportHTML, rundir.AnswersHTML, rundir.SummaryMD, rundir.CompareDir + "/" + rundir.CompareHTML, rundir.TracesDir + "/"} {
		if st, err := os.Stat(filepath.Join(dir, strings.TrimSuffix(f, "/"))); err == nil && (st.IsDir() == strings.HasSuffix(f, "/")) {
			r.Files = append(r.Files, f)
		}
	}
	r.Problem = strings.Join(problems, "; ")
	return r
}

// describeConfig reads config.json: the providers, models, prompts and
// repetitions.
func describeConfig(dir string, r *Run) error {
	var cfg struct {
		Run struct {
			ID          string `json:"id"`
			Repetitions int    `json:"repetitions"`
		} `json:"run"`
		Providers []struct {
			Models []string `json:"models"`
		} `json:"providers"`
		PromptSet []json.RawMessage `json:"prompt_set"`
	}
	ok, err := readJSON(filepath.Join(dir, rundir.ConfigFile), &cfg)
	if err != nil || !ok {
		return err
	}
	if r.RunID == "" {
		r.RunID = cfg.Run.ID
	}
	models := map[string]bool{}
	for _, p := range cfg.Providers {
		for _, m := range p.Models {
			models[m] = true
		}
	}
	r.Config = fmt.Sprintf("%s, %s, %s × %s", format.Plural(len(cfg.Providers), "provider"), format.Plural(len(models), "model"),
		format.Plural(len(cfg.PromptSet), "prompt"), format.Plural(cfg.Run.Repetitions, "repetition"))
	return nil
}

// describeHost adds inventory.json's host to the setup.
func describeHost(dir string, r *Run) {
	var inv struct {
		Host struct {
			Hostname     string  `json:"hostname"`
			CPUModel     *string `json:"cpu_model"`
			CoresLogical *int    `json:"cores_logical"`
		} `json:"host"`
	}
	if ok, err := readJSON(filepath.Join(dir, rundir.InventoryFile), &inv); err != nil || !ok {
		return
	}
	h := inv.Host.Hostname
	if inv.Host.CoresLogical != nil {
		h += fmt.Sprintf(", %d cores", *inv.Host.CoresLogical)
	}
	if inv.Host.CPUModel != nil && *inv.Host.CPUModel != "" {
		h += " (" + *inv.Host.CPUModel + ")"
	}
	if r.Setup != "" {
		r.Setup += " on "
	}
	r.Setup += h
}

// describeSummary reads summary.json's headline figures: false when
// there is none.
func describeSummary(dir string, r *Run) (bool, error) {
	var s report.Summary
	if ok, err := readJSON(filepath.Join(dir, rundir.SummaryJSON), &s); err != nil || !ok {
		return false, err
	}
	r.Cells = s.NRecords - s.NDuplicateLines
	r.Groups = len(s.Groups)
	if r.RunID == "" {
		r.RunID = s.RunID
	}
	if ranked := report.Ranked(&s); len(ranked) > 0 {
		r.Best = ranked[0].Label()
		if p := ranked[0].ObjectivePassRate; p != nil {
			r.BestPass = fmt.Sprintf("%.1f%%", *p*100)
		}
	}
	var fastest *float64
	for _, g := range s.Groups {
		if v := g.LatencyMS.P50; v != nil && (fastest == nil || *v < *fastest) {
			fastest = v
		}
	}
	if fastest != nil {
		r.FastestMS = fmt.Sprintf("%.0f ms", *fastest)
	}
	return true, nil
}

// countLines counts the complete lines of a file (0 when it cannot be
// read).
func countLines(path string) int {
	f, err := rundir.Open(path, 0)
	if err != nil {
		return 0
	}
	defer f.Close()
	n := 0
	buf := make([]byte, 256<<10)
	for {
		k, err := f.Read(buf)
		n += bytes.Count(buf[:k], []byte{'\n'})
		if err != nil {
			return n
		}
	}
}
