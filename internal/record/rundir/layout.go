// Package rundir is the run directory's business: its layout (every file
// name, declared once in Layout), creating, refusing, resuming and locking
// it, run.json, the structured resource files, atomic writes of every
// JSON file, and the one bounded, non-following open every reader of a
// run directory reads its files with (Open, ReadFile).
//
// Every package that reads or writes a run directory takes the names from
// here, so report, compare and merge read run directories without
// importing the code that wrote them, and bench merge asks Layout what to
// copy and what to rebuild instead of keeping a list of its own.
//
// Layer: the record (the run directory: below the run's outputs and the verdicts, which
// read and write run directories through it); it imports no bench
// package.
package rundir

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path"
	"path/filepath"
	"strings"
)

// File and folder names of the layout.
const (
	ConfigFile    = "config.json"
	InventoryFile = "inventory.json"
	ResultsFile   = "results.jsonl"
	SummaryJSON   = "summary.json"
	SummaryMD     = "summary.md"
	TiersFile     = "tiers.json"
	RunFile       = "run.json"
	LockFile      = ".lock"
	ReportHTML    = "report.html"
	AnswersHTML   = "answers.html"
	JUnitFile     = "junit.xml"
	// SnapshotsDir holds one agent snapshot a cell, TracesDir the run's
	// execution traces (one NDJSON file each bench run invocation),
	// ForsyDir one Forsy work trace an agentic cell. The files inside are
	// named by their formats (agentsnap.FileName, traces.FileName,
	// forsy.FileName) from the cell's key or the trace's id, as their
	// specs say; Layout gives the pattern they match.
	SnapshotsDir = "snapshots"
	TracesDir    = "traces"
	ForsyDir     = "forsy"
	// SnapshotFiles, TraceFiles and WorkTraceFiles are the patterns
	// (path.Match) of the files in those folders.
	SnapshotFiles  = "*.json"
	TraceFiles     = "*.jsonl"
	WorkTraceFiles = "*.json"
	// CompareDir is bench compare's default --out inside the new run's
	// directory (and bench run --baseline's).
	CompareDir = "compare"
	// CompareHTML is bench compare's page in its --out directory;
	// report.html links to CompareDir/CompareHTML when the run was gated.
	CompareHTML = "compare.html"
	// ShardsDir is where bench merge keeps each shard's own run.json,
	// config.json and inventory.json, and any file the shards wrote
	// differently under one name.
	ShardsDir = "shards"
)

// The per-suite resource files: resources_<suite>.json and its companions
// (see SuiteFiles).
const (
	resourcesPrefix = "resources_"
	resourcesJSON   = ".json"
	beforeSuffix    = "_before.txt"
	afterSuffix     = "_after.txt"
	// SamplesSuffix names a suite's sample series: beside its
	// resources_<provider>_<model>[_<thinking>]_<hash>.json, the file with this
	// suffix holds one Sample per line, in time order, appended as the
	// sampler reads them (so a killed run keeps what it sampled, like
	// results.jsonl): the resource sampler writes it, report.html's
	// timeline reads it.
	SamplesSuffix = "_samples.jsonl"
	// ServerSuffix names a suite's server readings, beside its samples:
	// one ServerSample a line, in time order, appended as the run's
	// watcher of the suite's model server reads them (its Prometheus
	// /metrics mapped to common names, Ollama's /api/ps): the resource
	// recorder writes it, the reports place each reading in its stage by
	// time.
	ServerSuffix = "_server.jsonl"
)

// MergeRule is what bench merge does with a layout entry the shards have.
type MergeRule int

const (
	// Gather: each shard's files are taken (per-suite and per-cell files
	// belong to one shard); a file several shards have alike is copied
	// once, a JSONL file they have differently is concatenated in shard
	// order, any other that differs is kept per shard under ShardsDir
	// with a warning.
	Gather MergeRule = iota
	// Rebuild: written again from the merged results (the reports).
	Rebuild
	// Own: bench merge writes it itself (results.jsonl with the merged
	// run's id, run.json describing the merge, config.json and
	// inventory.json from the first shard, ShardsDir).
	Own
	// Drop: not carried over: a shard's lock, or its comparison with a
	// baseline (it judged the shard, not the merged run).
	Drop
)

// RescoreRule is what bench rescore does with a layout entry of the run
// it rescores.
type RescoreRule int

const (
	// Keep: copied as it is: the run's own account of what ran (timings,
	// resources, snapshots of the answers), which rescoring does not
	// change.
	Keep RescoreRule = iota
	// Rescored: written again from the rescored records (the reports, the
	// work traces, whose verdicts moved).
	Rescored
	// Rewrite: bench rescore writes it itself (results.jsonl rescored,
	// config.json with today's prompts, run.json with rescored_from).
	Rewrite
	// Leave: not carried over (a lock; a comparison; the execution
	// traces, whose validate spans hold the old verdicts: the source run
	// keeps them).
	Leave
)

// Entry is one file, family of files or folder of a run directory.
type Entry struct {
	// Name is the file or folder name; a family's is a pattern
	// (path.Match) of its names.
	Name string
	// Dir says the entry is a folder; Files is the pattern of the files
	// in it ("" for any).
	Dir   bool
	Files string
	// Writer names what writes it: an output of bench run (its package
	// and type) or a command.
	Writer string
	// Report says bench report rebuilds it from results.jsonl (and bench
	// merge from the merged results: Merge is then Rebuild).
	Report bool
	// Merge is what bench merge does with the shards' copies.
	Merge MergeRule
	// Rescore is what bench rescore does with the source run's.
	Rescore RescoreRule
	// About says what it holds.
	About string
}

// Layout is every file and folder of a run directory, runs/<run_id>/.
var Layout = []Entry{
	{Name: ConfigFile, Writer: "bench run (session)", Merge: Own, Rescore: Rewrite, About: "the resolved config (no secret values)"},
	{Name: InventoryFile, Writer: "bench run (inventory)", Merge: Own, Rescore: Keep, About: "host, build, and what each provider said of itself"},
	{Name: ResultsFile, Writer: "results.Writer, the run's Critical output", Merge: Own, Rescore: Rewrite, About: "one line per finished cell: the source of truth"},
	{Name: RunFile, Writer: "bench run (session)", Merge: Own, Rescore: Rewrite, About: "when and why the run ended, and its counts"},
	{Name: SummaryJSON, Writer: "report/rebuild.Output", Report: true, Merge: Rebuild, Rescore: Rescored, About: "per (provider, model, thinking level) figures"},
	{Name: SummaryMD, Writer: "report/rebuild.Output", Report: true, Merge: Rebuild, Rescore: Rescored, About: "the summary, for people"},
	{Name: TiersFile, Writer: "report/rebuild.Output", Report: true, Merge: Rebuild, Rescore: Rescored, About: "tool-use tiers and the routing list"},
	{Name: ReportHTML, Writer: "report/rebuild.Output", Report: true, Merge: Rebuild, Rescore: Rescored, About: "the self-contained report page"},
	{Name: AnswersHTML, Writer: "report/rebuild.Output", Report: true, Merge: Rebuild, Rescore: Rescored, About: "every answer, prompt by prompt, the groups side by side"},
	{Name: JUnitFile, Writer: "report/rebuild.Output", Report: true, Merge: Rebuild, Rescore: Rescored, About: "each cell as a JUnit testcase"},
	{Name: resourcesPrefix + "*" + resourcesJSON, Writer: "resources.Recorder", Merge: Gather, Rescore: Keep, About: "each suite's resource snapshots, peaks and warm-up load time"},
	{Name: resourcesPrefix + "*" + beforeSuffix, Writer: "resources.Recorder", Merge: Gather, Rescore: Keep, About: "the suite's before snapshot, for people"},
	{Name: resourcesPrefix + "*" + afterSuffix, Writer: "resources.Recorder", Merge: Gather, Rescore: Keep, About: "the suite's after snapshot and peaks, for people"},
	{Name: resourcesPrefix + "*" + SamplesSuffix, Writer: "resources.Recorder", Merge: Gather, Rescore: Keep, About: "the suite's sampler readings, one a line"},
	{Name: resourcesPrefix + "*" + ServerSuffix, Writer: "resources.Recorder", Merge: Gather, Rescore: Keep, About: "what the suite's model server said of itself (its /metrics, /api/ps), one reading a line"},
	{Name: SnapshotsDir, Dir: true, Files: SnapshotFiles, Writer: "agentsnap.Writer", Merge: Gather, Rescore: Keep, About: "one agent snapshot a cell"},
	{Name: TracesDir, Dir: true, Files: TraceFiles, Writer: "traces.Tracer", Merge: Gather, Rescore: Leave, About: "execution traces, one NDJSON file an invocation"},
	{Name: ForsyDir, Dir: true, Files: WorkTraceFiles, Writer: "runner.WorkTraces", Merge: Gather, Rescore: Rescored, About: "one Forsy work trace an agentic cell"},
	{Name: CompareDir, Dir: true, Writer: "bench compare, bench run --baseline", Merge: Drop, Rescore: Leave, About: "the comparison with a baseline"},
	{Name: ShardsDir, Dir: true, Writer: "bench merge", Merge: Own, Rescore: Keep, About: "each shard's own run.json, config.json and inventory.json"},
	{Name: LockFile, Writer: "rundir (the lock)", Merge: Drop, Rescore: Leave, About: "held by the bench process writing the directory"},
}

// Lookup is the layout entry of a top-level name of a run directory.
func Lookup(name string) (Entry, bool) {
	for _, e := range Layout {
		if ok, _ := path.Match(e.Name, name); ok {
			return e, true
		}
	}
	return Entry{}, false
}

// Path joins a run directory and one of its file names.
func Path(dir, name string) string { return filepath.Join(dir, name) }

// SuiteFiles are the names of one suite's resource files.
type SuiteFiles struct {
	// JSON is the structured record (SuiteRecord); Before and After the
	// snapshots for people; Samples the sampler's readings; Server the
	// model server's own readings.
	JSON, Before, After, Samples, Server string
}

// ResourceFiles names a suite's resource files (see FileBase).
func ResourceFiles(provider, model string, thinking *string) SuiteFiles {
	b := FileBase(provider, model, thinking)
	return SuiteFiles{JSON: b + resourcesJSON, Before: b + beforeSuffix, After: b + afterSuffix, Samples: b + SamplesSuffix, Server: b + ServerSuffix}
}

// FileBase is the file-name-safe stem of a suite's resource files:
// resources_<provider>_<model>[_<thinking>]_<hash>, every character
// outside [A-Za-z0-9._-] replaced by '_' (llama3.2:3b -> llama3.2_3b),
// each part cut to a length that keeps the longest file made from the stem
// (and its atomic write's temporary name) under the 255 bytes a file
// name may have, and <hash> 8 hex digits of the SHA-256 of the exact
// provider, model and thinking level: the readable part is lossy (plain:1,
// plain/1 and plain_1 read alike, as do provider a_b with model c and
// provider a with model b_c), the hash keeps every suite's files apart.
func FileBase(provider, model string, thinking *string) string {
	b := resourcesPrefix + safe(provider, maxProviderPart) + "_" + safe(model, maxModelPart)
	if thinking != nil {
		b += "_" + safe(*thinking, maxThinkingPart)
	}
	return b + "_" + suiteHash(provider, model, thinking)
}

// The parts' caps: the stem is at most 10+48+1+112+1+16+1+8 = 197 bytes,
// and "." + stem + "_before.txt" + ".RANDOM.tmp" stays under 255.
const (
	maxProviderPart = 48
	maxModelPart    = 112
	maxThinkingPart = 16
)

// suiteHash is 8 hex digits of the SHA-256 of an injective encoding of a
// suite: each string as its length then its bytes (a missing thinking
// level is told apart from an empty one).
func suiteHash(provider, model string, thinking *string) string {
	h := sha256.New()
	parts := []string{provider, model}
	if thinking != nil {
		parts = append(parts, *thinking)
	}
	for _, p := range parts {
		fmt.Fprintf(h, "%d:%s", len(p), p)
	}
	return hex.EncodeToString(h.Sum(nil)[:4])
}

// legacyFileBase is FileBase before the hash and the caps: ReadSuite still
// finds the resource files of runs written then.
func legacyFileBase(provider, model string, thinking *string) string {
	b := resourcesPrefix + safe(provider, -1) + "_" + safe(model, -1)
	if thinking != nil {
		b += "_" + safe(*thinking, -1)
	}
	return b
}

// safe maps s to [A-Za-z0-9._-], one '_' per other character, cut to max
// bytes (no cut when max < 0).
func safe(s string, max int) string {
	if s == "" {
		return "_"
	}
	out := strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '-', r == '_':
			return r
		}
		return '_'
	}, s)
	if max >= 0 && len(out) > max {
		out = out[:max]
	}
	return out
}

// ResourceRecords lists the structured resource files (resources_*.json)
// of a run directory, sorted; each one's samples file is
// SamplesOf(path).
func ResourceRecords(dir string) ([]string, error) {
	return filepath.Glob(filepath.Join(dir, resourcesPrefix+"*"+resourcesJSON))
}

// ServerOf is the server readings file beside a suite's structured
// resource file.
func ServerOf(jsonPath string) string {
	return strings.TrimSuffix(jsonPath, resourcesJSON) + ServerSuffix
}

// SamplesOf is the samples file beside a suite's structured resource file.
func SamplesOf(jsonPath string) string {
	return strings.TrimSuffix(jsonPath, resourcesJSON) + SamplesSuffix
}
