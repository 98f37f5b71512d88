package agentsnap

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"strings"
)

// Key is a cell's full key, the one bench compare matches two runs on.
type Key struct {
	Provider     string
	ProviderType string
	Model        string
	// ThinkingLevel is "" for none (null in results.jsonl).
	ThinkingLevel string
	PromptID      string
	Repetition    int
	// Stage is the cell's load stage ("" without a load profile): a sweep
	// sends the same prompts and repetitions once per stage.
	Stage string
}

// String is the key for messages, every part unambiguous.
func (k Key) String() string {
	tl := "none"
	if k.ThinkingLevel != "" {
		tl = fmt.Sprintf("%q", k.ThinkingLevel)
	}
	stage := ""
	if k.Stage != "" {
		stage = fmt.Sprintf(" stage %q", k.Stage)
	}
	return fmt.Sprintf("{provider %q (%q) model %q thinking %s prompt %q rep %d%s}",
		k.Provider, k.ProviderType, k.Model, tl, k.PromptID, k.Repetition, stage)
}

// Longest slug of each part, so a name stays far below the 255-byte limit
// of common filesystems (at most 188 bytes in all).
const (
	maxProvider = 24
	maxModel    = 64
	maxThinking = 16
	maxPrompt   = 32
	maxStage    = 16
)

// FileName is the snapshot file name of a cell:
//
//	<provider>__<model>__<thinking>__<prompt_id>__r<repetition>__<hash>.json
//
// e.g. ollama_openai__qwen3-4b__none__p3__r0__1f0c6a39c2d5e4b7.json; a
// cell of a load stage has the stage after the repetition
// (…__r0__c-4__<hash>.json).
//
// The readable parts are slugs: ASCII letters lower-cased; a-z, 0-9, "_",
// "-" and "." kept ("." becomes "-" in the provider, so no name starts with
// a Windows device name such as "con."); every other byte or character
// becomes "-", runs of "-" collapse, "-" and "." are trimmed from the ends,
// each part is cut to a fixed length and an empty part is "x". The thinking
// part is "none" for no thinking level. Slugs lose information (case,
// replaced characters, long tails), so uniqueness comes from <hash>: the
// first 16 hex digits of the SHA-256 of all six key fields, exact bytes,
// each length-prefixed. Keys that differ anywhere, even only in case or in
// one replaced character, get different hashes; two keys share a name only
// if 64 bits of SHA-256 collide (about 3 in 10^10 for 100,000 cells), and
// Write refuses to overwrite a file holding another cell even then.
//
// The result uses only [a-z0-9._-], is lower case (safe on case-insensitive
// filesystems), never starts with "." or "-", and is at most 206 bytes.
func FileName(k Key) string {
	thinking := "none"
	if k.ThinkingLevel != "" {
		thinking = slug(k.ThinkingLevel, maxThinking, true)
	}
	stage := ""
	if k.Stage != "" {
		stage = "__" + slug(k.Stage, maxStage, true)
	}
	return fmt.Sprintf("%s__%s__%s__%s__r%d%s__%s.json",
		slug(k.Provider, maxProvider, false),
		slug(k.Model, maxModel, true),
		thinking,
		slug(k.PromptID, maxPrompt, true),
		k.Repetition,
		stage,
		keyHash(k))
}

// slug is the readable, lossy form of one key part (see FileName).
func slug(s string, max int, keepDot bool) string {
	var b strings.Builder
	dash := false
	for i := 0; i < len(s) && b.Len() < max; i++ {
		c := s[i]
		switch {
		case 'A' <= c && c <= 'Z':
			c += 'a' - 'A'
		case 'a' <= c && c <= 'z', '0' <= c && c <= '9', c == '_', c == '-':
		case c == '.' && keepDot:
		default:
			c = '-'
		}
		if c == '-' {
			if dash {
				continue
			}
			dash = true
		} else {
			dash = false
		}
		b.WriteByte(c)
	}
	out := strings.Trim(b.String(), "-.")
	if out == "" {
		return "x"
	}
	return out
}

// keyHash is 16 hex digits of the SHA-256 of an injective encoding of k:
// each string as its byte length (uvarint) then its bytes, then the
// repetition as a varint, then, for a cell of a load stage only (so the
// names of every other cell are what they always were), the stage as a
// string.
func keyHash(k Key) string {
	h := sha256.New()
	var n [binary.MaxVarintLen64]byte
	for _, s := range []string{k.Provider, k.ProviderType, k.Model, k.ThinkingLevel, k.PromptID} {
		h.Write(n[:binary.PutUvarint(n[:], uint64(len(s)))])
		h.Write([]byte(s))
	}
	h.Write(n[:binary.PutVarint(n[:], int64(k.Repetition))])
	if k.Stage != "" {
		h.Write(n[:binary.PutUvarint(n[:], uint64(len(k.Stage)))])
		h.Write([]byte(k.Stage))
	}
	return hex.EncodeToString(h.Sum(nil)[:8])
}
