package testmodel

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"math"
	"strings"
	"testing"

	"github.com/ollama/ollama/fs/ggml"
)

var sample = Script{
	"word":   {"I will run ", "`free -h`", " to check memory."},
	"OK":     {"OK"},
	"JSON.":  {`{"a": 1}`},
	"2021":   {"2021-07-04"},
	"memory": {`<tool_call>{"name": "get_memory", "arguments": {"unit": "MB"}}</tool_call>`},
	"empty":  {},
}

// decode parses the file back with Ollama's own GGUF reader, the one the
// server uses when it creates a model.
func decode(t *testing.T, b []byte) *ggml.GGML {
	t.Helper()
	g, err := ggml.Decode(bytes.NewReader(b), -1)
	if err != nil {
		t.Fatalf("ggml.Decode: %v", err)
	}
	return g
}

func write(t *testing.T, s Script) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := Write(&buf, s); err != nil {
		t.Fatalf("Write: %v", err)
	}
	return buf.Bytes()
}

func TestHeaderAndKV(t *testing.T) {
	b := write(t, sample)
	if string(b[:4]) != "GGUF" || binary.LittleEndian.Uint32(b[4:]) != 3 {
		t.Fatalf("magic/version = %q %d", b[:4], binary.LittleEndian.Uint32(b[4:]))
	}
	if n := binary.LittleEndian.Uint64(b[8:]); n != 12 {
		t.Errorf("tensor count = %d, want 12", n)
	}
	if n := binary.LittleEndian.Uint64(b[16:]); n != 21 {
		t.Errorf("kv count = %d, want 21", n)
	}
	g := decode(t, b)
	kv := g.KV()
	if kv.Architecture() != "llama" || kv.BlockCount() != 1 || kv.String("tokenizer.ggml.model") != "llama" {
		t.Errorf("arch=%s blocks=%d tokenizer=%s", kv.Architecture(), kv.BlockCount(), kv.String("tokenizer.ggml.model"))
	}
	tokens := kv.Strings("tokenizer.ggml.tokens")
	scores := kv.Floats("tokenizer.ggml.scores")
	types := kv.Ints("tokenizer.ggml.token_type")
	if len(tokens) != len(scores) || len(tokens) != len(types) || uint32(len(tokens)) != kv.Uint("vocab_size") {
		t.Fatalf("vocab lengths: tokens %d scores %d types %d vocab_size %d", len(tokens), len(scores), len(types), kv.Uint("vocab_size"))
	}
	if tokens[0] != "<unk>" || tokens[1] != "<s>" || tokens[2] != "</s>" || tokens[3] != "<0x00>" || tokens[258] != "<0xFF>" {
		t.Errorf("special/byte tokens wrong: %q", tokens[:4])
	}
	if kv.Uint("tokenizer.ggml.eos_token_id") != 2 || kv.Uint("tokenizer.ggml.bos_token_id") != 1 || !kv.Bool("tokenizer.ggml.add_bos_token") {
		t.Errorf("bos/eos settings wrong")
	}
	index := map[string]int{}
	for i, tok := range tokens {
		if _, dup := index[tok]; dup {
			t.Errorf("token %q appears twice", tok)
		}
		index[tok] = i
	}
	// Every prefix of "▁OK" and "▁JSON." must be a token, scored by length.
	for _, p := range []string{"▁O", "▁OK", "▁J", "▁JS", "▁JSON", "▁JSON.", "▁2", "▁2021"} {
		i, ok := index[p]
		if !ok {
			t.Errorf("prefix token %q missing", p)
			continue
		}
		if want := float32(len([]rune(p))); scores[i] != want {
			t.Errorf("score(%q) = %v, want %v", p, scores[i], want)
		}
	}
	// Reply pieces have spaces as ▁ and a very low score.
	if i, ok := index["▁to▁check▁memory."]; !ok || scores[i] != -1000 {
		t.Errorf("reply piece missing or mis-scored")
	}
	if d := kv.EmbeddingLength(); d%64 != 0 || d < 64 {
		t.Errorf("embedding length %d", d)
	}
}

func TestTensorsAndChain(t *testing.T) {
	b := write(t, sample)
	g := decode(t, b)
	kv := g.KV()
	d := int(kv.EmbeddingLength())
	tokens := kv.Strings("tokenizer.ggml.tokens")
	n := len(tokens)
	ts := g.Tensors()
	want := map[string][]uint64{
		"token_embd.weight":     {uint64(d), uint64(n)},
		"output.weight":         {uint64(d), uint64(n)},
		"output_norm.weight":    {uint64(d)},
		"blk.0.attn_q.weight":   {uint64(d), uint64(d)},
		"blk.0.ffn_down.weight": {64, uint64(d)},
	}
	byName := map[string]*ggml.Tensor{}
	for _, tt := range ts.Items() {
		byName[tt.Name] = tt
		if tt.Kind != 0 {
			t.Errorf("%s kind %d, want F32", tt.Name, tt.Kind)
		}
		if tt.Offset%32 != 0 {
			t.Errorf("%s offset %d not aligned", tt.Name, tt.Offset)
		}
	}
	for name, shape := range want {
		tt := byName[name]
		if tt == nil {
			t.Fatalf("tensor %s missing", name)
		}
		if len(tt.Shape) != len(shape) || tt.Shape[0] != shape[0] || (len(shape) > 1 && tt.Shape[1] != shape[1]) {
			t.Errorf("%s shape %v, want %v", name, tt.Shape, shape)
		}
	}
	last := byName["blk.0.ffn_down.weight"]
	if end := ts.Offset + last.Offset + last.Size(); end != uint64(len(b)) {
		t.Errorf("file is %d bytes, tensor data ends at %d", len(b), end)
	}

	// Follow the model's greedy chain: embedding row -> one-hot slot ->
	// argmax over output rows. It must spell the script, then </s>.
	matrix := func(name string) func(row, col int) float32 {
		tt := byName[name]
		base := int(ts.Offset + tt.Offset)
		return func(row, col int) float32 {
			return math.Float32frombits(binary.LittleEndian.Uint32(b[base+4*(row*d+col):]))
		}
	}
	emb, out := matrix("token_embd.weight"), matrix("output.weight")
	next := func(tok int) int {
		slot := -1
		for c := range d {
			if v := emb(tok, c); v == 1 {
				if slot >= 0 {
					t.Fatalf("token %d embedding not one-hot", tok)
				}
				slot = c
			}
		}
		best, bestV := -1, float32(math.Inf(-1))
		for u := range n {
			if v := out(u, slot); v > bestV {
				best, bestV = u, v
			}
		}
		return best
	}
	id := map[string]int{}
	for i, tok := range tokens {
		id[tok] = i
	}
	for trigger, reply := range sample {
		tok := id["▁"+trigger]
		var got []string
		for range 10 {
			tok = next(tok)
			if tok == 2 {
				break
			}
			got = append(got, strings.ReplaceAll(tokens[tok], "▁", " "))
		}
		if strings.Join(got, "|") != strings.Join(reply, "|") {
			t.Errorf("chain from %q = %q, want %q", trigger, got, reply)
		}
	}
	// An unscripted token ends the reply.
	if got := next(id["<0x41>"]); got != 2 {
		t.Errorf("unscripted token -> %d, want </s>", got)
	}
}

func TestDeterministic(t *testing.T) {
	a, b := write(t, sample), write(t, sample)
	if !bytes.Equal(a, b) {
		t.Fatal("two writes of the same script differ")
	}
	// Pinned digest of make_scripted_gguf.py's output for the same script
	// (keys in sorted order); the Go port is byte-identical to it.
	ha := sha256.Sum256(write(t, Script{"OK": {"OK"}, "word": {"I will run ", "`free -h`", " to check memory."}}))
	if got := hex.EncodeToString(ha[:]); got != pinnedDigest {
		t.Errorf("digest %s, want %s (the reference generator's bytes)", got, pinnedDigest)
	}
}

func TestInvalidScripts(t *testing.T) {
	cases := map[string]Script{
		"empty script":   {},
		"empty trigger":  {"": {"x"}},
		"space":          {"two words": {"x"}},
		"dup piece":      {"a": {"x"}, "b": {"x"}},
		"dup in reply":   {"a": {"x", "x"}},
		"clash":          {"OK": {" OK"}},
		"prefix clash":   {"OK": {" O"}},
		"empty piece":    {"a": {""}},
		"reserved piece": {"a": {"</s>"}},
	}
	for name, s := range cases {
		if err := s.Validate(); err == nil {
			t.Errorf("%s: Validate accepted %v", name, s)
		}
		if err := Write(&bytes.Buffer{}, s); err == nil {
			t.Errorf("%s: Write accepted %v", name, s)
		}
	}
}

// pinnedDigest is sha256 of `make_scripted_gguf.py` run on
// {"OK": ["OK"], "word": ["I will run ", "`free -h`", " to check memory."]}.
const pinnedDigest = "e5579c3bc95f4a6e04c26095e811cbc8553093a95a2978e62f952fde230e525c"
