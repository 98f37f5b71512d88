package report

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"bench/pricing"
	"bench/results"
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
	// why they have none (pricing.NoPrice, pricing.NoTokens).
	NCostKnown  int            `json:"n_cost_known"`
	CostMissing map[string]int `json:"cost_missing,omitempty"`

	usd, taskUSD          float64
	nPassed, nTaskPriced  int
	nTaskDone             int
	taskCostKnown, priced bool
}

// add counts one record's tokens and cost.
func (c *Cost) add(r *results.Record) {
	c.InputTokensTotal = addCount(c.InputTokensTotal, r.InputTokens)
	c.CachedInputTokensTotal = addCount(c.CachedInputTokensTotal, r.CachedInputTokens)
	c.OutputTokensTotal = addCount(c.OutputTokensTotal, r.OutputTokens)
	c.ReasoningTokensTotal = addCount(c.ReasoningTokensTotal, r.ReasoningTokens)
	if r.AvailabilityStatus == results.StatusOK && r.Success && r.ObjectivePass != nil && *r.ObjectivePass {
		c.nPassed++
	}
	agentic := len(r.TurnDetails) > 0 && counted(r)
	if agentic && Completed(r) {
		c.nTaskDone++
	}
	if r.CostUSD == nil {
		why := r.CostMissing
		if why == "" {
			why = pricing.NoPrice
		}
		if c.CostMissing == nil {
			c.CostMissing = map[string]int{}
		}
		c.CostMissing[why]++
		return
	}
	c.NCostKnown++
	c.usd += *r.CostUSD
	c.priced = true
	if agentic {
		c.taskUSD += *r.CostUSD
		c.taskCostKnown = true
	}
}

func addCount(total *int64, n *int) *int64 {
	if n == nil {
		return total
	}
	v := int64(*n)
	if total != nil {
		v += *total
	}
	return &v
}

// finish computes the totals and the per-cell figures.
func (c *Cost) finish() {
	if !c.priced {
		return
	}
	c.CostUSDTotal = RoundUSD(c.usd)
	if c.nPassed > 0 {
		c.CostPerPassedCell = RoundUSD(c.usd / float64(c.nPassed))
	}
	if c.taskCostKnown && c.nTaskDone > 0 {
		c.CostPerCompletedTask = RoundUSD(c.taskUSD / float64(c.nTaskDone))
	}
}

// RoundUSD keeps ten significant digits: sums of many small products
// otherwise print their float noise.
func RoundUSD(v float64) *float64 {
	if v == 0 {
		return &v
	}
	scale := math.Pow(10, 9-math.Floor(math.Log10(math.Abs(v))))
	r := math.Round(v*scale) / scale
	return &r
}

// AnyCost says whether some group of s has a known cost: the terminal
// table, summary.md and report.html show cost only then.
func AnyCost(s *Summary) bool {
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
	keys := make([]string, 0, len(g.CostMissing))
	for k := range g.CostMissing {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = Plural(g.CostMissing[k], "cell") + ": " + k
	}
	return strings.Join(parts, "; ")
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
