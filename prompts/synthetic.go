package prompts

import (
	"fmt"
	"math/rand/v2"
	"strings"

	"bench/validators"
)

// syntheticWords are short, common English words, each one token in the
// tokenizers of the common model families (a leading space and the word),
// so a prompt of N of them is about N tokens.
var syntheticWords = strings.Fields(`the of and to in is it for on was with he as at by be this had not are but from or
have an they which one you were all her she there would their we him been has when who will no more if out so
said what up its about than into them can only other new some could time these two may then do first any my now
such like our over man me even most made after also did many before must through back years where much your way
well down should because each just those people how too little state good very make world still own see men work
long get here between both life being under never day same another know while last might us great old year off
come since against go came right used take three`)

// Synthetic is a prompt of about input tokens asking for output tokens,
// for input-length sweeps without shipping a dataset: its words are drawn
// from syntheticWords by a generator seeded with the lengths, so the same
// lengths give the same text on every machine. The server's own count of
// the input (input_tokens in results.jsonl) is the figure to trust; this
// one is approximate (within a few tokens for the common tokenizers). Its
// validator is noop and MaxTokens is output, which a server may still
// stop short of (at its end-of-sequence token).
func Synthetic(input, output int) Prompt {
	head := fmt.Sprintf("Write at least %d words continuing this text:", output)
	n := max(input-len(strings.Fields(head)), 1)
	rng := rand.New(rand.NewPCG(uint64(input), uint64(output)))
	var b strings.Builder
	b.Grow(len(head) + 6*n)
	b.WriteString(head)
	for range n {
		b.WriteByte(' ')
		b.WriteString(syntheticWords[rng.IntN(len(syntheticWords))])
	}
	return Prompt{
		ID:        SyntheticID(input, output),
		Name:      fmt.Sprintf("synthetic_%d_in_%d_out", input, output),
		Prompt:    b.String(),
		MaxTokens: output,
		Validator: &validators.Spec{Type: "noop"},
		Source:    "synthetic",
	}
}

// SyntheticID names the synthetic prompt of those lengths: S<in>x<out>.
func SyntheticID(input, output int) string { return fmt.Sprintf("S%dx%d", input, output) }
