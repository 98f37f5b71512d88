// Package harnessbench measures the harness itself against a controlled
// streaming server that runs in its own process, as a model server does:
// how far bench's time to first token is from the server's own (at 1, 64
// and 256 concurrent streams), how much CPU bench spends per streamed
// chunk against a bare Go client reading the same stream, and how close
// the decode rates come to the rates the server streams at. The figures
// are benchmarks' metrics; nothing here asserts a time.
//
// Layer: benchmarks of the run layer (tests only).
package harnessbench

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	"unsafe"
)

// serverEnv makes the test binary the controlled server (see TestMain).
const serverEnv = "BENCH_HARNESSBENCH_SERVER"

func TestMain(m *testing.M) {
	if os.Getenv(serverEnv) == "1" {
		serve()
		return
	}
	os.Exit(m.Run())
}

// spec is what a request asks the server for, written in its model name:
// "chunks=16,gap=10ms,prefill=20ms,reasoning=8,rgap=20ms,batch=1".
type spec struct {
	chunks    int           // answer deltas
	reasoning int           // reasoning deltas before them
	gap       time.Duration // between deltas, each flushed alone
	rgap      time.Duration // between reasoning deltas (gap when 0)
	prefill   time.Duration // before the first delta
	batch     bool          // everything in one write instead
}

func parseSpec(model string) (spec, error) {
	sp := spec{chunks: 1}
	for _, kv := range strings.Split(model, ",") {
		k, v, _ := strings.Cut(kv, "=")
		var err error
		switch k {
		case "chunks":
			sp.chunks, err = strconv.Atoi(v)
		case "reasoning":
			sp.reasoning, err = strconv.Atoi(v)
		case "gap":
			sp.gap, err = time.ParseDuration(v)
		case "rgap":
			sp.rgap, err = time.ParseDuration(v)
		case "prefill":
			sp.prefill, err = time.ParseDuration(v)
		case "batch":
			sp.batch = v == "1"
		default:
			err = fmt.Errorf("unknown key %q", k)
		}
		if err != nil {
			return sp, fmt.Errorf("model %q: %v", model, err)
		}
	}
	return sp, nil
}

// timing is what the server saw of one request, on its own clocks.
type timing struct {
	// TTFTNS is from the handler's start (the request read and parsed, as
	// a server's own metrics would count) to the first delta handed to the
	// socket; it leaves out the server process's own delay in reading the
	// request.
	TTFTNS int64 `json:"ttft_ns"`
	// ArrivalTTFTNS is from the request's arrival at the server's socket
	// (the kernel's receive time) to the same first delta: the time to first
	// token the server's machine really took, the truth a harness should
	// report.
	ArrivalTTFTNS int64 `json:"arrival_ttft_ns"`
	// FlushNS is how long handing the first delta to the socket took: a
	// loaded server's process may be descheduled in between.
	FlushNS int64 `json:"flush_ns"`
	// ArrivalNS and WriteNS are the request's arrival and the first
	// delta's write, in Unix ns (one clock for both processes).
	ArrivalNS int64 `json:"arrival_ns"`
	WriteNS   int64 `json:"write_ns"`
	// ReasoningRate and AnswerRate are the rates the server streamed at:
	// deltas after the first of the kind over the time from its first
	// delta's write to its last's (0 when fewer than two).
	ReasoningRate float64 `json:"reasoning_rate"`
	AnswerRate    float64 `json:"answer_rate"`
}

// arrivalConn is an accepted connection that remembers the kernel's
// receive time of the bytes of its last read (SO_TIMESTAMPNS).
type arrivalConn struct {
	*net.TCPConn
	raw syscall.RawConn
	oob []byte
	mu  sync.Mutex
	ns  int64
}

func (c *arrivalConn) Read(p []byte) (int, error) {
	var n, oobn int
	var serr error
	err := c.raw.Read(func(fd uintptr) bool {
		n, oobn, _, _, serr = syscall.Recvmsg(int(fd), p, c.oob, 0)
		return serr != syscall.EAGAIN
	})
	if err == nil {
		err = serr
	}
	if err != nil {
		return 0, err
	}
	if n == 0 {
		return 0, io.EOF
	}
	if msgs, perr := syscall.ParseSocketControlMessage(c.oob[:oobn]); perr == nil {
		for _, m := range msgs {
			if m.Header.Level == syscall.SOL_SOCKET && m.Header.Type == syscall.SO_TIMESTAMPNS && len(m.Data) >= 16 {
				ts := (*syscall.Timespec)(unsafe.Pointer(&m.Data[0]))
				c.mu.Lock()
				c.ns = ts.Nano()
				c.mu.Unlock()
			}
		}
	}
	return n, nil
}

// arrival is the kernel's receive time of the last bytes read (0: unknown).
func (c *arrivalConn) arrival() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.ns
}

// arrivalListener stamps its connections' reads.
type arrivalListener struct{ net.Listener }

func (l arrivalListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	tc := c.(*net.TCPConn)
	raw, err := tc.SyscallConn()
	if err != nil {
		return nil, err
	}
	raw.Control(func(fd uintptr) { syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_TIMESTAMPNS, 1) })
	return &arrivalConn{TCPConn: tc, raw: raw, oob: make([]byte, 128)}, nil
}

type connKey struct{}

// serve is the controlled server: OpenAI chat-completion streams shaped
// like Ollama's, paced as the model name says, with each request's own
// time to first token kept by its traceparent for GET /timings.
func serve() {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	// Asking for receive timestamps turns them on in the kernel a moment
	// later; ask on the listener (its connections inherit it) and give the
	// kernel that moment before the first request.
	if raw, err := ln.(*net.TCPListener).SyscallConn(); err == nil {
		raw.Control(func(fd uintptr) { syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_TIMESTAMPNS, 1) })
	}
	time.Sleep(100 * time.Millisecond)
	var mu sync.Mutex
	timings := map[string]timing{}
	mux := http.NewServeMux()
	mux.HandleFunc("/timings", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		b, _ := json.Marshal(timings)
		timings = map[string]timing{}
		mu.Unlock()
		w.Write(b)
	})
	mux.HandleFunc("/v1/chat/completions", func(w http.ResponseWriter, r *http.Request) {
		recv := time.Now()
		var body struct {
			Model string `json:"model"`
		}
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
			http.Error(w, err.Error(), 400)
			return
		}
		// The whole request has been read: its last bytes' arrival.
		arrived := r.Context().Value(connKey{}).(*arrivalConn).arrival()
		sp, err := parseSpec(body.Model)
		if err != nil {
			http.Error(w, err.Error(), 400)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		fl := w.(http.Flusher)
		time.Sleep(sp.prefill)
		total := sp.reasoning + sp.chunks
		var buf []byte
		writes := make([]time.Time, total)
		for i := 0; i < total; i++ {
			writes[i] = time.Now()
			field, text := "content", " tok"
			if i < sp.reasoning {
				field, text = "reasoning", " think"
			}
			buf = fmt.Appendf(buf[:0], `data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1795320725,"model":"m","system_fingerprint":"fp_ollama","choices":[{"index":0,"delta":{"role":"assistant","%s":"%s"},"finish_reason":null}]}`+"\n\n", field, text)
			w.Write(buf)
			if sp.batch {
				continue
			}
			if i == 0 {
				// Stamped as the first delta goes to the socket: the
				// server's time to first token is at its shortest.
				now := time.Now()
				tm := timing{TTFTNS: int64(now.Sub(recv)), ArrivalNS: arrived, WriteNS: now.UnixNano()}
				if arrived > 0 {
					tm.ArrivalTTFTNS = now.UnixNano() - arrived
				}
				fl.Flush()
				tm.FlushNS = int64(time.Since(now))
				mu.Lock()
				timings[r.Header.Get("Traceparent")] = tm
				mu.Unlock()
				defer func() {
					rate := func(w []time.Time) float64 {
						if len(w) < 2 {
							return 0
						}
						return float64(len(w)-1) / w[len(w)-1].Sub(w[0]).Seconds()
					}
					mu.Lock()
					tm := timings[r.Header.Get("Traceparent")]
					tm.ReasoningRate, tm.AnswerRate = rate(writes[:sp.reasoning]), rate(writes[sp.reasoning:])
					timings[r.Header.Get("Traceparent")] = tm
					mu.Unlock()
				}()
				if i < total-1 {
					time.Sleep(sp.gap)
				}
				continue
			}
			fl.Flush()
			if i < total-1 {
				if i < sp.reasoning-1 && sp.rgap > 0 {
					time.Sleep(sp.rgap)
				} else {
					time.Sleep(sp.gap)
				}
			}
		}
		fmt.Fprintf(w, `data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1795320725,"model":"m","system_fingerprint":"fp_ollama","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":"stop"}]}`+"\n\n")
		fmt.Fprintf(w, `data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1795320725,"model":"m","system_fingerprint":"fp_ollama","choices":[],"usage":{"prompt_tokens":12,"completion_tokens":%d,"total_tokens":%d}}`+"\n\n", total, total+12)
		io.WriteString(w, "data: [DONE]\n\n")
	})
	fmt.Println(ln.Addr().String())
	srv := &http.Server{Handler: mux, ConnContext: func(ctx context.Context, c net.Conn) context.Context {
		return context.WithValue(ctx, connKey{}, c)
	}}
	go srv.Serve(arrivalListener{ln})
	io.Copy(io.Discard, os.Stdin) // until the benchmark closes our stdin
}

// server is the controlled server process.
type server struct {
	URL   string
	cmd   *exec.Cmd
	stdin io.WriteCloser
}

// startServer starts the controlled server in its own process.
func startServer(tb testing.TB) *server {
	tb.Helper()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), serverEnv+"=1")
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		tb.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		tb.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	addr, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		cmd.Process.Kill()
		tb.Fatalf("controlled server: %v", err)
	}
	s := &server{URL: "http://" + strings.TrimSpace(addr), cmd: cmd, stdin: stdin}
	tb.Cleanup(func() { stdin.Close(); cmd.Wait() })
	return s
}

// timings fetches (and clears) the server's per-request timings.
func (s *server) timings(tb testing.TB) map[string]timing {
	tb.Helper()
	res, err := http.Get(s.URL + "/timings")
	if err != nil {
		tb.Fatal(err)
	}
	defer res.Body.Close()
	var m map[string]timing
	if err := json.NewDecoder(res.Body).Decode(&m); err != nil {
		tb.Fatal(err)
	}
	return m
}

// The controlled server speaks the protocol bench reads: a smoke test
// that the benchmarks measure real streams.
func TestControlledServer(t *testing.T) {
	s := startServer(t)
	res, err := http.Post(s.URL+"/v1/chat/completions", "application/json", strings.NewReader(`{"model":"chunks=3,reasoning=2,gap=1ms"}`))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if n := strings.Count(string(b), `"content":" tok"`); n != 3 || strings.Count(string(b), `"reasoning":" think"`) != 2 || !strings.HasSuffix(string(b), "data: [DONE]\n\n") {
		t.Errorf("%d answer deltas in:\n%s", n, b)
	}
	if _, err := parseSpec("chunks=x"); err == nil {
		t.Error("a bad spec was accepted")
	}
}
