// Package providers holds the Provider interface and one implementation per
// wire protocol. A provider knows its protocol and nothing else: it streams a
// request, reports deltas through a callback, and returns what happened,
// classified. It never validates, scores or writes files.
//
// Layer: providers (wire protocols; called by the run, knows nothing of
// files or scores).
package providers

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"bench/internal/record/results"
	"bench/prompts"
)

// Request is one cell's call: a model, a prompt and the knobs the runner sets.
type Request struct {
	Model string
	// ThinkingLevel is "" for none (null in results), else low|medium|high|xhigh.
	ThinkingLevel string
	System        string
	Prompt        string
	// Tools are the native tools offered; empty means none.
	Tools []prompts.Tool
	// Now is the runner's clock, for stamping events that happen off the
	// provider's goroutine (connection, first byte); nil means time.Now.
	Now func() time.Time
	// TraceParent is the W3C traceparent of the cell's span, sent with the
	// request (or to the CLI's environment) so a traced server joins the
	// trace; "" sends none.
	TraceParent string
	// MaxOutputBytes caps what the stream keeps of the answer, the
	// reasoning and the tool calls' arguments (run.max_output_bytes): the
	// rest is counted, not kept. 0 means DefaultMaxOutputBytes.
	MaxOutputBytes int
	// MaxTokens caps the answer's tokens over the entry's max_tokens (a
	// prompt's max_tokens, a synthetic prompt's output length); 0 keeps
	// the entry's.
	MaxTokens int
	// Messages continue the conversation after Prompt, for the later turns
	// of an agentic task: the model's earlier replies and what bench
	// answered to their tool calls, in order. Empty for a single turn.
	Messages []Message
	// MCP, for a provider whose agent runs the tool loop itself
	// (LoopOwner), serves the task's tools; nil for every other cell.
	MCP *MCP
}

// Roles of a Message.
const (
	RoleUser      = "user"
	RoleAssistant = "assistant"
	RoleTool      = "tool"
)

// Message is one message of an agentic conversation after the prompt.
type Message struct {
	// Role is RoleAssistant (a reply of the model), RoleTool (the result of
	// one of its calls) or RoleUser (a text-mode command's output).
	Role string
	// Text is the reply's text, the tool result, or the user message.
	Text string
	// ToolCalls are an assistant reply's calls as the model made them (ids
	// included), sent back so the protocol can pair them with results.
	ToolCalls []results.ToolCall
	// CallID is the id of the call a tool message answers; "" when the
	// protocol gave none, in which case the tool messages that follow an
	// assistant message answer its calls in order.
	CallID string
	// Name is the tool a tool message answers.
	Name string
	// IsError marks a tool result as an error. Protocols without such a
	// flag get the text alone, which says so.
	IsError bool
}

// MCP is how a provider that owns its tool loop gets an agentic task's
// tools: an MCP server bench runs (see package mcpserve).
type MCP struct {
	// Config is the MCP configuration (for Claude Code, --mcp-config JSON)
	// that starts the server.
	Config string
	// Server is the server's name in Config. Only its tools are offered to
	// the model, and all of them are allowed.
	Server string
	// MaxTurns bounds the agent's loop: model replies, as the task's
	// max_turns counts them.
	MaxTurns int
}

// LoopOwner is implemented by a provider whose agent runs an agentic
// task's tool loop itself (the Claude Code CLI): the runner hands it the
// tools over MCP (Request.MCP) in one Stream call, instead of driving the
// loop turn by turn, and reads the turns back from Response.Turns.
type LoopOwner interface {
	OwnsToolLoop() bool
}

func (r Request) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

// EventKind says what a streamed event carries. The runner stamps the time of
// each event with its clock, so every provider is timed the same way.
type EventKind int

const (
	// EventRequestStart is emitted just before each attempt's request is sent
	// (or the subprocess is spawned). Retries emit it again; the runner times
	// ttft and e2e from the last one, so back-off waits stay out of e2e_ms.
	EventRequestStart EventKind = iota
	// EventText carries a non-empty piece of the answer's text.
	EventText
	// EventToolCall marks a delta that carries (part of) a native tool call;
	// Call is the call's index in the reply.
	EventToolCall
	// EventReasoning carries reasoning/thinking text, timed apart from the answer.
	EventReasoning
	// EventConnected: the attempt has a connection (Text: "new" or "reused").
	EventConnected
	// EventRequestWritten: the request was written to the connection.
	EventRequestWritten
	// EventFirstByte: the first byte of the answer arrived (the CLI: its
	// first output line).
	EventFirstByte
	// EventRetry: the attempt failed and is retried after Wait (Text: why).
	EventRetry
)

// Event is one streamed delta or phase. Role-only or empty chunks are not events.
type Event struct {
	Kind EventKind
	Text string
	// At is when the event happened, for events stamped off the provider's
	// goroutine; zero means now.
	At time.Time
	// Attempt numbers a request start (0 for the first).
	Attempt int
	// Call indexes a tool call in the reply (EventToolCall).
	Call int
	// Wait is the back-off before the next attempt (EventRetry).
	Wait time.Duration
	// RateLimit is what the refused attempt's answer said of the
	// server's rate limits (EventRetry; nil: nothing).
	RateLimit *RateLimit
}

// EmitFunc receives events in stream order. It must be cheap; it is called on
// the provider's goroutine.
type EmitFunc func(Event)

// Usage is token accounting as the provider reported it; nil means unknown.
type Usage struct {
	// InputTokens counts the whole prompt, cached parts included.
	InputTokens *int
	// OutputTokens counts everything generated, reasoning included.
	OutputTokens *int
	// ReasoningTokens is the part of OutputTokens spent on reasoning,
	// when the protocol says; CachedInputTokens the part of InputTokens
	// read from the server's prompt cache (billed at a lower price).
	ReasoningTokens   *int
	CachedInputTokens *int
}

// Response is what a stream produced. It is returned even when the call failed
// part-way, so partial output is recorded.
type Response struct {
	// Text and Reasoning are what was kept of the answer and the reasoning
	// (see Request.MaxOutputBytes); TextBytes and ReasoningBytes their
	// full lengths as streamed (0: the length of what was kept).
	Text           string
	Reasoning      string
	TextBytes      int
	ReasoningBytes int
	ToolCalls      []results.ToolCall
	Usage          Usage
	// CostUSD is what the call cost as the provider itself reported it
	// (the Claude Code CLI's total_cost_usd); nil when it does not say.
	// It wins over a price from bench.yaml's pricing block.
	CostUSD *float64
	// FinishReason is the protocol's own stop reason, if any.
	FinishReason string
	// Retries is how many attempts were retried; RetryWaitMS the time spent
	// waiting between them.
	Retries     int
	RetryWaitMS int64
	// RateLimit is what the last answer said of the server's rate limits
	// (ratelimit.go); nil when it said nothing, or for a kind without
	// HTTP answers.
	RateLimit *RateLimit
	// Metrics are provider-specific figures (server-side timings, cost, CLI
	// version...), recorded as provider_metrics.
	Metrics map[string]any
	// Load is how long the server spent getting the model ready for this
	// request, when the protocol reports it (Ollama's load_duration); nil
	// when it does not. A load above a few milliseconds is a cold start.
	Load *time.Duration
	// Turns are the model replies of a loop the provider ran itself
	// (Request.MCP), in order; nil otherwise.
	Turns []Turn

	// keep is what a stream reader keeps of each output field (see
	// capLimit); the stream readers take it from here so their
	// signatures stay as they were. 0 means the default cap.
	keep int
}

// newResponse is the response a stream for req fills.
func newResponse(req Request) *Response { return &Response{keep: capLimit(req)} }

// keepLimit is what a stream keeps of each output field.
func (r *Response) keepLimit() int {
	if r.keep > 0 {
		return r.keep
	}
	return DefaultMaxOutputBytes + CapSlack
}

// Turn is one model reply inside a provider's own agent loop, stamped on
// the request's clock (Request.Now).
type Turn struct {
	// Start is when the reply began streaming, FirstOutput when its first
	// text or tool call arrived (zero: none), End when it was complete.
	Start, FirstOutput, End time.Time
	Text, Reasoning         string
	Calls                   []AgentCall
}

// AgentCall is a tool call of a provider's own loop and what the agent
// handed back to the model for it.
type AgentCall struct {
	// Call is the call as the model made it (name, arguments, id).
	Call results.ToolCall
	// Made is when the model finished writing the call.
	Made time.Time
	// Answered is when the agent handed the result back (zero: never).
	Answered time.Time
	// Result is the text the model got back, IsError its error flag.
	Result  string
	IsError bool
}

// Provider is one configured entry, ready to stream. Stream returns a
// *Failure (or an error wrapping one) when the call did not succeed; any
// other error is recorded as error/exception. Cancelling ctx must end the
// call promptly.
type Provider interface {
	Stream(ctx context.Context, req Request, emit EmitFunc) (*Response, error)
	// Probe says what can be known of the provider without prompting a
	// model (server version and models, CLI version, whether the key is
	// set), for inventory.json. It is bounded by ctx and never fails: what
	// it could not learn is in Errors.
	Probe(ctx context.Context) *Probe
	// Secrets are the values that must never be written anywhere (the API
	// key, the CLI's env values), for the runner's last scrub of a record.
	Secrets() Secrets
}

// Preparer is implemented by providers that do work once before the sweep
// (listing a server's models, pulling, warming up).
type Preparer interface {
	Prepare(ctx context.Context, models []string, log io.Writer) error
}

// Warmer is implemented by providers that can get a model ready without
// generating (Ollama loads a model for a chat request with no messages).
// The runner warms each suite up with it; a provider without it is warmed
// with one short request through Stream.
type Warmer interface {
	Warmup(ctx context.Context, req Request) error
}

// ErrNotResident says a server answered "which models do you hold" with
// something other than Ollama's /api/ps: its silence is no proof that a
// model was loading, so the runner stops asking it.
var ErrNotResident = errors.New("not an answer of Ollama's /api/ps shape")

// Resident is implemented by providers whose server loads models on demand
// and can list the ones it holds (Ollama's /api/ps), when their protocol
// does not report a load per request: the runner polls it to see a model
// being loaded or swapped out while a cell waits.
type Resident interface {
	// LoadedModels names the models the server holds now. An error that
	// wraps ErrNotResident says the server does not answer the question.
	LoadedModels(ctx context.Context) ([]string, error)
	// SameModel says whether a name LoadedModels returned is model.
	SameModel(loaded, model string) bool
}

// Preconnector is implemented by providers that can open their cells'
// connections ahead of them: the runner's warm-up asks for as many as the
// suite runs at once, so its first cells do not all open one together
// (a burst of handshakes the server and the machine would be busy with
// while those cells are timed).
type Preconnector interface {
	Preconnect(ctx context.Context, n int) error
}

// WarmupPrompt is what a warm-up request through Stream asks: short, so
// the warm-up costs the load and little else.
const WarmupPrompt = "Reply with exactly: OK"

// WarmupMaxTokens caps the warm-up's answer: it has only to start one (and
// a budget pays for it).
const WarmupMaxTokens = 16

// Probe is what inventory.json records of a provider.
type Probe struct {
	BaseURL string `json:"base_url,omitempty"`
	// APIKeyEnv is the variable named in the config; APIKeySet is "yes" or
	// "no" (null when the entry names no variable). Never the value.
	APIKeyEnv string  `json:"api_key_env,omitempty"`
	APIKeySet *string `json:"api_key_set"`
	// ServerVersion and ServerModels: a model server's version and the
	// models it has (Ollama's /api/version and /api/tags).
	ServerVersion *string       `json:"server_version,omitempty"`
	ServerModels  []ServerModel `json:"server_models,omitempty"`
	// Command and CLIVersion: a CLI and its --version output.
	Command    string  `json:"command,omitempty"`
	CLIVersion *string `json:"cli_version,omitempty"`
	// Errors are the probes that failed, each with its reason.
	Errors []string `json:"errors,omitempty"`
	// silent is the call that got no answer within its bound, if any.
	silent error
}

// Lacks says the probe listed the server's models and model is not among
// them (Ollama's naming: "m" is "m:latest"); false when the probe listed
// nothing (the server did not answer, or its kind lists no models).
func (p *Probe) Lacks(model string) bool {
	if p == nil || p.ServerModels == nil {
		return false
	}
	for _, m := range p.ServerModels {
		if canonicalModel(m.Name) == canonicalModel(model) {
			return false
		}
	}
	return true
}

// Puller is implemented by providers that fetch a model their server
// lacks before the sweep (an ollama entry with pull: true): a model the
// probe did not list is then not missing yet.
type Puller interface {
	Pulls() bool
}

// ServerModel is one model a server has.
type ServerModel struct {
	Name              string    `json:"name"`
	Size              int64     `json:"size"`
	Digest            string    `json:"digest"`
	ModifiedAt        time.Time `json:"modified_at"`
	Family            string    `json:"family,omitempty"`
	ParameterSize     string    `json:"parameter_size,omitempty"`
	QuantizationLevel string    `json:"quantization_level,omitempty"`
}

// Failure is a classified failure. Callers branch on it with errors.As.
type Failure struct {
	// Status is one of the Status constants.
	Status string
	// Type is the failure_type code, e.g. http_429, timeout, model_not_found.
	Type string
	// HTTPStatus is the status code when the failure came from HTTP, else 0.
	HTTPStatus int
	// Message is a human-readable reason. It must never contain secrets.
	Message string
	Err     error
}

func (f *Failure) Error() string {
	if f.Message != "" {
		return fmt.Sprintf("%s (%s): %s", f.Status, f.Type, f.Message)
	}
	return fmt.Sprintf("%s (%s)", f.Status, f.Type)
}

func (f *Failure) Unwrap() error { return f.Err }
