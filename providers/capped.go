package providers

import "strings"

// Bounds on what a cell keeps of a stream, whatever the server sends. The
// answer, the reasoning and the tool calls' arguments are each kept up to
// Request.MaxOutputBytes while they stream; the rest is counted and
// dropped, so a server that floods cannot grow bench's memory.
const (
	// DefaultMaxOutputBytes is the cap when a Request sets none (the
	// config's default max_output_bytes).
	DefaultMaxOutputBytes = 64 << 10
	// CapSlack is how far past the cap a stream is kept: enough for a
	// secret that straddles the cut to be found whole by the runner's
	// scrub, which then cuts at the cap (scrub, then cut).
	CapSlack = 4 << 10
	// MaxToolCalls bounds the native tool calls kept of one reply; further
	// calls are counted in provider_metrics.tool_calls_dropped.
	MaxToolCalls = 256
	// maxToolName bounds a tool call's name (names arrive in pieces too).
	maxToolName = 1 << 10
)

// capLimit is what a stream keeps of each output field for a request.
func capLimit(req Request) int {
	if req.MaxOutputBytes > 0 {
		return req.MaxOutputBytes + CapSlack
	}
	return DefaultMaxOutputBytes + CapSlack
}

// capped is a string builder that keeps at most limit bytes of what is
// written to it and counts all of it. With a pool, what it keeps also
// comes out of the pool, so the tool calls of one reply share one budget.
type capped struct {
	b     strings.Builder
	limit int
	total int
	pool  *int
}

func newCapped(limit int) *capped { return &capped{limit: limit} }

// WriteString appends what fits of s and counts all of it.
func (c *capped) WriteString(s string) {
	c.total += len(s)
	room := c.limit - c.b.Len()
	if c.pool != nil {
		room = min(room, *c.pool)
	}
	if room <= 0 || s == "" {
		return
	}
	if len(s) > room {
		s = s[:room]
	}
	c.b.WriteString(s)
	if c.pool != nil {
		*c.pool -= len(s)
	}
}

// String is what was kept.
func (c *capped) String() string { return c.b.String() }

// Len is how many bytes were kept.
func (c *capped) Len() int { return c.b.Len() }

// Total is how many bytes were written, kept or not.
func (c *capped) Total() int { return c.total }

// Cut says whether anything written was dropped.
func (c *capped) Cut() bool { return c.total > c.b.Len() }

// toolBudget bounds the tool calls of one reply: how many are kept, and
// one byte budget shared by their arguments. It counts what it drops.
type toolBudget struct {
	left    int // bytes of arguments still to be kept
	calls   int // calls kept
	dropped int // calls not kept (past MaxToolCalls)
	cut     int // calls whose arguments were cut
	limit   int
}

func newToolBudget(limit int) *toolBudget { return &toolBudget{left: limit, limit: limit} }

// admit says whether one more call may be kept, counting it either way.
func (t *toolBudget) admit() bool {
	if t.calls >= MaxToolCalls {
		t.dropped++
		return false
	}
	t.calls++
	return true
}

// args returns a builder for one call's arguments, drawing on the budget.
func (t *toolBudget) args() *capped { return &capped{limit: t.limit, pool: &t.left} }

// name returns a builder for one call's name.
func (t *toolBudget) name() *capped { return newCapped(maxToolName) }

// keep returns what fits of a whole argument text (a call that arrives in
// one piece), noting a cut.
func (t *toolBudget) keep(s string) string {
	c := t.args()
	c.WriteString(s)
	t.noteCut(c)
	return c.String()
}

// noteCut counts a call whose arguments were cut.
func (t *toolBudget) noteCut(c *capped) {
	if c.Cut() {
		t.cut++
	}
}

// report records what was dropped in the response's metrics.
func (t *toolBudget) report(resp *Response) {
	if t.dropped == 0 && t.cut == 0 {
		return
	}
	if resp.Metrics == nil {
		resp.Metrics = map[string]any{}
	}
	if t.dropped > 0 {
		resp.Metrics["tool_calls_dropped"] = t.dropped
	}
	if t.cut > 0 {
		resp.Metrics["tool_arguments_cut"] = t.cut
	}
}

// setOutput puts the kept answer and reasoning into resp with their full
// lengths.
func setOutput(resp *Response, text, reasoning *capped) {
	resp.Text, resp.TextBytes = text.String(), text.Total()
	resp.Reasoning, resp.ReasoningBytes = reasoning.String(), reasoning.Total()
}
