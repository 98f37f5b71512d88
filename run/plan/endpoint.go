package plan

import (
	"net"
	"net/url"
	"strings"

	"bench/config"
)

// EndpointKey names the server an endpoint (a kind's base URL) reaches, so
// that suites sharing one server are scheduled as one: the scheme and
// host lower-cased, the port made explicit, every loopback name
// (localhost, 127.0.0.1, ::1, 0.0.0.0) written as "localhost", and the
// path without trailing slashes or the OpenAI-compatible "/v1" suffix,
// since a server serves that API beside its native one (Ollama's /v1 and
// its native root are one server). "" (a local CLI) stays "".
func EndpointKey(endpoint string) string {
	if endpoint == "" {
		return ""
	}
	u, err := url.Parse(strings.TrimSpace(endpoint))
	if err != nil || u.Host == "" {
		return endpoint
	}
	scheme := strings.ToLower(u.Scheme)
	host := strings.ToLower(u.Hostname())
	if isLoopback(host) {
		host = "localhost"
	}
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[scheme]
	}
	path := strings.TrimRight(u.EscapedPath(), "/")
	path = strings.TrimRight(strings.TrimSuffix(path, "/v1"), "/")
	return scheme + "://" + net.JoinHostPort(host, port) + path
}

func isLoopback(host string) bool { return config.LoopbackHost(host) }
