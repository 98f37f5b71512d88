package compare

import (
	"hash/maphash"

	"bench/internal/record/agentsnap"
	"bench/internal/record/results"
)

// SchemaVersion is the results schema compare reads (results.SchemaVersion):
// a line that declares another schema_version is refused, and so is a line
// without provider_type or prompt_id (written by a bench from before the
// full cell key), since its cells could not be matched.
const SchemaVersion = results.SchemaVersion

// Both passes read results.jsonl through results.Scan: strictly (a gate
// must not judge a run it could not fully read, so any bad line is an
// error naming it), and with the answers, calls and turns decoded but not
// the timeline, reasoning or provider metrics, which no comparison uses.
// The second pass sets Lines to the cells it diffs.
var scanOptions = results.ScanOptions{Detail: results.Answers, Strict: true}

// digest is a 128-bit hash, equal for two cells whose snapshots are equal
// (the converse does not hold: a digest that differs sends the cell to the
// full snapshot diff, which decides).
type digest [2]uint64

// seeds hash both runs of one comparison the same way.
var seeds = [2]maphash.Seed{maphash.MakeSeed(), maphash.MakeSeed()}

// snapshotDigest hashes everything of the record that agentsnap.FromRecord
// puts in the cell's snapshot apart from the key and the input (compared
// through the prompt set): output, tools, error. ok is false when the
// record holds something the digest cannot vouch for (a malformed result
// hash), so the cell always gets the full diff.
func snapshotDigest(r *results.Record) (digest, bool) {
	var h hasher
	h.h[0].SetSeed(seeds[0])
	h.h[1].SetSeed(seeds[1])
	ok := true
	h.str(r.RawOutput)
	if r.Success {
		h.num(1)
	} else {
		h.num(0)
		h.str(deref(r.FailureType))
		if r.ErrorMessage == nil {
			h.num(-1)
		} else {
			h.str(*r.ErrorMessage)
		}
	}
	switch {
	case len(r.TurnDetails) > 0:
		h.str("turns")
		for _, t := range r.TurnDetails {
			for _, c := range t.Calls {
				h.str(c.Name)
				h.raw(c.Arguments)
				h.str(c.ResultHash)
				ok = ok && agentsnap.ValidResultHash(c.ResultHash)
			}
		}
	case len(r.ToolCallDetails) > 0:
		h.str("details")
		for _, c := range r.ToolCallDetails {
			h.str(c.Name)
			h.raw(c.Arguments)
		}
	default:
		h.str("names")
		h.num(len(r.ToolCalls))
		for _, n := range r.ToolCalls {
			h.str(n)
		}
	}
	return digest{h.h[0].Sum64(), h.h[1].Sum64()}, ok
}

// hasher writes values to both hashes of a digest, each length-prefixed so
// that the sequence of values, not just their concatenation, is hashed.
type hasher struct{ h [2]maphash.Hash }

func (h *hasher) str(s string) {
	for i := range h.h {
		maphash.WriteComparable(&h.h[i], len(s))
		h.h[i].WriteString(s)
	}
}

func (h *hasher) raw(b []byte) {
	for i := range h.h {
		maphash.WriteComparable(&h.h[i], len(b))
		h.h[i].Write(b)
	}
}

func (h *hasher) num(v int) {
	for i := range h.h {
		maphash.WriteComparable(&h.h[i], v)
	}
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
