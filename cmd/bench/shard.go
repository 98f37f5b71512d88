package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"bench/run/plan"
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

// getenv is os.Getenv; tests of the flags set the environment with t.Setenv.
var getenv = os.Getenv
