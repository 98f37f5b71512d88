package providers

import (
	"fmt"
	"io"
	"net/url"
	"os"
	"strings"

	"bench/config"
	"bench/internal/record/secrets"
	"bench/prompts"
	"bench/validators"
)

// Redacted replaces a secret in any text bench keeps.
const Redacted = secrets.Redacted

// Secrets are the values a provider must never let into a record, a log, a
// trace or an error: the run's secrets (see RunSecrets), compiled once
// (package secrets). The zero value holds none.
type Secrets = secrets.Set

// StripUserinfo is raw without the userinfo of its URL (a base_url's
// user:password@), as every file and message bench writes shows a URL.
// Text that does not parse as a URL with a host is returned as it is.
func StripUserinfo(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.User == nil {
		return raw
	}
	u.User = nil
	return u.String()
}

// secretSource is implemented by every kind's options: which values of
// the entry are secrets. all are the entry's config-named ones (its key,
// its env values, its URL's password), scrubbed from every record of the
// run; own are what only the entry's process receives (the credentials
// a CLI inherits from bench's environment), scrubbed from its records.
type secretSource interface {
	secretSpec() (all, own secrets.Spec)
}

// EntrySecrets are the entry's own secrets, compiled: what New gives a
// provider built alone (a test, a probe), where NewAll gives every
// provider the run's.
func EntrySecrets(p *config.Provider) Secrets {
	all, own := entrySpec(p)
	return secrets.RunSpec{All: all, Own: map[string]secrets.Spec{p.Name: own}}.Compile(nil).For(p.Name)
}

func entrySpec(p *config.Provider) (all, own secrets.Spec) {
	if src, ok := p.Options.(secretSource); ok {
		return src.secretSpec()
	}
	return secrets.Spec{}, secrets.Spec{}
}

// RunSecrets are which values of a run are secrets: every entry's
// config-named ones (its key, a CLI's env values, a base_url's password)
// and each command validator's credentials (the variables of its env
// that are named like credentials or hold a URL with a password) for
// every record; each entry's inherited ones for its own records. Not a
// credential-looking variable of bench's environment that no process of
// the run receives.
func RunSecrets(cfg *config.Config) secrets.RunSpec {
	var r secrets.RunSpec
	for i := range cfg.Providers {
		p := &cfg.Providers[i]
		all, own := entrySpec(p)
		r.Add(secrets.RunSpec{All: all, Own: map[string]secrets.Spec{p.Name: own}})
	}
	r.All.Add(CommandSecrets(cfg.PromptSet))
	return r
}

// CommandSecrets are the command validators' credentials in set: the
// variables each one's env names that are credentials of the process
// that receives them (secrets.Inherited).
func CommandSecrets(set []prompts.Prompt) secrets.Spec {
	var env []string
	for i := range set {
		for _, s := range set[i].Checks() {
			if s.Type != validators.TypeCommand {
				continue
			}
			for _, n := range s.Env {
				if v, ok := os.LookupEnv(n); ok {
					env = append(env, n+"="+v)
				}
			}
		}
	}
	return secrets.Spec{Env: secrets.Inherited(env)}
}

// NewAll builds every entry's provider, each with the run's secrets
// (RunSecrets: the config's for every entry, and the entry's own), and
// returns the scope the run's records are scrubbed with; where names an
// entry in an error.
func NewAll(cfg *config.Config, where func(p *config.Provider) string) (map[string]Provider, secrets.RunSpec, secrets.Scope, error) {
	spec := RunSecrets(cfg)
	scope := spec.Compile(nil)
	provs := map[string]Provider{}
	for i := range cfg.Providers {
		p := &cfg.Providers[i]
		pv, err := NewWith(p, scope.For(p.Name))
		if err != nil {
			return nil, secrets.RunSpec{}, secrets.Scope{}, fmt.Errorf("%s: providers: %s: %w", where(p), p.Name, err)
		}
		provs[p.Name] = pv
	}
	return provs, spec, scope, nil
}

// maxLogLine bounds a line a provider writes to the run's log.
const maxLogLine = 1 << 10

// scrubWriter cleans each write (one line of a provider's log) of the
// secrets, then cuts it, keeping its newline.
type scrubWriter struct {
	w       io.Writer
	secrets Secrets
}

func (s *scrubWriter) Write(p []byte) (int, error) {
	line, nl := strings.CutSuffix(string(p), "\n")
	line = s.secrets.Clean(line, maxLogLine)
	if nl {
		line += "\n"
	}
	if _, err := io.WriteString(s.w, line); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Clean scrubs every string of a probe with s, in one place, whatever
// each kind's probe cleaned already (a server's version, its models'
// names and digests, a CLI's --version, the errors), and shows base_url
// without its userinfo. A field added to Probe or ServerModel must be
// added here; TestProbeCleanCoversProbe walks the types by reflection.
func (p *Probe) Clean(s Secrets) {
	if p == nil {
		return
	}
	p.BaseURL = s.Clean(StripUserinfo(p.BaseURL), maxMessage)
	p.APIKeyEnv = s.Clean(p.APIKeyEnv, maxMessage)
	for _, f := range []*string{p.APIKeySet, p.ServerVersion, p.CLIVersion} {
		if f != nil {
			*f = s.Clean(*f, maxMessage)
		}
	}
	for i := range p.ServerModels {
		m := &p.ServerModels[i]
		for _, f := range []*string{&m.Name, &m.Digest, &m.Family, &m.ParameterSize, &m.QuantizationLevel} {
			*f = s.Clean(*f, maxMessage)
		}
	}
	p.Command = s.Clean(p.Command, maxMessage)
	for i, e := range p.Errors {
		p.Errors[i] = s.Clean(e, maxMessage)
	}
}
