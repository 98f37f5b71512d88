package providers

import (
	"fmt"
	"net/http"
	"os"
	"regexp"
	"strings"
	"time"

	"bench/config"
)

// MaxRetriesLimit bounds max_retries: each retry is a request and a line
// of the cell's timeline.
const MaxRetriesLimit = 10

// httpOptions are the keys every HTTP kind takes.
type httpOptions struct {
	BaseURL string `yaml:"base_url" json:"base_url"`
	// APIKeyEnv names the environment variable holding the key; the key
	// itself is never in the config or anything bench writes.
	APIKeyEnv string `yaml:"api_key_env" json:"api_key_env,omitempty"`
	// MaxRetries bounds retries of 429, 5xx and reset connections.
	MaxRetries int `yaml:"max_retries" json:"max_retries"`
}

func defaultHTTP(baseURL string) httpOptions {
	return httpOptions{BaseURL: baseURL, MaxRetries: DefaultMaxRetries}
}

// sampling are the generation knobs the OpenAI-style and Ollama protocols
// take (seed only where the protocol has it).
type sampling struct {
	Temperature *float64 `yaml:"temperature" json:"temperature,omitempty"`
	MaxTokens   int      `yaml:"max_tokens" json:"max_tokens,omitempty"`
}

var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// resolve checks the shared HTTP keys and records the server's endpoint.
func (o *httpOptions) resolve(p *config.Provider, problem func(key, msg string), processNames ...string) {
	o.BaseURL = strings.TrimRight(o.BaseURL, "/")
	if !strings.HasPrefix(o.BaseURL, "http://") && !strings.HasPrefix(o.BaseURL, "https://") {
		problem("base_url", "must start with http:// or https://")
	}
	if o.APIKeyEnv != "" && looksLikeSecret(o.APIKeyEnv) {
		// Never echo the value: it may be a real key.
		problem("api_key_env", "holds what looks like a key itself; put the NAME of an environment variable here (e.g. OPENAI_API_KEY) and export the key in it")
	}
	if o.MaxRetries < 0 || o.MaxRetries > MaxRetriesLimit {
		problem("max_retries", fmt.Sprintf("must be from 0 to %d", MaxRetriesLimit))
	}
	p.Server = config.Server{Endpoint: o.BaseURL, ProcessNames: processNames}
}

// key returns the API key from the named variable ("" when none is named).
func (o *httpOptions) key() string {
	if o.APIKeyEnv == "" {
		return ""
	}
	return os.Getenv(o.APIKeyEnv)
}

// probeKey fills the key fields of a probe: whether the variable is set,
// never its value.
func (o *httpOptions) probeKey(pr *Probe) {
	pr.BaseURL, pr.APIKeyEnv = o.BaseURL, o.APIKeyEnv
	if o.APIKeyEnv != "" {
		set := "no"
		if os.Getenv(o.APIKeyEnv) != "" {
			set = "yes"
		}
		pr.APIKeySet = &set
	}
}

// endpoint builds the HTTP path of a kind from its options.
func (o *httpOptions) endpoint(secrets Secrets) *httpEndpoint {
	return &httpEndpoint{client: httpClient(), secrets: secrets, maxRetries: o.MaxRetries, backoff: time.Second}
}

// looksLikeSecret tells a key pasted into api_key_env from a variable name.
func looksLikeSecret(s string) bool {
	if !envName.MatchString(s) {
		return true
	}
	// Long mixed-case or digit-heavy names are keys, not the UPPER_SNAKE
	// names people give variables.
	return len(s) >= 32 && strings.ToUpper(s) != s
}

// Connection pool: bench keeps as many idle connections per host as cells
// can be in flight, so a sweep does not open a new TCP connection for a
// quarter of its requests (the default keeps 2) and connection setup stays
// out of the timings.
const maxIdlePerHost = 1024

// httpClient is the client every HTTP provider uses. It has no timeout of its
// own: the cell's context bounds the whole stream.
func httpClient() *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConnsPerHost = maxIdlePerHost
	t.MaxIdleConns = maxIdlePerHost
	return &http.Client{Transport: replayable{t}}
}
