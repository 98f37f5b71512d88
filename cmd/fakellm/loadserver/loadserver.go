// Package loadserver is a fake OpenAI-compatible model server with a
// known service time, for measuring load: it streams chat completions
// (SSE, shaped like Ollama's /v1) whose first token comes TTFT (plus
// PerInputToken per prompt word) after service starts and each further
// token Gap after the last, serves at most Slots requests at once (the
// rest wait in arrival order, as a server's batch does), and logs every
// request's own timings: arrival, service start, first write, end. A
// capacity sweep against it has a known answer (Slots / service time
// requests per second), and bench's figures can be checked against the
// server's log request by request. cmd/fakellm serves it on a port, so any
// benchmark client (vLLM's `vllm bench serve --backend openai-chat`) can
// be pointed at the same server.
//
// The model name may override the service per request:
// "ttft=20ms,gap=5ms,tokens=64" (any of the three).
//
// Layer: command (fakellm's server, which benchmarks and tests also start
// in-process; nothing in bench imports it).
package loadserver

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Service is how the server serves a request.
type Service struct {
	// TTFT is from service start to the first token; PerInputToken adds
	// to it per word of the prompt (prefill that grows with the input).
	TTFT, PerInputToken time.Duration
	// Gap is between tokens; Tokens how many a request gets when it does
	// not ask (max_tokens, which wins).
	Gap    time.Duration
	Tokens int
	// Slots is how many requests are served at once (0: no limit).
	Slots int
	// Exact queues requests on the server's arrival clock instead of on
	// its goroutines: a request's slot and its tokens' times are set when
	// it arrives (service starts when the earliest slot's last request is
	// due to end, ServiceTime after its own start), so a wake-up the busy
	// machine makes late delays that one write, never the queue behind
	// it: the server answers exactly Slots / ServiceTime requests per
	// second whatever else runs, and a load's true answer is Waits'.
	Exact bool
	// PrefixCache keeps the prompts' leading blocks of PrefixBlock words,
	// as vLLM's automatic prefix caching keeps blocks of tokens: a
	// request's words in blocks already seen are cached (its usage says
	// prompt_tokens_details.cached_tokens, its log entry CachedTokens), and
	// only the others cost PerInputToken.
	PrefixCache bool
	// Metrics serves /metrics in the shape of a real server's exposition
	// ("vllm" or "llamacpp", from templates/), with the server's own live
	// figures in the series bench maps; "" serves none (404).
	Metrics string
	// KVTokens is the KV cache's size in tokens, for the exposition's
	// usage share (default 65,536): the running requests' prompt and
	// generated tokens over it.
	KVTokens int
}

// PrefixBlock is the prefix cache's block, in words (vLLM's default block
// is 16 tokens).
const PrefixBlock = 16

// Entry is one request as the server saw it, on its own clock (Unix ns).
type Entry struct {
	Model       string `json:"model"`
	TraceParent string `json:"traceparent,omitempty"`
	InputWords  int    `json:"input_words"`
	// Messages counts the request's messages; ToolResults those with role
	// tool, ToolCalls the calls the assistant messages carry (a replayed
	// agentic turn's history).
	Messages    int `json:"messages"`
	ToolResults int `json:"tool_results,omitempty"`
	ToolCalls   int `json:"tool_calls,omitempty"`
	Tokens      int `json:"tokens"`
	// CachedTokens are the words of the prompt found in the prefix cache
	// (PrefixCache), as the answer's usage reports them.
	CachedTokens int `json:"cached_tokens"`
	// ArrivalNS is when the handler had the request (read and parsed);
	// StartNS when it had a slot; FirstNS when the first token was handed
	// to the socket; EndNS when the last was.
	ArrivalNS int64 `json:"arrival_ns"`
	StartNS   int64 `json:"start_ns"`
	FirstNS   int64 `json:"first_ns"`
	EndNS     int64 `json:"end_ns"`
}

// QueueMS is the wait for a slot; TTFTMS arrival to first token (what a
// client should measure); ServiceMS service start to end; E2EMS arrival
// to end.
func (e Entry) QueueMS() float64   { return float64(e.StartNS-e.ArrivalNS) / 1e6 }
func (e Entry) TTFTMS() float64    { return float64(e.FirstNS-e.ArrivalNS) / 1e6 }
func (e Entry) ServiceMS() float64 { return float64(e.EndNS-e.StartNS) / 1e6 }
func (e Entry) E2EMS() float64     { return float64(e.EndNS-e.ArrivalNS) / 1e6 }

// Server is the handler; its zero value is not usable (New).
type Server struct {
	svc   Service
	slots chan struct{}
	logw  io.Writer
	mu    sync.Mutex
	log   []Entry
	// free is when each slot's last request ends, on the arrival clock
	// (Exact).
	free []time.Time
	// blocks are the prefix cache's blocks, by the hash of the words up to
	// and including each (PrefixCache).
	blocks map[uint64]struct{}
	// live are the figures /metrics serves.
	live    liveFigures
	metrics *exposition
}

// New makes a server; each request's entry is also written to logw as a
// JSON line when it is not nil.
func New(svc Service, logw io.Writer) *Server {
	s := &Server{svc: svc, logw: logw}
	switch {
	case svc.Slots > 0 && svc.Exact:
		s.free = make([]time.Time, svc.Slots)
	case svc.Slots > 0:
		s.slots = make(chan struct{}, svc.Slots)
	}
	if s.svc.Tokens <= 0 {
		s.svc.Tokens = 16
	}
	if s.svc.KVTokens <= 0 {
		s.svc.KVTokens = 65536
	}
	if svc.PrefixCache {
		s.blocks = map[uint64]struct{}{}
	}
	if svc.Metrics != "" {
		s.metrics = mustExposition(svc.Metrics)
	}
	return s
}

// Log returns the entries so far, in the order requests ended.
func (s *Server) Log() []Entry {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Entry(nil), s.log...)
}

// ServeHTTP serves /v1/chat/completions, /v1/models and /log (the
// entries as JSON lines).
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch strings.TrimSuffix(r.URL.Path, "/") {
	case "/v1/chat/completions":
		s.chat(w, r)
	case "/v1/models":
		fmt.Fprint(w, `{"object":"list","data":[{"id":"fake","object":"model","owned_by":"loadserver"}]}`)
	case "/metrics":
		if s.metrics == nil {
			http.NotFound(w, r)
			return
		}
		s.metrics.write(w, &s.live, s.svc.KVTokens)
	case "/log":
		enc := json.NewEncoder(w)
		for _, e := range s.Log() {
			enc.Encode(e)
		}
	default:
		http.NotFound(w, r)
	}
}

type chatRequest struct {
	Model     string `json:"model"`
	MaxTokens int    `json:"max_tokens"`
	// max_completion_tokens is what newer OpenAI clients (vLLM's
	// openai-chat backend) send.
	MaxCompletionTokens int `json:"max_completion_tokens"`
	Messages            []struct {
		Role      string            `json:"role"`
		Content   json.RawMessage   `json:"content"`
		ToolCalls []json.RawMessage `json:"tool_calls"`
	} `json:"messages"`
}

func (s *Server) chat(w http.ResponseWriter, r *http.Request) {
	var req chatRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	e := Entry{Model: req.Model, TraceParent: r.Header.Get("Traceparent"), ArrivalNS: time.Now().UnixNano()}
	svc, err := s.svc.override(req.Model)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	e.Tokens = svc.Tokens
	if n := max(req.MaxTokens, req.MaxCompletionTokens); n > 0 {
		e.Tokens = n
	}
	var words []string
	e.Messages = len(req.Messages)
	for _, m := range req.Messages {
		if m.Role == "tool" {
			e.ToolResults++
		}
		e.ToolCalls += len(m.ToolCalls)
		var text string
		if json.Unmarshal(m.Content, &text) == nil {
			words = append(words, strings.Fields(text)...)
		}
	}
	e.InputWords = len(words)
	if s.blocks != nil {
		e.CachedTokens = s.lookup(words)
	}
	s.live.arrive(e.InputWords, e.CachedTokens)
	started := false
	defer func() {
		if !started {
			s.live.leaveQueue()
		}
	}()
	if s.slots != nil {
		select {
		case s.slots <- struct{}{}:
		case <-r.Context().Done():
			return
		}
		defer func() { <-s.slots }()
	}
	e.StartNS = time.Now().UnixNano()
	if s.free != nil {
		e.StartNS = s.exactStart(time.Unix(0, e.ArrivalNS), svc.ServiceTime(e.InputWords, e.Tokens)).UnixNano()
		if d := time.Until(time.Unix(0, e.StartNS)); d > 0 {
			time.Sleep(d)
		}
	}
	started = true
	s.live.start(e.InputWords)
	written := 0
	defer func() { s.live.end(e.InputWords, written) }()
	w.Header().Set("Content-Type", "text/event-stream")
	fl, _ := w.(http.Flusher)
	start := time.Unix(0, e.StartNS)
	next := start.Add(svc.TTFT + time.Duration(e.InputWords-e.CachedTokens)*svc.PerInputToken)
	var buf []byte
	for i := 0; i < e.Tokens; i++ {
		// Paced from service start, not from the last write, so a late
		// wake-up does not push every later token back.
		if d := time.Until(next); d > 0 {
			time.Sleep(d)
		}
		buf = fmt.Appendf(buf[:0], `data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1795320725,"model":%q,"system_fingerprint":"fp_ollama","choices":[{"index":0,"delta":{"role":"assistant","content":" tok"},"finish_reason":null}]}`+"\n\n", req.Model)
		if _, err := w.Write(buf); err != nil {
			return
		}
		s.live.generated()
		written++
		if fl != nil {
			fl.Flush()
		}
		if i == 0 {
			e.FirstNS = time.Now().UnixNano()
		}
		next = next.Add(svc.Gap)
	}
	fmt.Fprintf(w, `data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1795320725,"model":%q,"system_fingerprint":"fp_ollama","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":"stop"}]}`+"\n\n", req.Model)
	details := ""
	if s.blocks != nil {
		details = fmt.Sprintf(`,"prompt_tokens_details":{"cached_tokens":%d}`, e.CachedTokens)
	}
	fmt.Fprintf(w, `data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1795320725,"model":%q,"system_fingerprint":"fp_ollama","choices":[],"usage":{"prompt_tokens":%d,"completion_tokens":%d,"total_tokens":%d%s}}`+"\n\n",
		req.Model, e.InputWords, e.Tokens, e.InputWords+e.Tokens, details)
	io.WriteString(w, "data: [DONE]\n\n")
	if fl != nil {
		fl.Flush()
	}
	e.EndNS = time.Now().UnixNano()
	if e.FirstNS == 0 {
		e.FirstNS = e.EndNS
	}
	s.mu.Lock()
	s.log = append(s.log, e)
	if s.logw != nil {
		b, _ := json.Marshal(e)
		s.logw.Write(append(b, '\n'))
	}
	s.mu.Unlock()
}

// lookup returns how many of a prompt's words its cached leading blocks
// hold, and caches its full blocks: a block is the hash of every word up
// to its end, so two prompts share a block only when they share the whole
// prefix before it.
func (s *Server) lookup(words []string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	h := fnv.New64a()
	cached, missed := 0, false
	for i := 0; i+PrefixBlock <= len(words); i += PrefixBlock {
		for _, w := range words[i : i+PrefixBlock] {
			h.Write([]byte(w))
			h.Write([]byte{0})
		}
		k := h.Sum64()
		if _, ok := s.blocks[k]; ok && !missed {
			cached += PrefixBlock
		} else {
			missed = true
			s.blocks[k] = struct{}{}
		}
	}
	return cached
}

// exactStart takes the slot that frees first on the arrival clock and
// holds it for svc from the request's start (Exact).
func (s *Server) exactStart(arrival time.Time, svc time.Duration) time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := 0
	for j := range s.free {
		if s.free[j].Before(s.free[k]) {
			k = j
		}
	}
	start := arrival
	if s.free[k].After(start) {
		start = s.free[k]
	}
	s.free[k] = start.Add(svc)
	return start
}

// override applies a model name such as "ttft=20ms,gap=5ms,tokens=64";
// any other name serves as configured.
func (svc Service) override(model string) (Service, error) {
	if !strings.Contains(model, "=") {
		return svc, nil
	}
	for _, kv := range strings.Split(model, ",") {
		k, v, _ := strings.Cut(kv, "=")
		var err error
		switch k {
		case "ttft":
			svc.TTFT, err = time.ParseDuration(v)
		case "gap":
			svc.Gap, err = time.ParseDuration(v)
		case "tokens":
			svc.Tokens, err = strconv.Atoi(v)
		default:
			err = fmt.Errorf("unknown key %q (ttft, gap, tokens)", k)
		}
		if err != nil {
			return svc, fmt.Errorf("model %q: %v", model, err)
		}
	}
	return svc, nil
}

// ServiceTime is how long a request holds its slot: its first token after
// TTFT (plus PerInputToken per word of its prompt), each further token a
// Gap later.
func (s Service) ServiceTime(words, tokens int) time.Duration {
	return s.TTFT + time.Duration(words)*s.PerInputToken + time.Duration(max(tokens-1, 0))*s.Gap
}

// Waits is what the server does with requests arriving at the given
// offsets on an ideal clock (no machine in the way): each one's wait for
// a slot, first come first served over Slots slots (none without a
// limit), each holding its slot for ServiceTime(words, tokens). A load's
// true answer is computed from it: how many requests of a schedule meet
// a TTFT limit (wait + TTFT), and so the highest rate that holds an SLO.
func (s Service) Waits(arrivals []time.Duration, words, tokens int) []time.Duration {
	out := make([]time.Duration, len(arrivals))
	if s.Slots <= 0 {
		return out
	}
	svc := s.ServiceTime(words, tokens)
	free := make([]time.Duration, s.Slots)
	for i, at := range arrivals {
		k := 0
		for j := range free {
			if free[j] < free[k] {
				k = j
			}
		}
		start := max(at, free[k])
		free[k] = start + svc
		out[i] = start - at
	}
	return out
}
