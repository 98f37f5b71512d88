package runner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"bench/config"
	"bench/internal/record/forsy"
	"bench/internal/record/results"
	"bench/prompts"
	"bench/providers"
	"bench/providers/mcpserve"
	"bench/toolparse"
)

// MCPServeCommand is the subcommand of the running executable that serves
// a task's tools over MCP: `<executable> mcp-serve TASKFILE CALLLOG`
// (cmd/bench has it; a test binary that runs CLI cells handles it in its
// TestMain).
const MCPServeCommand = "mcp-serve"

// runOwnLoop runs an agentic task on a provider that owns its tool loop:
// bench's MCP server (this executable, `mcp-serve`) serves the task's
// tools from a task file in a temporary directory and logs every call it
// answers; the provider's agent runs the loop in one Stream. The turns are
// the provider's (what the model wrote and when); each call's arguments
// and answer are bench's, from the call log, joined by the call's id. A
// call that never reached bench (an unknown or refused tool) keeps what
// the agent answered itself.
func runOwnLoop(ctx context.Context, cfg *config.Config, clock Clock, prov providers.Provider, p *prompts.Prompt, req providers.Request, start time.Time) *agentLoop {
	l := &agentLoop{last: &providers.Response{}}
	k := &stamps{clock: clock, cell: start}
	k.start = clock.Now()
	l.first = k
	dir, mcp, err := mcpSetup(p)
	if dir != "" {
		defer os.RemoveAll(dir)
	}
	if err != nil {
		l.err, l.end = err, loopError
		l.turns = []results.Turn{{StartMS: offset(start, k.start), EndMS: offset(start, clock.Now()), Error: err.Error()}}
		return l
	}
	mcp.MaxTurns = p.MaxTurns
	req.MCP = mcp
	resp, err := prov.Stream(ctx, req, k.emit)
	end := clock.Now()
	if resp == nil {
		resp = &providers.Response{}
	}
	secrets := prov.Secrets()
	clean(resp, secrets)
	cleanText(resp, secrets)
	redacted := cleanTurns(resp.Turns, secrets)
	l.addTurnStats(k, resp)
	l.last, l.err = resp, err
	log, lerr := readCallLog(filepath.Join(dir, "calls.jsonl"))
	if lerr != nil && err == nil {
		l.err = lerr
	}
	l.ownTurns(cfg, p, resp.Turns, log, start)
	n := len(l.turns)
	switch {
	case l.err != nil:
		l.end = loopError
		msg := secrets.Clean(l.err.Error(), 0)
		if n > 0 && !anyAnswered(l.turns[n-1]) {
			// The reply being streamed is the one that failed.
			l.turns[n-1].Error = msg
			for j := range l.turns[n-1].Calls {
				c := &l.turns[n-1].Calls[j]
				*c = results.TurnCall{ID: c.ID, Name: c.Name, Arguments: c.Arguments, Unknown: c.Unknown, Rule: -1, Unanswered: true}
			}
			break
		}
		// A reply was complete (and its calls run): the failure is that
		// of the next request.
		from := k.start
		if n > 0 {
			from = start.Add(time.Duration(lastMS(l.turns[n-1]) * float64(time.Millisecond)))
		}
		l.turns = append(l.turns, results.Turn{StartMS: offset(start, from), EndMS: offset(start, end), Error: msg})
	case n > 0 && len(l.turns[n-1].Calls) > 0:
		l.end = loopMaxTurns
		l.final, l.redacted = resp.Turns[n-1].Text, redacted[n-1]
	case n > 0:
		l.end = loopAnswered
		l.final, l.redacted = resp.Turns[n-1].Text, redacted[n-1]
	default:
		l.end = loopAnswered // no reply at all: classified as an empty answer
	}
	for _, t := range resp.Turns {
		l.addReasoning(t.Reasoning)
	}
	return l
}

// anyAnswered says whether any call of a turn was answered.
func anyAnswered(t results.Turn) bool {
	for _, c := range t.Calls {
		if !c.Unanswered {
			return true
		}
	}
	return false
}

// lastMS is the latest time of a turn: its end, or a call's end after it.
func lastMS(t results.Turn) float64 {
	at := t.EndMS
	for _, c := range t.Calls {
		at = max(at, c.EndMS)
	}
	return at
}

// mcpSetup writes the task file and names the call log in a new temporary
// directory, and returns the MCP configuration that runs this executable
// as the server.
func mcpSetup(p *prompts.Prompt) (string, *providers.MCP, error) {
	exe, err := os.Executable()
	if err != nil {
		return "", nil, fmt.Errorf("mcp server: find bench's executable: %w", err)
	}
	dir, err := os.MkdirTemp("", "bench-mcp-")
	if err != nil {
		return "", nil, fmt.Errorf("mcp server: %w", err)
	}
	task, err := mcpserve.MarshalTask(p.Tools)
	if err != nil {
		return dir, nil, fmt.Errorf("mcp server: task file: %w", err)
	}
	taskPath, logPath := filepath.Join(dir, "task.json"), filepath.Join(dir, "calls.jsonl")
	if err := os.WriteFile(taskPath, task, 0o600); err != nil {
		return dir, nil, fmt.Errorf("mcp server: %w", err)
	}
	conf, err := mcpserve.CLIConfig(mcpServerName, exe, MCPServeCommand, taskPath, logPath)
	if err != nil {
		return dir, nil, fmt.Errorf("mcp server: %w", err)
	}
	return dir, &providers.MCP{Config: conf, Server: mcpServerName}, nil
}

// readCallLog reads the server's call log; a server that never started
// (the agent failed first) left none, which means no call.
func readCallLog(path string) ([]mcpserve.CallRecord, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("mcp call log: %w", err)
	}
	defer f.Close()
	return mcpserve.ReadCallLog(f)
}

// ownTurns turns the agent's turns and bench's call log into the record's
// turns and the trajectory. A call's name is the task's tool name when
// the model called one of bench's tools (mcp__bench__<tool>), else the
// name as the model wrote it.
func (l *agentLoop) ownTurns(cfg *config.Config, p *prompts.Prompt, turns []providers.Turn, log []mcpserve.CallRecord, start time.Time) {
	offered := p.ToolNames()
	used := make([]bool, len(log))
	byID := map[string]int{}
	for i, r := range log {
		if r.ToolUseID != "" {
			byID[r.ToolUseID] = i
		}
	}
	for _, t := range turns {
		rt := results.Turn{StartMS: offset(start, t.Start), EndMS: offset(start, t.End), Text: cut(t.Text, cfg), Reasoning: cut(t.Reasoning, cfg)}
		if !t.FirstOutput.IsZero() {
			rt.TTFTMS = ptr(float64(t.FirstOutput.Sub(t.Start).Microseconds()) / 1000)
		}
		for _, ac := range t.Calls {
			name := taskToolName(ac.Call.Name, offered)
			i, ok := byID[ac.Call.ID]
			if !ok || used[i] {
				i = nextUnused(log, used, name)
			}
			made := ac.Made
			if made.IsZero() {
				made = t.End
			}
			done := ac.Answered
			if done.IsZero() {
				done = made
			}
			tc := results.TurnCall{ID: ac.Call.ID, Name: name, Arguments: args(ac.Call.Arguments), Rule: -1,
				StartMS: offset(start, made), EndMS: offset(start, done)}
			switch {
			case i >= 0:
				used[i] = true
				r := log[i]
				tc.Arguments, tc.Result, tc.ResultHash = args(r.Arguments), cut(r.Result, cfg), forsy.Hash(r.Result)
				tc.IsError, tc.Unknown, tc.Rule, tc.FailFirst = r.IsError, r.Unknown, r.Rule, r.FailFirst
			case !ac.Answered.IsZero():
				// The agent answered it without bench: an unknown tool,
				// or one it refused to run.
				tc.Result, tc.ResultHash, tc.IsError = cut(ac.Result, cfg), forsy.Hash(ac.Result), ac.IsError
				tc.Unknown = !slices.Contains(offered, name)
			default:
				tc.Unanswered = true
				tc.Unknown = !slices.Contains(offered, name)
			}
			rt.Calls = append(rt.Calls, tc)
			l.calls = append(l.calls, toolparse.Call{ID: tc.ID, Name: name, Arguments: tc.Arguments, Source: toolparse.SourceNative})
		}
		l.turns = append(l.turns, rt)
	}
	// Calls bench answered that the agent's stream did not show (a build
	// that hides them): they happened, so they belong to the last turn.
	for i, r := range log {
		if used[i] || len(l.turns) == 0 {
			continue
		}
		at := offset(start, r.Time)
		tc := results.TurnCall{ID: r.ToolUseID, Name: r.Tool, Arguments: args(r.Arguments), Result: cut(r.Result, cfg), ResultHash: forsy.Hash(r.Result),
			IsError: r.IsError, Unknown: r.Unknown, Rule: r.Rule, FailFirst: r.FailFirst, StartMS: at, EndMS: at}
		last := &l.turns[len(l.turns)-1]
		last.Calls = append(last.Calls, tc)
		l.calls = append(l.calls, toolparse.Call{ID: tc.ID, Name: tc.Name, Arguments: tc.Arguments, Source: toolparse.SourceNative})
	}
}

// nextUnused is the first call of the log not joined yet that has no id
// and the tool's name, or -1: how calls are joined when ids are missing.
func nextUnused(log []mcpserve.CallRecord, used []bool, name string) int {
	for i, r := range log {
		if !used[i] && r.ToolUseID == "" && r.Tool == name {
			return i
		}
	}
	return -1
}

// taskToolName maps the name a model called to the task's tool name:
// mcp__bench__<tool> is <tool> when the task offers it.
func taskToolName(called string, offered []string) string {
	if t, ok := strings.CutPrefix(called, "mcp__"+mcpServerName+"__"); ok && slices.Contains(offered, t) {
		return t
	}
	return called
}

// cleanTurns removes the provider's secrets from the turns it reported.
func cleanTurns(turns []providers.Turn, secrets providers.Secrets) (redacted []bool) {
	redacted = make([]bool, len(turns))
	for i := range turns {
		t := &turns[i]
		text := secrets.Clean(t.Text, 0)
		redacted[i] = text != t.Text
		t.Text, t.Reasoning = text, secrets.Clean(t.Reasoning, 0)
		for j := range t.Calls {
			c := &t.Calls[j]
			c.Result = secrets.Clean(c.Result, 0)
			c.Call.Name = secrets.Clean(c.Call.Name, 0)
			c.Call.ID = secrets.Clean(c.Call.ID, maxShortField)
			c.Call.Arguments = secrets.JSON(c.Call.Arguments)
		}
	}
	return redacted
}
