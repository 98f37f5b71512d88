package validators

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"bench/internal/record/results"
)

// CommandInput is the JSON object a command validator reads on its stdin,
// one object, then end of input.
type CommandInput struct {
	PromptID string `json:"prompt_id"`
	// System and Prompt are what the model was asked.
	System string `json:"system"`
	Prompt string `json:"prompt"`
	// Answer is the answer text as recorded (raw_output; an agentic
	// task's final answer).
	Answer string `json:"answer"`
	// ToolCalls are the calls the model made (native ones and commands
	// found in its text), as tool_call_details records them.
	ToolCalls []results.ToolCall `json:"tool_calls"`
	// Expected is the spec's expected value (null when it has none), and
	// ExpectedTools the tools the prompt's checks expect.
	Expected      json.RawMessage `json:"expected"`
	ExpectedTools []string        `json:"expected_tools"`
}

// NewCommandInput is what a command validator of the spec is handed for
// an answer to a prompt (id, system message, text).
func (s *Spec) NewCommandInput(id, system, prompt, answer string, calls []results.ToolCall, expectedTools []string) CommandInput {
	in := CommandInput{PromptID: id, System: system, Prompt: prompt, Answer: answer, ToolCalls: calls,
		ExpectedTools: expectedTools, Expected: json.RawMessage("null")}
	if raw, ok := s.Expected.(json.RawMessage); ok && len(raw) > 0 {
		in.Expected = raw
	}
	if in.ToolCalls == nil {
		in.ToolCalls = []results.ToolCall{}
	}
	if in.ExpectedTools == nil {
		in.ExpectedTools = []string{}
	}
	return in
}

// CommandVerdict is what a command validator concluded: the object it
// printed, or its exit code's meaning.
type CommandVerdict struct {
	Pass   bool     `json:"pass"`
	Score  *float64 `json:"score,omitempty"`
	Reason string   `json:"reason,omitempty"`
	// ExitCode is the program's exit status.
	ExitCode int `json:"exit_code"`
}

// ParseCommandVerdict reads what a command validator said: its stdout (at
// most what bench kept of it) and its exit code. An empty stdout leaves
// the verdict to the exit code: 0 passes, 1 fails, anything else is an
// error. Otherwise stdout must be one JSON object {"pass": bool,
// "reason": string, "score": number}, pass required and no other key, and
// the exit code 0 or 1 and, if 1, not saying pass. Logs belong on stderr.
func ParseCommandVerdict(stdout []byte, exitCode int) (CommandVerdict, error) {
	v := CommandVerdict{ExitCode: exitCode}
	body := strings.TrimSpace(string(stdout))
	if exitCode != 0 && exitCode != 1 {
		return v, fmt.Errorf("exit status %d (0 passes, 1 fails; anything else is an error)", exitCode)
	}
	if body == "" {
		v.Pass = exitCode == 0
		if !v.Pass {
			v.Reason = "exit status 1"
		}
		return v, nil
	}
	if body[0] != '{' {
		return v, fmt.Errorf("stdout is not a verdict object (print {\"pass\": true|false, \"reason\": \"...\"} or nothing, and logs on stderr): %s", quote(shorten(body)))
	}
	keys, err := objectKeys(body)
	if err != nil {
		return v, fmt.Errorf("stdout: %w", err)
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal([]byte(body), &raw); err != nil {
		return v, fmt.Errorf("stdout: not JSON: %s", shorten(err.Error()))
	}
	for _, k := range keys {
		if k != "pass" && k != "reason" && k != "score" {
			return v, fmt.Errorf("stdout: unknown key %q (a verdict has pass, reason and score)", shorten(k))
		}
	}
	pr, ok := raw["pass"]
	if !ok || decodeValue(pr, &v.Pass) != nil {
		what := "missing"
		if ok {
			what = shorten(string(pr))
		}
		return v, fmt.Errorf(`stdout: "pass" must be true or false, got %s`, what)
	}
	if rr, ok := raw["reason"]; ok {
		if decodeValue(rr, &v.Reason) != nil {
			return v, errors.New(`stdout: "reason" must be a string`)
		}
		v.Reason, _ = truncateBytes(strings.TrimSpace(v.Reason), JudgeReasonLimit)
	}
	if sr, ok := raw["score"]; ok {
		var f float64
		if decodeValue(sr, &f) != nil || !checkFinite(f) {
			return v, fmt.Errorf(`stdout: "score" must be a number, got %s`, shorten(string(sr)))
		}
		v.Score = &f
	}
	if exitCode == 1 && v.Pass {
		return v, errors.New(`stdout says "pass": true but the exit status is 1`)
	}
	return v, nil
}
