package config

import (
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"
)

// Traces is the traces: block: where a run's span tree goes besides
// results.jsonl. The NDJSON file in the run directory is on by default;
// the OTLP export is on when an endpoint is known (here or in the standard
// OTEL_EXPORTER_OTLP_* variables), unless otlp: false turns it off. The
// values in this block win over the environment's; what is not set here is
// taken from the standard variables by package traces.
//
// No secret is ever written here or into config.json: headers_env maps
// each header to the NAME of the environment variable holding its value.
type Traces struct {
	// NDJSON writes the spans to traces/ in the run directory.
	NDJSON bool `yaml:"ndjson" json:"ndjson"`
	// OTLP forces the export on (true) or off (false); unset, it is on
	// when an endpoint is set here or in the environment.
	OTLP *bool `yaml:"otlp" json:"otlp,omitempty"`
	// Endpoint is the collector's URL: for http/protobuf and http/json
	// the base (http://host:4318, /v1/traces is appended unless the URL
	// has a path of its own), for grpc http://host:4317 (http:// means no
	// TLS, https:// TLS).
	Endpoint string `yaml:"endpoint" json:"endpoint,omitempty"`
	// Protocol is grpc, http/protobuf or http/json.
	Protocol string `yaml:"protocol" json:"protocol,omitempty"`
	// HeadersEnv maps a header name to the environment variable holding
	// its value (an API key for a hosted backend).
	HeadersEnv map[string]string `yaml:"headers_env" json:"headers_env,omitempty"`
	// Timeout bounds each export and the final flush: a dead or stalled
	// collector delays the end of a run by at most about this much.
	Timeout Duration `yaml:"timeout" json:"timeout"`
	// ServiceName is the service.name resource attribute (default
	// OTEL_SERVICE_NAME, else "bench").
	ServiceName string `yaml:"service_name" json:"service_name,omitempty"`
}

// DefaultTracesTimeout is traces.timeout when none is given.
const DefaultTracesTimeout = 10 * time.Second

// Protocols are the OTLP protocols traces.protocol takes.
var Protocols = []string{"grpc", "http/protobuf", "http/json"}

// headerName is an HTTP header field name (RFC 9110 token), lowercase or not.
var headerName = regexp.MustCompile("^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")

// envVarName is what an environment variable's name may be.
var envVarName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

func defaultTraces() Traces {
	return Traces{NDJSON: true, Timeout: Duration(DefaultTracesTimeout)}
}

// validate checks the block; each problem names its key.
func (t *Traces) validate(v *validator) {
	if t.Timeout <= 0 {
		v.add("traces.timeout", "must be more than 0 (e.g. 10s)")
	}
	if t.Protocol != "" && !slices.Contains(Protocols, t.Protocol) {
		v.add("traces.protocol", fmt.Sprintf("%q is not an OTLP protocol; one of %s", t.Protocol, strings.Join(Protocols, ", ")))
	}
	if t.Endpoint != "" {
		if msg := checkEndpoint(t.Endpoint); msg != "" {
			v.add("traces.endpoint", msg)
		}
	}
	names := make([]string, 0, len(t.HeadersEnv))
	for k := range t.HeadersEnv {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, h := range names {
		at := []any{"traces", "headers_env", h}
		if !headerName.MatchString(h) {
			v.addPath(at, "traces.headers_env."+h, fmt.Sprintf("%q is not an HTTP header name", h))
		}
		if !envVarName.MatchString(t.HeadersEnv[h]) {
			// Not quoted: it may be the secret itself, pasted by mistake.
			v.addPath(at, "traces.headers_env."+h, "is not an environment variable name: give the NAME of the variable that holds the value, never the value")
		}
	}
}

// checkEndpoint says what is wrong with an endpoint URL, "" if nothing.
// The messages do not quote the URL: it may hold a credential.
func checkEndpoint(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return "is not a URL"
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return "needs http:// or https:// (http:// also means no TLS for grpc)"
	}
	if u.Host == "" {
		return "has no host"
	}
	if u.User != nil || u.RawQuery != "" {
		// config.json records the endpoint: credentials go in headers_env.
		return "must not hold credentials (user:password@ or a ?query); put them in headers_env"
	}
	return ""
}
