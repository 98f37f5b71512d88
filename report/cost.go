package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"

	"bench/internal/format"
	"bench/internal/record/pricing"
	"bench/internal/record/results"
)

// costMethods say how the cost and token figures are computed
// (summary.json).
var costMethods = CostMethods{
	Tokens:               "input_tokens_total, cached_input_tokens_total, output_tokens_total and reasoning_tokens_total sum the counts the provider reported over every cell (cached input is part of input, reasoning part of output); null when no cell reported one",
	CostUSDTotal:         "sum of cost_usd over the cells that have one: the provider's own figure (the Claude Code CLI's total_cost_usd), else the tokens priced by bench.yaml's pricing block (USD per million input, cached input, output and reasoning tokens; cached input at the input price and reasoning at the output price when the block gives none); null when no cell of the group has a cost. n_cost_known counts those cells, cost_missing the others by reason",
	CostPerPassedCell:    "cost_usd_total / cells whose check passed (objective_pass true); null when there is no cost or no such cell",
	CostPerCompletedTask: "sum of cost_usd over the agentic cells / agentic cells that completed the task; null when none has a cost or none completed",
}

// CostMethods is the cost part of Methods.
type CostMethods struct {
	Tokens               string `json:"tokens"`
	CostUSDTotal         string `json:"cost_usd_total"`
	CostPerPassedCell    string `json:"cost_per_passed_cell"`
	CostPerCompletedTask string `json:"cost_per_completed_task"`
}

// Cost are a group's token totals and cost figures, in summary.json's
// group object.
type Cost struct {
	InputTokensTotal       *int64 `json:"input_tokens_total"`
	CachedInputTokensTotal *int64 `json:"cached_input_tokens_total"`
	OutputTokensTotal      *int64 `json:"output_tokens_total"`
	ReasoningTokensTotal   *int64 `json:"reasoning_tokens_total"`

	CostUSDTotal         *float64 `json:"cost_usd_total"`
	CostPerPassedCell    *float64 `json:"cost_per_passed_cell"`
	CostPerCompletedTask *float64 `json:"cost_per_completed_task"`
	// NCostKnown counts the cells with a cost; CostMissing the others, by
	// why they have none (pricing.NoPrice, pricing.NoTokens, a cost that
	// is negative or not finite: pricing.BadCost).
	NCostKnown  int          `json:"n_cost_known"`
	CostMissing ReasonCounts `json:"cost_missing,omitempty"`
	// Problems say why a total above is null although cells had figures
	// (the costs or counts sum past what a total holds), or which cells'
	// figures were left out of it (a negative token count), each as
	// "field: what".
	Problems []string `json:"cost_problems,omitempty"`
}

// costAcc is what a group's Cost is computed from, held beside it while
// the records are read (in the aggregator's acc), not in the Group: 48
// bytes fewer per group brings a Group under a smaller allocation class
// (a run of 100,000 one-cell groups, issue 21 item 7). Its sums are
// pricing's, safe from overflow (16 bytes each).
type costAcc struct {
	usd, taskUSD               pricing.USD
	in, cached, out, reasoning pricing.Count
	nPassed, nTaskDone         int
	taskCostKnown              bool
}

// add counts one record's tokens and cost (k its group's sums).
func (c *Cost) add(k *costAcc, r *results.Record) {
	k.in.AddPtr(r.InputTokens)
	k.cached.AddPtr(r.CachedInputTokens)
	k.out.AddPtr(r.OutputTokens)
	k.reasoning.AddPtr(r.ReasoningTokens)
	if r.AvailabilityStatus == results.StatusOK && r.Success && r.ObjectivePass != nil && *r.ObjectivePass {
		k.nPassed++
	}
	agentic := len(r.TurnDetails) > 0 && counted(r)
	if agentic && Completed(r) {
		k.nTaskDone++
	}
	if r.CostUSD == nil || !pricing.ValidCost(*r.CostUSD) {
		// A negative or non-finite cost (written by an older bench, or
		// by hand) is no cost: counted by why, never summed.
		why := r.CostMissing
		if r.CostUSD != nil {
			why = pricing.BadCost
		}
		if why == "" {
			why = pricing.NoPrice
		}
		c.CostMissing.add(why)
		return
	}
	c.NCostKnown++
	k.usd.Add(*r.CostUSD)
	if agentic {
		k.taskUSD.Add(*r.CostUSD)
		k.taskCostKnown = true
	}
}

// finish computes the totals and the per-cell figures from k, and says
// what no total could hold.
func (c *Cost) finish(k *costAcc) {
	for _, t := range []struct {
		field string
		dst   **int64
		sum   *pricing.Count
	}{{"input_tokens_total", &c.InputTokensTotal, &k.in}, {"cached_input_tokens_total", &c.CachedInputTokensTotal, &k.cached},
		{"output_tokens_total", &c.OutputTokensTotal, &k.out}, {"reasoning_tokens_total", &c.ReasoningTokensTotal, &k.reasoning}} {
		*t.dst = t.sum.Total()
		if p := t.sum.Problem(); p != "" {
			c.Problems = append(c.Problems, t.field+": "+p)
		}
	}
	if c.NCostKnown == 0 {
		return
	}
	total := k.usd.Total()
	if total == nil {
		c.Problems = append(c.Problems, "cost_usd_total: "+k.usd.Problem())
		return
	}
	c.CostUSDTotal = RoundUSD(*total)
	if k.nPassed > 0 {
		c.CostPerPassedCell = RoundUSD(*total / float64(k.nPassed))
	}
	if task := k.taskUSD.Total(); task != nil && k.taskCostKnown && k.nTaskDone > 0 {
		c.CostPerCompletedTask = RoundUSD(*task / float64(k.nTaskDone))
	}
}

// RoundUSD keeps ten significant digits: sums of many small products
// otherwise print their float noise. A value no sum should hold (not
// finite) is returned as it is, never made a NaN.
func RoundUSD(v float64) *float64 {
	if v == 0 || math.IsInf(v, 0) || math.IsNaN(v) {
		return &v
	}
	scale := math.Pow(10, 9-math.Floor(math.Log10(math.Abs(v))))
	if math.IsInf(scale, 0) || scale == 0 {
		return &v // past float64's range either way: already exact enough
	}
	r := math.Round(v*scale) / scale
	if math.IsInf(r, 0) || math.IsNaN(r) {
		r = v
	}
	return &r
}

// AnyCost says whether some group of s has a known cost: the terminal
// table, summary.md and report.html show cost only then.
func AnyCost(s *Summary) bool {
	if s.droppedCost {
		return true // a group DropGroups let go had one
	}
	for _, g := range s.Groups {
		if g.CostUSDTotal != nil {
			return true
		}
	}
	return false
}

// FormatUSD shows a dollar amount with four significant digits at least
// two decimals: $12.35, $0.004213.
func FormatUSD(v *float64) string {
	if v == nil {
		return "–"
	}
	x := *v
	switch a := math.Abs(x); {
	case a == 0:
		return "$0"
	case a >= 100:
		return fmt.Sprintf("$%.0f", x)
	case a >= 1:
		return fmt.Sprintf("$%.2f", x)
	default:
		d := int(3 - math.Floor(math.Log10(a)))
		return fmt.Sprintf("$%.*f", d, x)
	}
}

// CostMissingText is a group's cost_missing as one line: "12 cells: no
// price for the model...; 2 cells: the provider reported no...".
func CostMissingText(g *Group) string {
	parts := make([]string, len(g.CostMissing))
	for i, c := range g.CostMissing.sorted() {
		parts[i] = format.Plural(c.N, "cell") + ": " + c.Reason
	}
	return strings.Join(parts, "; ")
}

// ReasonCounts counts cells by reason (cost_missing). It is a short list
// where a map[string]int was: a group has one reason or two, and a map
// per group cost a run of 100,000 one-cell groups 25 MB (issue 21, item
// 7). In JSON it is the object a map would be, {"reason": n}, keys sorted.
type ReasonCounts []ReasonCount

// ReasonCount is one reason and how many cells gave it.
type ReasonCount struct {
	Reason string
	N      int
}

// Get is how many cells gave the reason (0 when none did).
func (c ReasonCounts) Get(reason string) int {
	for _, r := range c {
		if r.Reason == reason {
			return r.N
		}
	}
	return 0
}

// add counts one cell of the reason.
func (c *ReasonCounts) add(reason string) {
	for i := range *c {
		if (*c)[i].Reason == reason {
			(*c)[i].N++
			return
		}
	}
	*c = append(*c, ReasonCount{Reason: reason, N: 1})
}

// sorted are the counts by reason, as a map's JSON lists them.
func (c ReasonCounts) sorted() ReasonCounts {
	out := slices.Clone(c)
	slices.SortFunc(out, func(a, b ReasonCount) int { return strings.Compare(a.Reason, b.Reason) })
	return out
}

// MarshalJSON writes the counts as a JSON object, byte for byte what
// the map[string]int they replace wrote. HTML is left unescaped here: an
// encoder that escapes it (json.Marshal) does so over this output too.
func (c ReasonCounts) MarshalJSON() ([]byte, error) {
	if c == nil {
		return []byte("null"), nil
	}
	m := make(map[string]int, len(c))
	for _, r := range c {
		m[r.Reason] = r.N
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(m); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// UnmarshalJSON reads the object MarshalJSON writes (summary.json read
// back), in key order.
func (c *ReasonCounts) UnmarshalJSON(b []byte) error {
	var m map[string]int
	if err := json.Unmarshal(b, &m); err != nil {
		return err
	}
	if m == nil {
		*c = nil
		return nil
	}
	out := make(ReasonCounts, 0, len(m))
	for k, n := range m {
		out = append(out, ReasonCount{Reason: k, N: n})
	}
	*c = out.sorted()
	return nil
}

// writeCost is summary.md's cost table, when some group has a cost: the
// tokens, the total and the per-pass and per-task figures, and why cells
// have none. Without a pricing block (and no provider's own cost) it is
// left out: no cost is shown that nobody priced.
func writeCost(b *strings.Builder, s *Summary) {
	if !AnyCost(s) {
		return
	}
	b.WriteString("## Cost\n\n")
	b.WriteString("USD: the provider's own figure where it reports one (the Claude Code CLI), else the reported tokens at bench.yaml's pricing block's prices. " +
		"Tokens are the totals the providers reported (cached input is part of input, reasoning part of output).\n\n")
	b.WriteString("| provider | model | thinking | cost | per passed cell | per completed task | input tokens | cached | output tokens | reasoning | cells without cost |\n")
	b.WriteString("|---|---|---|--:|--:|--:|--:|--:|--:|--:|---|\n")
	for _, g := range ranked(s) {
		missing := CostMissingText(g)
		if missing == "" {
			missing = "–"
		}
		fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", md(g.Provider), md(g.Model), level(g.ThinkingLevel),
			FormatUSD(g.CostUSDTotal), FormatUSD(g.CostPerPassedCell), FormatUSD(g.CostPerCompletedTask),
			count(g.InputTokensTotal), count(g.CachedInputTokensTotal), count(g.OutputTokensTotal), count(g.ReasoningTokensTotal), md(missing))
	}
	b.WriteString("\n")
}

func count(v *int64) string {
	if v == nil {
		return "–"
	}
	return fmt.Sprint(*v)
}
