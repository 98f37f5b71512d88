// Package scripted answers an agentic task's tool calls from a script, so a
// model's multi-turn tool use can be measured offline and repeatably.
//
// A Tool carries its scripted results (see package prompts for the file
// form): Rules tried in order, each a Match on the call's arguments (exact,
// subset or regex per field) and a result text (a JSON result is sent as its
// compact text); OnUnmatched, the error given when no rule matches (a
// default names the tool and echoes the arguments); and FailFirst, an error
// given to the tool's first call of a session whatever its arguments, so the
// model has to retry.
//
// A Session belongs to one cell: it counts calls per tool (for FailFirst)
// and answers each call with a Result. An unknown tool name gets an error
// result marked Unknown. Answers depend only on the tools and the calls made
// so far, never on time or randomness.
//
// The same Match is what the tool_sequence validator uses to check the
// arguments of expected calls (package validators).
//
// Layer: scoring (an agentic task's scripted tools).
package scripted
