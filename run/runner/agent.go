package runner

import (
	"context"
	"slices"
	"strings"
	"time"

	"bench/config"
	"bench/internal/record/forsy"
	"bench/internal/record/pricing"
	"bench/internal/record/results"
	"bench/prompts"
	"bench/providers"
	"bench/run/plan"
	"bench/toolparse"
	script "bench/validators/scripted"
)

// An agentic cell (a prompt with max_turns) is a loop: send the task, let
// the model call tools, answer each call from the task's script, send the
// results back, until the model replies without a call (its final answer)
// or max_turns replies have been made. The runner drives the loop for the
// providers that speak a request/response protocol (each turn is one
// Stream with the conversation so far in Request.Messages). A provider
// whose agent runs its own loop (providers.LoopOwner: the Claude Code CLI)
// gets the tools over MCP from bench's own server and runs the whole task
// in one Stream; the server's call log is bench's side of what was called.
//
// A text-mode task offers no native tools: the commands the model writes
// (found by toolparse) are the calls, and their outputs go back in one user
// message per turn.
//
// The record: tool_calls are every call's name in order; turns and
// turn_details hold each reply with its timing and calls; raw_output is the
// final reply; e2e_ms covers the whole task, from the answered request of
// turn 1 to the end of the last turn; ttft_ms is turn 1's. Tokens, chunks
// and retries are summed over the turns; provider_metrics are the last
// turn's. The checks judge the final answer and the whole trajectory (see
// scoreAgent).

// mcpServerName is the name bench's MCP server has in the CLI's config,
// so its tools are mcp__bench__<tool>.
const mcpServerName = "bench"

// textModeUnsupported is the failure_type of a text-mode task on a
// provider that owns its loop: the CLI calls tools natively only.
const textModeUnsupported = "text_tools_unsupported"

// agentLoop is what one agentic cell's loop produced.
type agentLoop struct {
	turns []results.Turn
	// calls are every call the model made, in order, for the checks.
	calls []toolparse.Call
	// final is the last reply's text; reasoning every reply's, joined;
	// redacted says the scrub changed final.
	final, reasoning string
	redacted         bool
	// end says why the loop stopped: "answered", "max_turns" or "error".
	end string
	// last is the last turn's response and err its error, classified as
	// the cell's.
	last *providers.Response
	err  error

	// in, out, thought (reasoning) and cached sum the turns' token counts, and cost
	// their costs as the provider reported them (pricing's overflow-safe
	// sums: a turn's bad figure makes the cell's unknown, and says why).
	in, out, thought, cached pricing.Count
	cost                     pricing.USD
	costSaid                 bool
	chunks, retries          int
	retryWaitMS              int64
	timeline                 []results.TimelineEvent
	first                    *stamps // turn 1's stamps: ttft, ttfr, ttfo, e2e start
	// answerRate and reasoningRate sum the turns' decode windows.
	answerRate, reasoningRate rateWindow
}

// Why an agentic loop stopped.
const (
	loopAnswered = "answered"
	loopMaxTurns = "max_turns"
	loopError    = "error"
)

// runAgentCell runs one agentic cell to completion and returns its record;
// like runCell it never fails.
func runAgentCell(parent context.Context, cfg *config.Config, clock Clock, prov providers.Provider, c plan.Cell, traceParent string) *results.Record {
	rec := newRecord(cfg, c)
	rec.ExpectedTools = agentExpectedTools(c.Prompt)
	req := providers.Request{Model: c.Model, System: c.Prompt.System, Prompt: c.Prompt.Prompt, Now: clock.Now, TraceParent: traceParent,
		MaxOutputBytes: cfg.Run.MaxOutputBytes, MaxTokens: c.Prompt.MaxTokens}
	if c.ThinkingLevel != nil {
		req.ThinkingLevel = *c.ThinkingLevel
	}
	ctx, cancel := context.WithTimeout(parent, time.Duration(cfg.Run.Timeout))
	defer cancel()
	start := clock.Now()
	secrets := prov.Secrets()

	describeInjection(rec, c.Prompt)
	var l *agentLoop
	if lo, ok := prov.(providers.LoopOwner); ok && lo.OwnsToolLoop() {
		if c.Prompt.TextMode() {
			textModeSkip(rec, start, clock.Now())
			finish(rec, cfg, secrets)
			return rec
		}
		l = runOwnLoop(ctx, cfg, clock, prov, c.Prompt, req, start)
	} else {
		l = runLoop(ctx, cfg, clock, prov, c.Prompt, req, start)
	}
	end := clock.Now()
	l.timeline = append(l.timeline, results.TimelineEvent{Event: results.EventEnd, AtMS: offset(start, end)})
	fillAgentRecord(rec, cfg, l, start, end)
	classify(rec, ctx, parent, l.err, l.last, secrets)
	scoreAgent(rec, c.Prompt, l)
	finish(rec, cfg, secrets)
	return rec
}

// A single-reply prompt judged on its native function calls (a BFCL case:
// prompts.Prompt.BFCL) must have its functions offered natively by every
// provider. A provider that owns its tool loop (the Claude Code CLI) offers
// a prompt's tools only over MCP, so such a cell runs as a one-turn task
// through bench's MCP server; its record is then made single-turn again
// (the reply's calls in tool_call_details, no turn_details), like the
// same cell's on an HTTP protocol.

// servesTools says whether the cell's tools go to the provider over MCP.
func servesTools(prov providers.Provider, p *prompts.Prompt) bool {
	lo, ok := prov.(providers.LoopOwner)
	return ok && lo.OwnsToolLoop() && !p.Agentic() && p.BFCL() != nil && len(p.NativeTools()) > 0
}

// runServedCell runs a single-reply prompt with tools as a one-turn task
// over MCP (see servesTools) and returns a single-turn record.
func runServedCell(parent context.Context, cfg *config.Config, clock Clock, prov providers.Provider, c plan.Cell, traceParent string) *results.Record {
	one := *c.Prompt
	one.MaxTurns = 1
	c.Prompt = &one
	rec := runAgentCell(parent, cfg, clock, prov, c, traceParent)
	rec.Turns, rec.TurnDetails = 0, nil
	return rec
}

// runLoop drives the loop turn by turn over a request/response protocol.
func runLoop(ctx context.Context, cfg *config.Config, clock Clock, prov providers.Provider, p *prompts.Prompt, req providers.Request, start time.Time) *agentLoop {
	l := &agentLoop{}
	sess := p.NewSession()
	text := p.TextMode()
	req.Tools = p.NativeTools()
	secrets := prov.Secrets()
	for n := 1; ; n++ {
		k := &stamps{clock: clock, cell: start}
		k.start = clock.Now()
		// The turn starts when its first request is on the wire (as the
		// cell's e2e and the turn's ttft are timed; connecting is queue
		// time), when it was sent for a protocol that does not say (the
		// CLI), or, for a provider that failed before sending, when it was
		// called.
		turnStart, sent, written := k.start, false, false
		resp, err := prov.Stream(ctx, req, func(e providers.Event) {
			k.emit(e)
			switch {
			case e.Kind == providers.EventRequestStart && !sent:
				turnStart, sent = k.start, true
			case e.Kind == providers.EventRequestWritten && !written:
				turnStart, written = k.start, true
			}
		})
		end := clock.Now()
		if resp == nil {
			resp = &providers.Response{}
		}
		clean(resp, secrets)
		redacted := cleanText(resp, secrets)
		l.addTurnStats(k, resp)
		if n == 1 {
			l.first = k
		}
		t := results.Turn{StartMS: offset(start, turnStart), EndMS: offset(start, end), TTFTMS: turnTTFT(k),
			Reasoning: cut(resp.Reasoning, cfg)}
		t.Text = cut(resp.Text, cfg)
		l.final, l.redacted, l.last, l.err = resp.Text, redacted, resp, err
		l.addReasoning(resp.Reasoning)

		var calls []toolparse.Call
		if text {
			calls = toolparse.Detect(nil, resp.Text)
		} else {
			calls = toolparse.Detect(resp.ToolCalls, "")
		}
		if err != nil {
			// The reply never completed: what it held of calls was not run.
			for _, c := range calls {
				t.Calls = append(t.Calls, unanswered(c, p.ToolNames()))
			}
			l.turns = append(l.turns, withError(t, err, secrets))
			l.calls = append(l.calls, calls...)
			l.end = loopError
			return l
		}
		l.calls = append(l.calls, calls...)
		switch {
		case len(calls) == 0:
			l.turns = append(l.turns, t)
			l.end = loopAnswered
			return l
		case n >= p.MaxTurns:
			for _, c := range calls {
				t.Calls = append(t.Calls, unanswered(c, p.ToolNames()))
			}
			l.turns = append(l.turns, t)
			l.end = loopMaxTurns
			return l
		}
		reply := providers.Message{Role: providers.RoleAssistant, Text: resp.Text}
		if !text {
			reply.ToolCalls = resp.ToolCalls
		}
		req.Messages = append(req.Messages, reply)
		var outputs []string
		for _, c := range calls {
			cs := clock.Now()
			r := sess.Answer(c.Name, c.Arguments)
			ce := clock.Now()
			t.Calls = append(t.Calls, answered(c, r, cfg, offset(start, cs), offset(start, ce)))
			if text {
				outputs = append(outputs, commandOutput(c, r.Text))
				continue
			}
			req.Messages = append(req.Messages, providers.Message{Role: providers.RoleTool, Text: r.Text, CallID: c.ID, Name: c.Name, IsError: r.IsError})
		}
		if text {
			req.Messages = append(req.Messages, providers.Message{Role: providers.RoleUser, Text: strings.Join(outputs, "\n\n")})
		}
		l.turns = append(l.turns, t)
	}
}

// commandOutput is how a text-mode command's result goes back: the command
// line as a shell prompt, then its output.
func commandOutput(c toolparse.Call, output string) string {
	cmd := c.Name
	if a, err := script.ParseArgs(c.Arguments); err == nil {
		if s, ok := a["command"].(string); ok && s != "" {
			cmd = s
		}
	}
	return "$ " + cmd + "\n" + output
}

// answered is the record of a call bench answered.
func answered(c toolparse.Call, r script.Result, cfg *config.Config, startMS, endMS float64) results.TurnCall {
	return results.TurnCall{ID: c.ID, Name: c.Name, Arguments: args(c.Arguments), Result: cut(r.Text, cfg), ResultHash: forsy.Hash(r.Text),
		IsError: r.IsError, Unknown: r.Unknown, Rule: r.Rule, FailFirst: r.FailFirst, StartMS: startMS, EndMS: endMS}
}

// unanswered is the record of a call the loop never ran.
func unanswered(c toolparse.Call, offered []string) results.TurnCall {
	return results.TurnCall{ID: c.ID, Name: c.Name, Arguments: args(c.Arguments), Rule: -1, Unanswered: true, Unknown: !slices.Contains(offered, c.Name)}
}

func args(a []byte) []byte {
	if len(a) == 0 {
		return results.EmptyArguments
	}
	return a
}

// withError marks a turn whose request failed.
func withError(t results.Turn, err error, secrets providers.Secrets) results.Turn {
	t.Error = secrets.Clean(err.Error(), 0)
	return t
}

// textModeSkip records a text-mode task on a provider that only calls
// tools natively: skipped, with the reason, nothing sent.
func textModeSkip(rec *results.Record, start, end time.Time) *results.Record {
	rec.StartedAtMS, rec.EndedAtMS = start.UnixMilli(), end.UnixMilli()
	rec.AvailabilityStatus = results.StatusSkippedUnavailable
	rec.FailureType = ptr(textModeUnsupported)
	rec.ErrorMessage = ptr("a text-mode task's tools are commands the model writes; this provider runs its own loop and calls tools natively (over MCP), so the task cannot run on it")
	rec.ToolCallDetails = []results.ToolCall{}
	return rec
}

// addTurnStats adds one turn's counts and its decode figures.
func (l *agentLoop) addTurnStats(k *stamps, resp *providers.Response) {
	l.timeline = append(l.timeline, k.timeline...)
	l.chunks += k.chunks
	l.retries += resp.Retries
	l.retryWaitMS += resp.RetryWaitMS
	l.in.AddPtr(resp.Usage.InputTokens)
	l.out.AddPtr(resp.Usage.OutputTokens)
	l.thought.AddPtr(resp.Usage.ReasoningTokens)
	l.cached.AddPtr(resp.Usage.CachedInputTokens)
	if resp.CostUSD != nil {
		l.cost.Add(*resp.CostUSD)
		l.costSaid = true
	}
	// Each turn's decode windows, as a single-turn cell's (see rates),
	// summed over the turns.
	a, r := rateWindows(resp.Usage, k)
	l.answerRate, l.reasoningRate = l.answerRate.add(a), l.reasoningRate.add(r)
}

func (l *agentLoop) addReasoning(r string) {
	if r == "" {
		return
	}
	if l.reasoning != "" {
		l.reasoning += "\n\n"
	}
	l.reasoning += r
}

// fillAgentRecord sets the timing and output fields of an agentic record.
func fillAgentRecord(rec *results.Record, cfg *config.Config, l *agentLoop, start, end time.Time) {
	if l.last == nil {
		l.last = &providers.Response{}
	}
	rec.StartedAtMS, rec.EndedAtMS = start.UnixMilli(), end.UnixMilli()
	from := start
	if k := l.first; k != nil {
		from = k.start
		if !k.token.IsZero() {
			rec.TTFTMS = ptr(ms(k.token.Sub(k.start)))
		}
		if !k.reasoning.IsZero() {
			rec.TTFRMS = ptr(ms(k.reasoning.Sub(k.start)))
		}
		if first := earliest(k.token, k.reasoning); !first.IsZero() {
			rec.TTFOMS = ptr(ms(first.Sub(k.start)))
		}
	}
	rec.E2EMS = ms(end.Sub(from))
	rec.Timeline = l.timeline
	rec.Chunks = l.chunks
	rec.Retries, rec.RetryWaitMS = l.retries, l.retryWaitMS
	rec.InputTokens, rec.OutputTokens, rec.ReasoningTokens = l.in.WholeInt(), l.out.WholeInt(), l.thought.WholeInt()
	rec.CachedInputTokens = l.cached.WholeInt()
	if l.costSaid {
		rec.CostUSD = l.cost.Whole()
		rec.CostMissing = l.cost.Problem()
	}
	for _, c := range []*pricing.Count{&l.in, &l.out, &l.thought, &l.cached} {
		if p := c.Problem(); p != "" && rec.CostMissing == "" {
			rec.CostMissing = p // the counts the cost would be priced from
		}
	}
	rec.FinishReason = l.last.FinishReason
	rec.ProviderMetrics = l.last.Metrics
	rec.RawOutputBytes = len(l.final)
	rec.RawOutput, rec.RawOutputTruncated = truncate(l.final, cfg.Run.MaxOutputBytes)
	rec.RawOutputRedacted = l.redacted
	rec.Reasoning, _ = truncate(l.reasoning, cfg.Run.MaxOutputBytes)
	rec.TokensPerS, rec.ReasoningTokensPerS = l.answerRate.rate(), l.reasoningRate.rate()
	rec.Turns = len(l.turns)
	rec.TurnDetails = l.turns
}

// offset is t's place on the cell's timeline, in ms with µs precision.
func offset(start, t time.Time) float64 {
	return float64(t.Sub(start).Microseconds()) / 1000
}

// turnTTFT is a turn's time to its first text or tool call, from the
// attempt that answered.
func turnTTFT(k *stamps) *float64 {
	if k.token.IsZero() {
		return nil
	}
	return ptr(float64(k.token.Sub(k.start).Microseconds()) / 1000)
}

// cut keeps at most max_output_bytes of a text.
func cut(s string, cfg *config.Config) string {
	s, _ = truncate(s, cfg.Run.MaxOutputBytes)
	return s
}
