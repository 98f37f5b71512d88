package junitxml

import (
	"encoding/binary"
	"errors"
)

// The texts of a failed, skipped or errored cell go on the Builder's tape
// (internal/tape) as one record: the message and the type, each after its
// length, then the data.

func encodeResult(buf []byte, r *result) []byte {
	buf = binary.AppendUvarint(buf[:0], uint64(len(r.Message)))
	buf = append(buf, r.Message...)
	buf = binary.AppendUvarint(buf, uint64(len(r.Type)))
	buf = append(buf, r.Type...)
	return append(buf, r.Data...)
}

func decodeResult(p []byte) (result, error) {
	var r result
	var ok bool
	if r.Message, p, ok = field(p); !ok {
		return result{}, errCorrupt
	}
	if r.Type, p, ok = field(p); !ok {
		return result{}, errCorrupt
	}
	r.Data = string(p)
	return r, nil
}

var errCorrupt = errors.New("junit texts: corrupt record on the tape")

func field(p []byte) (string, []byte, bool) {
	n, k := binary.Uvarint(p)
	if k <= 0 || n > uint64(len(p)-k) {
		return "", nil, false
	}
	return string(p[k : k+int(n)]), p[k+int(n):], true
}
