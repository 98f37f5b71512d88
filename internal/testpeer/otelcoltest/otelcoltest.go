// Package otelcoltest runs a real OpenTelemetry Collector for tests: the
// OTLP receiver on free loopback ports (gRPC and HTTP) and the file exporter
// writing what it received, as OTLP/JSON, to a temporary file that the test
// reads back as flat Spans.
//
//	col := otelcoltest.Start(t)
//	// export to col.HTTPEndpoint() or col.GRPCEndpoint() ...
//	spans := col.WaitSpans(t, 3, 10*time.Second)
//
// The collector is built by `scripts/otelcol.sh install` from
// scripts/otelcol/manifest.yaml into .tools/otelcol/ (scripts/test.sh does
// it and exports BENCH_OTELCOL_BIN). When the binary is missing the tests are
// skipped, unless BENCH_REQUIRE_SERVERS=1 is set (as in CI), in which case
// they fail.
//
// Layer: test peers (tests only; production code never imports it).
package otelcoltest

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Version is the collector release the manifest pins (builder and components).
const Version = "v0.162.0"

// InstallHint says how to get the binary.
const InstallHint = "scripts/otelcol.sh install"

// ErrNoBinary is returned (wrapped) when no collector binary can be found.
var ErrNoBinary = errors.New("otelcol binary not found (set BENCH_OTELCOL_BIN or run: " + InstallHint + ")")

// binaryName is the manifest's dist.name.
const binaryName = "otelcol-bench"

// Binary finds the collector: $BENCH_OTELCOL_BIN, else
// .tools/otelcol/otelcol-bench in the module root above the working
// directory (a test's working directory is its package's folder). The error
// wraps ErrNoBinary.
func Binary() (string, error) {
	if p := os.Getenv("BENCH_OTELCOL_BIN"); p != "" {
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Errorf("BENCH_OTELCOL_BIN=%s: %w: %w", p, ErrNoBinary, err)
		}
		return p, nil
	}
	dir, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("%w: %w", ErrNoBinary, err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			p := filepath.Join(dir, ".tools", "otelcol", binaryName)
			if st, err := os.Stat(p); err == nil && !st.IsDir() {
				return p, nil
			}
			return "", fmt.Errorf("%w: no %s", ErrNoBinary, p)
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("%w: no go.mod above the working directory", ErrNoBinary)
		}
		dir = parent
	}
}

// Required reports whether BENCH_REQUIRE_SERVERS=1, i.e. a missing collector
// must fail the test rather than skip it.
func Required() bool { return os.Getenv("BENCH_REQUIRE_SERVERS") == "1" }

// Check skips (or, when Required, fails) the test if err says the binary is
// missing, and fails it for any other error. It is for collectors started in
// TestMain with StartCollector.
func Check(t testing.TB, err error) {
	t.Helper()
	if err == nil {
		return
	}
	if errors.Is(err, ErrNoBinary) && !Required() {
		t.Skipf("otel collector: %v", err)
	}
	t.Fatalf("otel collector: %v", err)
}

// readyLine is what the collector logs once every receiver and exporter has
// started (service.go in the pinned release). Waiting for it, rather than for
// the ports to accept, cannot be fooled by another process that grabbed a
// port between freePort and the collector's bind.
const readyLine = "Everything is ready"

var errExited = errors.New("the collector exited before it was ready")

// Collector is a running collector with its config, log and output file in
// a temporary directory.
type Collector struct {
	dir      string
	logPath  string
	outPath  string
	httpAddr string
	grpcAddr string

	mu      sync.Mutex
	cmd     *exec.Cmd
	exited  chan struct{}
	stopped bool
}

// Start starts a collector for one test and stops it when the test ends; on
// failure the tail of the collector's log is printed.
func Start(t testing.TB) *Collector {
	t.Helper()
	c, err := StartCollector()
	Check(t, err)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("otel collector log tail (%s):\n%s", c.logPath, c.LogTail(30))
		}
		c.Close()
	})
	return c
}

// StartCollector starts a collector listening on free 127.0.0.1 ports and
// waits until it logs that it is ready. Close stops it and removes its
// directory.
func StartCollector() (*Collector, error) {
	bin, err := Binary()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "otelcoltest-")
	if err != nil {
		return nil, fmt.Errorf("otel collector: %w", err)
	}
	// A free port handed to another process can be taken in between by
	// another test doing the same; a collector that cannot bind exits, and
	// gets new ports.
	for attempt := 1; ; attempt++ {
		c, err := start(bin, dir)
		if err == nil {
			return c, nil
		}
		if !errors.Is(err, errExited) || attempt == 3 {
			os.RemoveAll(dir)
			return nil, err
		}
	}
}

// config is the collector's configuration. flush_interval: the file
// exporter buffers its writes and flushes on this timer (default 1s), so a
// short one lets WaitSpans see spans promptly. metrics level none: the
// collector's own metrics endpoint would otherwise listen on the fixed port
// 8888, and two collectors (two test packages) would collide.
const config = `receivers:
  otlp:
    protocols:
      grpc:
        endpoint: %s
      http:
        endpoint: %s
exporters:
  file:
    path: %s
    format: json
    flush_interval: 20ms
service:
  telemetry:
    logs:
      level: info
      encoding: console
    metrics:
      level: none
  pipelines:
    traces:
      receivers: [otlp]
      exporters: [file]
`

func start(bin, dir string) (*Collector, error) {
	grpcPort, err := freePort()
	if err != nil {
		return nil, err
	}
	httpPort, err := freePort()
	if err != nil {
		return nil, err
	}
	c := &Collector{
		dir:      dir,
		logPath:  filepath.Join(dir, "otelcol.log"),
		outPath:  filepath.Join(dir, "spans.jsonl"),
		grpcAddr: fmt.Sprintf("127.0.0.1:%d", grpcPort),
		httpAddr: fmt.Sprintf("127.0.0.1:%d", httpPort),
		exited:   make(chan struct{}),
	}
	cfgPath := filepath.Join(dir, "config.yaml")
	cfg := fmt.Sprintf(config, c.grpcAddr, c.httpAddr, c.outPath)
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o644); err != nil {
		return nil, fmt.Errorf("otel collector: %w", err)
	}
	// A retry starts from a fresh log, so the ready line found is this
	// attempt's.
	logf, err := os.Create(c.logPath)
	if err != nil {
		return nil, fmt.Errorf("otel collector: %w", err)
	}
	defer logf.Close()
	cmd := exec.Command(bin, "--config", "file:"+cfgPath)
	cmd.Dir = dir
	cmd.Env = cleanEnv()
	cmd.Stdout, cmd.Stderr = logf, logf
	// Its own process group, so Stop takes down the whole group and a
	// test's Ctrl-C does not reach it before the cleanup does.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("otel collector: start %s: %w", bin, err)
	}
	c.cmd = cmd
	go func() {
		cmd.Wait()
		close(c.exited)
	}()
	if err := c.waitReady(60 * time.Second); err != nil {
		tail := c.LogTail(20)
		c.Stop()
		return nil, fmt.Errorf("otel collector on %s and %s: %w\nlog tail:\n%s", c.grpcAddr, c.httpAddr, err, tail)
	}
	return c, nil
}

func (c *Collector) waitReady(limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for delay := 10 * time.Millisecond; ; delay = min(delay*2, 200*time.Millisecond) {
		if b, err := os.ReadFile(c.logPath); err == nil && strings.Contains(string(b), readyLine) {
			return nil
		}
		select {
		case <-c.exited:
			return errExited
		case <-time.After(delay):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("no %q in the log after %s", readyLine, limit)
		}
	}
}

// cleanEnv is the environment without OTEL_* variables: a test that sets
// OTEL_EXPORTER_OTLP_ENDPOINT for the code under test must not configure
// the collector's own telemetry too.
func cleanEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "OTEL_") {
			env = append(env, kv)
		}
	}
	return env
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// HTTPEndpoint is the base URL of the OTLP/HTTP receiver, e.g.
// http://127.0.0.1:40123: the form OTEL_EXPORTER_OTLP_ENDPOINT takes for
// both protocols (the HTTP exporter appends /v1/traces to it).
func (c *Collector) HTTPEndpoint() string { return "http://" + c.httpAddr }

// GRPCEndpoint is the host:port of the OTLP/gRPC receiver, e.g.
// 127.0.0.1:40124, the form otlptracegrpc.WithEndpoint takes (with
// WithInsecure). As an OTEL_EXPORTER_OTLP_ENDPOINT value it needs the
// http:// scheme, or the gRPC exporter uses TLS.
func (c *Collector) GRPCEndpoint() string { return c.grpcAddr }

// OutputPath is the file the file exporter writes, one OTLP/JSON request a
// line.
func (c *Collector) OutputPath() string { return c.outPath }

// LogTail returns the last n lines of the collector's log.
func (c *Collector) LogTail(n int) string {
	b, err := os.ReadFile(c.logPath)
	if err != nil {
		return fmt.Sprintf("(no log: %v)", err)
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// ReadSpans parses what the collector has written so far (see ParseSpans).
// A file not yet created holds no spans.
func (c *Collector) ReadSpans() ([]Span, error) {
	b, err := os.ReadFile(c.outPath)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("otel collector output: %w", err)
	}
	spans, err := ParseSpans(b)
	if err != nil {
		return nil, fmt.Errorf("otel collector output %s: %w", c.outPath, err)
	}
	return spans, nil
}

// Spans is ReadSpans for a test: what the collector has written so far,
// failing the test on a bad file. Spans still in the exporter's buffer (up
// to 20ms) are not there yet; use WaitSpans, or Stop first.
func (c *Collector) Spans(t testing.TB) []Span {
	t.Helper()
	spans, err := c.ReadSpans()
	if err != nil {
		t.Fatal(err)
	}
	return spans
}

// WaitSpans waits until the collector has written at least n spans and
// returns all it has written, failing the test if that takes longer than
// timeout. It does not wait for more than n: to check nothing else arrived,
// Stop the collector (which flushes) and call Spans.
func (c *Collector) WaitSpans(t testing.TB, n int, timeout time.Duration) []Span {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		spans, err := c.ReadSpans()
		if err != nil {
			t.Fatal(err)
		}
		if len(spans) >= n {
			return spans
		}
		if time.Now().After(deadline) {
			state := "running"
			select {
			case <-c.exited:
				state = "exited"
			default:
			}
			t.Fatalf("otel collector (%s) wrote %d spans, want %d, within %s", state, len(spans), n, timeout)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Stop shuts the collector down (its whole process group): SIGTERM, which
// makes it flush the file exporter, then SIGKILL if it has not exited within
// 10 seconds. Its ports are closed afterwards, so a test can use it to see
// how an exporter copes with a collector that went away; the output file
// stays readable until Close. Stop may be called more than once.
func (c *Collector) Stop() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stopped || c.cmd == nil {
		return
	}
	c.stopped = true
	pgid := c.cmd.Process.Pid
	_ = syscall.Kill(-pgid, syscall.SIGTERM)
	select {
	case <-c.exited:
	case <-time.After(10 * time.Second):
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		<-c.exited
	}
}

// Close stops the collector and removes its directory.
func (c *Collector) Close() {
	c.Stop()
	os.RemoveAll(c.dir)
}
