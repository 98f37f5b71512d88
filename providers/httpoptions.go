package providers

import (
	"context"
	"fmt"
	"maps"
	"net"
	"net/http"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/net/http/httpguts"

	"bench/config"
	"bench/internal/record/results"
	"bench/internal/record/secrets"
)

// MaxRetriesLimit bounds max_retries: each retry is a request and a line
// of the cell's timeline.
const MaxRetriesLimit = 10

// httpOptions are the keys every HTTP kind takes.
type httpOptions struct {
	// BaseURL is where requests go. A password in it (user:pass@host) is
	// sent as Basic auth and scrubbed from everything bench writes;
	// config.json records the URL without its userinfo (SavedURL) and
	// only that it had one (URLUserinfo), so a resume takes the URL from
	// the config it is given (config.Restore).
	BaseURL     string `yaml:"base_url" json:"-"`
	SavedURL    string `yaml:"-" json:"base_url"`
	URLUserinfo bool   `yaml:"-" json:"base_url_userinfo,omitempty"`
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

// OutputCap is the entry's max_tokens (the budget's projection reads it
// through OutputCap).
func (s sampling) OutputCap() int { return s.MaxTokens }

// OutputCap is the cap a provider entry puts on an answer's tokens (its
// max_tokens), 0 when it puts none or its kind takes none: what the cost
// projection of a run counts a cell's output at when its prompt sets no
// max_tokens of its own.
func OutputCap(p *config.Provider) int {
	if c, ok := p.Options.(interface{ OutputCap() int }); ok {
		return c.OutputCap()
	}
	return 0
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
	o.SavedURL = StripUserinfo(o.BaseURL)
	o.URLUserinfo = o.SavedURL != o.BaseURL
	p.Server = config.Server{Endpoint: o.SavedURL, ProcessNames: processNames}
}

// creds are what a provider's calls need of its entry: the key they send
// (Bearer) and the secrets they scrub.
type creds struct {
	key     string
	secrets Secrets
}

// credentials are the entry's key and the secrets its calls scrub (the
// run's: New's).
func (o *httpOptions) credentials(s Secrets) creds {
	return creds{key: o.key(), secrets: s}
}

// secretSpec: the key (the variable api_key_env names) and base_url's
// password are the run's secrets; the password of a proxy URL bench's
// HTTP client sends (HTTPS_PROXY=http://user:password@proxy) is this
// entry's.
func (o *httpOptions) secretSpec() (all, own secrets.Spec) {
	all = secrets.Spec{Values: secrets.URLSecrets(o.BaseURL)}
	if o.APIKeyEnv != "" {
		all.Env = []string{o.APIKeyEnv}
	}
	for _, n := range secrets.ProxyEnv {
		if len(secrets.URLSecrets(os.Getenv(n))) > 0 {
			own.Env = append(own.Env, n)
		}
	}
	return all, own
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
	pr.BaseURL, pr.APIKeyEnv = StripUserinfo(o.BaseURL), o.APIKeyEnv
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
	d := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}
	t.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := d.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return newStampedConn(c), nil
	}
	return &http.Client{Transport: replayable{t}}
}

// stampedConn remembers when the bytes of its last read arrived. Every
// byte of a response body comes off the socket in some read, and the
// reader of a body gets bytes no later than the read that brought them, so
// the time of the latest read is when the bytes just handed over arrived
// (for HTTP/1, where one response owns the connection; over HTTP/2 it may
// be a little later, never earlier). Where the kernel can say when the
// bytes reached the socket (Linux: SO_TIMESTAMPNS), that is the stamp, so
// neither bench's decoding nor a busy scheduler's delay in running the
// reader (at 256 streams on 2 cores, milliseconds) lands in the figures;
// elsewhere it is the moment the read returned.
//
// The kernel's stamp of a read is that of the last segment it takes, so a
// reader that runs late and finds several frames queued would stamp the
// first with the last one's arrival. While a cell awaits its first token
// (split), a read therefore takes what is queued with each frame's own
// stamp and hands it over a frame at a time (see frames.go).
type stampedConn struct {
	net.Conn
	// raw reads with the kernel's receive time; nil: plain reads.
	raw syscall.RawConn
	oob []byte
	// awaiting is the request whose first token is awaited (0: none):
	// reads stamp frame by frame meanwhile. It is read inside each read,
	// not before it, so the read the transport left waiting on an idle
	// connection obeys it when the answer comes. requests numbers them.
	awaiting, requests atomic.Uint64
	// quickBefore is whether the connection was in quick-ACK mode when the
	// request awaited began (see delayAcks).
	quickBefore atomic.Bool
	// held is what a split read took off the socket and has not handed
	// over yet; only the reading goroutine touches it.
	held heldFrames

	mu  sync.Mutex
	now func() time.Time
	at  time.Time
}

func newStampedConn(c net.Conn) *stampedConn {
	sc := &stampedConn{Conn: c}
	sc.raw, sc.oob = kernelStamps(c)
	return sc
}

func (c *stampedConn) Read(p []byte) (int, error) {
	if c.held.pending() {
		n, ts := c.held.next(p)
		c.stamp(ageOf(ts))
		return n, nil
	}
	if c.raw == nil {
		n, err := c.Conn.Read(p)
		if n > 0 {
			c.stamp(0)
		}
		return n, err
	}
	n, age, err := c.readStamped(p)
	if n > 0 {
		c.stamp(age)
	}
	return n, err
}

// stamp records that bytes arrived age ago (0: now), on the cell's clock.
func (c *stampedConn) stamp(age time.Duration) {
	c.mu.Lock()
	now := time.Now
	if c.now != nil {
		now = c.now
	}
	c.at = now().Add(-age)
	c.mu.Unlock()
}

// awaitFirstToken makes reads stamp frame by frame, and asks the kernel to
// delay its ACKs (see delayAcks), until doneAwaiting with the request
// number it returns.
func (c *stampedConn) awaitFirstToken() uint64 {
	req := c.requests.Add(1)
	c.awaiting.Store(req)
	c.delayAcks(true)
	return req
}

// doneAwaiting: request req's first token is stamped, or its answer is
// over. Reads go back to one syscall for all that is queued, as the chunk
// cost wants, and ACKs to the mode the connection had, any held one sent
// at once. A request that is not the one awaited changes nothing: a body
// closed after its connection went back to the pool must not end the
// next request's wait.
func (c *stampedConn) doneAwaiting(req uint64) {
	if c.awaiting.CompareAndSwap(req, 0) {
		c.delayAcks(false)
	}
}

// splitting says whether a first token is awaited.
func (c *stampedConn) splitting() bool { return c.awaiting.Load() != 0 }

// setClock makes the connection stamp its reads with now (the cell's clock).
func (c *stampedConn) setClock(now func() time.Time) {
	c.mu.Lock()
	c.now = now
	c.mu.Unlock()
}

// readAt is when the latest read returned bytes.
func (c *stampedConn) readAt() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.at
}

// stampedOf finds bench's connection under what the transport hands a
// trace (a TLS connection wraps it).
func stampedOf(c net.Conn) *stampedConn {
	for c != nil {
		switch v := c.(type) {
		case *stampedConn:
			return v
		case interface{ NetConn() net.Conn }:
			c = v.NetConn()
		default:
			return nil
		}
	}
	return nil
}

// bearer is the Authorization header of an API key sent as a bearer token
// (none for "").
func bearer(key string) http.Header {
	if key == "" {
		return nil
	}
	return http.Header{"Authorization": {"Bearer " + key}}
}

// missingKey is the failure of a cell whose entry names a key variable
// that is empty or unset: nothing is sent.
func (o *httpOptions) missingKey() error {
	if o.APIKeyEnv == "" || o.key() != "" {
		return nil
	}
	return &Failure{Status: results.StatusSkippedUnavailable, Type: results.FailMissingAPIKey,
		Message: fmt.Sprintf("environment variable %s is empty or unset; export the API key in it", o.APIKeyEnv)}
}

// extraHeaders are the headers an entry adds to every request (an
// OpenRouter's HTTP-Referer, an anthropic-beta flag, a gateway's token).
// A value may hold ${VAR}, expanded from the environment; such a value,
// and any value of a header named like a credential (Authorization,
// X-Api-Key...), is a secret: scrubbed from everything bench writes, and
// config.json records only the headers' names.
type extraHeaders struct {
	Headers     map[string]string `yaml:"headers" json:"-"`
	HeaderNames []string          `yaml:"-" json:"header_names,omitempty"`
}

// checkHeaders checks the header names and records them for config.json.
func (h *extraHeaders) checkHeaders(problem func(key, msg string)) {
	h.HeaderNames = h.HeaderNames[:0]
	for _, k := range slices.Sorted(maps.Keys(h.Headers)) {
		if !httpguts.ValidHeaderFieldName(k) {
			problem("headers", fmt.Sprintf("%q is not a valid header name", k))
			continue
		}
		if strings.ContainsAny(os.Expand(h.Headers[k], os.Getenv), "\r\n") {
			problem("headers", fmt.Sprintf("the value of %s holds a line break", k))
		}
		h.HeaderNames = append(h.HeaderNames, k)
	}
	if len(h.HeaderNames) == 0 {
		h.HeaderNames = nil
	}
}

// header is the headers with ${VAR} expanded, into into (a new header
// when nil).
func (h *extraHeaders) header(into http.Header) http.Header {
	if into == nil {
		into = http.Header{}
	}
	for k, v := range h.Headers {
		into.Set(k, os.Expand(v, os.Getenv))
	}
	return into
}

// secretSpec adds the headers' secrets to all, the entry's http
// secrets (httpOptions.secretSpec): a value that came from a ${VAR} (and
// the variables it read, which run.json names) and the value of a header
// named like a credential (secretName), as a CLI's env values are.
func (h *extraHeaders) secretSpec(all, own secrets.Spec) (secrets.Spec, secrets.Spec) {
	for _, k := range slices.Sorted(maps.Keys(h.Headers)) {
		raw := h.Headers[k]
		v := os.Expand(raw, func(name string) string {
			all.Add(secrets.Spec{Env: []string{name}})
			return os.Getenv(name)
		})
		if v != raw || secretName(k) {
			all.Values = append(all.Values, v)
		}
	}
	return all, own
}

// thinkingBudgets maps the thinking levels to the token budget a
// protocol that takes one (Anthropic's budget_tokens, Gemini's
// thinkingBudget) is sent; an entry's thinking_budgets overrides levels
// one by one.
type thinkingBudgets map[string]int

// thinkingLevels are the levels a budget can be given for.
var thinkingLevels = []string{"low", "medium", "high", "xhigh"}

// with is the kind's defaults overridden by the entry's budgets.
func (t thinkingBudgets) with(defaults thinkingBudgets) thinkingBudgets {
	out := maps.Clone(defaults)
	maps.Copy(out, t)
	return out
}

// check reports a level that is not one, or a budget below least.
func (t thinkingBudgets) check(least int, problem func(key, msg string)) {
	for _, k := range slices.Sorted(maps.Keys(t)) {
		switch {
		case !slices.Contains(thinkingLevels, k):
			problem("thinking_budgets", fmt.Sprintf("%q is not a thinking level (%s)", k, strings.Join(thinkingLevels, ", ")))
		case t[k] < least:
			problem("thinking_budgets", fmt.Sprintf("%s: %d tokens is below the least the API takes (%d)", k, t[k], least))
		}
	}
}

// hostedHint is the advice for a kind that speaks to a hosted API (or a
// server of the user's own behind base_url): what to export, what should
// answer, which model names to check.
func hostedHint(p *config.Provider, o *httpOptions, server, failureType string, models []string) (string, bool) {
	switch failureType {
	case results.FailMissingAPIKey:
		return fmt.Sprintf("export %s for %s", o.APIKeyEnv, p.Name), true
	case results.FailConnectionRefused, results.FailHostUnreachable:
		return fmt.Sprintf("nothing answers at %s for %s (%s)", StripUserinfo(o.BaseURL), p.Name, server), true
	case results.FailModelNotFound:
		return fmt.Sprintf("check the model names of %s (%s)", p.Name, strings.Join(models, ", ")), false
	}
	return fmt.Sprintf("%s: %s", p.Name, failureType), false
}
