package secrets

import (
	"encoding/base64"
	"encoding/json"
	"net/url"
	"os"
	"slices"
	"strings"

	"bench/internal/record/rundir"
)

// Which values are secrets. Only what the config names and what a
// process bench starts (or bench's own HTTP client) receives: each HTTP
// entry's key (the variable api_key_env names) and the password of its
// base_url; a CLI entry's env values, and the credentials its process
// inherits from bench's environment; a command validator's credentials
// among the variables its env names; the password of a proxy URL bench's
// HTTP client sends. Never a credential-looking variable of bench's
// environment that no process of the run receives: a POSTGRES_PASSWORD of
// "postgres" in the shell must not turn every answer saying "postgres"
// into [redacted] (issue 31, item 6).

// minInherited is the shortest inherited credential (a value no config
// names, taken because a process receives it): shorter ones are flags
// ("1", "true").
const minInherited = 8

// Spec says which values are secrets: variables by name (their values in
// the environment at hand) and values as they are. Env is what run.json
// records (names only, never a value), so every later reader of the run
// directory scrubs with the same variables' values in its own
// environment.
type Spec struct {
	// Env names environment variables whose values are secrets.
	Env []string
	// Values are secrets given as they are (a key written in the config,
	// the password of a URL).
	Values []string
}

// Add puts o's names and values into s.
func (s *Spec) Add(o Spec) {
	for _, n := range o.Env {
		if n != "" && !slices.Contains(s.Env, n) {
			s.Env = append(s.Env, n)
		}
	}
	s.Values = append(s.Values, o.Values...)
}

// Compile is the set of s's values and of the named variables' values
// that lookup finds (nil: os.LookupEnv), with the credentials of any
// value that is a URL (URLSecrets), each by its shape (Shaped).
func (s Spec) Compile(lookup func(string) (string, bool)) Set {
	if lookup == nil {
		lookup = os.LookupEnv
	}
	values := slices.Clone(s.Values)
	for _, n := range s.Env {
		if v, ok := lookup(n); ok && v != "" {
			values = append(values, v)
		}
	}
	for _, v := range values {
		values = append(values, URLSecrets(v)...)
	}
	return New(values...)
}

// Inherited are the names of the variables of environ (KEY=VALUE, as
// os.Environ gives them) that are credentials of whatever process
// receives them: named like one (CredentialName) with a value of at least
// 8 bytes, or holding a URL with a password (HTTPS_PROXY=
// http://user:password@proxy, which a client's errors may quote).
func Inherited(environ []string) []string {
	var out []string
	for _, kv := range environ {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || slices.Contains(out, k) {
			continue
		}
		if (len(v) >= minInherited && CredentialName(k)) || len(URLSecrets(v)) > 0 {
			out = append(out, k)
		}
	}
	return out
}

// ProxyEnv are the variables whose URLs bench's own HTTP client sends
// credentials to (net/http's ProxyFromEnvironment reads them).
var ProxyEnv = []string{"HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"}

// CredentialName says whether a variable's name marks its value as a
// credential: one of its words (split at "_", any case) is TOKEN, SECRET,
// PASSWORD, PASSWD, APIKEY or CREDENTIAL(S), or the last is KEY, AUTH,
// PASS or PAT. Words, not substrings: TOKENIZERS_PARALLELISM and
// SSH_AUTH_SOCK are not credentials; OPENAI_API_KEY, GITHUB_TOKEN,
// AWS_SECRET_ACCESS_KEY and ANTHROPIC_AUTH_TOKEN are.
func CredentialName(name string) bool {
	words := strings.Split(strings.ToUpper(name), "_")
	for _, w := range words {
		switch w {
		case "TOKEN", "SECRET", "PASSWORD", "PASSWD", "APIKEY", "CREDENTIAL", "CREDENTIALS":
			return true
		}
	}
	switch words[len(words)-1] {
	case "KEY", "AUTH", "PASS", "PAT":
		return true
	}
	return false
}

// URLSecrets are the credentials a URL's userinfo carries: the password,
// user:password, and its base64 (an Authorization: Basic header a server
// may echo). Text that is not a URL with a password has none.
func URLSecrets(raw string) []string {
	if !strings.Contains(raw, "://") || !strings.Contains(raw, "@") {
		return nil
	}
	u, err := url.Parse(raw)
	if err != nil || u.User == nil {
		return nil
	}
	var out []string
	if p, ok := u.User.Password(); ok && p != "" {
		ui := u.User.Username() + ":" + p
		out = append(out, p, ui, base64.StdEncoding.EncodeToString([]byte(ui)))
	}
	return out
}

// RunSpec is which values of a run are secrets: All for every record
// (the config's: keys, a CLI's env values, command validators'
// credentials), and Own for the records of one provider entry, by its
// name (the credentials its process inherits from bench's environment,
// which no other entry's server ever receives). run.json records the
// names of both (secret_env, provider_secret_env).
type RunSpec struct {
	All Spec
	Own map[string]Spec
}

// Compile is the scope of the spec's values (see Spec.Compile).
func (r RunSpec) Compile(lookup func(string) (string, bool)) Scope {
	all := r.All.Compile(lookup)
	sc := Scope{all: all, any: all}
	var every []Set
	for name, o := range r.Own {
		own := o.Compile(lookup)
		if own.Empty() {
			continue
		}
		if sc.own == nil {
			sc.own = map[string]Set{}
		}
		sc.own[name] = Union(all, own)
		every = append(every, own)
	}
	if len(every) > 0 {
		sc.any = Union(append(every, all)...)
	}
	return sc
}

// Add puts o's names and values into r.
func (r *RunSpec) Add(o RunSpec) {
	r.All.Add(o.All)
	for name, s := range o.Own {
		if r.Own == nil {
			r.Own = map[string]Spec{}
		}
		cur := r.Own[name]
		cur.Add(s)
		r.Own[name] = cur
	}
}

// Names are the spec's names, as run.json records them: secret_env and
// provider_secret_env (nil when empty).
func (r RunSpec) Names() (all []string, own map[string][]string) {
	for name, s := range r.Own {
		if len(s.Env) > 0 {
			if own == nil {
				own = map[string][]string{}
			}
			own[name] = slices.Sorted(slices.Values(s.Env))
		}
	}
	if len(r.All.Env) > 0 {
		all = slices.Sorted(slices.Values(r.All.Env))
	}
	return all, own
}

// Scope is a run's compiled secrets: the set each record is scrubbed with
// (For its provider entry). The zero value holds none.
type Scope struct {
	all, any Set
	own      map[string]Set
}

// NewScope is the scope of a set for every record.
func NewScope(all Set) Scope { return Scope{all: all, any: all} }

// For is the set a record of the provider entry named provider is
// scrubbed with: the run's, and the entry's own.
func (s Scope) For(provider string) Set {
	if o, ok := s.own[provider]; ok {
		return o
	}
	return s.all
}

// Any is every secret of the scope, whatever the entry: what a text that
// belongs to no one entry is checked against (MayHold before a decode).
func (s Scope) Any() Set { return s.any }

// Empty says whether the scope holds no secret.
func (s Scope) Empty() bool { return s.any.Empty() }

// OfRun is the scope a reader of the run directory dir scrubs what it
// reads with (bench report, merge, compare, rescore): the values, in this
// process's environment, of the variables run.json names (secret_env,
// provider_secret_env: what the run scrubbed with) and of every provider
// entry's api_key_env in config.json (for a run written before run.json
// named them). A file that is missing, or that cannot be read or parsed,
// names nothing here: the command reading the directory reports it on
// its own. The values written in the config itself (a CLI's literal env,
// a base_url's password) are not in a run directory, and so not here:
// the run scrubbed them before writing.
func OfRun(dir string) Scope {
	return SpecOfRun(dir).Compile(nil)
}

// SpecOfRun is the names OfRun takes the values of.
func SpecOfRun(dir string) RunSpec {
	var spec RunSpec
	if info, err := rundir.ReadRunInfo(dir); err == nil {
		spec.All.Add(Spec{Env: info.SecretEnv})
		for name, env := range info.ProviderSecretEnv {
			spec.Add(RunSpec{Own: map[string]Spec{name: {Env: env}}})
		}
	}
	data, err := rundir.ReadFile(rundir.Path(dir, rundir.ConfigFile))
	if err != nil {
		return spec
	}
	var cfg struct {
		Providers []struct {
			APIKeyEnv string `json:"api_key_env"`
		} `json:"providers"`
	}
	if json.Unmarshal(data, &cfg) != nil {
		return spec
	}
	for _, p := range cfg.Providers {
		spec.All.Add(Spec{Env: []string{p.APIKeyEnv}})
	}
	return spec
}
