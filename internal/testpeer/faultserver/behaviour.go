package faultserver

import (
	"fmt"
	"strconv"
	"strings"
)

// Behaviour names. See the package documentation for what each one sends.
const (
	OK                 = "ok"
	StallHeaders       = "stall_headers"
	StallBody          = "stall_body"
	Cut                = "cut"
	CutFrame           = "cut_frame"
	Die                = "die"
	DieHeaders         = "die_headers"
	Flood              = "flood"
	FloodReasoning     = "flood_reasoning"
	FloodTool          = "flood_tool"
	EndlessLine        = "endless_line"
	LongLine           = "long_line"
	CommentFlood       = "comment_flood"
	Malformed          = "malformed"
	StreamError        = "stream_error"
	EchoKey            = "echo_key"
	EchoKeyEvent       = "echo_key_event"
	EchoKeyFrame       = "echo_key_frame"
	EchoKeySplit       = "echo_key_split"
	EchoKeyLong        = "echo_key_long"
	EchoKeyLongEvent   = "echo_key_long_event"
	EchoKeyLongFrame   = "echo_key_long_frame"
	EchoKeyFinish      = "echo_key_finish"
	EchoKeyArgs        = "echo_key_args"
	EchoKeyEncoded     = "echo_key_encoded"
	Hostile            = "hostile"
	httpPrefix         = "http"
	latestTag          = ":latest"
	maxBehaviourNumber = 1 << 40
	// maxEchoOffset bounds echo_key_long's offset: its message is built
	// whole, unlike the streamed floods and long lines.
	maxEchoOffset = 16 << 20
)

// param says whether a behaviour takes a ":N" suffix.
type param int

const (
	noParam  param = iota
	optional       // "flood" or "flood:1000"
	required       // "long_line:65536"
)

var behaviours = map[string]param{
	OK:               noParam,
	StallHeaders:     noParam,
	StallBody:        noParam,
	Cut:              noParam,
	CutFrame:         noParam,
	Die:              noParam,
	DieHeaders:       noParam,
	Flood:            optional,
	FloodReasoning:   optional,
	FloodTool:        optional,
	EndlessLine:      noParam,
	LongLine:         required,
	CommentFlood:     optional,
	Malformed:        noParam,
	StreamError:      noParam,
	EchoKey:          noParam,
	EchoKeyEvent:     noParam,
	EchoKeyFrame:     noParam,
	EchoKeySplit:     noParam,
	EchoKeyLong:      required,
	EchoKeyLongEvent: required,
	EchoKeyLongFrame: required,
	EchoKeyFinish:    noParam,
	EchoKeyArgs:      noParam,
	EchoKeyEncoded:   required,
	Hostile:          noParam,
}

// behaviour is a parsed model name.
type behaviour struct {
	// full is the name without a ":latest" tag; attempts are counted by it.
	full string
	// name is the behaviour without its parameter, e.g. "flood" or "http".
	name string
	// status is the HTTP status of an httpNNN behaviour.
	status int
	// n is the ":N" parameter; hasN says whether one was given.
	n    int
	hasN bool
}

// parseBehaviour reads a model name: a behaviour, optionally followed by
// ":N" where the behaviour takes a number, or by Ollama's ":latest" tag
// (which Ollama clients add to untagged names). httpNNN takes any status
// from 400 to 599.
func parseBehaviour(model string) (behaviour, error) {
	full := strings.TrimSuffix(model, latestTag)
	name, arg, hasArg := strings.Cut(full, ":")
	b := behaviour{full: full, name: name, hasN: hasArg}
	if hasArg {
		n, err := strconv.Atoi(arg)
		if err != nil || n < 0 || n > maxBehaviourNumber || strconv.Itoa(n) != arg {
			return b, fmt.Errorf("model %q: %q after the colon is not a count", model, arg)
		}
		b.n = n
	}
	if rest, ok := strings.CutPrefix(name, httpPrefix); ok && len(rest) == 3 {
		st, err := strconv.Atoi(rest)
		if err != nil || st < 400 || st > 599 || strconv.Itoa(st) != rest {
			return b, fmt.Errorf("model %q: httpNNN takes a status from 400 to 599", model)
		}
		b.name, b.status = httpPrefix, st
		return b, nil
	}
	p, ok := behaviours[name]
	switch {
	case !ok:
		return b, fmt.Errorf("model %q: no such behaviour", model)
	case p == noParam && hasArg:
		return b, fmt.Errorf("model %q: %s takes no count", model, name)
	case p == required && !hasArg:
		return b, fmt.Errorf("model %q: %s needs a count, e.g. %s:1000", model, name, name)
	case strings.HasPrefix(name, EchoKeyLong) && b.n > maxEchoOffset:
		return b, fmt.Errorf("model %q: the key's offset is at most %d", model, maxEchoOffset)
	case name == EchoKeyEncoded && b.n >= len(EncodedForms):
		return b, fmt.Errorf("model %q: there are %d encoded forms (0 to %d)", model, len(EncodedForms), len(EncodedForms)-1)
	}
	return b, nil
}

// catalogue is what /api/tags lists: every behaviour that takes no required
// count, the common HTTP statuses, and a few counted variants. Ollama clients
// that check the list before a request (bench's ollama provider does) need
// the names there; add others with Server.AddModels.
func catalogue() []string {
	names := []string{
		"http400", "http401", "http403", "http404", "http429", "http500", "http502", "http503",
		"http429:1", "http429:2", "http500:1", "http503:1",
		"flood:1000", "comment_flood:10", "comment_flood:300", "comment_flood:301",
		"long_line:65536", "echo_key_long:290", "echo_key_long_event:290", "echo_key_long_frame:290",
	}
	for name, p := range behaviours {
		if p != required {
			names = append(names, name)
		}
	}
	return names
}
