package providers

import (
	"fmt"

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
	// config.Load rejects unknown types, so this is a type listed there and
	// not wired here.
	return nil, fmt.Errorf("provider type %q has no implementation", p.Type)
}
