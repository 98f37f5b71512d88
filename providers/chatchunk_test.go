package providers

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	jsonv2 "github.com/go-json-experiment/json"
)

// recordedChunks is every data payload of the recorded chat streams in
// testdata/chat, [DONE] aside.
func recordedChunks(t testing.TB) [][]byte {
	t.Helper()
	var chunks [][]byte
	for _, body := range recordedBodies(t) {
		sr := NewSSEReader(bytes.NewReader(body))
		for {
			ev, err := sr.Next()
			if err != nil {
				break
			}
			if data := bytes.TrimSpace(ev.Data); len(data) > 0 && !bytes.Equal(data, doneMarker) {
				chunks = append(chunks, data)
			}
		}
	}
	return chunks
}

// recordedBodies is the body of each recorded exchange in testdata/chat.
func recordedBodies(t testing.TB) [][]byte {
	t.Helper()
	files, err := filepath.Glob("testdata/chat/*.http")
	if err != nil || len(files) == 0 {
		t.Fatalf("no recorded streams: %v", err)
	}
	var bodies [][]byte
	for _, name := range files {
		raw, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		if _, body, ok := bytes.Cut(raw, []byte("\r\n\r\n")); ok {
			bodies = append(bodies, body)
		} else if _, body, ok := bytes.Cut(raw, []byte("\n\n")); ok {
			bodies = append(bodies, body)
		}
	}
	return bodies
}

// takenChunks are shapes servers send that the fast path must decode.
var takenChunks = []string{
	// vLLM: usage null on every chunk, logprobs null.
	`{"id":"chatcmpl-9","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":" world"},"logprobs":null,"finish_reason":null}],"usage":null}`,
	// OpenAI: refusal, obfuscation, service_tier.
	`{"id":"chatcmpl-B","object":"chat.completion.chunk","created":1,"model":"gpt-4o","service_tier":"default","system_fingerprint":"fp_1","choices":[{"index":0,"delta":{"content":"Hi","refusal":null},"logprobs":null,"finish_reason":null}],"usage":null,"obfuscation":"x1"}`,
	// Escapes, the common ones and the rest, and a surrogate pair.
	`{"choices":[{"delta":{"content":"a\nb \"q\" c\\d \/ \t\r\b\f \u00e9\u4e2d \ud83d\ude00 \u0000"}}]}`,
	// Python's ensure_ascii: everything non-ASCII escaped.
	`{"choices":[{"delta":{"reasoning_content":"caf\u00e9 \ud83c\udf89"},"finish_reason":null}]}`,
	// Raw UTF-8.
	`{"choices":[{"delta":{"reasoning":"café 中文 🎉"}}]}`,
	// Nulls where servers send them, and empty arrays.
	`{"choices":[{"delta":{"content":null,"tool_calls":null},"finish_reason":"stop"}],"usage":null,"error":null}`,
	`{"choices":[],"usage":{"prompt_tokens":20,"completion_tokens":8,"total_tokens":28,"prompt_tokens_details":{"cached_tokens":16,"audio_tokens":0},"completion_tokens_details":{"reasoning_tokens":6,"accepted_prediction_tokens":0}}}`,
	`{"usage":{"prompt_tokens":0,"completion_tokens":-1,"prompt_tokens_details":null,"completion_tokens_details":{}}}`,
	`{"usage":{"prompt_tokens_details":{"cached_tokens":null}}}`,
	`{"choices":[{"delta":{"tool_calls":[]}}]}`,
	// Tool calls in pieces, with and without index and id.
	`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"get","arguments":"{\"unit\":\"MB\"}"}}]}}]}`,
	`{"choices":[{"delta":{"tool_calls":[{"index":1,"function":{"arguments":"\"}"}},{"function":{"name":"f"}},{"index":null,"id":null,"function":null}]}}]}`,
	// Error objects with a code of each type.
	`{"error":{"message":"llama runner process has terminated: signal: killed","type":"api_error","param":null,"code":null}}`,
	`{"error":{"message":"m","code":429}}`,
	`{"error":{"message":"m","type":"t","code":"rate_limit_exceeded"}}`,
	`{"error":{"code":{"a":[1, 2.5e3, true, false, null, "x"]}}}`,
	// Unknown fields of every type, whitespace everywhere.
	" \t\r\n{ \"x\" : [ { \"y\" : -0.5E+2 } , [ ] , { } , \"s\\u0041\" , 1e-3 , true , false , null ] ,\n\"choices\" : [ { \"delta\" : { \"content\" : \"a\" } , \"finish_reason\" : \"length\" } ] } \n",
	`{}`,
	`{"choices":[{}],"delta":{"content":"not here"}}`,
}

// givenUpChunks are chunks the fast path must leave to encoding/json's
// semantics: each either decodes differently there or fails.
var givenUpChunks = map[string]string{
	"name in another case":       `{"choices":[{"Delta":{"content":"a"}}]}`,
	"upper-case unknown name":    `{"choices":[{"delta":{"CONTENT":"a"}}]}`,
	"Kelvin sign folds to k":     "{\"usage\":{\"prompt_to\u212aens\":3}}",
	"escaped name":               `{"choices":[{"delta":{"\u0063ontent":"a"}}]}`,
	"name twice":                 `{"choices":[{"delta":{"content":"a","content":"b"}}]}`,
	"object twice":               `{"usage":{"prompt_tokens":1},"usage":{"completion_tokens":2}}`,
	"null then a value":          `{"choices":[{"finish_reason":null,"finish_reason":"stop"}]}`,
	"invalid UTF-8":              "{\"choices\":[{\"delta\":{\"content\":\"\xff\xfe\"}}]}",
	"invalid UTF-8 skipped":      "{\"id\":\"\xc3\",\"choices\":[]}",
	"UTF-8 surrogate":            "{\"choices\":[{\"delta\":{\"content\":\"\xed\xa0\x80\"}}]}",
	"lone high surrogate":        `{"choices":[{"delta":{"content":"\ud83d"}}]}`,
	"lone low surrogate":         `{"choices":[{"delta":{"content":"\ude00"}}]}`,
	"high then non-low":          `{"choices":[{"delta":{"content":"\ud83d\u0041"}}]}`,
	"null choice":                `{"choices":[null]}`,
	"null tool call":             `{"choices":[{"delta":{"tool_calls":[null]}}]}`,
	"null chunk":                 `null`,
	"fraction for an int":        `{"usage":{"prompt_tokens":1.0}}`,
	"exponent for an int":        `{"usage":{"completion_tokens":1e2}}`,
	"leading zero":               `{"usage":{"prompt_tokens":01}}`,
	"19 digits":                  `{"usage":{"prompt_tokens":1234567890123456789}}`,
	"string for an int":          `{"choices":[{"delta":{"tool_calls":[{"index":"0"}]}}]}`,
	"number for a string":        `{"choices":[{"delta":{"content":5}}]}`,
	"Ollama's error string":      `{"error":"model not found"}`,
	"object for an array":        `{"choices":{}}`,
	"array at the top":           `[]`,
	"trailing bytes":             `{"choices":[]}x`,
	"two values":                 `{} {}`,
	"cut short":                  `{"choices":[{"delta":{"content":"a`,
	"control byte in a string":   "{\"choices\":[{\"delta\":{\"content\":\"a\tb\"}}]}",
	"bad escape":                 `{"choices":[{"delta":{"content":"\x41"}}]}`,
	"trailing comma":             `{"choices":[],}`,
	"bad literal":                `{"x":nul,"choices":[]}`,
	"bad number":                 `{"x":-,"choices":[]}`,
	"nesting past maxChunkDepth": `{"x":` + strings.Repeat("[", maxChunkDepth+1) + strings.Repeat("]", maxChunkDepth+1) + `}`,
}

// TestDecodeChunkTaken: the fast path decodes what servers send, to the
// value encoding/json's semantics give.
func TestDecodeChunkTaken(t *testing.T) {
	chunks := recordedChunks(t)
	for _, c := range takenChunks {
		chunks = append(chunks, []byte(c))
	}
	for _, data := range chunks {
		var slow chatChunk
		if err := jsonv2.Unmarshal(data, &slow, chunkJSON); err != nil {
			t.Fatalf("%s: the slow path fails: %v", data, err)
		}
		var fast chatChunk
		if !decodeChunk(data, &fast) {
			t.Errorf("%s: the fast path gives up", data)
			continue
		}
		if !reflect.DeepEqual(fast, slow) {
			t.Errorf("%s decodes differently:\nfast %+v\nslow %+v", data, fast, slow)
		}
	}
}

// TestDecodeChunkGivesUp: each case the fast path is not sure of is left
// to the slow path.
func TestDecodeChunkGivesUp(t *testing.T) {
	for name, data := range givenUpChunks {
		var ch chatChunk
		if decodeChunk([]byte(data), &ch) {
			t.Errorf("%s: %s: the fast path decoded it to %+v", name, data, ch)
		}
	}
}

// TestReadChatStreamFastPath: readChatStream takes the fast path for every
// chunk of the recorded streams, so a change that makes every chunk slow
// fails here.
func TestReadChatStreamFastPath(t *testing.T) {
	chunks := len(recordedChunks(t))
	if chunks < 20 {
		t.Fatalf("only %d recorded chunks", chunks)
	}
	before := chunkFallbacks.Load()
	for _, body := range recordedBodies(t) {
		_ = readChatStream(bytes.NewReader(body), Secrets{}, &Response{}, func(Event) {})
	}
	if n := chunkFallbacks.Load() - before; n != 0 {
		t.Errorf("%d of %d recorded chunks took the slow path", n, chunks)
	}
	// And a chunk it gives up on still decodes, through the slow path.
	resp := &Response{}
	body := "data: {\"choices\":[{\"Delta\":{\"Content\":\"a\"},\"finish_reason\":\"stop\"}]}\n\n"
	if err := readChatStream(strings.NewReader(body), Secrets{}, resp, func(Event) {}); err != nil || resp.Text != "a" {
		t.Errorf("a chunk in another case: text %q, err %v", resp.Text, err)
	}
	if n := chunkFallbacks.Load() - before; n != 1 {
		t.Errorf("%d chunks took the slow path, want 1", n)
	}
}

// FuzzDecodeChunk: whenever the fast path decodes a chunk, the slow path
// decodes it too, to a deep-equal value.
func FuzzDecodeChunk(f *testing.F) {
	for _, c := range recordedChunks(f) {
		f.Add(c)
	}
	for _, c := range takenChunks {
		f.Add([]byte(c))
	}
	for _, c := range givenUpChunks {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var fast chatChunk
		if !decodeChunk(data, &fast) {
			return
		}
		var slow chatChunk
		if err := jsonv2.Unmarshal(data, &slow, chunkJSON); err != nil {
			t.Fatalf("the fast path decodes %q, the slow path fails: %v", data, err)
		}
		if !reflect.DeepEqual(fast, slow) {
			t.Fatalf("%q decodes differently:\nfast %+v\nslow %+v", data, fast, slow)
		}
	})
}

// BenchmarkDecodeChunk is the cost of decoding one chunk of each shape,
// by the slow path alone (what readChatStream did before decodeChunk) and
// by the fast path.
//
//	go test ./providers -run '^$' -bench DecodeChunk -benchmem
func BenchmarkDecodeChunk(b *testing.B) {
	shapes := []struct{ name, data string }{
		{"ollama-text", `{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1795320725,"model":"scripted","system_fingerprint":"fp_ollama","choices":[{"index":0,"delta":{"role":"assistant","content":" world"},"finish_reason":null}]}`},
		{"vllm-text-escaped", `{"id":"chatcmpl-9f2c","object":"chat.completion.chunk","created":1795320725,"model":"Qwen/Qwen3-8B","choices":[{"index":0,"delta":{"content":"\"quoted\"\n"},"logprobs":null,"finish_reason":null}],"usage":null}`},
		{"toolcall", `{"id":"chatcmpl-184","object":"chat.completion.chunk","created":1795320725,"model":"scripted","system_fingerprint":"fp_ollama","choices":[{"index":0,"delta":{"role":"assistant","content":"","tool_calls":[{"id":"call_kmui6azo","index":0,"type":"function","function":{"name":"get_memory","arguments":"{\"unit\":\"MB\"}"}}]},"finish_reason":null}]}`},
		{"usage", `{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1795320725,"model":"scripted","choices":[],"usage":{"prompt_tokens":20,"completion_tokens":8,"total_tokens":28,"prompt_tokens_details":{"cached_tokens":16},"completion_tokens_details":{"reasoning_tokens":6}}}`},
	}
	for _, sh := range shapes {
		data := []byte(sh.data)
		b.Run(sh.name+"/slow", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				var ch chatChunk
				if err := jsonv2.Unmarshal(data, &ch, chunkJSON); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(sh.name+"/fast", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				var ch chatChunk
				if !decodeChunk(data, &ch) {
					b.Fatal("gave up")
				}
			}
		})
	}
}
