package prompts

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"

	"bench/internal/record/results"
	"bench/internal/record/rundir"
	"bench/validators"
	"bench/validators/scripted"
)

// RoleTool is a HistoryMessage holding the result of one of the assistant's
// calls (a replayed agentic turn's history).
const RoleTool = "tool"

// ReplaySource begins a replayed turn's Source (then the run directory).
const ReplaySource = "replay:"

// MaxReplayTurns bounds the prompts a replay makes: a run directory of a
// million agentic turns is not a load profile anyone meant.
const MaxReplayTurns = 100_000

// ReplayError is a replay source that cannot be replayed: Field is the
// key of prompts.replay at fault ("run"), Msg why.
type ReplayError struct{ Field, Msg string }

func (e *ReplayError) Error() string { return e.Msg }

// Replay makes load out of a recorded run's agentic cells (prompts with
// max_turns): one prompt per model request the cell made, in the order the
// run sent them. Turn t of a cell sends what the model saw then: the
// task's system message and prompt, the tools it offered, and for every
// turn before, the model's reply (its text and its calls, ids included)
// and what bench answered to each call (a text-mode command's output as
// the user message bench sent). The replies in the history are the
// recorded ones, cut where the run cut them (run.max_output_bytes), not
// the model being loaded now: every turn can be sent when the load says,
// and a server's prefix cache meets the same growing context an agent
// sends. Conversation is R<n> (the n-th replayed cell) and Turn the turn,
// so the per-turn figures (summary.json's conversation_turns) come out as
// for generated conversations. ReplayAtMS is when the recorded run sent
// the turn, from its first replayed turn: the think time between turns
// (the model's reply, bench's tool answers) is in it, for load.arrival:
// recorded. Every recorded turn is replayed, one whose reply failed too
// (its request was sent); a warm-up stage's cells are not.
//
// dir is the run directory; its config.json holds the tasks (system,
// prompt, tools) and its results.jsonl the turns. A directory that is not
// a run, or whose run has no agentic cell, is a *ReplayError.
func Replay(dir string) ([]Prompt, error) {
	tasks, err := replayTasks(dir)
	if err != nil {
		return nil, err
	}
	type turn struct {
		p  Prompt
		at int64 // µs since the epoch
	}
	// A cell written twice (a resumed run's retry) is replayed once, as
	// its last line has it.
	byCell := map[string][]turn{}
	var order []string
	n := 0
	path := rundir.Path(dir, rundir.ResultsFile)
	_, _, err = results.ReadFile(path, false, func(_ int, r *results.Record) error {
		task, ok := tasks[r.PromptID]
		if !ok || len(r.TurnDetails) == 0 || r.Stage == "warmup" {
			return nil
		}
		thinking := ""
		if r.ThinkingLevel != nil {
			thinking = *r.ThinkingLevel
		}
		key := strings.Join([]string{r.Provider, r.Model, thinking, r.PromptID, fmt.Sprint(r.Repetition), r.Stage}, "\x00")
		if _, seen := byCell[key]; !seen {
			order = append(order, key)
		}
		n += len(r.TurnDetails) - len(byCell[key])
		if n > MaxReplayTurns {
			return errTooManyTurns
		}
		start := r.StartedAtUS
		if start == 0 {
			start = r.StartedAtMS * 1000
		}
		var hist []HistoryMessage
		tools := task.NativeTools()
		cell := make([]turn, 0, len(r.TurnDetails))
		for i, t := range r.TurnDetails {
			p := Prompt{
				Name:      fmt.Sprintf("replay of %s/%s %s repetition %d turn %d", r.Provider, r.Model, r.PromptID, r.Repetition, i+1),
				System:    task.System,
				Prompt:    task.Prompt,
				Tools:     tools,
				History:   slices.Clip(slices.Clone(hist)),
				Turn:      i + 1,
				MaxTokens: task.MaxTokens,
				Validator: &validators.Spec{Type: "noop"},
				Source:    ReplaySource + dir,
			}
			cell = append(cell, turn{p, start + int64(t.StartMS*1000)})
			hist = append(hist, replied(t, task.TextMode())...)
		}
		byCell[key] = cell
		return nil
	})
	var turns []turn
	for i, key := range order {
		conv := fmt.Sprintf("R%d", i+1)
		for _, t := range byCell[key] {
			t.p.Conversation, t.p.ID = conv, fmt.Sprintf("%sT%d", conv, t.p.Turn)
			turns = append(turns, t)
		}
	}
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, &ReplayError{"run", fmt.Sprintf("%s has no %s: name a run directory bench wrote", dir, rundir.ResultsFile)}
	case err != nil:
		return nil, &ReplayError{"run", err.Error()}
	case errors.Is(err, errTooManyTurns):
		return nil, &ReplayError{"run", fmt.Sprintf("%s has more than %d agentic turns to replay", dir, MaxReplayTurns)}
	case len(turns) == 0:
		return nil, &ReplayError{"run", fmt.Sprintf("%s has no agentic cells (prompts with max_turns and recorded turns): nothing to replay", dir)}
	}
	slices.SortStableFunc(turns, func(a, b turn) int {
		if a.at != b.at {
			return compareInt(a.at, b.at)
		}
		return compareInt(int64(a.p.Turn), int64(b.p.Turn))
	})
	out := make([]Prompt, len(turns))
	for i, t := range turns {
		out[i] = t.p
		out[i].ReplayAtMS = float64(t.at-turns[0].at) / 1000
	}
	return out, nil
}

var errTooManyTurns = errors.New("too many turns")

func compareInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// replied is what a recorded turn added to the conversation for the next:
// the model's reply, then bench's answers to its calls (as tool messages,
// or for a text-mode task one user message of the commands' outputs). A
// call the loop never answered (max_turns) adds nothing.
func replied(t results.Turn, text bool) []HistoryMessage {
	reply := HistoryMessage{Role: RoleAssistant, Text: t.Text}
	var answers []HistoryMessage
	var outputs []string
	for _, c := range t.Calls {
		if c.Unanswered {
			continue
		}
		if text {
			outputs = append(outputs, commandOutput(c, c.Result))
			continue
		}
		reply.ToolCalls = append(reply.ToolCalls, results.ToolCall{ID: c.ID, Name: c.Name, Arguments: slices.Clone(c.Arguments), Source: results.SourceNative})
		answers = append(answers, HistoryMessage{Role: RoleTool, Text: c.Result, CallID: c.ID, Name: c.Name, IsError: c.IsError})
	}
	out := append([]HistoryMessage{reply}, answers...)
	if len(outputs) > 0 {
		out = append(out, HistoryMessage{Role: RoleUser, Text: strings.Join(outputs, "\n\n")})
	}
	return out
}

// commandOutput is a text-mode command's result as the agent loop sends
// it back: the command line, then its output.
func commandOutput(c results.TurnCall, output string) string {
	cmd := c.Name
	if a, err := scripted.ParseArgs(c.Arguments); err == nil {
		if s, ok := a["command"].(string); ok && s != "" {
			cmd = s
		}
	}
	return "$ " + cmd + "\n" + output
}

// replayTasks reads the tasks of a run's config.json (its prompt_set): the
// agentic ones, by id, with what a request of theirs sends.
func replayTasks(dir string) (map[string]*Prompt, error) {
	path := rundir.Path(dir, rundir.ConfigFile)
	data, err := rundir.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, &ReplayError{"run", fmt.Sprintf("%s has no %s, which holds the tasks to replay: name a run directory bench wrote", dir, rundir.ConfigFile)}
	} else if err != nil {
		return nil, &ReplayError{"run", err.Error()}
	}
	var cfg struct {
		PromptSet []struct {
			ID        string `json:"id"`
			System    string `json:"system"`
			Prompt    string `json:"prompt"`
			MaxTurns  int    `json:"max_turns"`
			MaxTokens int    `json:"max_tokens"`
			Tools     []struct {
				Name        string         `json:"name"`
				Description string         `json:"description"`
				Parameters  map[string]any `json:"parameters"`
				Mode        string         `json:"mode"`
			} `json:"tools"`
		} `json:"prompt_set"`
	}
	if err := json.Unmarshal(data, &cfg); err != nil {
		return nil, &ReplayError{"run", fmt.Sprintf("%s: %v", path, err)}
	}
	tasks := map[string]*Prompt{}
	for _, d := range cfg.PromptSet {
		if d.MaxTurns <= 0 {
			continue
		}
		p := &Prompt{ID: d.ID, System: d.System, Prompt: d.Prompt, MaxTokens: d.MaxTokens}
		for _, t := range d.Tools {
			p.Tools = append(p.Tools, Tool{Name: t.Name, Description: t.Description, Parameters: t.Parameters, Mode: t.Mode})
		}
		tasks[d.ID] = p
	}
	if len(tasks) == 0 {
		return nil, &ReplayError{"run", fmt.Sprintf("%s has no agentic cells (its prompt_set has no prompt with max_turns): nothing to replay", dir)}
	}
	return tasks, nil
}
