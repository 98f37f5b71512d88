package providers

import (
	"fmt"
	"slices"

	"bench/config"
)

// Kind is one provider type. Everything bench knows of a type is declared
// in the type's own file: its name, its options with their defaults and
// checks (config.Kind), how to build it (and so how inventory probes it and
// which secrets it holds: see Provider), where its server process is
// (Resolve fills config.Provider.Server), and the one line that tells a user
// what to start when it is down.
//
// Adding a kind is one file that declares a type implementing Kind, plus
// its line in registry: nothing outside this package names a kind (the
// runner's work traces and the execution traces ask the kind, by the
// record's provider_type, through Lookup).
type Kind interface {
	config.Kind
	// New builds the provider of a checked entry, scrubbing with s (the
	// run's secrets: NewAll; the entry's own: New).
	New(p *config.Provider, s Secrets) (Provider, error)
	// Hint tells the user, in one clause, what to start, export, install or
	// pull when every cell of the entry for models failed with failureType
	// without reaching a model. absent says the server (or CLI, or key) is
	// not there at all, rather than lacking the models.
	Hint(p *config.Provider, failureType string, models []string) (hint string, absent bool)
	// GenAIProvider is the kind's gen_ai.provider.name in OpenTelemetry's
	// GenAI conventions (a well-known value where there is one: the
	// server's maker, not the protocol), for the execution trace's spans.
	GenAIProvider() string
	// ToolProtocol says, in one phrase, how the kind carries native tool
	// calls and their results: a work trace's task names it.
	ToolProtocol() string
	// OwnsToolLoop says the kind's agent runs an agentic task's tool loop
	// itself, calling the tools on bench's MCP server (the model sees them
	// as mcp__<server>__<tool>), rather than bench driving it turn by turn.
	OwnsToolLoop() bool
}

// registry lists the kinds in the order the docs give them.
var registry = []Kind{
	ollamaOpenAIKind{},
	ollamaKind{},
	responsesKind{},
	claudeCodeKind{},
	anthropicKind{},
	openAIChatKind{},
	geminiKind{},
}

// Kinds is the registry in the form config.Load takes.
var Kinds config.Kinds = kinds{}

type kinds struct{}

func (kinds) Kind(name string) (config.Kind, bool) {
	k, ok := Lookup(name)
	return k, ok
}

func (kinds) Names() []string {
	names := make([]string, len(registry))
	for i, k := range registry {
		names[i] = k.Name()
	}
	return names
}

// Lookup returns the kind named name.
func Lookup(name string) (Kind, bool) {
	i := slices.IndexFunc(registry, func(k Kind) bool { return k.Name() == name })
	if i < 0 {
		return nil, false
	}
	return registry[i], true
}

// New builds the provider for a config entry, by its type, scrubbing
// with the entry's own secrets (EntrySecrets); a run builds its
// providers with NewAll.
func New(p *config.Provider) (Provider, error) {
	return NewWith(p, EntrySecrets(p))
}

// NewWith builds the provider for a config entry, scrubbing with s.
func NewWith(p *config.Provider, s Secrets) (Provider, error) {
	k, ok := Lookup(p.Type)
	if !ok {
		// config.Load rejects unknown types.
		return nil, fmt.Errorf("provider %s: unknown type %q", p.Name, p.Type)
	}
	return k.New(p, s)
}

// options returns the entry's options as the kind's type T: what Resolve
// and New of a kind use.
func options[T any](p *config.Provider) *T {
	if o, ok := p.Options.(*T); ok {
		return o
	}
	// An entry built in code (a test) without options gets the defaults.
	k, ok := Lookup(p.Type)
	if ok {
		if o, ok := k.Options().(*T); ok {
			p.Options = o
			return o
		}
	}
	o := new(T)
	p.Options = o
	return o
}
