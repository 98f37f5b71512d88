package merge

import (
	"slices"

	"bench/internal/record/results"
	"bench/internal/record/rundir"
)

// Unreached reads the merged run directory dir and names the providers
// none of whose cells reached a model (results.Reached), over the whole
// run: the exit code 4 that bench run decides for each shard over its own
// cells, decided again for the run. reachedAny says whether any cell did.
func Unreached(dir string) (none []string, reachedAny bool, err error) {
	reached := map[string]bool{}
	_, _, err = results.Scan(rundir.Path(dir, rundir.ResultsFile), results.ScanOptions{Detail: results.Aggregates}, func(_ int, r *results.Record) error {
		reached[r.Provider] = reached[r.Provider] || results.Reached(r)
		return nil
	})
	if err != nil {
		return nil, false, err
	}
	for p, ok := range reached {
		if ok {
			reachedAny = true
		} else {
			none = append(none, p)
		}
	}
	slices.Sort(none)
	return none, reachedAny, nil
}
