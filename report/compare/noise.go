package compare

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"bench/internal/record/results"
	"bench/internal/record/rundir"
	"bench/report/history"
	"bench/report/stats"
)

// MinNights is the fewest earlier green runs of the same setup compare
// estimates a night-to-night spread from: with fewer, one odd night is
// the spread.
const MinNights = 5

// noiseZ scales the nightly figures' spread to the band a change between
// two nights stays inside: the difference of two nights has √2 times a
// night's spread, and 2 of those hold about 95 % of them.
var noiseZ = 2 * math.Sqrt2

// nightNoise is what earlier nights say of each latency figure: per
// group, prompt ("" for the group) and metric, the figure of each green
// run of the new run's setup.
type nightNoise struct {
	dir     string
	nights  int
	figures map[noiseKey][]float64
}

// noiseKey names a figure: the group's label, the prompt ("" for the
// group's), the metric's index in Metrics.
type noiseKey struct {
	group, prompt string
	metric        int
}

// band is the night-to-night noise of a figure on the log scale, and the
// nights it rests on; ok is false with fewer than MinNights.
func (n *nightNoise) band(k noiseKey) (band float64, nights int, ok bool) {
	if n == nil {
		return 0, 0, false
	}
	vals := n.figures[k]
	if len(vals) < MinNights {
		return 0, len(vals), false
	}
	logs := make([]float64, len(vals))
	for i, v := range vals {
		logs[i] = math.Log(math.Max(v, stats.LogFloor))
	}
	return noiseZ * stats.RobustSD(logs), len(vals), true
}

// loadNightNoise reads the runs under dir (bench compare --history) and
// keeps the latency figures of the earlier green ones whose setup is the
// new run's: the same bench version, host, server versions, model
// digests and config (run id and output directory aside). A green run
// ended "finished" and, when it was gated (its compare/compare.json),
// passed. Each run is read as compare reads one, one at a time; a run
// that cannot be read, or of another setup, is counted in the one line
// returned, never an error: the history only softens verdicts.
func loadNightNoise(dir string, base, cur *runData) (*nightNoise, string) {
	dirs, _, err := history.FindRuns([]string{dir})
	if err != nil {
		return nil, fmt.Sprintf("night-to-night noise: --history %s: %v: latency judged within the runs only", dir, err)
	}
	curAbs, _ := filepath.Abs(cur.dir)
	want := setupKeyOf(cur)
	n := &nightNoise{dir: dir, figures: map[noiseKey][]float64{}}
	other := map[string]int{}
	var unread, notGreen, later int
	for _, d := range dirs {
		if abs, _ := filepath.Abs(d); abs == curAbs {
			continue
		}
		r, err := loadRun(d, newTable())
		if err != nil {
			unread++
			continue
		}
		switch {
		case r.info == nil || r.info.EndReason != "finished" || !gatePassed(d):
			notGreen++
			continue
		case cur.info != nil && !r.info.StartedAt.Before(cur.info.StartedAt):
			later++
			continue
		}
		if why := setupKeyOf(r).differs(want); why != "" {
			other[why]++
			continue
		}
		n.nights++
		for k, v := range nightFigures(r) {
			n.figures[k] = append(n.figures[k], v)
		}
	}
	var skipped []string
	if unread > 0 {
		skipped = append(skipped, plural(unread, "unreadable run", "unreadable runs"))
	}
	if notGreen > 0 {
		skipped = append(skipped, fmt.Sprintf("%d not green", notGreen))
	}
	if later > 0 {
		skipped = append(skipped, fmt.Sprintf("%d not earlier than the new run", later))
	}
	if len(other) > 0 {
		var parts []string
		for why, c := range other {
			parts = append(parts, fmt.Sprintf("%d: %s", c, why))
		}
		sort.Strings(parts)
		skipped = append(skipped, "of other setups ("+strings.Join(parts, "; ")+")")
	}
	left := ""
	if len(skipped) > 0 {
		left = "; left out: " + strings.Join(skipped, ", ")
	}
	if n.nights < MinNights {
		return nil, fmt.Sprintf("night-to-night noise: %s holds %d earlier green runs of this setup, %d needed: latency judged within the runs only%s",
			dir, n.nights, MinNights, left)
	}
	return n, fmt.Sprintf("night-to-night noise: from %d earlier green runs of this setup in %s%s", n.nights, dir, left)
}

// gatePassed says a run that was gated (compare/compare.json) passed;
// one never gated (the first night) counts as passed.
func gatePassed(dir string) bool {
	var c struct {
		Verdict string `json:"verdict"`
	}
	b, err := os.ReadFile(filepath.Join(dir, rundir.CompareDir, JSONFile))
	if err != nil {
		return os.IsNotExist(err)
	}
	return json.Unmarshal(b, &c) == nil && c.Verdict == VerdictOK
}

// nightFigures are a run's latency figures as compare judges them: per
// group and prompt the median of the warm successful cells' values, and
// per group the median over its prompts of those medians.
func nightFigures(r *runData) map[noiseKey]float64 {
	t := r.tab
	vals := map[noiseKey][]float64{}
	for i := range r.cells {
		cl := &r.cells[i]
		if t.str(cl.status) != results.StatusOK || !cl.has(fSuccess) || cl.has(fColdStart) {
			continue
		}
		g := t.label(groupOf(cl.key))
		for m, v := range []struct {
			v  float64
			ok bool
		}{{cl.ttft, cl.has(fTTFT)}, {cl.e2e, cl.has(fE2E)}, {cl.tps, cl.has(fTPS)}} {
			if v.ok {
				k := noiseKey{g, t.str(cl.key.prompt), m}
				vals[k] = append(vals[k], v.v)
			}
		}
	}
	out := map[noiseKey]float64{}
	byGroup := map[noiseKey][]float64{}
	for k, vs := range vals {
		med := stats.Median(vs)
		out[k] = med
		gk := noiseKey{k.group, "", k.metric}
		byGroup[gk] = append(byGroup[gk], med)
	}
	for k, meds := range byGroup {
		out[k] = stats.Median(meds)
	}
	return out
}

// setupKey is what makes two runs the same setup for the night-to-night
// noise.
type setupKey struct {
	bench, host, config string
	servers             map[string]string // "provider server version" or "provider/model model digest" -> value
}

func setupKeyOf(r *runData) setupKey {
	k := setupKey{servers: map[string]string{}, config: configFingerprint(r.dir)}
	for _, it := range setup(r, r) {
		switch {
		case it.Name == "bench version":
			k.bench = it.Base
		case it.Name == "host":
			k.host = it.Base
		case strings.HasSuffix(it.Name, " server version") || strings.HasSuffix(it.Name, " model digest"):
			k.servers[it.Name] = it.Base
		}
	}
	return k
}

// differs says what differs between two setups ("" when nothing does).
func (k setupKey) differs(want setupKey) string {
	var why []string
	if k.bench != want.bench {
		why = append(why, "bench version")
	}
	if k.host != want.host {
		why = append(why, "host")
	}
	if k.config != want.config {
		why = append(why, "config")
	}
	names := make([]string, 0, len(want.servers))
	for name := range want.servers {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		if k.servers[name] != want.servers[name] {
			why = append(why, name)
		}
	}
	return strings.Join(why, ", ")
}

// configFingerprint hashes a run's config.json without what differs
// from night to night by design (the run's id and output directory);
// "" without one.
func configFingerprint(dir string) string {
	b, err := os.ReadFile(rundir.Path(dir, rundir.ConfigFile))
	if err != nil {
		return ""
	}
	var cfg map[string]any
	if json.Unmarshal(b, &cfg) != nil {
		return "unreadable"
	}
	if run, ok := cfg["run"].(map[string]any); ok {
		delete(run, "id")
		delete(run, "out_dir")
	}
	canon, _ := json.Marshal(cfg) // map keys sorted
	sum := sha256.Sum256(canon)
	return hex.EncodeToString(sum[:8])
}

// applyNoise softens a latency change the earlier nights say is weather:
// a regression or improvement whose shift lies within the figure's
// night-to-night band is "~ (within night-to-night noise: ±x % over n
// nights)", even when the within-run test is significant; a "~" can then
// see no change smaller than the band. The verdict keeps its figures.
func (c *comparison) applyNoise(g *Group, prompt string, metric int, v *stats.Verdict) {
	band, nights, ok := c.noise.band(noiseKey{g.Label(), prompt, metric})
	if !ok || !v.Judged() {
		return
	}
	pct := 100 * math.Expm1(band)
	v.Noise = &stats.Noise{Pct: pct, Nights: nights}
	if v.Change == stats.Same {
		v.MDEPct = math.Max(v.MDEPct, pct)
		return
	}
	if math.Abs(math.Log1p(v.ShiftPct/100)) > band {
		return
	}
	v.Noise.Within = true
	v.Reason = fmt.Sprintf("within night-to-night noise (±%.0f %% over %d nights): %s %s", pct, nights, v.Change, v.Reason)
	v.Change = stats.Same
	v.MDEPct = math.Max(v.MDEPct, pct)
}
