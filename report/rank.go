package report

import (
	"fmt"
	"strconv"
)

// Place is a group's place in the ranking with the evidence for it.
type Place struct {
	Group *Group
	// Rank is 1 plus the number of groups that are better beyond doubt:
	// on the figure that orders the two (the first of pass rate, success
	// rate and e2e p50 on which they differ), their 95 % intervals do not
	// overlap. Groups whose intervals overlap share a rank: tied.
	Rank int
	// Tied says another group has the same rank.
	Tied bool
	// By is the figure that orders the group after the one above it
	// ("pass rate", "success rate", "e2e p50"; "" for the first, or when
	// nothing tells them apart).
	By string
}

// Label is the rank as the tables print it: "1", or "=1" when tied.
func (p Place) Label() string {
	if p.Tied {
		return "=" + strconv.Itoa(p.Rank)
	}
	return strconv.Itoa(p.Rank)
}

// RankKeys names the ranking's figures, in order.
var RankKeys = []string{"pass rate", "success rate", "e2e p50"}

// Places ranks groups already in Ranked order. A group's rank is 1 plus
// the number of groups better than it beyond doubt (as leaderboards that
// show their uncertainty rank: one more than the models significantly
// ahead), so groups whose intervals overlap on the figure that orders
// them share a rank and are marked tied; the order among tied groups is
// the point estimates', and says nothing more. Ranks never fall down the
// list. A group's rank rests on the groups above it only (one below
// cannot be better beyond doubt), so the first k of a ranking are placed
// by Places(gs[:k]) in O(k²), whatever the ranking's length.
func Places(gs []*Group) []Place {
	out := make([]Place, len(gs))
	for i, g := range gs {
		out[i] = Place{Group: g, Rank: 1}
		for j := range i {
			if _, separated := apart(gs[j], g); separated {
				out[i].Rank++
			}
		}
		if i > 0 {
			out[i].Rank = max(out[i].Rank, out[i-1].Rank)
			out[i].By, _ = apart(gs[i-1], g)
		}
	}
	for i := range out {
		out[i].Tied = (i > 0 && out[i-1].Rank == out[i].Rank) || (i+1 < len(out) && out[i+1].Rank == out[i].Rank)
	}
	return out
}

// apart says which figure orders a before b (the first of RankKeys on
// which they differ, "" when none does) and whether a is better on it
// beyond doubt: the two 95 % intervals do not overlap. A figure without
// an interval (too few latencies) never separates; a figure beats a
// group that has none (nothing judged, nothing answered).
func apart(a, b *Group) (key string, separated bool) {
	type fig struct {
		v, w *float64
		ca   *CI
		cb   *CI
	}
	figs := []fig{
		{a.ObjectivePassRate, b.ObjectivePassRate, a.ObjectivePassCI, b.ObjectivePassCI},
		{a.SuccessRateOK, b.SuccessRateOK, ci(a.NSuccess, a.NOK), ci(b.NSuccess, b.NOK)},
		{a.LatencyMS.P50, b.LatencyMS.P50, a.LatencyMS.P50CI, b.LatencyMS.P50CI},
	}
	for i, f := range figs {
		if cmpRate(f.v, f.w) == 0 {
			continue
		}
		if (f.v == nil) != (f.w == nil) {
			return RankKeys[i], true // a figure beats none: nothing to doubt
		}
		if f.ca == nil || f.cb == nil {
			return RankKeys[i], false
		}
		return RankKeys[i], f.ca[1] < f.cb[0] || f.cb[1] < f.ca[0]
	}
	return "", false
}

// TiedNote is the line under a ranking with ties: what "=" means.
func TiedNote(places []Place) string {
	for _, p := range places {
		if p.Tied {
			return "=N: tied. Their 95 % intervals overlap on the figure that orders them (pass rate, then success rate, then e2e p50): " +
				"the order among them is the point estimates' and no more; more repetitions narrow the intervals."
		}
	}
	return ""
}

// passText is the pass rate with its counts and interval: "71 % (17/24,
// 95 % CI 51–85 %)"; "–" when no cell was judged.
func passText(g *Group) string {
	if g.NJudged == 0 || g.ObjectivePassCI == nil {
		return "–"
	}
	return fmt.Sprintf("%s (%d/%d, 95%% CI %s)", pct(g.ObjectivePassRate), g.NPassed, g.NJudged, ciText(g.ObjectivePassCI))
}

// medianText is a median with its interval: "1558 ms (1490–1630)".
func medianText(s Stats) string {
	if s.P50 == nil {
		return "–"
	}
	if s.P50CI == nil {
		return msStr(s.P50) + " (too few for a CI)"
	}
	return fmt.Sprintf("%s (%.0f–%.0f)", msStr(s.P50), s.P50CI[0], s.P50CI[1])
}
