// Package rescore is `bench rescore RUN --out NEW`: it judges the answers a
// run recorded again, with today's checks and tool detection, and writes
// NEW as a complete run directory: the same cells, timings, resources and
// snapshots as RUN (rundir.Layout's Keep entries are copied), results.jsonl
// with the new verdicts, config.json with the prompts that judged them,
// run.json saying rescored_from, the work traces and every report rebuilt.
// bench compare RUN NEW then shows exactly the verdicts the rule change
// moved, and judges them although the prompts' checks changed.
//
// Only the checks may change: a prompt whose text, system prompt, tools
// or max_turns differ from the run's is refused (its answers answered
// another question). Nothing is sent but the llm_judge checks' requests
// (none with NoJudge); command validators run as in a run.
//
// Layer: command (bench rescore's assembly, as session is bench run's: it
// imports the layers below and only cmd/bench imports it).
package rescore

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"bench/config"
	"bench/internal/record/results"
	"bench/internal/record/rundir"
	"bench/internal/record/secrets"
	"bench/prompts"
	"bench/providers"
	"bench/report"
	"bench/report/rebuild"
	"bench/run/grader"
	"bench/run/runner"
)

// Options are one bench rescore's command line.
type Options struct {
	// Run is the run directory to rescore; Out the new one (created; it
	// must not hold a run).
	Run, Out string
	// Prompts are prompt files whose prompts replace the run's of the
	// same id; Config a bench.yaml whose prompt set replaces them (when
	// Prompts is empty) and whose provider entries may judge (those the
	// run's config does not have) or restore a judge entry's values
	// config.json never holds.
	Prompts []string
	Config  string
	// NoJudge keeps each llm_judge's recorded verdict where the check is
	// the same, and sends nothing.
	NoJudge bool
	// Version is bench's version, for run.json.
	Version string
	// Log gets the notes (prompts kept, lines skipped); nil discards them.
	Log io.Writer
	// Now is the clock of rescored_from.at; nil is time.Now.
	Now func() time.Time
}

// Result is what a rescore wrote.
type Result struct {
	Dir     string
	Info    *rundir.RunInfo
	Summary *report.Summary
	// Records were rescored; Moved changed their objective_pass or
	// tool_use_success; Judged were asked a judge; CheckErrors have one.
	Records, Moved, Judged, CheckErrors int
}

// Error is bad input (exit 2): what is refused and why, naming the file.
type Error struct{ Msg string }

func (e *Error) Error() string { return e.Msg }

func refuse(format string, args ...any) error { return &Error{Msg: fmt.Sprintf(format, args...)} }

// IsRefusal says whether err is bad input rather than an I/O failure.
func IsRefusal(err error) bool {
	var e *Error
	var ye *config.Error
	return errors.As(err, &e) || errors.As(err, &ye) || errors.Is(err, rundir.ErrNotRegular) || errors.Is(err, rundir.ErrTooLarge)
}

// Run rescores o.Run into o.Out.
//
// The source is held under a shared lock (rundir.Share) from start to
// end: a rescore of a run that a bench run or its --resume is writing is
// refused, and a --resume started while a rescore reads the run refuses
// to start, so a rescore never copies half of a run. The new directory
// is written under a temporary name beside o.Out (.NAME.rescore-*.tmp,
// locked while it is written: rundir.CreateTemp, as bench merge writes)
// and renamed to o.Out once whole, reports included: a rescore that
// fails, is interrupted or killed (kill -9 included) leaves no o.Out
// behind, and the next rescore into o.Out removes what a killed one left.
func Run(ctx context.Context, o Options) (res *Result, err error) {
	if o.Log == nil {
		o.Log = io.Discard
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if err := rundir.Check(o.Run); err != nil {
		return nil, &Error{Msg: err.Error()}
	}
	src, err := filepath.Abs(o.Run)
	if err != nil {
		return nil, err
	}
	out, err := filepath.Abs(o.Out)
	if err != nil {
		return nil, err
	}
	if out == src || strings.HasPrefix(out, src+string(filepath.Separator)) {
		return nil, refuse("--out %s is the run being rescored, or inside it; give a new directory", o.Out)
	}
	shared, err := rundir.Share(o.Run)
	if err != nil {
		if errors.Is(err, rundir.ErrLocked) {
			return nil, refuse("%v: bench rescore reads a run only once nothing writes it (rescore it after its run or --resume has ended)", err)
		}
		return nil, &Error{Msg: err.Error()}
	}
	defer shared.Close()
	if err := checkOut(o.Out, out); err != nil {
		return nil, err
	}
	s, err := load(o)
	if err != nil {
		return nil, err
	}
	dir, removed, err := rundir.CreateTemp(out, "rescore")
	for _, p := range removed {
		fmt.Fprintf(o.Log, "bench: removed %s, left by a bench rescore into %s that did not finish\n", p, o.Out)
	}
	if err != nil {
		return nil, err
	}
	defer func() {
		dir.Close()
		if err != nil {
			os.RemoveAll(dir.Path)
		}
	}()
	s.dir = dir
	if err := s.records(ctx); err != nil {
		return nil, err
	}
	if err := s.copyKept(); err != nil {
		return nil, err
	}
	if err := s.writeConfig(); err != nil {
		return nil, err
	}
	info, err := s.writeRunInfo()
	if err != nil {
		return nil, err
	}
	sum, err := rebuild.All(dir.Path, rebuild.Options{Warn: o.Log})
	if err != nil {
		return nil, err
	}
	if err := dir.Place(out); errors.Is(err, rundir.ErrNotEmpty) {
		return nil, refuse("--out %s was filled while bench rescore wrote the new run; give bench rescore a new directory with --out", o.Out)
	} else if err != nil {
		return nil, err
	}
	return &Result{Dir: dir.Path, Info: info, Summary: sum, Records: s.n, Moved: s.moved, Judged: s.judged, CheckErrors: s.checkErrs}, nil
}

// checkOut refuses an --out that holds anything: the new run is renamed
// into place whole (see Run), which only a missing or empty directory
// takes. shown is --out as given, for the message.
func checkOut(shown, out string) error {
	st, err := os.Lstat(out)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if !st.IsDir() {
		return refuse("--out %s is a file, not a directory; give a new directory", shown)
	}
	ents, err := os.ReadDir(out)
	if err != nil {
		return err
	}
	if len(ents) == 0 {
		return nil
	}
	what := "is not empty"
	if _, err := os.Lstat(rundir.Path(out, rundir.ResultsFile)); err == nil {
		what = "already holds a run"
	}
	return refuse("--out %s %s; give bench rescore a new directory with --out, or remove %s first", shown, what, shown)
}

// state is one rescore in progress.
type state struct {
	o   Options
	src string
	// cfg is the run's config (config.json) with today's prompts and
	// judges; set is its prompt set by id.
	cfg  *config.Config
	set  map[string]*prompts.Prompt
	g    *grader.Grader
	dir  *rundir.Dir
	info *rundir.RunInfo // the source's run.json, nil when it has none
	// secrets are the run's, as bench run's are (providers.RunSecrets of
	// the config with today's prompts and judges) and what the source's
	// run.json names (secrets.SpecOfRun); scope is them compiled: every
	// record is scrubbed with its entry's as it is read, before its
	// checks, and after (runner.Rescore, runner.Bound).
	secrets secrets.RunSpec
	scope   secrets.Scope

	n, moved, judged, checkErrs int
	statuses                    map[string]int
	first, last                 int64 // started_at_ms and ended_at_ms bounds
}

// load reads the run's config and puts today's prompts and judges in it.
func load(o Options) (*state, error) {
	s := &state{o: o, src: o.Run, statuses: map[string]int{}}
	cfg, err := config.LoadResolved(rundir.Path(o.Run, rundir.ConfigFile), providers.Kinds)
	if err != nil {
		return nil, err
	}
	var cur *config.Config
	if o.Config != "" {
		// Loaded once, without prompts.only: today's checks for every
		// prompt the run recorded.
		if cur, err = config.LoadWith(o.Config, providers.Kinds, &config.Overrides{AllPrompts: true}); err != nil {
			return nil, err
		}
	}
	today, sources, err := todaysPrompts(o, cur)
	if err != nil {
		return nil, err
	}
	if today != nil {
		if cfg.PromptSet, err = merged(cfg.PromptSet, today, o.Log); err != nil {
			return nil, err
		}
	}
	s.o.Prompts = sources
	if err := judges(cfg, cur); err != nil {
		return nil, err
	}
	s.cfg = cfg
	s.set = map[string]*prompts.Prompt{}
	for i := range cfg.PromptSet {
		s.set[cfg.PromptSet[i].ID] = &cfg.PromptSet[i]
	}
	if info, err := rundir.ReadRunInfo(o.Run); err == nil {
		s.info = info
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	s.secrets = providers.RunSecrets(cfg)
	s.secrets.Add(secrets.SpecOfRun(o.Run))
	s.scope = s.secrets.Compile(nil)
	provs := map[string]providers.Provider{}
	if !o.NoJudge {
		for _, name := range cfg.JudgeNames() {
			for i := range cfg.Providers {
				p := &cfg.Providers[i]
				if p.Name != name {
					continue
				}
				if len(p.Unsaved) > 0 {
					return nil, refuse("providers: %s judges, and the run's config.json does not hold all its values; give the config that started the run with --config", name)
				}
				pv, err := providers.NewWith(p, s.scope.For(p.Name))
				if err != nil {
					return nil, refuse("providers: %s: %v", name, err)
				}
				provs[name] = pv
			}
		}
	}
	s.g = grader.New(grader.Options{Judges: provs, Concurrency: cfg.Run.JudgeConcurrency,
		Timeout: time.Duration(cfg.Run.Timeout), NoJudge: o.NoJudge, Secrets: s.scope})
	return s, nil
}

// todaysPrompts are the prompts to judge with: the --prompts files, else
// --config's prompt set, else nil (the run's own); and the files named.
func todaysPrompts(o Options, cur *config.Config) ([]prompts.Prompt, []string, error) {
	if len(o.Prompts) > 0 {
		var set []prompts.Prompt
		var errs []error
		seen := map[string]string{}
		for _, f := range o.Prompts {
			var ps []prompts.Prompt
			var err error
			if path, tmpl, ok := strings.Cut(f, "="); ok && prompts.IsData(path) {
				ps, err = prompts.LoadData(path, tmpl)
			} else {
				ps, err = prompts.LoadFile(f)
			}
			if err != nil {
				errs = append(errs, err)
				continue
			}
			for _, p := range ps {
				if where, dup := seen[p.ID]; dup {
					errs = append(errs, &config.Error{File: p.Source, Line: p.Line, Field: "id", Msg: fmt.Sprintf("duplicate prompt id %q (first defined at %s)", p.ID, where)})
					continue
				}
				seen[p.ID] = fmt.Sprintf("%s:%d", p.Source, p.Line)
				set = append(set, p)
			}
		}
		if len(errs) > 0 {
			return nil, nil, errors.Join(errs...)
		}
		return set, o.Prompts, nil
	}
	if cur != nil {
		return cur.PromptSet, []string{o.Config}, nil
	}
	return nil, []string{}, nil
}

// merged is the run's prompt set with each prompt today's of the same id
// replaces. Only the checks may differ: a prompt asked differently
// (text, system prompt, tools, max_turns) is refused, naming where
// today's is. A run's prompt that today's do not have keeps its checks.
func merged(run, today []prompts.Prompt, log io.Writer) ([]prompts.Prompt, error) {
	byID := map[string]*prompts.Prompt{}
	for i := range today {
		byID[today[i].ID] = &today[i]
	}
	out := make([]prompts.Prompt, len(run))
	var errs []error
	var kept []string
	for i, p := range run {
		t, ok := byID[p.ID]
		if !ok {
			out[i] = p
			kept = append(kept, p.ID)
			continue
		}
		if what := askedDifferently(&p, t); what != "" {
			errs = append(errs, &config.Error{File: t.Source, Line: t.Line, Field: "prompt " + t.ID,
				Msg: fmt.Sprintf("its %s differs from the run's: the recorded answers answered the run's prompt, so only the checks may change (run it again to judge the new prompt)", what)})
			continue
		}
		out[i] = *t
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	if len(kept) > 0 {
		fmt.Fprintf(log, "bench: %d of the run's prompts are not among today's and keep their checks: %s\n", len(kept), shortList(kept))
	}
	if extra := len(today) - (len(run) - len(kept)); extra > 0 {
		fmt.Fprintf(log, "bench: %d of today's prompts are not in the run (nothing recorded to judge)\n", extra)
	}
	return out, nil
}

// askedDifferently names what of the prompt as sent differs, or "".
func askedDifferently(a, b *prompts.Prompt) string {
	switch {
	case a.Prompt != b.Prompt:
		return "text"
	case a.System != b.System:
		return "system prompt"
	case a.MaxTurns != b.MaxTurns:
		return "max_turns"
	}
	ta, _ := json.Marshal(a.Tools)
	tb, _ := json.Marshal(b.Tools)
	if !sameJSON(ta, tb) {
		return "tools"
	}
	return ""
}

// sameJSON compares two JSON texts as values; null and [] are both none.
func sameJSON(a, b []byte) bool {
	var va, vb any
	json.Unmarshal(a, &va)
	json.Unmarshal(b, &vb)
	if l, ok := va.([]any); ok && len(l) == 0 {
		va = nil
	}
	if l, ok := vb.([]any); ok && len(l) == 0 {
		vb = nil
	}
	x, _ := json.Marshal(va)
	y, _ := json.Marshal(vb)
	return bytes.Equal(x, y)
}

func shortList(ids []string) string {
	if len(ids) > 10 {
		return strings.Join(ids[:10], ", ") + fmt.Sprintf(" and %d more", len(ids)-10)
	}
	return strings.Join(ids, ", ")
}

// judges makes sure every llm_judge names an entry. With cur (--config),
// a judge entry of cur replaces the run's entry of that name when the
// run's only judged (no models: no cell was its), or is added as a judge
// only when the run has none, so a judge that moved can judge again; an
// entry that also ran cells stays the run's (its values config.json never
// holds restored from cur).
func judges(cfg, cur *config.Config) error {
	if cur != nil {
		for _, name := range cfg.JudgeNames() {
			i := slices.IndexFunc(cfg.Providers, func(p config.Provider) bool { return p.Name == name })
			j := slices.IndexFunc(cur.Providers, func(p config.Provider) bool { return p.Name == name })
			switch {
			case j < 0:
			case i < 0:
				p := cur.Providers[j]
				p.Models = nil
				cfg.Providers = append(cfg.Providers, p)
			case len(cfg.Providers[i].Models) == 0:
				p := cur.Providers[j]
				p.Models = nil
				cfg.Providers[i] = p
			}
		}
		// What cannot be restored is refused later, and only if it judges.
		_ = cfg.Restore(cur)
	}
	if errs := cfg.CheckJudges(); len(errs) > 0 {
		return errors.Join(errs...)
	}
	return nil
}

// window is how many records are graded at once: enough to keep the
// judge's slots busy, few enough to hold in memory.
func (s *state) window() int { return max(64, 8*s.cfg.Run.JudgeConcurrency) }

// records rescores results.jsonl into the new directory, in its order,
// and rebuilds the work traces from the new records.
func (s *state) records(ctx context.Context) error {
	in, err := rundir.Open(rundir.Path(s.src, rundir.ResultsFile), 0)
	if err != nil {
		return &Error{Msg: err.Error()}
	}
	defer in.Close()
	in.WithContext(ctx)
	w, err := results.Create(s.dir.File(rundir.ResultsFile))
	if err != nil {
		return err
	}
	traces := runner.NewWorkTraces(s.dir.File(rundir.ForsyDir), s.cfg.PromptSet, s.o.Version)
	rd := results.NewReader(in)
	rd.Scope = s.scope
	var batch []*results.Record
	flush := func() error {
		s.grade(ctx, batch)
		if err := ctx.Err(); err != nil {
			// Interrupted: a directory of half-judged cells is no run.
			return fmt.Errorf("interrupted: %w", err)
		}
		for _, r := range batch {
			if err := w.Write(r); err != nil {
				return err
			}
			if err := traces.AddRecord(r); err != nil {
				fmt.Fprintf(s.o.Log, "bench: warning: %v\n", err)
			}
		}
		batch = batch[:0]
		return nil
	}
	for {
		rec := &results.Record{}
		_, err := rd.Next(rec)
		if err == io.EOF {
			break
		}
		if err != nil {
			w.Close()
			if ctx.Err() != nil {
				return fmt.Errorf("interrupted: %w", ctx.Err())
			}
			return err
		}
		batch = append(batch, rec)
		if len(batch) == s.window() {
			if err := flush(); err != nil {
				w.Close()
				return err
			}
		}
	}
	if err := flush(); err != nil {
		w.Close()
		return err
	}
	for _, p := range rd.Problems() {
		fmt.Fprintf(s.o.Log, "bench: warning: %s: %s (not rescored)\n", rundir.Path(s.src, rundir.ResultsFile), p)
	}
	if n := rd.ProblemCount(); n > len(rd.Problems()) {
		fmt.Fprintf(s.o.Log, "bench: warning: and %d more unusable lines\n", n-len(rd.Problems()))
	}
	if s.n == 0 {
		w.Close()
		return refuse("%s: no usable record to rescore", rundir.Path(s.src, rundir.ResultsFile))
	}
	return w.Close()
}

// grade rescores a batch of records: the checks that run in bench at
// once, the external ones concurrently (the grader bounds them).
func (s *state) grade(ctx context.Context, batch []*results.Record) {
	var wg sync.WaitGroup
	for _, rec := range batch {
		before := verdicts(rec)
		p := s.set[rec.PromptID]
		rec.RunID = s.dir.ID
		s.n++
		s.statuses[rec.AvailabilityStatus]++
		if s.first == 0 || rec.StartedAtMS < s.first {
			s.first = rec.StartedAtMS
		}
		s.last = max(s.last, rec.EndedAtMS)
		if p == nil {
			// A cell of a prompt the run's config does not list (a config
			// edited by hand): nothing to judge it with; kept as it was.
			fmt.Fprintf(s.o.Log, "bench: warning: %s/%s %s: prompt %s is not in the run's config.json; kept as recorded\n", rec.Provider, rec.Model, rec.PromptID, rec.PromptID)
			continue
		}
		sec := s.scope.For(rec.Provider)
		runner.Rescore(rec, p, s.cfg, sec)
		if grader.Needs(p, rec) {
			s.judged++
			wg.Add(1)
			go func() {
				defer wg.Done()
				s.g.Grade(ctx, p, rec, "")
				runner.Bound(rec, s.cfg, sec)
			}()
		} else {
			rec.Judge = nil
		}
		defer func() {
			if verdicts(rec) != before {
				s.moved++
			}
			if len(rec.CheckErrors) > 0 {
				s.checkErrs++
			}
		}()
	}
	wg.Wait()
}

// verdicts is what compare judges a cell by, as one comparable value.
func verdicts(r *results.Record) string {
	show := func(b *bool) string {
		if b == nil {
			return "null"
		}
		return fmt.Sprint(*b)
	}
	return show(r.ObjectivePass) + "/" + show(r.ToolUseSuccess)
}

// copyKept copies the entries rundir.Layout says a rescore keeps.
func (s *state) copyKept() error {
	ents, err := os.ReadDir(s.src)
	if err != nil {
		return err
	}
	for _, e := range ents {
		name := e.Name()
		le, ok := rundir.Lookup(name)
		if !ok || le.Rescore != rundir.Keep {
			continue
		}
		if err := copyTree(filepath.Join(s.dir.Path, name), filepath.Join(s.src, name)); err != nil {
			return err
		}
	}
	return nil
}

// copyTree copies a file, or a folder and everything in it, each file
// opened as every run directory's file is (rundir.Open: a symlink, a
// FIFO or a device is refused, naming it; at most MaxFileBytes) and
// streamed.
func copyTree(dst, src string) error {
	return filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		to := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(to, 0o755)
		}
		in, err := rundir.Open(path, rundir.MaxFileBytes)
		if err != nil {
			return &Error{Msg: err.Error()}
		}
		defer in.Close()
		out, err := rundir.CreateAtomic(to)
		if err != nil {
			return err
		}
		if _, err := io.Copy(out, in); err != nil {
			out.Abort()
			return err
		}
		return out.Commit()
	})
}

// writeConfig writes config.json: the run's, with the new run's id and the
// prompts that judged it.
func (s *state) writeConfig() error {
	c := *s.cfg
	c.Run.ID = s.dir.ID
	return rundir.WriteJSON(s.dir.File(rundir.ConfigFile), &c)
}

// writeRunInfo writes run.json: the source's (when and why its cells
// ran), under the new id, with rescored_from.
func (s *state) writeRunInfo() (*rundir.RunInfo, error) {
	info := &rundir.RunInfo{EndReason: "unknown", CellsPlanned: s.n,
		StartedAt: time.UnixMilli(s.first).UTC(), EndedAt: time.UnixMilli(s.last).UTC()}
	origin := filepath.Base(filepath.Clean(s.src))
	if s.info != nil {
		c := *s.info
		info = &c
		origin = s.info.RunID
		if s.info.RescoredFrom != nil && s.info.RescoredFrom.OriginRunID != "" {
			origin = s.info.RescoredFrom.OriginRunID
		}
	}
	srcID := origin
	if s.info != nil {
		srcID = s.info.RunID
	}
	info.RunID = s.dir.ID
	info.SecretEnv, info.ProviderSecretEnv = s.secrets.Names()
	info.CellsRecorded = s.n
	info.ByStatus = s.statuses
	prompts := slices.Clone(s.o.Prompts)
	sort.Strings(prompts)
	info.RescoredFrom = &rundir.RescoreSource{RunID: srcID, Dir: s.o.Run, OriginRunID: origin, At: s.o.Now().UTC(),
		BenchVersion: s.o.Version, Prompts: prompts, NoJudge: s.o.NoJudge, Records: s.n, Moved: s.moved}
	if prompts == nil {
		info.RescoredFrom.Prompts = []string{}
	}
	return info, s.dir.WriteRunInfo(info)
}
