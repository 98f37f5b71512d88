// Package compare is `bench compare BASE_RUN_DIR NEW_RUN_DIR`, the nightly
// regression gate: it judges a new run against a base run from the two run
// directories alone (results.jsonl, config.json, run.json, inventory.json;
// it only reads them) and says, for a CI job's exit code, whether anything
// of the --fail-on categories regressed.
//
// It imports results, rundir, report, snapshot and stats, never the code
// that runs cells (providers, runner, resources).
//
// # Cells
//
// Cells are matched on the full key (provider, provider_type, model,
// thinking_level, prompt_id, repetition). A prompt whose text, system
// prompt, tools, max_turns or validators differ between the runs'
// config.json prompt sets is "changed" and its cells are not judged; a
// cell in one run only is "missing" (base only) or "new". A cell passes
// when it reached the model (availability ok or error, not cancelled),
// succeeded, its validator did not fail (objective_pass not false) and it
// used the expected tools (tool_use_success not false).
//
// Each matched pair gets its agent snapshot built from its record exactly
// as bench run writes it (snapshot.FromRecord), the two are diffed with
// agentsnap's rules (snapshot.Diff), and bench's rules decide, the first
// that applies winning:
//
//	rule                                                         verdict      category
//	the new cell did not reach the model, the base one did       regression   availability
//	  (skipped_unavailable, auth_error, rate_limited, cancelled)
//	the base cell did not reach the model                         unavailable  (not judged)
//	pass -> fail                                                  regression   quality
//	an expected tool the base cell called is not called           regression   quality
//	tool calls changed or reordered (names) on a tool prompt      regression   quality
//	a new error (agentsnap REGRESSION)                            regression   quality
//	fail -> pass                                                  improvement  -
//	output, tool arguments, tool results or a failure's text      drift        drift
//	  changed; tool calls changed on a prompt that offers and
//	  expects no tools (commands toolparse found in prose)
//	nothing changed                                               match        -
//
// A tool prompt offers tools (config.json) or expects tool calls
// (expected_tools). agentsnap's statuses map to these verdicts so:
// PASSED is match (drift when a failing cell's error text changed, which
// agentsnap ignores); OUTPUT_DRIFT is drift unless pass or fail changed;
// TOOLS_REORDERED and TOOLS_CHANGED on tool names are regressions on a
// tool prompt and drift elsewhere; TOOLS_CHANGED on arguments alone is
// drift while the cell still passes; REGRESSION (a new error) is a
// regression. Each cell lists its changes as {path, from, to}: bench's own
// (pass, why, expected_tools, availability_status, failure_type, and the
// prompt.* parts of a changed prompt) then agentsnap's (output, error,
// tools[].name, tools[].order, tools[i].args, tools[i].result_hash).
//
// The snapshots are built from results.jsonl, the run's source of truth,
// rather than read from snapshots/: the verdicts are the same whether or
// not a run wrote snapshot files, and reading 100,000 of them costs more
// than the whole compare. A first pass decodes only what a verdict needs
// and a 128-bit hash of each snapshot's content; only pairs whose hashes
// differ are decoded in full and diffed, in a second pass over both files.
//
// # Groups
//
// Per (provider, model, thinking level), over the cells both runs judged,
// matched cell by cell: the pass rate and the tool-use success rate with
// the exact McNemar test on the cells whose outcome changed
// (stats.McNemarExact), each category's pass rate alike, every rate test
// of the compare one Holm family; a significant drop is a quality
// regression. Each run's tool-use tier as tiers.json computes it
// (report.TierRanking's rule), where leaving tier_1 is a regression
// (routing must change: quality, or availability when no tool cell of the
// new run reached the model); and the cells that never reached the model,
// counted apart by status and never judged for quality.
//
// # Latency
//
// TTFT, e2e and tokens/s of the successful cells, without the cells
// flagged cold_start (their model was loading), of prompts unchanged and
// in both runs. Per prompt, when every sample has its match in the other
// run (the same provider kind, stage and repetition): Wilcoxon's
// signed-rank test on the pairs' log ratios and the Hodges-Lehmann shift
// of the ratio (stats.ComparePaired); otherwise, or when the pairs are too
// few to pass the family's bar (a rule on sizes only), the unpaired
// Mann-Whitney U test and Hodges-Lehmann shift. Per group, like with like:
// only the prompts with samples in both runs, the signed-rank test over
// every prompt's pairs when all are matched, else van Elteren's stratified
// test (stats.CompareStrata); a prompt with samples in one run only enters
// or leaves the pool (Group.Pool) and is never compared. A metric's
// comparisons, group-level and per-prompt, are one family judged at a
// third of latency's share of Alpha with Holm's correction (or BH with
// --correction bh). A regression needs significance after correction, a
// shift beyond the threshold (10 % of the base median) and beyond the
// floor (5 ms; 1 token/s for throughput); "~" otherwise, with the
// smallest change it could have detected (stats.MDE). With a history of
// earlier runs (Options.History, noise.go) a change within the
// night-to-night noise of the green runs of the same setup is "~".
//
// # Multiplicity
//
// Alpha is split between the statistical categories (quality, latency,
// and capacity when a run has load stages), an equal share each, Holm
// within each: the chance that a compare of unchanged runs raises any
// false statistical finding is at most Alpha.
//
// # Not judged
//
// Every metric of every group and prompt ends as regression, improvement,
// "~" or not_judged with the reason: no samples on a side, all cold, too
// few samples (fewer than 4 a side, or sizes that cannot reach the
// family's bar), machine busy (either run's suite ran on a busy machine,
// report.MachineBusy, or other work rose by half a core during the new
// run's suite: the latency is listed with the figures and its regressions
// fail the gate only with FailOnSuspect). Result.Judgement counts them
// per metric, the verdict line says how many, and RequireJudged fails the
// gate (verdict not_judged) when a named metric was judged nowhere.
//
// # Capacity
//
// A run with a load profile (docs/load.md) records each cell's stage
// (c=4, rate=15...). Per group, each stage both runs ran (the warm-up
// left out) is judged with the same statistics and not-judged rules as
// latency: its answered requests per second in CapacityWindows equal
// windows of the stage's span on each side (fewer windows when the stage
// sent fewer cells, so a short stage is "too few samples", as a short
// latency sample is) are compared by Mann-Whitney U and the
// Hodges-Lehmann shift, one family over every stage of every group at
// Alpha/2 with the chosen correction, the latency threshold and a drop
// the regression; goodput, the share of sent cells meeting every
// per-request SLO, by Fisher's exact test, Holm over the stages at
// Alpha/2, and not judged without an slo block or when the runs' blocks
// differ. The saturation point (report.FindSaturation on each run) is one
// figure a run with no test of its own: it moving is a regression or an
// improvement only when a stage between the two points changed its
// throughput or goodput significantly the same way, "~" when the stages
// between were judged unchanged, and not judged otherwise. A stage in one
// run only, sweeps of other stages, and machine load are not judged, and
// said. Capacity findings are the category "capacity" of --fail-on.
//
// # Schema
//
// compare reads results.jsonl through results.Scan, strictly: results
// schema 1, lines with record_type "result" and the full cell key. Lines
// carry no version today; a line that declares a schema_version other than
// 1 is refused, and so is a line without provider_type or prompt_id (a
// bench from before the full key). A bad line, a malformed config.json,
// run.json or inventory.json are *InputError values naming the file and
// line; missing side files are warnings. A cell recorded more than once (a
// resumed run appends a record for each cell it ran again) counts by its
// last record, as in bench report, with a warning that counts them.
//
// # Outputs
//
// WriteText prints the tables (header with the setup differences, the
// verdict, findings regressions first, groups, non-matching cells);
// WriteFiles writes compare.json, compare.md, compare.html (the page to
// look at: verdict, setup, findings, groups with their latency medians
// drawn base against new, changed cells; see WriteHTML) and junit.xml (one testsuite
// per group, one testcase per cell key plus the group's rate, tier and
// latency testcases; a finding that fails the gate is a <failure> listing
// the changes, an unjudged cell is <skipped>), valid against the Jenkins
// xUnit JUnit schema.
//
// Layer: verdicts (reads run directories only; no provider, runner or
// resources code).
package compare
