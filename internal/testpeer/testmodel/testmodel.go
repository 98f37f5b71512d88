// Package testmodel writes tiny llama-architecture GGUF models whose greedy
// output is scripted, so tests can run a real inference server (Ollama) and
// know exactly what it will answer.
//
// The model has one transformer block whose attention and MLP outputs are
// zero, so the residual stream at the last position is the embedding of the
// last prompt token alone. The output head maps each trigger token to the
// first token of its scripted reply, each reply token to the next one, and
// everything else to </s>. A prompt whose last whitespace-delimited word is a
// trigger therefore gets that trigger's reply, one piece per token; any other
// prompt gets an empty reply.
//
// The vocabulary holds every prefix of "▁"+trigger (scored by length), so the
// SentencePiece merge in the server's tokenizer reaches the whole word, and
// the 256 byte tokens, so any other text still tokenizes. Triggers may hold
// any non-space characters (upper case, digits, punctuation: "OK", "2021",
// "JSON."); the trigger must be the whole last word, trailing punctuation
// included, because a word followed by "." ends in a "." token.
//
// Layer: test peers (tests and scripts/ollama-test-server.sh; production
// code never imports it).
package testmodel

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strings"
	"unicode"
)

// Script maps a trigger word to its reply pieces. Each piece is emitted as one
// token, in order, then the model stops. Pieces must be distinct across the
// whole script; an empty reply makes the model stop at once. The key
// Default, when present, is the reply to every prompt whose last word is
// no trigger (otherwise such a prompt gets an empty reply).
type Script map[string][]string

// Default is the Script key of the reply to a prompt that ends with no
// trigger: a model that answers every prompt, so a test can run a whole
// public suite through a real server and have every cell judged.
const Default = "<default>"

// GGUF constants, as in ggml's gguf.h.
const (
	ggufMagic   = "GGUF"
	ggufVersion = 3
	alignment   = 32

	typeU32  = 4
	typeI32  = 5
	typeF32  = 6
	typeBool = 7
	typeStr  = 8
	typeArr  = 9

	tokNormal  = 1
	tokUnknown = 2
	tokControl = 3
	tokByte    = 6

	feedForward = 64
	// big is the logit a scripted transition gets; every other logit is 0,
	// so greedy and temperature-0 sampling both follow the script.
	big = 30.0
)

// Token ids of the special tokens.
const (
	unkID = 0
	bosID = 1
	eosID = 2
)

// space is SentencePiece's word-boundary marker.
const space = "\u2581"

// Validate reports why a script cannot be written, or nil.
func (s Script) Validate() error {
	_, err := build(s)
	return err
}

// WriteFile writes the scripted model to path.
func WriteFile(path string, s Script) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("write scripted gguf: %w", err)
	}
	if err := Write(f, s); err != nil {
		f.Close()
		return fmt.Errorf("write scripted gguf %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write scripted gguf %s: %w", path, err)
	}
	return nil
}

// Write writes the scripted model as GGUF v3 to w. The output depends only on
// the script (triggers are laid out in sorted order).
func Write(w io.Writer, s Script) error {
	v, err := build(s)
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	e := &encoder{w: bw}
	v.encode(e)
	if e.err != nil {
		return fmt.Errorf("write gguf: %w", e.err)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("write gguf: %w", err)
	}
	return nil
}

// vocab is the built model before encoding.
type vocab struct {
	tokens []string
	scores []float32
	types  []int32
	// dim is the embedding width: one slot per scripted token plus the
	// default slot 0, rounded up to a multiple of 64.
	dim int
	// slot gives each scripted token (trigger or reply piece) its own
	// embedding dimension.
	slot map[int]int
	// next is the token that follows a scripted token; absent means </s>.
	next map[int]int
	// deflt is the first token of the Default reply, -1 without one: what
	// follows any token of slot 0 (every token no trigger or reply owns).
	deflt int
}

func build(s Script) (*vocab, error) {
	if len(s) == 0 {
		return nil, errors.New("script has no triggers")
	}
	v := &vocab{
		tokens: []string{"<unk>", "<s>", "</s>"},
		scores: []float32{0, 0, 0},
		types:  []int32{tokUnknown, tokControl, tokControl},
		slot:   map[int]int{},
		next:   map[int]int{},
		deflt:  -1,
	}
	for i := range 256 {
		v.tokens = append(v.tokens, fmt.Sprintf("<0x%02X>", i))
		v.scores = append(v.scores, 0)
		v.types = append(v.types, tokByte)
	}
	reserved := map[string]bool{}
	for _, t := range v.tokens {
		reserved[t] = true
	}
	index := map[string]int{}
	add := func(piece string, score float32) int {
		if id, ok := index[piece]; ok {
			return id
		}
		id := len(v.tokens)
		index[piece] = id
		v.tokens = append(v.tokens, piece)
		v.scores = append(v.scores, score)
		v.types = append(v.types, tokNormal)
		return id
	}

	words := make([]string, 0, len(s))
	for w := range s {
		if w != Default {
			words = append(words, w)
		}
	}
	slices.Sort(words)

	// Every prefix of "▁word" is a token, scored by its length, so the
	// SentencePiece bigram merge (highest score first) grows the word from
	// its start up to the whole trigger.
	triggers := map[string]int{}
	for _, w := range words {
		if w == "" {
			return nil, errors.New("empty trigger")
		}
		if strings.IndexFunc(w, unicode.IsSpace) >= 0 || strings.Contains(w, space) {
			return nil, fmt.Errorf("trigger %q: must be one word without spaces", w)
		}
		r := []rune(space + w)
		for i := 2; i <= len(r); i++ {
			add(string(r[:i]), float32(i))
		}
		triggers[w] = index[space+w]
	}
	seen := map[int]string{}
	var chains [][]int
	for _, w := range words {
		chain := []int{triggers[w]}
		for _, p := range s[w] {
			if p == "" {
				return nil, fmt.Errorf("trigger %q: empty reply piece", w)
			}
			piece := strings.ReplaceAll(p, " ", space)
			if reserved[piece] {
				return nil, fmt.Errorf("trigger %q: reply piece %q is a reserved token", w, p)
			}
			if _, dup := index[piece]; dup {
				if other, ok := seen[index[piece]]; ok {
					return nil, fmt.Errorf("trigger %q: reply piece %q is used twice (also by trigger %q); pieces must be distinct", w, p, other)
				}
				return nil, fmt.Errorf("trigger %q: reply piece %q clashes with a trigger token", w, p)
			}
			// A very low score keeps reply pieces from winning merges
			// over trigger prefixes when a prompt is tokenized.
			id := add(piece, -1000)
			seen[id] = w
			chain = append(chain, id)
		}
		chains = append(chains, chain)
	}

	if pieces, ok := s[Default]; ok && len(pieces) > 0 {
		var chain []int
		for _, p := range pieces {
			piece := strings.ReplaceAll(p, " ", space)
			if _, dup := index[piece]; dup || reserved[piece] || p == "" {
				return nil, fmt.Errorf("default reply piece %q is empty, reserved or used elsewhere; pieces must be distinct", p)
			}
			id := add(piece, -1000)
			seen[id] = Default
			chain = append(chain, id)
		}
		v.deflt = chain[0]
		chains = append(chains, chain)
	}

	var scripted []int
	for _, c := range chains {
		scripted = append(scripted, c...)
		for i := 0; i+1 < len(c); i++ {
			v.next[c[i]] = c[i+1]
		}
	}
	slices.Sort(scripted)
	scripted = slices.Compact(scripted)
	for i, t := range scripted {
		v.slot[t] = i + 1
	}
	v.dim = max(64, (len(scripted)+1+63)/64*64)
	return v, nil
}

type tensor struct {
	name  string
	shape []uint64
	data  []float32
}

func (v *vocab) tensors() []tensor {
	d, n := v.dim, len(v.tokens)
	// ne = [d, n]: row t is token t's embedding, a one-hot of its slot.
	emb := make([]float32, d*n)
	for t := range n {
		emb[t*d+v.slot[t]] = 1
	}
	// ne = [d, n]: row u scores token u against every slot.
	out := make([]float32, d*n)
	if v.deflt >= 0 {
		out[v.deflt*d+0] = big
	} else {
		out[eosID*d+0] = big
	}
	for t, sl := range v.slot {
		nx, ok := v.next[t]
		if !ok {
			nx = eosID
		}
		out[nx*d+sl] = big
	}
	ones := make([]float32, d)
	for i := range ones {
		ones[i] = 1
	}
	zeros := func(k int) []float32 { return make([]float32, k) }
	ud, uf, un := uint64(d), uint64(feedForward), uint64(n)
	return []tensor{
		{"token_embd.weight", []uint64{ud, un}, emb},
		{"output_norm.weight", []uint64{ud}, ones},
		{"output.weight", []uint64{ud, un}, out},
		{"blk.0.attn_norm.weight", []uint64{ud}, ones},
		{"blk.0.attn_q.weight", []uint64{ud, ud}, zeros(d * d)},
		{"blk.0.attn_k.weight", []uint64{ud, ud}, zeros(d * d)},
		{"blk.0.attn_v.weight", []uint64{ud, ud}, zeros(d * d)},
		{"blk.0.attn_output.weight", []uint64{ud, ud}, zeros(d * d)},
		{"blk.0.ffn_norm.weight", []uint64{ud}, ones},
		{"blk.0.ffn_gate.weight", []uint64{ud, uf}, zeros(d * feedForward)},
		{"blk.0.ffn_up.weight", []uint64{ud, uf}, zeros(d * feedForward)},
		{"blk.0.ffn_down.weight", []uint64{uf, ud}, zeros(feedForward * d)},
	}
}

func (v *vocab) encode(e *encoder) {
	d := uint32(v.dim)
	kvs := []func(){
		func() { e.kvString("general.architecture", "llama") },
		func() { e.kvString("general.name", "scripted-tiny") },
		func() { e.kvU32("general.alignment", alignment) },
		func() { e.kvU32("llama.context_length", 2048) },
		func() { e.kvU32("llama.embedding_length", d) },
		func() { e.kvU32("llama.block_count", 1) },
		func() { e.kvU32("llama.feed_forward_length", feedForward) },
		func() { e.kvU32("llama.attention.head_count", 1) },
		func() { e.kvU32("llama.attention.head_count_kv", 1) },
		func() { e.kvU32("llama.rope.dimension_count", d) },
		func() { e.kvF32("llama.attention.layer_norm_rms_epsilon", 1e-5) },
		func() { e.kvU32("llama.vocab_size", uint32(len(v.tokens))) },
		func() { e.kvString("tokenizer.ggml.model", "llama") },
		func() { e.kvStrings("tokenizer.ggml.tokens", v.tokens) },
		func() { e.kvF32s("tokenizer.ggml.scores", v.scores) },
		func() { e.kvI32s("tokenizer.ggml.token_type", v.types) },
		func() { e.kvU32("tokenizer.ggml.bos_token_id", bosID) },
		func() { e.kvU32("tokenizer.ggml.eos_token_id", eosID) },
		func() { e.kvU32("tokenizer.ggml.unknown_token_id", unkID) },
		func() { e.kvBool("tokenizer.ggml.add_bos_token", true) },
		func() { e.kvBool("tokenizer.ggml.add_eos_token", false) },
	}
	ts := v.tensors()

	e.raw([]byte(ggufMagic))
	e.u32(ggufVersion)
	e.u64(uint64(len(ts)))
	e.u64(uint64(len(kvs)))
	for _, kv := range kvs {
		kv()
	}
	var off uint64
	for _, t := range ts {
		e.str(t.name)
		e.u32(uint32(len(t.shape)))
		for _, n := range t.shape {
			e.u64(n)
		}
		e.u32(0) // ggml type F32
		e.u64(off)
		off += padded(uint64(len(t.data) * 4))
	}
	e.pad()
	for _, t := range ts {
		e.f32s(t.data)
		e.pad()
	}
}

func padded(n uint64) uint64 { return (n + alignment - 1) / alignment * alignment }

// encoder writes little-endian GGUF values and remembers the first error and
// the byte count (for alignment padding).
type encoder struct {
	w   io.Writer
	n   int64
	err error
	buf [8]byte
}

func (e *encoder) raw(b []byte) {
	if e.err != nil {
		return
	}
	n, err := e.w.Write(b)
	e.n += int64(n)
	e.err = err
}

func (e *encoder) u32(x uint32) {
	binary.LittleEndian.PutUint32(e.buf[:4], x)
	e.raw(e.buf[:4])
}

func (e *encoder) u64(x uint64) {
	binary.LittleEndian.PutUint64(e.buf[:8], x)
	e.raw(e.buf[:8])
}

func (e *encoder) str(s string) {
	e.u64(uint64(len(s)))
	e.raw([]byte(s))
}

func (e *encoder) pad() {
	if r := e.n % alignment; r != 0 {
		e.raw(make([]byte, alignment-r))
	}
}

func (e *encoder) f32s(xs []float32) {
	b := make([]byte, 4*len(xs))
	for i, x := range xs {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	e.raw(b)
}

func (e *encoder) key(k string, typ uint32) {
	e.str(k)
	e.u32(typ)
}

func (e *encoder) kvU32(k string, x uint32) { e.key(k, typeU32); e.u32(x) }

func (e *encoder) kvF32(k string, x float32) { e.key(k, typeF32); e.u32(math.Float32bits(x)) }

func (e *encoder) kvString(k, s string) { e.key(k, typeStr); e.str(s) }

func (e *encoder) kvBool(k string, b bool) {
	e.key(k, typeBool)
	if b {
		e.raw([]byte{1})
	} else {
		e.raw([]byte{0})
	}
}

func (e *encoder) kvStrings(k string, ss []string) {
	e.key(k, typeArr)
	e.u32(typeStr)
	e.u64(uint64(len(ss)))
	for _, s := range ss {
		e.str(s)
	}
}

func (e *encoder) kvF32s(k string, xs []float32) {
	e.key(k, typeArr)
	e.u32(typeF32)
	e.u64(uint64(len(xs)))
	e.f32s(xs)
}

func (e *encoder) kvI32s(k string, xs []int32) {
	e.key(k, typeArr)
	e.u32(typeI32)
	e.u64(uint64(len(xs)))
	for _, x := range xs {
		e.u32(uint32(x))
	}
}
