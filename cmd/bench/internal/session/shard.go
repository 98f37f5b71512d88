package session

import (
	"fmt"
	"io"
	"strings"

	"bench/config"
	"bench/internal/record/rundir"
	"bench/run/plan"
)

// shardPlan keeps this shard's suites of the plan and says which they are.
// A run id the clock chose gets the shard as a suffix, so shards writing to
// one volume get telling directory names.
func shardPlan(cfg *config.Config, pl *plan.Plan, o *Options, stdout io.Writer) (*plan.Plan, *rundir.Shard, error) {
	if o.ShardCount == 0 {
		return pl, nil, nil
	}
	sh, err := pl.Shard(o.ShardIndex, o.ShardCount)
	if err != nil {
		return nil, nil, err
	}
	info := &rundir.Shard{Index: o.ShardIndex, Count: o.ShardCount, Suites: []string{}}
	for _, s := range sh.Suites {
		info.Suites = append(info.Suites, suiteLabel(s))
	}
	if !cfg.Run.IDChosen {
		cfg.Run.ID += fmt.Sprintf("_shard%dof%d", o.ShardIndex, o.ShardCount)
	}
	if len(sh.Suites) == 0 {
		fmt.Fprintf(stdout, "bench: shard %d/%d has no suites: the plan has %d, so at most %d shards have work; writing an empty shard for bench merge\n",
			o.ShardIndex, o.ShardCount, len(pl.Suites), len(pl.Suites))
	} else {
		fmt.Fprintf(stdout, "bench: shard %d/%d: %d of %d suites (%s)\n", o.ShardIndex, o.ShardCount, len(sh.Suites), len(pl.Suites), strings.Join(info.Suites, ", "))
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

// planned lists the providers that have cells in the plan: the ones exit 4
// is decided over (a shard's own).
func planned(pl *plan.Plan) []string {
	var names []string
	seen := map[string]bool{}
	for _, s := range pl.Suites {
		if s.Cells > 0 && !seen[s.Provider] {
			seen[s.Provider] = true
			names = append(names, s.Provider)
		}
	}
	return names
}

// checkResumeShard refuses to resume a run directory as another shard than
// the one its run.json records: the directory would mix two shards' suites
// and bench merge would refuse it later. A directory without run.json (its
// run was killed before the end) has nothing to compare. shard is nil when
// the run is not sharded.
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

// shard is the shard the options ask for, as checkResumeShard compares
// it; nil when not sharded.
func (o *Options) shard() *rundir.Shard {
	if o.ShardCount == 0 {
		return nil
	}
	return &rundir.Shard{Index: o.ShardIndex, Count: o.ShardCount}
}
