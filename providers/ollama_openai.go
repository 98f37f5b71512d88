package providers

import (
	"context"
	"fmt"
	"strings"

	openai "github.com/sashabaranov/go-openai"

	"bench/config"
	"bench/internal/record/results"
)

// ollamaOpenAIKind is the ollama_openai type: OpenAI chat completions as
// Ollama serves them under /v1 (and as any compatible server does).
type ollamaOpenAIKind struct{}

// ollamaOpenAIOptions are the keys an ollama_openai entry takes.
type ollamaOpenAIOptions struct {
	httpOptions `yaml:",inline"`
	sampling    `yaml:",inline"`
	Seed        *int `yaml:"seed" json:"seed,omitempty"`
}

func (ollamaOpenAIKind) Name() string { return "ollama_openai" }

func (ollamaOpenAIKind) GenAIProvider() string { return "ollama" }

func (ollamaOpenAIKind) ToolProtocol() string {
	return "OpenAI chat completions tool_calls and tool messages (tool_call_id)"
}

func (ollamaOpenAIKind) OwnsToolLoop() bool { return false }

func (ollamaOpenAIKind) Options() any {
	return &ollamaOpenAIOptions{httpOptions: defaultHTTP("http://127.0.0.1:11434/v1")}
}

func (ollamaOpenAIKind) Resolve(p *config.Provider, problem func(key, msg string)) {
	options[ollamaOpenAIOptions](p).resolve(p, problem, "ollama")
}

func (ollamaOpenAIKind) New(p *config.Provider, s Secrets) (Provider, error) {
	o := options[ollamaOpenAIOptions](p)
	var chat *chatCompletions
	chat = newChatCompletions(&o.httpOptions, s, func(cr *openai.ChatCompletionRequest) {
		// Ollama's OpenAI-compatible API (0.9.6) reads max_tokens only:
		// completionTokens stays false.
		chat.setMaxTokens(cr, o.MaxTokens)
		cr.Seed = o.Seed
		if o.Temperature != nil {
			cr.Temperature = float32(*o.Temperature)
		}
	})
	return &OllamaOpenAI{chatCompletions: chat, opts: o}, nil
}

func (ollamaOpenAIKind) Hint(p *config.Provider, failureType string, models []string) (string, bool) {
	return ollamaHint(p, options[ollamaOpenAIOptions](p).BaseURL, failureType, models)
}

// ollamaHint is the advice for both Ollama kinds.
func ollamaHint(p *config.Provider, baseURL, failureType string, models []string) (string, bool) {
	switch failureType {
	case results.FailConnectionRefused, results.FailHostUnreachable:
		return fmt.Sprintf("start Ollama (`ollama serve`) so %s answers", StripUserinfo(baseURL)), true
	case results.FailModelNotFound:
		return "pull the models (`ollama pull " + strings.Join(models, "`, `ollama pull ") + "`)", false
	case results.FailMissingAPIKey:
		return fmt.Sprintf("export the key variable of %s", p.Name), true
	}
	return fmt.Sprintf("%s: %s", p.Name, failureType), false
}

// side is the key and secrets of the calls beside the stream (the native
// API's probes, warm-up and /api/ps).
func (c *chatCompletions) side() creds { return creds{key: c.key, secrets: c.secrets} }

// OllamaOpenAI is an ollama_openai entry: the chat-completions protocol,
// probed through Ollama's native API.
type OllamaOpenAI struct {
	*chatCompletions
	opts *ollamaOpenAIOptions
}

// Secrets is the API key, if one is configured.
func (o *OllamaOpenAI) Secrets() Secrets { return o.secrets }

// Probe asks the server behind /v1 for its version and models.
func (o *OllamaOpenAI) Probe(ctx context.Context) *Probe {
	pr := &Probe{}
	o.opts.probeKey(pr)
	probeOllama(ctx, nativeRoot(o.opts.BaseURL), o.side(), pr)
	return pr
}

// Warmup loads the model through the native API of the Ollama behind /v1,
// without generating; another compatible server gives
// ErrWarmupUnsupported, and the runner warms it with a short request.
func (o *OllamaOpenAI) Warmup(ctx context.Context, req Request) error {
	return ollamaLoad(withTraceParent(ctx, req.TraceParent), nativeRoot(o.opts.BaseURL), o.side(), req.Model, nil, nil)
}

// LoadedModels lists what the Ollama behind /v1 holds (/api/ps): the
// OpenAI protocol reports no load time, so cold starts are seen there.
func (o *OllamaOpenAI) LoadedModels(ctx context.Context) ([]string, error) {
	return ollamaPS(ctx, nativeRoot(o.opts.BaseURL), o.side())
}

// SameModel says whether a name /api/ps gave is model ("m" is "m:latest").
func (o *OllamaOpenAI) SameModel(loaded, model string) bool {
	return canonicalModel(loaded) == canonicalModel(model)
}

// Preconnect opens n connections to the server for the cells to come (a
// GET of the native /api/version; another server's 404 opens one as well).
func (o *OllamaOpenAI) Preconnect(ctx context.Context, n int) error {
	return o.http.preconnect(ctx, nativeRoot(o.opts.BaseURL)+"/api/version", bearer(o.key), n)
}
