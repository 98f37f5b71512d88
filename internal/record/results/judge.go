package results

// Verdicts of an external check (an llm_judge's judge, a command
// validator): the judge object's verdict, each sample's.
const (
	VerdictPass  = "pass"
	VerdictFail  = "fail"
	VerdictError = "error"
)

// Types of a CheckError: the check ran and could give no verdict.
const (
	// JudgeError: an llm_judge's judge did not answer, or answered
	// something that is not a verdict in the required form.
	JudgeError = "judge_error"
	// ValidatorError: a command validator could not be run, failed,
	// timed out, or printed no usable verdict.
	ValidatorError = "validator_error"
)

// Judge is what an llm_judge check concluded about a cell's answer: the
// record's judge object. Its requests were sent after the cell had ended,
// so nothing of it is in the cell's own timings.
type Judge struct {
	// Verdict is pass, fail or error (no sample gave a verdict, or the
	// samples tied).
	Verdict string `json:"verdict"`
	// Score is the judge's score (0 to 1), the median of the samples that
	// gave one; null when none did.
	Score *float64 `json:"score"`
	// Reason is the judge's reason for the verdict (a sample that agreed
	// with the majority), or why there is none.
	Reason string `json:"reason"`
	// Provider is the judge's provider entry; Model the model asked.
	Provider string `json:"provider"`
	Model    string `json:"model"`
	// InputTokens and OutputTokens sum the samples' (null when no sample
	// reported them).
	InputTokens  *int `json:"input_tokens"`
	OutputTokens *int `json:"output_tokens"`
	// StartedAtMS is when the first judge request began (Unix ms), and
	// LatencyMS the time from then to the last sample's end.
	StartedAtMS int64 `json:"started_at_ms"`
	LatencyMS   int64 `json:"latency_ms"`
	// CostUSD sums the samples' cost where the provider reports one (the
	// Claude Code CLI); null otherwise, or when a sample's cost was
	// negative or not finite or the sum is past what a number holds:
	// CostMissing then says which. TokensMissing likewise says why a
	// token total is null although the samples reported counts (a
	// negative count, a sum past 2^63-1).
	CostUSD       *float64 `json:"cost_usd"`
	CostMissing   string   `json:"cost_missing,omitempty"`
	TokensMissing string   `json:"tokens_missing,omitempty"`
	// AnswerCut says the answer the judge saw was cut (see
	// validators.JudgeAnswerLimit).
	AnswerCut bool `json:"answer_cut,omitempty"`
	// Spec is a fingerprint of the check (judge, model, rubric, threshold,
	// samples): bench rescore --no-judge keeps a verdict only for the
	// check that gave it.
	Spec string `json:"spec"`
	// Samples are each request's outcome, in order (judge_samples of
	// them).
	Samples []JudgeSample `json:"samples"`
}

// JudgeSample is one judge request's outcome.
type JudgeSample struct {
	// Verdict is pass, fail or error.
	Verdict string   `json:"verdict"`
	Score   *float64 `json:"score,omitempty"`
	Reason  string   `json:"reason,omitempty"`
	// Error says why the sample gave no verdict: the request failed (its
	// failure type and message), or the reply was not a verdict.
	Error string `json:"error,omitempty"`
	// Reply is the start of what the judge answered, when it was not a
	// verdict, so the reason can be seen.
	Reply        string `json:"reply,omitempty"`
	InputTokens  *int   `json:"input_tokens,omitempty"`
	OutputTokens *int   `json:"output_tokens,omitempty"`
	LatencyMS    int64  `json:"latency_ms"`
}

// CheckError is a check that ran and gave no verdict: a judge that failed
// or answered garbage, a command validator that crashed, hung or printed
// nothing usable. A cell with one is not judged by that check: its
// objective_pass is null unless another check failed it.
type CheckError struct {
	// Type is judge_error or validator_error.
	Type string `json:"type"`
	// Check is the validator's type (llm_judge, command); Index its place
	// among the prompt's checks.
	Check string `json:"check"`
	Index int    `json:"index"`
	// Message says what went wrong (a command's stderr tail included).
	Message string `json:"message"`
}
