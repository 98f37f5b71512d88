// Package ollamatest runs a real `ollama serve` for tests, on a free loopback
// port with its models in a temporary directory, and creates scripted models
// on it (see package testmodel), so a test knows exactly what the server will
// answer on /api/chat and /v1/chat/completions.
//
// A test either starts its own server:
//
//	srv := ollamatest.Start(t)
//	srv.CreateModel(t, "scripted", testmodel.Script{"OK": {"OK"}})
//
// or a package shares one from TestMain with StartServer, Close and Check.
// When the ollama binary is missing the tests are skipped, unless
// BENCH_REQUIRE_SERVERS=1 is set (as in CI), in which case they fail.
//
// Layer: test peers (tests only; production code never imports it).
package ollamatest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ollama/ollama/api"

	"bench/internal/testpeer/testmodel"
)

// Version is the Ollama release the tests and fixtures are pinned to.
const Version = "v0.9.6"

// InstallHint says how to get the binary.
const InstallHint = "go install github.com/ollama/ollama@" + Version

// ErrNoBinary is returned (wrapped) when no ollama binary can be found.
var ErrNoBinary = errors.New("ollama binary not found (set BENCH_OLLAMA_BIN or run: " + InstallHint + ")")

// Binary finds the ollama binary: $BENCH_OLLAMA_BIN, then PATH, then
// $(go env GOPATH)/bin/ollama. The error wraps ErrNoBinary.
func Binary() (string, error) {
	if p := os.Getenv("BENCH_OLLAMA_BIN"); p != "" {
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Errorf("BENCH_OLLAMA_BIN=%s: %w: %w", p, ErrNoBinary, err)
		}
		return p, nil
	}
	if p, err := exec.LookPath("ollama"); err == nil {
		return p, nil
	}
	gopath := os.Getenv("GOPATH")
	if gopath == "" {
		if out, err := exec.Command("go", "env", "GOPATH").Output(); err == nil {
			gopath = strings.TrimSpace(string(out))
		}
	}
	if gopath == "" {
		if home, err := os.UserHomeDir(); err == nil {
			gopath = filepath.Join(home, "go")
		}
	}
	for _, dir := range filepath.SplitList(gopath) {
		p := filepath.Join(dir, "bin", "ollama")
		if st, err := os.Stat(p); err == nil && !st.IsDir() {
			return p, nil
		}
	}
	return "", ErrNoBinary
}

// Required reports whether BENCH_REQUIRE_SERVERS=1, i.e. a missing server must
// fail the test rather than skip it.
func Required() bool { return os.Getenv("BENCH_REQUIRE_SERVERS") == "1" }

// Check skips (or, when Required, fails) the test if err says the binary is
// missing, and fails it for any other error. It is for servers started in
// TestMain.
func Check(t testing.TB, err error) {
	t.Helper()
	if err == nil {
		return
	}
	if errors.Is(err, ErrNoBinary) && !Required() {
		t.Skipf("ollama test server: %v", err)
	}
	t.Fatalf("ollama test server: %v", err)
}

var errExited = errors.New("ollama serve exited before it was ready")

// Server is a running `ollama serve`.
type Server struct {
	dir     string
	logPath string
	url     string
	client  *api.Client

	mu      sync.Mutex
	cmd     *exec.Cmd
	exited  chan struct{}
	stopped bool
}

// Start starts a server for one test and stops it when the test ends; on
// failure the tail of the server log is printed. env entries (KEY=value)
// override the server's settings, e.g. "OLLAMA_MAX_LOADED_MODELS=1" for a
// server that holds one model at a time.
func Start(t testing.TB, env ...string) *Server {
	t.Helper()
	s, err := StartServer(env...)
	Check(t, err)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("ollama log tail (%s):\n%s", s.logPath, s.LogTail(40))
		}
		s.Close()
	})
	return s
}

// StartServer starts `ollama serve` on a free 127.0.0.1 port with HOME and
// OLLAMA_MODELS in a new temporary directory (env overriding its settings,
// as for Start) and waits until /api/version answers. Close removes it all.
func StartServer(env ...string) (*Server, error) {
	bin, err := Binary()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "ollamatest-")
	if err != nil {
		return nil, fmt.Errorf("ollama test server: %w", err)
	}
	// Picking a free port and handing it to another process can race with
	// other tests doing the same; a server that dies at once gets a new port.
	for attempt := 1; ; attempt++ {
		s, err := start(bin, dir, env)
		if err == nil {
			return s, nil
		}
		if !errors.Is(err, errExited) || attempt == 3 {
			os.RemoveAll(dir)
			return nil, err
		}
	}
}

func start(bin, dir string, env []string) (*Server, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	host := fmt.Sprintf("127.0.0.1:%d", port)
	s := &Server{
		dir:     dir,
		logPath: filepath.Join(dir, "ollama.log"),
		url:     "http://" + host,
		exited:  make(chan struct{}),
	}
	u, _ := url.Parse(s.url)
	s.client = api.NewClient(u, &http.Client{})

	logf, err := os.OpenFile(s.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("ollama test server: %w", err)
	}
	defer logf.Close()
	cmd := exec.Command(bin, "serve")
	cmd.Dir = dir
	cmd.Env = append(cleanEnv(),
		"HOME="+dir,
		"OLLAMA_HOST="+host,
		"OLLAMA_MODELS="+filepath.Join(dir, "models"),
		// Keep models loaded for the whole test binary, serve cells in
		// parallel, and never reach out to the network on start.
		"OLLAMA_KEEP_ALIVE=1h",
		"OLLAMA_NUM_PARALLEL=4",
		"OLLAMA_MAX_LOADED_MODELS=8",
		"OLLAMA_NOPRUNE=1",
	)
	// Later entries win: the caller's overrides.
	cmd.Env = append(cmd.Env, env...)
	cmd.Stdout, cmd.Stderr = logf, logf
	// Its own process group, so Stop also kills the runner subprocesses
	// the server spawns for loaded models.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("ollama test server: start %s: %w", bin, err)
	}
	s.cmd = cmd
	go func() {
		cmd.Wait()
		close(s.exited)
	}()
	if err := s.waitReady(60 * time.Second); err != nil {
		tail := s.LogTail(20)
		s.Stop()
		return nil, fmt.Errorf("ollama test server on %s: %w\nlog tail:\n%s", host, err, tail)
	}
	return s, nil
}

func (s *Server) waitReady(limit time.Duration) error {
	deadline := time.Now().Add(limit)
	hc := &http.Client{Timeout: time.Second}
	for delay := 10 * time.Millisecond; ; delay = min(delay*2, 200*time.Millisecond) {
		resp, err := hc.Get(s.url + "/api/version")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-s.exited:
			return errExited
		case <-time.After(delay):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not ready after %s: %v", limit, err)
		}
	}
}

// cleanEnv is the environment without the caller's OLLAMA_* settings, so a
// developer's own Ollama configuration cannot leak into the test server.
func cleanEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "OLLAMA_") && !strings.HasPrefix(kv, "HOME=") {
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

// URL is the server's base URL, e.g. http://127.0.0.1:40123 (append /v1 for
// the OpenAI-compatible API).
func (s *Server) URL() string { return s.url }

// Client is an Ollama API client for the server.
func (s *Server) Client() *api.Client { return s.client }

// LogTail returns the last n lines of the server log.
func (s *Server) LogTail(n int) string {
	b, err := os.ReadFile(s.logPath)
	if err != nil {
		return fmt.Sprintf("(no log: %v)", err)
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// ModelOption changes how CreateModel builds a model.
type ModelOption func(*api.CreateRequest)

// WithThinking gives the model testmodel.ThinkingTemplate, so it accepts "think": true
// and splits a scripted "<think>...</think>" reply into thinking and content.
// Without it the server rejects "think": true for the model.
func WithThinking() ModelOption {
	return func(r *api.CreateRequest) { r.Template = testmodel.ThinkingTemplate }
}

// CreateModel writes the scripted GGUF and creates the model name on the
// server (temperature 0, num_ctx 512, testmodel.Template), failing the test
// on error.
func (s *Server) CreateModel(t testing.TB, name string, script testmodel.Script, opts ...ModelOption) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := s.Create(ctx, name, script, opts...); err != nil {
		t.Fatalf("create model %s: %v\nollama log tail:\n%s", name, err, s.LogTail(20))
	}
}

// Create is CreateModel for callers without a testing.TB (TestMain, tools).
// It uploads the GGUF as a blob and creates the model through the API.
func (s *Server) Create(ctx context.Context, name string, script testmodel.Script, opts ...ModelOption) error {
	var buf bytes.Buffer
	if err := testmodel.Write(&buf, script); err != nil {
		return fmt.Errorf("create model %s: %w", name, err)
	}
	sum := sha256.Sum256(buf.Bytes())
	digest := "sha256:" + hex.EncodeToString(sum[:])
	if err := s.client.CreateBlob(ctx, digest, bytes.NewReader(buf.Bytes())); err != nil {
		return fmt.Errorf("create model %s: upload blob: %w", name, err)
	}
	req := &api.CreateRequest{
		Model:      name,
		Files:      map[string]string{"model.gguf": digest},
		Template:   testmodel.Template,
		Parameters: map[string]any{"temperature": testmodel.Temperature, "num_ctx": testmodel.NumCtx},
	}
	for _, o := range opts {
		o(req)
	}
	if err := s.client.Create(ctx, req, func(api.ProgressResponse) error { return nil }); err != nil {
		return fmt.Errorf("create model %s: %w", name, err)
	}
	return nil
}

// Stop kills the server and the model runners it started, for tests of a
// server that dies. The URL then refuses connections. It is safe to call more
// than once.
func (s *Server) Stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped || s.cmd == nil {
		return
	}
	s.stopped = true
	syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
	select {
	case <-s.exited:
	case <-time.After(10 * time.Second):
	}
}

// Close stops the server and removes its directory.
func (s *Server) Close() {
	s.Stop()
	os.RemoveAll(s.dir)
}
