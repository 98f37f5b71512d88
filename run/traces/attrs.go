package traces

import (
	"go.opentelemetry.io/otel/attribute"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
)

// Attribute names. The OpenTelemetry semantic conventions' names where
// one exists (GenAI, HTTP, server, error), the spec's (sop.*,
// assertions.*), and bench.* for the rest. All are lowercase and dotted.
var (
	keyOperation     = semconv.GenAIOperationNameKey
	keyProviderName  = semconv.GenAIProviderNameKey
	keySystem        = attribute.Key("gen_ai.system") // the older name of gen_ai.provider.name, still what many backends read
	keyRequestModel  = semconv.GenAIRequestModelKey
	keyPromptName    = semconv.GenAIPromptNameKey
	keyInputTokens   = semconv.GenAIUsageInputTokensKey
	keyOutputTokens  = semconv.GenAIUsageOutputTokensKey
	keyFinishReasons = semconv.GenAIResponseFinishReasonsKey
	keyToolName      = semconv.GenAIToolNameKey
	keyToolCallID    = semconv.GenAIToolCallIDKey
	keyToolType      = semconv.GenAIToolTypeKey
	keyAgentName     = semconv.GenAIAgentNameKey
	keyEvalName      = semconv.GenAIEvaluationNameKey
	keyEvalLabel     = semconv.GenAIEvaluationScoreLabelKey
	keyEvalValue     = semconv.GenAIEvaluationScoreValueKey

	keyHTTPMethod = semconv.HTTPRequestMethodKey
	keyHTTPStatus = semconv.HTTPResponseStatusCodeKey
	keyServerAddr = semconv.ServerAddressKey
	keyServerPort = semconv.ServerPortKey
	keyErrorType  = semconv.ErrorTypeKey

	keySOPLevel   = attribute.Key("sop.level")
	keySpanKind   = attribute.Key("sop.span.kind")   // OTLP only: the NDJSON has "kind"
	keySpanStatus = attribute.Key("sop.span.status") // OTLP only: ok, error or skipped
	keyTotal      = attribute.Key("assertions.total")
	keyPassed     = attribute.Key("assertions.passed")
	keyFailed     = attribute.Key("assertions.failed")

	keyJudge         = attribute.Key("bench.judge.provider")
	keyJudgeSamples  = attribute.Key("bench.judge.samples")
	keyRunID         = attribute.Key("bench.run.id")
	keyVersion       = attribute.Key("bench.version")
	keyEndReason     = attribute.Key("bench.run.end_reason")
	keyPlanned       = attribute.Key("bench.cells.planned")
	keyRecorded      = attribute.Key("bench.cells.recorded")
	keyPrevTrace     = attribute.Key("bench.resume.previous_trace_id")
	keyPrevSpan      = attribute.Key("bench.resume.previous_span_id")
	keyResumedCells  = attribute.Key("bench.resume.cells_done")
	keyCells         = attribute.Key("bench.cells")
	keyCellsOK       = attribute.Key("bench.cells.success")
	keyCellsSkipped  = attribute.Key("bench.cells.skipped")
	keyCellsFailed   = attribute.Key("bench.cells.failed")
	keyProvider      = attribute.Key("bench.provider")
	keyProviderType  = attribute.Key("bench.provider.type")
	keyThinking      = attribute.Key("bench.thinking_level")
	keyPromptID      = attribute.Key("bench.prompt.id")
	keyPromptSize    = attribute.Key("bench.prompt.size")
	keyPromptHash    = attribute.Key("bench.prompt.sha256")
	keySystemSize    = attribute.Key("bench.system.size")
	keySystemHash    = attribute.Key("bench.system.sha256")
	keyRepetition    = attribute.Key("bench.repetition")
	keyAvailability  = attribute.Key("bench.availability_status")
	keySuccess       = attribute.Key("bench.success")
	keyFailureType   = attribute.Key("bench.failure_type")
	keyE2E           = attribute.Key("bench.e2e_ms")
	keyTTFT          = attribute.Key("bench.ttft_ms")
	keyTTFO          = attribute.Key("bench.ttfo_ms")
	keyTTFR          = attribute.Key("bench.ttfr_ms")
	keyTokensPerS    = attribute.Key("bench.tokens_per_s")
	keyReasoningToks = attribute.Key("bench.usage.reasoning_tokens")
	keyChunks        = attribute.Key("bench.chunks")
	keyRetries       = attribute.Key("bench.retries")
	keyRetryWait     = attribute.Key("bench.retry_wait_ms")
	keyOutputSize    = attribute.Key("bench.output.size")
	keyOutputHash    = attribute.Key("bench.output.sha256")
	keyTruncated     = attribute.Key("bench.output.truncated")
	keyReasonSize    = attribute.Key("bench.reasoning.size")
	keyToolCalls     = attribute.Key("bench.tool_calls")
	keyToolCount     = attribute.Key("bench.tool_call_count")
	keyToolUse       = attribute.Key("bench.tool_use_success")
	keyObjective     = attribute.Key("bench.objective_pass")
	keyValidators    = attribute.Key("bench.validators")
	keyTurns         = attribute.Key("bench.turns")
	keyAttempt       = attribute.Key("bench.attempt")
	keyConnection    = attribute.Key("bench.connection")
	keyTokenKind     = attribute.Key("bench.token.kind")
	keyRetryWaitMS   = attribute.Key("bench.retry.wait_ms")
	keyRetryReason   = attribute.Key("bench.retry.reason")
	keyExitCode      = attribute.Key("bench.exit_code")
	keyStartupMS     = attribute.Key("bench.startup_ms")
	keyCommand       = attribute.Key("bench.command")
	keyToolSource    = attribute.Key("bench.tool.source")
	keyToolExecuted  = attribute.Key("bench.tool.executed")
	keyArgsSize      = attribute.Key("bench.tool.arguments.size")
	keyArgsHash      = attribute.Key("bench.tool.arguments.sha256")
	keyResultHash    = attribute.Key("bench.tool.result.sha256")
	keyResultSize    = attribute.Key("bench.tool.result.size")
	keyToolIsError   = attribute.Key("bench.tool.is_error")
	keyToolUnknown   = attribute.Key("bench.tool.unknown")
	keyToolRule      = attribute.Key("bench.tool.rule")
	keyTurnIndex     = attribute.Key("bench.turn.index")
	keyTurnTTFT      = attribute.Key("bench.turn.ttft_ms")
	keyTurnTextSize  = attribute.Key("bench.turn.text.size")
	keyTurnTextHash  = attribute.Key("bench.turn.text.sha256")
)
