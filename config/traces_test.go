package config_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"bench/config"
	"bench/providers"
)

const oneProvider = "providers:\n  - type: ollama\n    models: [m]\n"

func TestTracesDefaults(t *testing.T) {
	c, err := config.Parse("bench.yaml", []byte(oneProvider), providers.Kinds)
	if err != nil {
		t.Fatal(err)
	}
	tr := c.Traces
	if !tr.NDJSON || tr.OTLP != nil || tr.Endpoint != "" || tr.Protocol != "" || time.Duration(tr.Timeout) != config.DefaultTracesTimeout {
		t.Errorf("defaults = %+v", tr)
	}
}

func TestTracesBlock(t *testing.T) {
	c, err := config.Parse("bench.yaml", []byte(oneProvider+`traces:
  ndjson: false
  otlp: true
  endpoint: https://otel.example.com:4318
  protocol: http/json
  headers_env: {x-honeycomb-team: HONEYCOMB_API_KEY, Authorization: OTLP_AUTH}
  timeout: 3s
  service_name: nightly-bench
`), providers.Kinds)
	if err != nil {
		t.Fatal(err)
	}
	tr := c.Traces
	if tr.NDJSON || tr.OTLP == nil || !*tr.OTLP || tr.Endpoint != "https://otel.example.com:4318" || tr.Protocol != "http/json" ||
		tr.HeadersEnv["x-honeycomb-team"] != "HONEYCOMB_API_KEY" || time.Duration(tr.Timeout) != 3*time.Second || tr.ServiceName != "nightly-bench" {
		t.Errorf("traces = %+v", tr)
	}
	// config.json records the names of the variables, never a value.
	b, err := json.Marshal(c.Traces)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"ndjson":false,"otlp":true,"endpoint":"https://otel.example.com:4318","protocol":"http/json","headers_env":{"Authorization":"OTLP_AUTH","x-honeycomb-team":"HONEYCOMB_API_KEY"},"timeout":"3s","service_name":"nightly-bench"}`
	if string(b) != want {
		t.Errorf("config.json traces:\n got %s\nwant %s", b, want)
	}
}

// Every problem of the block is reported at once, each at its line.
func TestTracesBadBlock(t *testing.T) {
	_, err := config.Parse("bench.yaml", []byte(oneProvider+`traces:
  ndjson: yes please
  endpoint: http://user:secret@collector:4318
  protocol: http/xml
  headers_env:
    x-api-key: abc-123-literal-value
    "bad header": OK_NAME
  timeout: 0s
  endpiont: x
`), providers.Kinds)
	if err == nil {
		t.Fatal("accepted a bad traces block")
	}
	for _, w := range []string{
		"bench.yaml:5: traces.ndjson: wrong type: got string yes please, want true or false",
		"bench.yaml:6: traces.endpoint: must not hold credentials",
		`bench.yaml:7: traces.protocol: "http/xml" is not an OTLP protocol; one of grpc, http/protobuf, http/json`,
		"bench.yaml:9: traces.headers_env.x-api-key: is not an environment variable name",
		`bench.yaml:10: traces.headers_env.bad header: "bad header" is not an HTTP header name`,
		"bench.yaml:11: traces.timeout: must be more than 0",
		`bench.yaml:12: traces.endpiont: unknown field "endpiont" (did you mean "endpoint"?)`,
	} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error\n%v\ndoes not contain\n%s", err, w)
		}
	}
	if strings.Contains(err.Error(), "secret") || strings.Contains(err.Error(), "abc-123") {
		t.Errorf("an error repeats a credential:\n%v", err)
	}
}

func TestTracesEndpointNeedsScheme(t *testing.T) {
	for _, ep := range []string{"collector:4317", "ftp://collector", "http://", "https://c:4318/v1/traces?key=x"} {
		_, err := config.Parse("bench.yaml", []byte(oneProvider+"traces:\n  endpoint: "+ep+"\n"), providers.Kinds)
		if err == nil || !strings.Contains(err.Error(), "bench.yaml:5: traces.endpoint:") {
			t.Errorf("endpoint %q: err %v", ep, err)
		}
	}
}
