// Package validators implements the validator types of the results schema.
// Checks are pure functions of (spec, response): the runner calls CheckAll
// only for cells that succeeded, with the full answer text and the tool
// calls toolparse.Detect found; objective_pass is null for noop and for
// cells that did not succeed. The two external types (llm_judge, command)
// are judged outside bench after the cell has ended (package grader runs
// them); this package holds what about them is pure: their specs, the
// judge's request and the strict reading of its verdict, the command's
// input and the reading of its verdict, and Combine, which folds their
// outcomes into CheckAll's.
//
// # Writing validators
//
// A prompt carries one check (validator: {...}) or several that must all
// pass (validators: [{...}, {...}]); noop checks are ignored, and a prompt
// whose checks are all noop has objective_pass null. Specs are checked when
// the prompt file loads: an unknown type, an unknown, missing or wrongly
// typed key, or a regex that does not compile is a file:line error.
//
//	noop             {type: noop}
//	exact            {type: exact, value: "OK"}            value: a non-empty string
//	one_of           {type: one_of, values: ["Canberra"]}  values: non-empty list of strings
//	regex_fullmatch  {type: regex_fullmatch, pattern: "391"}
//	max_words        {type: max_words, value: 25}          value: a positive integer
//	max_sentences    {type: max_sentences, value: 2}       value: a positive integer
//	exact_bullets    {type: exact_bullets, value: 5}       value: a positive integer
//	json_keys        {type: json_keys, required_keys: [a, b], key_rules: {...}}  key_rules optional
//	tool_invocation  {type: tool_invocation, expected_tools: [df]}
//
// External checks run after the cell, on the answer as recorded:
//
//	llm_judge  {type: llm_judge, rubric: "...", judge: grader, model: qwen3:4b}
//	           judge: the name of a provider entry; pass_threshold: a number in
//	           (0, 1] (the judge then gives a score); judge_samples: 1, 3, ... 9
//	command    {type: command, argv: [./check.py, --strict], timeout: 10s}
//	           env: [NAMES] it gets from bench's environment; expected: any value
//
// A check that could give no verdict (a judge that failed or answered
// something other than the verdict object, a command that crashed, hung
// or printed garbage) is a results.CheckError, never a pass: the cell's
// objective_pass is then null, or false if another check failed.
//
// Trajectory checks judge an agentic task (a prompt with max_turns) by the
// tool calls it made across all its turns, Input.Calls, in order; they sit
// in the same all-must-pass list as the checks on the final answer, and the
// prompt loader accepts them only on a prompt with max_turns:
//
//	tool_sequence     {type: tool_sequence, calls: [{name: lookup, args_subset: {city: Paris}}, ...]}
//	                  calls: non-empty list; allow_extra: true (default) or false
//	no_unknown_tools  {type: no_unknown_tools}
//	max_tool_calls    {type: max_tool_calls, value: 4}     value: an integer >= 0
//
// # Edge rules
//
// Whitespace. Every check looks at the answer with surrounding whitespace
// removed (spaces, tabs, a trailing newline, \r\n), so "OK\n" is "OK".
// Nothing else is normalized: case, inner spaces and punctuation count, so
// "OK." fails exact "OK" and "canberra" fails one_of ["Canberra"]. A value
// with surrounding whitespace is rejected at load time (it could never
// match).
//
// exact, one_of. The trimmed answer must equal the value (one of the
// values) byte for byte.
//
// regex_fullmatch. Go RE2 syntax (no backreferences or lookaround; a
// pattern that does not compile is a load error). The pattern must match the
// whole trimmed answer: it is anchored as \A(?:pattern)\z, so alternations
// are anchored as a group and an inline (?m) cannot turn the anchors into
// line anchors. Flags go inline at the start: (?i) for case-insensitive,
// (?s) to let . match a newline (it does not by default).
//
// max_words. A word is a whitespace-separated token holding at least one
// letter or digit: "2h 35m" is 2 words, a lone "-" or "—" is none,
// "state-of-the-art" and "don't" are one. parsed_output: {"words": n}.
//
// max_sentences. A sentence ends at a run of . ! ? … (closing quotes,
// brackets and markdown * or _ may follow) that is followed by whitespace or
// the end of the answer, and at every line break, so each bullet or line is
// at least one sentence; pieces without a letter or digit do not count.
// "Really?!" ends once, "Wait..." ends once; full-width 。！？ need no
// space after them. A '.' does not end a sentence
// inside a number or name (3.14, example.com), after a title abbreviation
// (Mr., Dr., Prof., St., vs., e.g., i.e., cf., approx., fig.), after a
// dotted abbreviation or a single letter (U.S., a.m., J. Smith), after a
// list number at the start of a line ("1. Install"), or after etc./Inc./
// Ltd./Co. when the next word is lower case. Ambiguous cases lean to fewer
// sentences ("in the U.S. Then" is one). parsed_output: {"sentences": n}.
//
// exact_bullets. A bullet is a line whose first non-blank character is
// '-', '*', '+' or '•' followed by a space or tab and some text; '-' and '*'
// both count because markdown renders them alike (use regex_fullmatch to
// insist on one). Indented (nested) bullets count too. Numbered items
// ("1. x"), horizontal rules (---, * * *), bold lines (**x**) and lines
// inside fenced code blocks are not bullets; other lines are ignored.
// parsed_output: {"bullets": n}.
//
// json_keys. The trimmed answer must be exactly one JSON object, or one
// fenced code block holding it (```json ... ``` or ``` ... ```, any info
// string). Prose before or after, two blocks, a top-level array or trailing
// data fail ("not JSON: ..."). Extra keys are allowed. Every required_keys
// entry must be present ("missing key: count"). key_rules constrain
// top-level keys and apply only when the key is present; a rule is written
// as a type name (moons: integer), a list of allowed values (name: ["Mars"]),
// or a mapping {type, enum, non_empty} whose given parts must all hold:
//
//	type       string, number, integer, boolean, array, object or null;
//	           an integral number (2 or 2.0) is an integer, as in JSON Schema
//	enum       allowed values; numbers compare by value (149.5 == 149.50),
//	           strings exactly (case-sensitive), no type coercion ("2" != 2)
//	non_empty  rejects "", whitespace-only strings, [], {} and null
//
// An enum value that does not fit the rule's type is a load error. Nested
// keys are not addressed. parsed_output is the parsed object; the violation
// lists every problem ("missing key: moons; name: got \"mars\", want \"Mars\"").
//
// tool_invocation. Passes when at least one detected tool call (native or
// from text, see package toolparse) has a name equal to one of
// expected_tools (case-sensitive). parsed_output: {"tool_calls": [...],
// "matched_tools": [...]}.
//
// tool_sequence. Each expected call is {name, optional, and at most one of
// the argument matches of package scripted}: args (the arguments equal this
// object exactly; numbers by value), args_subset (every key given is present
// and equal, nested objects as subsets too, other keys allowed) or
// args_regex (each named top-level argument fully matches a Go RE2 pattern;
// a non-string value is matched as its compact JSON); args_subset and
// args_regex may be combined; with none, any arguments do. Names compare
// case-sensitively. The expected calls must appear in the trajectory in
// their order; an optional one may be absent. By default other calls may
// come before, between and after them (a retry after a failed call, a
// harmless extra lookup): the check asks "were the right calls made with the
// right arguments, in order?", while loops and stray tools are the business
// of max_tool_calls and no_unknown_tools. With allow_extra: false the
// trajectory must be exactly the expected calls (optional ones skippable),
// so a retry has to be listed as a second expected call, and a list of only
// optional calls is allowed (no call but these); with extra calls allowed,
// an all-optional list would pass anything and is a load error. Matching is
// an ordered subsequence search over the whole trajectory, so an optional
// call never takes a call that a later expected call needs. parsed_output:
// {"tool_calls": [...], "matched": [call index per expected call, -1 when
// skipped], "wrong_args": n}, where wrong_args counts the calls of an
// expected tool whose arguments match none of that tool's expected calls.
// The violation names the first expected call not found and a call of that
// tool with its arguments ("missing call 1 of 3: lookup
// args_subset={"city":"Paris"}; got lookup {"city":"Pariss"}"), or the
// first call allow_extra: false rejects.
//
// no_unknown_tools. Fails when a call's name is not in Input.Offered (the
// names of the task's tools, native or text-mode). parsed_output:
// {"tool_calls": [...], "unknown_tools": [...]}.
//
// max_tool_calls. Fails when the trajectory has more than value calls, every
// call counted (unknown, failed and repeated ones too); value 0 says the
// task needs no tool. parsed_output: {"tool_call_count": n}.
//
// Trajectory checks read only Input.Calls, the answer checks never do; a
// runner that fills no Calls makes tool_sequence fail and max_tool_calls
// pass.
//
// Several checks. Violations of the failed checks are joined with "; ".
// parsed_output is the single check's object, or with several judging
// checks their objects merged (a json_keys object under "json"; on a key
// clash the earlier check wins).
//
// Layer: scoring (pure functions of prompt and response).
package validators
