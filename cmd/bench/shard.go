package main

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"bench/config"
	"bench/plan"
	"bench/rundir"
)

// The Kubernetes Indexed Job convention: each pod gets its 0-based index in
// JOB_COMPLETION_INDEX; the Job's completions count is not in the pod's
// environment, so the manifest sets BENCH_SHARD_COUNT to it.
const (
	envShardCount = "BENCH_SHARD_COUNT"
	envJobIndex   = "JOB_COMPLETION_INDEX"
)

// shardSpec says which shard this run is: --shard i/n when given, else
// JOB_COMPLETION_INDEX+1 of BENCH_SHARD_COUNT when that is set. n is 0 when
// the run is not sharded. JOB_COMPLETION_INDEX alone shards nothing: bench
// may run in an Indexed Job for other reasons.
func shardSpec(flagVal string, flagSet bool, getenv func(string) string) (i, n int, err error) {
	if flagSet {
		i, n, err = plan.ParseShard(flagVal)
		if err != nil {
			return 0, 0, fmt.Errorf("--shard: %w", err)
		}
		return i, n, nil
	}
	count := strings.TrimSpace(getenv(envShardCount))
	if count == "" {
		return 0, 0, nil
	}
	n, err = strconv.Atoi(count)
	if err != nil || n < 1 {
		return 0, 0, fmt.Errorf("%s=%q: want the number of shards, 1 or more", envShardCount, count)
	}
	idx := strings.TrimSpace(getenv(envJobIndex))
	if idx == "" {
		return 0, 0, fmt.Errorf("%s is set but %s is not: run in a Kubernetes Indexed Job, or pass --shard i/n", envShardCount, envJobIndex)
	}
	k, err := strconv.Atoi(idx)
	if err != nil || k < 0 || k >= n {
		return 0, 0, fmt.Errorf("%s=%q is not a shard of %s=%d (want 0 to %d)", envJobIndex, idx, envShardCount, n, n-1)
	}
	return k + 1, n, nil
}

// shardPlan keeps this shard's suites of the plan and says which they are.
// A run id the clock chose gets the shard as a suffix, so shards writing to
// one volume get telling directory names.
func shardPlan(cfg *config.Config, pl *plan.Plan, f *runFlags, stdout io.Writer) (*plan.Plan, *rundir.Shard, error) {
	if f.shardN == 0 {
		return pl, nil, nil
	}
	sh, err := pl.Shard(f.shardI, f.shardN)
	if err != nil {
		return nil, nil, err
	}
	info := &rundir.Shard{Index: f.shardI, Count: f.shardN, Suites: []string{}}
	for _, s := range sh.Suites {
		info.Suites = append(info.Suites, suiteLabel(s))
	}
	if !cfg.Run.IDChosen {
		cfg.Run.ID += fmt.Sprintf("_shard%dof%d", f.shardI, f.shardN)
	}
	if len(sh.Suites) == 0 {
		fmt.Fprintf(stdout, "bench: shard %d/%d has no suites: the plan has %d, so at most %d shards have work; writing an empty shard for bench merge\n",
			f.shardI, f.shardN, len(pl.Suites), len(pl.Suites))
	} else {
		fmt.Fprintf(stdout, "bench: shard %d/%d: %d of %d suites (%s)\n", f.shardI, f.shardN, len(sh.Suites), len(pl.Suites), strings.Join(info.Suites, ", "))
	}
	return sh, info, nil
}

// suiteLabel names a suite: provider/model, plus /thinking level.
func suiteLabel(s plan.Suite) string {
	l := s.Provider + "/" + s.Model
	if s.ThinkingLevel != nil {
		l += "/" + *s.ThinkingLevel
	}
	return l
}

// getenv is os.Getenv; tests of the flags set the environment with t.Setenv.
var getenv = os.Getenv

// checkResumeShard refuses to resume a run directory as another shard than
// the one its run.json records: the directory would mix two shards' suites
// and bench merge would refuse it later. A directory without run.json (its
// run was killed before the end) has nothing to compare.
func checkResumeShard(dir string, shard *rundir.Shard) error {
	ri, err := rundir.ReadRunInfo(dir)
	if err != nil {
		return nil
	}
	was, now := "not sharded", "without --shard"
	if ri.Shard != nil {
		was = fmt.Sprintf("shard %d/%d", ri.Shard.Index, ri.Shard.Count)
	}
	if shard != nil {
		now = fmt.Sprintf("as shard %d/%d", shard.Index, shard.Count)
	}
	switch {
	case ri.Shard == nil && shard == nil:
		return nil
	case ri.Shard != nil && shard != nil && ri.Shard.Index == shard.Index && ri.Shard.Count == shard.Count:
		return nil
	}
	return fmt.Errorf("%s holds a run that was %s; it cannot be resumed %s", dir, was, now)
}

// flagShard is the shard the flags (or the Indexed Job's environment) ask
// for, as checkResumeShard compares it; nil when not sharded.
func flagShard(f *runFlags) *rundir.Shard {
	if f.shardN == 0 {
		return nil
	}
	return &rundir.Shard{Index: f.shardI, Count: f.shardN}
}
