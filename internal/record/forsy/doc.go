// Package forsy turns what happened in one multi-turn agentic cell into a
// Forsy work trace (schema_version forsy-trace-v0.1), checks it against every
// invariant the Forsy spec states, and writes it atomically.
//
// The runner fills a Cell (task, turns, calls, outcome) without knowing
// Forsy; Build maps it to a Trace; Write validates and writes it. Only what
// happened is traced: a call the loop never ran gets no step, and a value
// bench did not measure (a time, a reasoning text) is null, never guessed.
//
// # Mapping
//
// Steps, in order (turn = the model round trip, 1-based; the user message is
// in turn 1):
//
//   - The task's prompt: action user_message, actor user, input = the prompt
//     word for word, message_role direct_request, eval 0, at the cell's start.
//   - Each model turn that requested tool calls: action agent_step, operation
//     plan, actor agent. output = the reply as JSON {"text", "tool_calls":
//     [{"id","name","arguments"}]}; reasoning = the exposed thinking text or
//     null; observation = what the model had just received (the request and
//     offered tools in turn 1, the previous turn's results, excerpted, later);
//     caused_by = step 1 (user_request) in turn 1, else the previous turn's
//     call steps (dependency_on_tool_result or
//     dependency_on_multiple_prior_steps). eval 0: its calls are judged on
//     their own steps. When the loop stopped at max_turns, the last such turn
//     gets eval -1 and a directive.
//   - Each call bench answered, after its turn's step (ordered by start time):
//     operation execute, tool = the name the model called, input = the exact
//     arguments, input_source = the turn's step (output), output = the exact
//     result text, observation = whether the tool was offered. A turn with two
//     or more calls marks them execution_mode parallel, parallel_group
//     "pg_turn_<n>"; otherwise serial. A successful call is agent_step,
//     success true, eval +1 if the trajectory check matched it, -1 if it did
//     not (with a directive), 0 if no check judged it. A failed call (error
//     result, or a tool that was not offered) is action error, success
//     false, eval -1, with a directive quoting the error and saying whether
//     and where it was retried.
//   - A retry: a later call with the same tool name, in a later turn than an
//     earlier failed call not yet retried, is that call's retry: retry_of =
//     the failed step, caused_by = [failed step, its turn's step], causal_type
//     retry_after_failure. Other calls: caused_by = [their turn's step],
//     causal_type execution_of_plan.
//   - The final reply (no calls): action output, operation answer, input and
//     output = the answer text, success and eval from the answer checks (+1
//     all passed, -1 one failed or the answer is empty, 0 none ran).
//   - A turn whose request failed: action error, output = the error (and any
//     partial reply), success false, eval -1, with a directive.
//
// Artifacts: every answered call's result ("tool_result/step_<n>", type
// observed, role evidence) and the final answer ("final_answer", generated,
// deliverable), each with its content and "sha256:" hash.
//
// termination_reason: answered and completed -> task_complete, answered but
// not completed -> other, max_turns -> partial_then_stopped, error ->
// error_unrecoverable, timeout -> timeout, cancelled -> user_abandoned.
// summary.goal_achieved = Outcome.Completed; goal_notes lists the end, the
// calls and every check's verdict. trace_mode live, validation_level
// self_traced, release_tier and release_sensitivity private (the operator
// decides what to publish), learning/skills/memory null.
//
// Layer: the record (the Forsy work-trace format; the run writes one per
// agentic cell; imports no bench package).
package forsy
