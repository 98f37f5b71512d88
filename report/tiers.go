package report

import (
	"sort"
	"time"

	"bench/internal/record/results"
)

// Tier labels.
const (
	Tier1        = "tier_1"
	Tier2        = "tier_2"
	Tier3        = "tier_3"
	Unclassified = "unclassified"
)

// Tier thresholds on the tool-use success rate.
const (
	Tier1Min = 0.8
	Tier2Min = 0.5
)

// tierRule is written into tiers.json so the counting is on record.
const tierRule = "tool-use success rate over the cells whose prompt expects tools (non-empty expected_tools): " +
	"cells with availability_status ok or error count, and only tool_use_success true is a success, so error cells " +
	"(timeouts, cut streams) count as failures; cells that never reached the model (skipped_unavailable, rate_limited, " +
	"auth_error) and cells cancelled by the user (failure_type cancelled) are excluded and counted under excluded. " +
	"tier_1 >= 0.8, tier_2 >= 0.5, tier_3 < 0.5, unclassified when no tool cell counted"

// Tier is one group's tool-use classification, an entry of tiers.json.
type Tier struct {
	Rank          int     `json:"rank"`
	Provider      string  `json:"provider"`
	Model         string  `json:"model"`
	ThinkingLevel *string `json:"thinking_level"`
	Tier          string  `json:"tier"`
	// ToolUseSuccessRate is NSucceeded / NCounted, null when NCounted is 0;
	// ToolUseSuccessCI its 95 % Wilson score interval.
	ToolUseSuccessRate *float64 `json:"tool_use_success_rate"`
	ToolUseSuccessCI   *CI      `json:"tool_use_success_ci"`
	// TierConfidence is firm when the interval lies inside the tier's band,
	// borderline when it reaches another (null when unclassified);
	// MoreRepetitions is then about how many more repetitions at the same
	// rate would make it firm (-1: none would).
	TierConfidence  *string `json:"tier_confidence"`
	MoreRepetitions *int    `json:"more_repetitions_to_settle,omitempty"`
	NCounted        int     `json:"n_counted"`
	NSucceeded      int     `json:"n_succeeded"`
	NFailed         int     `json:"n_failed"`
	// NErrorCells is how many of the failures were error cells.
	NErrorCells int `json:"n_error_cells"`
	NExcluded   int `json:"n_excluded"`
	// Excluded counts the excluded cells by reason.
	Excluded map[string]int `json:"excluded"`

	// Recommended: the group is in recommended_for_subagent_routing
	// (routingRule). RoutingReady is the agentic part of that verdict,
	// null when no agentic cell counted or a borderline Tier 1 leaves it
	// unjudged; RoutingNote says why a group is not recommended.
	Recommended       bool     `json:"recommended_for_subagent_routing"`
	RoutingReady      *bool    `json:"routing_ready"`
	RoutingNote       string   `json:"routing_note,omitempty"`
	NAgentic          int      `json:"n_agentic"`
	NAgenticCompleted int      `json:"n_agentic_completed"`
	TaskSuccessRate   *float64 `json:"task_success_rate"`
	TaskSuccessCI     *CI      `json:"task_success_ci"`
	NUnknownToolCalls int      `json:"n_unknown_tool_calls"`
	// CallChecks are the unsafe-action and schema counts.
	CallChecks
	// Consistency is pass^k over the agentic tasks; Categories the
	// per-category figures (both as in summary.json).
	Consistency
	Categories map[string]*Category `json:"categories,omitempty"`
	// Injection are the prompt-injection figures (injection.go), when
	// the group ran injection cases; while the records are read it is
	// their accumulator.
	Injection *Injection `json:"injection,omitempty"`

	// reps is how many repetitions the counted cells span (for settle).
	reps int
	// disqualified says the routing verdict failed on something more
	// repetitions cannot change (route): no "more reps" advice then.
	disqualified bool
}

// noneExcluded is the Excluded of every tier with no excluded cell, one
// empty map shared (tiers.json writes {} for it) instead of one a group;
// add gives a tier its own map at its first excluded cell, and nothing
// writes to this one.
var noneExcluded = map[string]int{}

// add counts one record if its prompt expects tools.
func (t *Tier) add(r *results.Record) {
	if len(r.ExpectedTools) == 0 {
		return
	}
	why := ""
	switch {
	case r.AvailabilityStatus == "error" && r.FailureType != nil && *r.FailureType == "cancelled":
		why = "cancelled"
	case r.AvailabilityStatus != "ok" && r.AvailabilityStatus != "error":
		why = r.AvailabilityStatus
	}
	if why != "" {
		t.NExcluded++
		if len(t.Excluded) == 0 {
			t.Excluded = map[string]int{} // its own, not the shared noneExcluded
		}
		t.Excluded[why]++
		return
	}
	t.NCounted++
	t.reps = max(t.reps, r.Repetition+1)
	if r.ToolUseSuccess != nil && *r.ToolUseSuccess {
		t.NSucceeded++
		return
	}
	t.NFailed++
	if r.AvailabilityStatus == "error" {
		t.NErrorCells++
	}
}

// Tiers is tiers.json.
type Tiers struct {
	RunID       string    `json:"run_id"`
	GeneratedAt time.Time `json:"generated_at"`
	Rule        string    `json:"rule"`
	Thresholds  struct {
		Tier1 float64 `json:"tier_1"`
		Tier2 float64 `json:"tier_2"`
	} `json:"thresholds"`
	// Ranking is every group: tier 1 first, then 2, 3, unclassified; within
	// a tier by rate, then by how many cells counted.
	Ranking []*Tier `json:"ranking"`
	// Recommended is the one routing list: the groups to route subagents
	// with tools to (routingRule).
	Recommended []Model `json:"recommended_for_subagent_routing"`
	// RoutingRule is how the list and routing_ready are decided;
	// RoutingReady lists the groups whose routing_ready is true.
	RoutingRule  string  `json:"routing_rule"`
	RoutingReady []Model `json:"routing_ready"`
	// InjectionRule is how the prompt-injection figures are counted and
	// judged, when a group ran injection cases.
	InjectionRule string `json:"injection_rule,omitempty"`
}

// Model names a group.
type Model struct {
	Provider      string  `json:"provider"`
	Model         string  `json:"model"`
	ThinkingLevel *string `json:"thinking_level"`
}

// TierRanking builds tiers.json from a summary.
func TierRanking(s *Summary) *Tiers {
	t := &Tiers{RunID: s.RunID, GeneratedAt: s.GeneratedAt, Rule: tierRule, Ranking: []*Tier{}, Recommended: []Model{},
		RoutingRule: routingRule, RoutingReady: []Model{}}
	t.Thresholds.Tier1, t.Thresholds.Tier2 = Tier1Min, Tier2Min
	for _, g := range s.Groups {
		if g.Tier != nil {
			t.Ranking = append(t.Ranking, g.Tier)
		}
	}
	order := map[string]int{Tier1: 0, Tier2: 1, Tier3: 2, Unclassified: 3}
	sort.SliceStable(t.Ranking, func(i, j int) bool {
		a, b := t.Ranking[i], t.Ranking[j]
		if order[a.Tier] != order[b.Tier] {
			return order[a.Tier] < order[b.Tier]
		}
		// Exact ratio comparison: a.S/a.C > b.S/b.C.
		if l, r := a.NSucceeded*b.NCounted, b.NSucceeded*a.NCounted; l != r {
			return l > r
		}
		return a.NCounted > b.NCounted
	})
	for i, tr := range t.Ranking {
		tr.Rank = i + 1
		if tr.Recommended {
			t.Recommended = append(t.Recommended, Model{tr.Provider, tr.Model, tr.ThinkingLevel})
		}
		if tr.RoutingReady != nil && *tr.RoutingReady {
			t.RoutingReady = append(t.RoutingReady, Model{tr.Provider, tr.Model, tr.ThinkingLevel})
		}
		if tr.Injection != nil {
			t.InjectionRule = injectionRule
		}
	}
	return t
}
