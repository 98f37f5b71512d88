package mcpserve

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// The JSON-RPC 2.0 error codes for a line that is not JSON, and for JSON
// that is not a JSON-RPC message.
const (
	codeParseError     = -32700
	codeInvalidRequest = -32600
)

// maxFrameBytes bounds one message the server reads; a longer line is
// answered as a parse error and skipped, not held.
const maxFrameBytes = 16 << 20

// frames sits between stdin and the SDK's transport. The SDK ends the
// session at the first line it cannot decode; JSON-RPC says a server
// answers such a line with an error (-32700 for what is not JSON, -32600
// for JSON that is not a message) and goes on, so frames answers those
// lines itself and hands the SDK only messages it can decode.
type frames struct {
	br      *bufio.Reader
	out     *lockedWriter
	pending []byte
	err     error // the end of stdin, once reached
}

func newFrames(r io.Reader, out *lockedWriter) *frames {
	return &frames{br: bufio.NewReaderSize(r, 64<<10), out: out}
}

// Read hands the SDK the next well-formed message, newline-terminated.
func (f *frames) Read(p []byte) (int, error) {
	for len(f.pending) == 0 {
		if f.err != nil {
			return 0, f.err
		}
		line, err := f.line()
		f.err = err
		if line == nil {
			continue
		}
		if code, msg := checkFrame(line); code != 0 {
			if err := f.out.answer(code, msg, idOf(line)); err != nil {
				return 0, err
			}
			continue
		}
		f.pending = append(line, '\n')
	}
	n := copy(p, f.pending)
	f.pending = f.pending[n:]
	return n, nil
}

// tooLong stands for a line over maxFrameBytes: not JSON to the checker.
var tooLong = []byte("\x00")

// line reads the next non-blank line without its newline (nil at the
// end); a line over maxFrameBytes is read past and returned as tooLong.
func (f *frames) line() ([]byte, error) {
	var buf []byte
	over := false
	for {
		chunk, err := f.br.ReadSlice('\n')
		if !over {
			if len(buf)+len(chunk) > maxFrameBytes+1 {
				over, buf = true, nil
			} else {
				buf = append(buf, chunk...)
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if over {
			return tooLong, err
		}
		t := bytes.TrimSpace(buf)
		if len(t) == 0 {
			if err != nil {
				return nil, err
			}
			buf = buf[:0]
			continue
		}
		return t, err
	}
}

// checkFrame says why a line cannot go to the SDK: a JSON-RPC error code and
// message, or 0.
func checkFrame(line []byte) (int, string) {
	if !json.Valid(line) {
		return codeParseError, "Parse error: not a JSON value"
	}
	if line[0] == '[' {
		var batch []json.RawMessage
		if json.Unmarshal(line, &batch) != nil || len(batch) == 0 {
			return codeInvalidRequest, "Invalid Request: an empty or malformed batch"
		}
		for _, m := range batch {
			if _, err := jsonrpc.DecodeMessage(m); err != nil {
				return codeInvalidRequest, "Invalid Request: " + err.Error()
			}
		}
		return 0, ""
	}
	if _, err := jsonrpc.DecodeMessage(line); err != nil {
		return codeInvalidRequest, "Invalid Request: " + err.Error()
	}
	return 0, ""
}

// idOf is the id of a line that is a JSON object with a usable id, else
// null (as JSON-RPC answers a request whose id cannot be read).
func idOf(line []byte) json.RawMessage {
	var m struct {
		ID json.RawMessage `json:"id"`
	}
	if json.Unmarshal(line, &m) == nil && len(m.ID) > 0 && (m.ID[0] == '"' || m.ID[0] == '-' || (m.ID[0] >= '0' && m.ID[0] <= '9')) {
		return m.ID
	}
	return json.RawMessage("null")
}

// lockedWriter is stdout shared by the SDK and frames' answers, one whole
// line per Write (the SDK writes each message in one call).
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func (l *lockedWriter) Close() error { return nil }

func (l *lockedWriter) answer(code int, msg string, id json.RawMessage) error {
	b, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "error": map[string]any{"code": code, "message": msg}})
	if err != nil {
		return err
	}
	_, err = l.Write(append(b, '\n'))
	return err
}
