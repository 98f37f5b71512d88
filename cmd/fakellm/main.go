// Command fakellm serves cmd/fakellm/loadserver on a port: a fake
// OpenAI-compatible chat server with a known service time, which logs
// each request's own timings. It is the common target for comparing
// load generators (bench's own benchmarks, vLLM's `vllm bench serve`):
//
//	go run ./cmd/fakellm -addr 127.0.0.1:8000 -ttft 20ms -gap 5ms -tokens 256 -log server.jsonl
//	vllm bench serve --backend openai-chat --base-url http://127.0.0.1:8000 \
//	    --endpoint /v1/chat/completions --model fake --tokenizer gpt2 \
//	    --dataset-name random --num-prompts 2000 --max-concurrency 64
//
// Layer: command (a test peer's server, for benchmarks run by hand).
package main

import (
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"

	"bench/cmd/fakellm/loadserver"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8000", "address to listen on (loopback only, for a benchmark on this machine)")
	ttft := flag.Duration("ttft", 0, "time from service start to the first token")
	perInput := flag.Duration("per-input-token", 0, "added to ttft per word of the prompt")
	gap := flag.Duration("gap", 0, "time between tokens")
	tokens := flag.Int("tokens", 16, "tokens per answer when the request sets no max_tokens")
	slots := flag.Int("slots", 0, "requests served at once; the rest wait (0: no limit)")
	exact := flag.Bool("exact", false, "queue on the arrival clock: capacity exactly slots / service time, whatever else the machine runs")
	prefix := flag.Bool("prefix-cache", false, "cache the prompts' leading blocks of 16 words: cached words cost no prefill and are reported as cached_tokens")
	metrics := flag.String("metrics", "", "serve /metrics in the shape of vllm or llamacpp, with the server's live figures")
	kvTokens := flag.Int("kv-tokens", 65536, "the KV cache's size in tokens, for /metrics' usage share")
	logPath := flag.String("log", "", "write each request's timings here as JSON lines")
	flag.Parse()
	if *metrics != "" && !slices.Contains(loadserver.Expositions, *metrics) {
		fmt.Fprintf(os.Stderr, "fakellm: -metrics %q: one of %v\n", *metrics, loadserver.Expositions)
		os.Exit(2)
	}
	var logw io.Writer
	if *logPath != "" {
		f, err := os.Create(*logPath)
		if err != nil {
			fmt.Fprintln(os.Stderr, "fakellm:", err)
			os.Exit(1)
		}
		defer f.Close()
		logw = f
	}
	srv := loadserver.New(loadserver.Service{TTFT: *ttft, PerInputToken: *perInput, Gap: *gap, Tokens: *tokens, Slots: *slots, Exact: *exact,
		PrefixCache: *prefix, Metrics: *metrics, KVTokens: *kvTokens}, logw)
	fmt.Fprintf(os.Stderr, "fakellm: serving http://%s/v1 (ttft %s, gap %s, %d tokens, %d slots)\n", *addr, *ttft, *gap, *tokens, *slots)
	if err := http.ListenAndServe(*addr, srv); err != nil {
		fmt.Fprintln(os.Stderr, "fakellm:", err)
		os.Exit(1)
	}
}
