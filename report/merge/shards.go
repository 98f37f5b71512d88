package merge

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"bench/internal/record/rundir"
)

// shard is one input run directory.
type shard struct {
	dir  string
	info *rundir.RunInfo // info.Shard is set: 1/1 for a run that was not sharded
	// config is config.json decoded, for comparing shards.
	config any
	// records is how many of its lines were merged.
	records int
}

// keptDir is where the shard's own run.json, config.json and
// inventory.json are kept in the merged directory.
func (s *shard) keptDir() string {
	return filepath.Join(rundir.ShardsDir, fmt.Sprintf("shard-%d-of-%d", s.info.Shard.Index, s.info.Shard.Count))
}

func (s *shard) name() string {
	return fmt.Sprintf("%s (shard %d/%d)", s.dir, s.info.Shard.Index, s.info.Shard.Count)
}

// readShards reads and checks the shard directories: each a finished run,
// all of one split, none twice, and (unless allowPartial) none missing. It
// returns them by index, the split's count and the missing indexes.
func readShards(dirs []string, allowPartial bool) ([]*shard, int, []int, error) {
	if len(dirs) == 0 {
		return nil, 0, nil, refuse(Unusable, "no shard directories given")
	}
	var shards []*shard
	for _, d := range dirs {
		s, err := readShard(d)
		if err != nil {
			return nil, 0, nil, err
		}
		for _, o := range shards {
			if sameDir(o.dir, s.dir) {
				return nil, 0, nil, refuse(Split, "%s is given twice (as %s and %s)", s.dir, o.dir, s.dir)
			}
		}
		shards = append(shards, s)
	}
	n := shards[0].info.Shard.Count
	for _, s := range shards[1:] {
		if s.info.Shard.Count != n {
			return nil, 0, nil, refuse(Split, "%s and %s come from different splits: the shards of one run are all i/%d", shards[0].name(), s.name(), n)
		}
	}
	sort.SliceStable(shards, func(i, j int) bool { return shards[i].info.Shard.Index < shards[j].info.Shard.Index })
	for i := 1; i < len(shards); i++ {
		if a, b := shards[i-1], shards[i]; a.info.Shard.Index == b.info.Shard.Index {
			return nil, 0, nil, refuse(Split, "%s and %s are both shard %d/%d: give each shard once", a.dir, b.dir, a.info.Shard.Index, n)
		}
	}
	var missing []int
	have := map[int]bool{}
	var given []string
	for _, s := range shards {
		have[s.info.Shard.Index] = true
		given = append(given, fmt.Sprintf("%d/%d %s", s.info.Shard.Index, n, s.dir))
	}
	for i := 1; i <= n; i++ {
		if !have[i] {
			missing = append(missing, i)
		}
	}
	if len(missing) > 0 && !allowPartial {
		var ms []string
		for _, i := range missing {
			ms = append(ms, fmt.Sprintf("%d/%d", i, n))
		}
		return nil, 0, nil, refuse(Missing, "shard %s missing (given: %s): add its directory, or --allow-partial to merge without it",
			strings.Join(ms, ", "), strings.Join(given, ", "))
	}
	return shards, n, missing, nil
}

// readShard reads one shard directory's run.json and config.json.
func readShard(dir string) (*shard, error) {
	if err := rundir.Check(dir); err != nil {
		return nil, refuse(Unusable, "%v", err)
	}
	info, err := rundir.ReadRunInfo(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, refuse(Unusable, "%s has no %s: its run has not ended; finish it (bench run --resume with the same --shard and --run-id) or leave it out and add --allow-partial",
			dir, rundir.RunFile)
	}
	if err != nil {
		return nil, refuse(Unusable, "%s: %v", rundir.Path(dir, rundir.RunFile), err)
	}
	if info.Merge != nil {
		return nil, refuse(Unusable, "%s is a merged run, not a shard: merge the shard directories it was built from", dir)
	}
	if info.Shard == nil {
		info.Shard = &rundir.Shard{Index: 1, Count: 1}
	}
	if sh := info.Shard; sh.Count < 1 || sh.Index < 1 || sh.Index > sh.Count {
		return nil, refuse(Unusable, "%s: shard %d/%d is not a shard", rundir.Path(dir, rundir.RunFile), sh.Index, sh.Count)
	}
	s := &shard{dir: dir, info: info}
	path := rundir.Path(dir, rundir.ConfigFile)
	raw, err := rundir.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, refuse(Unusable, "%s has no %s: cannot tell which config it ran", dir, rundir.ConfigFile)
	}
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&s.config); err != nil {
		return nil, refuse(Unusable, "%s: %v", path, err)
	}
	return s, nil
}

func sameDir(a, b string) bool {
	sa, errA := os.Stat(a)
	sb, errB := os.Stat(b)
	return errA == nil && errB == nil && os.SameFile(sa, sb)
}

// identity lists the config.json fields that may differ between shards of
// one run: where the run was written and the config file was read, and the
// run id (a clock-chosen id differs by machine and carries the shard).
var identity = [][]string{{"run", "id"}, {"run", "out_dir"}, {"config_path"}}

// sameConfig refuses shards whose config.json differ beyond identity.
func sameConfig(shards []*shard) error {
	first := comparable(shards[0].config)
	for _, s := range shards[1:] {
		c := comparable(s.config)
		if reflect.DeepEqual(first, c) {
			continue
		}
		path, a, b := firstDiff(first, c, "")
		return refuse(ConfigMismatch, "%s and %s ran different configs (%s: %s in the first, %s in the second): the shards of one run must run the same config and flags; only run.id, run.out_dir and the config's path may differ",
			shards[0].name(), s.name(), path, a, b)
	}
	return nil
}

// comparable is the config less its identity fields (a copy).
func comparable(cfg any) any {
	c := clone(cfg)
	for _, p := range identity {
		m, ok := c.(map[string]any)
		for _, k := range p[:len(p)-1] {
			if !ok {
				break
			}
			m, ok = m[k].(map[string]any)
		}
		if ok {
			delete(m, p[len(p)-1])
		}
	}
	return c
}

func clone(v any) any {
	switch t := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(t))
		for k, x := range t {
			m[k] = clone(x)
		}
		return m
	case []any:
		s := make([]any, len(t))
		for i, x := range t {
			s[i] = clone(x)
		}
		return s
	}
	return v
}

// firstDiff finds the first place two decoded JSON values differ (keys in
// order) and renders both sides there.
func firstDiff(a, b any, path string) (string, string, string) {
	ma, aok := a.(map[string]any)
	mb, bok := b.(map[string]any)
	if aok && bok {
		keys := make([]string, 0, len(ma)+len(mb))
		for k := range ma {
			keys = append(keys, k)
		}
		for k := range mb {
			if _, ok := ma[k]; !ok {
				keys = append(keys, k)
			}
		}
		slices.Sort(keys)
		for _, k := range keys {
			va, ina := ma[k]
			vb, inb := mb[k]
			p := join(path, k)
			switch {
			case !ina:
				return p, "absent", render(vb)
			case !inb:
				return p, render(va), "absent"
			case !reflect.DeepEqual(va, vb):
				return firstDiff(va, vb, p)
			}
		}
	}
	sa, aok := a.([]any)
	sb, bok := b.([]any)
	if aok && bok && len(sa) == len(sb) {
		for i := range sa {
			if !reflect.DeepEqual(sa[i], sb[i]) {
				return firstDiff(sa[i], sb[i], path+"["+strconv.Itoa(i)+"]")
			}
		}
	}
	if path == "" {
		path = "the whole file"
	}
	return path, render(a), render(b)
}

func join(path, k string) string {
	if path == "" {
		return k
	}
	return path + "." + k
}

// render shows a JSON value in at most 60 bytes.
func render(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	if len(b) > 60 {
		cut := 57
		for cut > 0 && !utf8.RuneStart(b[cut]) {
			cut--
		}
		return string(b[:cut]) + "..."
	}
	return string(b)
}

// checkVersions warns when the shards were run by different bench builds:
// validators and scoring may differ between them.
func checkVersions(shards []*shard, warn io.Writer) {
	for _, s := range shards[1:] {
		if v, w := shards[0].info.BenchVersion, s.info.BenchVersion; v != w {
			fmt.Fprintf(warn, "warning: %s ran bench %s, %s ran bench %s: scoring may differ between them\n", shards[0].name(), v, s.name(), w)
		}
	}
}
