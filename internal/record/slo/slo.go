// Package slo holds the slo: block's types: the latency targets goodput
// is counted against, as bench.yaml writes them and config.json and
// summary.json record them. The config decodes it; report and compare
// read it back from a run directory without linking the config decoder.
//
// Layer: the record (imports the results record only).
package slo

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"bench/internal/yamlerr"

	"gopkg.in/yaml.v3"
)

// SLO is the slo: block: the latency targets goodput counts requests
// against (vLLM's request_goodput, AIPerf's --goodput). A metric written
// as a number is a per-request limit: a request meets it when its own
// figure is at most the limit (for itl_ms, its own p99 gap). Written as
// {p50: X, p99: Y}, it is a limit on the stage's percentiles: the stage
// meets it or not (slo_met in summary.json). Goodput is the share, and the
// rate, of a stage's requests that answered and met every per-request
// limit.
type SLO struct {
	TTFTMS *Target `yaml:"ttft_ms" json:"ttft_ms,omitempty"`
	ITLMS  *Target `yaml:"itl_ms" json:"itl_ms,omitempty"`
	TPOTMS *Target `yaml:"tpot_ms" json:"tpot_ms,omitempty"`
	E2EMS  *Target `yaml:"e2e_ms" json:"e2e_ms,omitempty"`
}

// Target is one metric's target: a per-request limit, or limits on
// percentiles (by percentile, 0 < p < 100).
type Target struct {
	PerRequest  *float64
	Percentiles map[float64]float64
}

// SLOMetrics are the metrics an SLO may name, in the order reports show
// them.
var SLOMetrics = []string{"ttft_ms", "itl_ms", "tpot_ms", "e2e_ms"}

// Each calls f with each metric that has a target, in SLOMetrics' order.
func (s *SLO) Each(f func(metric string, t *Target)) {
	if s == nil {
		return
	}
	for i, t := range []*Target{s.TTFTMS, s.ITLMS, s.TPOTMS, s.E2EMS} {
		if t != nil {
			f(SLOMetrics[i], t)
		}
	}
}

// Empty says the block sets no target.
func (s *SLO) Empty() bool {
	n := 0
	s.Each(func(string, *Target) { n++ })
	return n == 0
}

// UnmarshalYAML reads a number (per request) or {pNN: limit, ...}.
func (t *Target) UnmarshalYAML(n *yaml.Node) error {
	limit := func(v *yaml.Node) (float64, error) {
		x, err := strconv.ParseFloat(v.Value, 64)
		if v.Kind != yaml.ScalarNode || (v.Tag != "!!int" && v.Tag != "!!float") || err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
			return 0, &yamlerr.Error{Line: v.Line, Msg: fmt.Sprintf("%s is not a limit: write milliseconds as a number", yamlerr.Quoted(v.Value))}
		}
		if x <= 0 {
			return 0, &yamlerr.Error{Line: v.Line, Msg: "a limit must be more than 0 ms"}
		}
		return x, nil
	}
	switch n.Kind {
	case yaml.ScalarNode:
		x, err := limit(n)
		if err != nil {
			return err
		}
		t.PerRequest = &x
		return nil
	case yaml.MappingNode:
		t.Percentiles = map[float64]float64{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			p, ok := ParsePercentile(k.Value)
			if !ok {
				return &yamlerr.Error{Line: k.Line, Msg: fmt.Sprintf("%s is not a percentile: write p50, p95, p99, p99.9...", yamlerr.Quoted(k.Value))}
			}
			x, err := limit(v)
			if err != nil {
				return err
			}
			t.Percentiles[p] = x
		}
		if len(t.Percentiles) == 0 {
			return &yamlerr.Error{Line: n.Line, Msg: "no percentile given: write e.g. {p99: 500}"}
		}
		return nil
	}
	return &yamlerr.Error{Line: n.Line, Msg: "expected a limit in ms (per request) or percentiles such as {p99: 500}"}
}

// MarshalJSON writes the target as bench.yaml has it.
func (t Target) MarshalJSON() ([]byte, error) {
	if t.PerRequest != nil {
		return json.Marshal(*t.PerRequest)
	}
	m := map[string]float64{}
	for p, x := range t.Percentiles {
		m[PercentileName(p)] = x
	}
	return json.Marshal(m)
}

// UnmarshalJSON reads what MarshalJSON wrote (config.json, for reports).
func (t *Target) UnmarshalJSON(b []byte) error {
	var x float64
	if json.Unmarshal(b, &x) == nil {
		t.PerRequest = &x
		return nil
	}
	var m map[string]float64
	if err := json.Unmarshal(b, &m); err != nil {
		return fmt.Errorf("an SLO target is a number or {pNN: limit}: %w", err)
	}
	t.Percentiles = map[float64]float64{}
	for k, v := range m {
		p, ok := ParsePercentile(k)
		if !ok {
			return fmt.Errorf("%q is not a percentile", k)
		}
		t.Percentiles[p] = v
	}
	return nil
}

// SortedPercentiles lists the target's percentiles in order.
func (t *Target) SortedPercentiles() []float64 {
	ps := make([]float64, 0, len(t.Percentiles))
	for p := range t.Percentiles {
		ps = append(ps, p)
	}
	sort.Float64s(ps)
	return ps
}

// ParsePercentile reads "p99" or "p99.9" as 99 or 99.9.
func ParsePercentile(s string) (float64, bool) {
	rest, ok := strings.CutPrefix(s, "p")
	if !ok {
		return 0, false
	}
	p, err := strconv.ParseFloat(rest, 64)
	if err != nil || p <= 0 || p >= 100 || math.IsNaN(p) {
		return 0, false
	}
	return p, true
}

// PercentileName writes 99 as "p99" and 99.9 as "p99.9".
func PercentileName(p float64) string { return "p" + strconv.FormatFloat(p, 'f', -1, 64) }
