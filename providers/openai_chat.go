package providers

import (
	"context"
	"fmt"
	"net/url"
	"strings"

	openai "github.com/sashabaranov/go-openai"

	"bench/config"
	"bench/internal/record/secrets"
)

// openAIChatKind is the openai_chat type: chat completions against any
// OpenAI-compatible server (OpenAI, Azure OpenAI, vLLM, llama.cpp's
// llama-server, SGLang, TGI, OpenRouter, Groq, Together...), through the
// same request and stream reader as ollama_openai, without Ollama's side
// calls (no /api/ps polling, no native warm-up).
type openAIChatKind struct{}

// openAIChatOptions are the keys an openai_chat entry takes.
type openAIChatOptions struct {
	httpOptions  `yaml:",inline"`
	sampling     `yaml:",inline"`
	extraHeaders `yaml:",inline"`
	Seed         *int `yaml:"seed" json:"seed,omitempty"`
	// MaxTokensField is the request field the output cap goes in:
	// max_tokens or max_completion_tokens ("" picks by base_url: the
	// latter for OpenAI and Azure OpenAI, the former elsewhere).
	MaxTokensField string `yaml:"max_tokens_field" json:"max_tokens_field"`
	// APIVersion is Azure OpenAI's api-version query parameter.
	APIVersion string `yaml:"api_version" json:"api_version,omitempty"`
	// APIKeyHeader is the header the key is sent in ("": Authorization:
	// Bearer; api-key when api_version is set, as Azure OpenAI takes it).
	APIKeyHeader string `yaml:"api_key_header" json:"api_key_header,omitempty"`
}

const openAIDefaultURL = "https://api.openai.com/v1"

func (openAIChatKind) Name() string { return "openai_chat" }

// GenAIProvider is "openai": the protocol's maker, since the server behind
// base_url (vLLM, OpenRouter, ...) is not known to the kind.
func (openAIChatKind) GenAIProvider() string { return "openai" }

func (openAIChatKind) ToolProtocol() string {
	return "OpenAI chat completions tool_calls and tool messages (tool_call_id)"
}

func (openAIChatKind) OwnsToolLoop() bool { return false }

func (openAIChatKind) Options() any {
	return &openAIChatOptions{httpOptions: defaultHTTP(openAIDefaultURL)}
}

func (openAIChatKind) Resolve(p *config.Provider, problem func(key, msg string)) {
	o := options[openAIChatOptions](p)
	base := strings.TrimRight(o.BaseURL, "/")
	host := ""
	if u, err := url.Parse(base); err == nil {
		host = u.Hostname()
	}
	azure := o.APIVersion != "" || strings.HasSuffix(host, ".openai.azure.com")
	if o.APIKeyEnv == "" && base == openAIDefaultURL {
		o.APIKeyEnv = "OPENAI_API_KEY"
	}
	switch o.MaxTokensField {
	case "":
		o.MaxTokensField = "max_tokens"
		if host == "api.openai.com" || azure {
			o.MaxTokensField = "max_completion_tokens"
		}
	case "max_tokens", "max_completion_tokens":
	default:
		problem("max_tokens_field", "must be max_tokens or max_completion_tokens")
	}
	if o.APIKeyHeader == "" && o.APIVersion != "" {
		o.APIKeyHeader = "api-key"
	}
	if strings.ContainsAny(o.APIVersion, "&?#= ") {
		problem("api_version", "must be a version such as 2024-10-21")
	}
	if o.MaxTokens < 0 {
		problem("max_tokens", "must be positive")
	}
	o.checkHeaders(problem)
	o.resolve(p, problem)
	// A server of one's own on this machine (vLLM, llama.cpp's
	// llama-server with --metrics, SGLang, TGI) serves its Prometheus
	// metrics beside /v1; a hosted API has none to give.
	if config.LoopbackHost(host) {
		p.Server.Metrics = nativeRoot(o.SavedURL) + "/metrics"
	}
}

// secretSpec: the key, base_url's password and the secret headers.
func (o *openAIChatOptions) secretSpec() (all, own secrets.Spec) {
	return o.extraHeaders.secretSpec(o.httpOptions.secretSpec())
}

func (openAIChatKind) New(p *config.Provider, s Secrets) (Provider, error) {
	o := options[openAIChatOptions](p)
	var chat *chatCompletions
	chat = newChatCompletions(&o.httpOptions, s, func(cr *openai.ChatCompletionRequest) {
		chat.setMaxTokens(cr, o.MaxTokens)
		cr.Seed = o.Seed
		if o.Temperature != nil {
			cr.Temperature = float32(*o.Temperature)
		}
	})
	chat.completionTokens = o.MaxTokensField == "max_completion_tokens"
	if o.APIVersion != "" {
		chat.url += "?api-version=" + url.QueryEscape(o.APIVersion)
	}
	chat.header = o.extraHeaders.header(nil)
	if o.APIKeyHeader != "" && chat.key != "" {
		chat.header.Set(o.APIKeyHeader, chat.key)
		chat.keyInHeader = true
	}
	return &OpenAIChat{chatCompletions: chat, opts: o}, nil
}

func (openAIChatKind) Hint(p *config.Provider, failureType string, models []string) (string, bool) {
	return hostedHint(p, &options[openAIChatOptions](p).httpOptions,
		"start the OpenAI-compatible server, e.g. `vllm serve` or `llama-server`, or check base_url", failureType, models)
}

// OpenAIChat is an openai_chat entry.
type OpenAIChat struct {
	*chatCompletions
	opts *openAIChatOptions
}

// Secrets is the API key, the secret headers and base_url's password.
func (o *OpenAIChat) Secrets() Secrets { return o.secrets }

// Probe records the endpoint and whether the key variable is set.
func (o *OpenAIChat) Probe(ctx context.Context) *Probe {
	pr := &Probe{}
	o.opts.probeKey(pr)
	return pr
}

// Stream sends one streamed chat completion; an entry whose key variable
// is empty sends nothing.
func (o *OpenAIChat) Stream(ctx context.Context, req Request, emit EmitFunc) (*Response, error) {
	if err := o.opts.missingKey(); err != nil {
		return newResponse(req), err
	}
	return o.chatCompletions.Stream(ctx, req, emit)
}

// Preconnect opens n connections for the cells to come (GETs of
// {base_url}/models; any answer leaves its connection open).
func (o *OpenAIChat) Preconnect(ctx context.Context, n int) error {
	h := o.header.Clone()
	if !o.keyInHeader && o.key != "" {
		h.Set("Authorization", "Bearer "+o.key)
	}
	return o.http.preconnect(ctx, fmt.Sprintf("%s/models", o.opts.BaseURL), h, n)
}
