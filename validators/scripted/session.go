package scripted

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"
	"unicode/utf8"
)

// Result is the scripted answer to one call.
type Result struct {
	// Text is what goes back to the model: the tool message's content, or
	// the command's output in text mode.
	Text string
	// IsError marks a tool error: an unknown tool, no matching rule, a
	// fail-first call or a rule with is_error.
	IsError bool
	// Unknown is set when no tool of the session has the call's name.
	Unknown bool
	// Rule is the index of the rule that gave the result, or -1 when none
	// did (unknown tool, fail-first, unmatched).
	Rule int
	// FailFirst is set on the scripted failure of a tool's first call.
	FailFirst bool
	// Unmatched is set when the tool is known but no rule accepted the
	// arguments: the on_unmatched (or default) error was given.
	Unmatched bool
}

// Session answers the calls of one cell (one run of a task). It counts calls
// per tool, so a fail_first tool fails exactly once per session. Answers are
// a pure function of the tools and the calls made so far. A Session is safe
// for concurrent use; calls are counted in the order Answer is entered.
type Session struct {
	tools map[string]*Tool
	names []string
	text  bool

	mu    sync.Mutex
	calls map[string]int
	total int
}

// NewSession starts a session over tools. The tools are not copied: do not
// change them while the session is in use.
func NewSession(tools []Tool) *Session {
	s := &Session{tools: map[string]*Tool{}, calls: map[string]int{}}
	for i := range tools {
		t := &tools[i]
		if _, dup := s.tools[t.Name]; dup {
			continue // the loader rejects duplicates; the first one wins here
		}
		s.tools[t.Name] = t
		s.names = append(s.names, t.Name)
		s.text = s.text || t.IsText()
	}
	sort.Strings(s.names)
	return s
}

// Answer gives the scripted result of one call. An unknown name gets an
// error naming the available tools (text mode: "NAME: command not found").
func (s *Session) Answer(name string, args json.RawMessage) Result {
	s.mu.Lock()
	s.total++
	t, ok := s.tools[name]
	n := 0
	if ok {
		s.calls[name]++
		n = s.calls[name]
	}
	s.mu.Unlock()

	if !ok {
		msg := fmt.Sprintf("error: unknown tool %q; available tools: %s", name, strings.Join(s.names, ", "))
		if s.text {
			msg = name + ": command not found"
		}
		if len(s.names) == 0 {
			msg = fmt.Sprintf("error: unknown tool %q; no tools are available", name)
		}
		return Result{Text: msg, IsError: true, Unknown: true, Rule: -1}
	}
	if t.FailFirst != "" && n == 1 {
		return Result{Text: t.FailFirst, IsError: true, Rule: -1, FailFirst: true}
	}
	parsed, err := ParseArgs(args)
	for i := range t.Rules {
		r := &t.Rules[i]
		if (err == nil && r.Match.MatchesArgs(parsed)) || (err != nil && r.Match.IsZero()) {
			return Result{Text: r.Result, IsError: r.IsError, Rule: i}
		}
	}
	msg := t.OnUnmatched
	if msg == "" {
		msg = defaultUnmatched(t, args)
	}
	return Result{Text: msg, IsError: true, Rule: -1, Unmatched: true}
}

// Calls returns how many calls a tool has had in this session.
func (s *Session) Calls(name string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls[name]
}

// Total returns how many calls the session answered, unknown ones included.
func (s *Session) Total() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.total
}

// defaultUnmatched is the error for arguments no rule expects: it names the
// tool and echoes the arguments, as a real API's validation error would.
func defaultUnmatched(t *Tool, args json.RawMessage) string {
	if t.IsText() {
		if a, err := ParseArgs(args); err == nil {
			if c, ok := a["command"].(string); ok {
				return "error: " + shorten(c) + ": not supported here"
			}
		}
		return "error: " + t.Name + ": not supported here"
	}
	shown := "{}"
	if t := bytes.TrimSpace(args); len(t) > 0 {
		var b bytes.Buffer
		if json.Compact(&b, t) == nil {
			shown = b.String()
		} else {
			shown = string(t)
		}
	}
	return fmt.Sprintf("error: %s has no result for arguments %s", t.Name, shorten(shown))
}

const maxShown = 200

func shorten(s string) string {
	if len(s) <= maxShown {
		return s
	}
	s = s[:maxShown]
	for len(s) > 0 && !utf8.ValidString(s) {
		s = s[:len(s)-1]
	}
	return s + "…"
}
