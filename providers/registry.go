package providers

import (
	"context"

	"bench/config"
)

// New builds the provider for a config entry, by its type.
func New(p config.Provider) (Provider, error) {
	switch p.Type {
	case config.TypeOllamaOpenAI:
		return NewOllamaOpenAI(p)
	case config.TypeOllama:
		return NewOllama(p)
	case config.TypeOpenAIResponses:
		return NewOpenAIResponses(p)
	case config.TypeClaudeCodeCLI:
		return NewClaudeCode(p)
	}
	return notImplemented{typ: p.Type}, nil
}

// notImplemented records every cell of a type whose protocol is not built yet
// as skipped, so a config that names it still runs the rest of the sweep.
type notImplemented struct{ typ string }

func (n notImplemented) Stream(ctx context.Context, req Request, emit EmitFunc) (*Response, error) {
	return nil, &Failure{Status: StatusSkippedUnavailable, Type: "provider_not_implemented",
		Message: "provider type " + n.typ + " is not implemented in this build"}
}
