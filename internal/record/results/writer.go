package results

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"sync"
	"syscall"
)

// Writer appends records to a JSONL file, one write(2) per line, so the file
// is valid JSONL up to its last complete line whatever kills the process.
type Writer struct {
	mu   sync.Mutex
	f    *os.File
	buf  bytes.Buffer
	enc  *json.Encoder
	path string
}

// Create opens path for appending (creating it if needed). A symlink in
// its place is refused, not followed: on a shared run volume it could
// point at any file the runner can write.
func Create(path string) (*Writer, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND|syscall.O_NOFOLLOW, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open results: %w", err)
	}
	w := &Writer{f: f, path: path}
	w.enc = json.NewEncoder(&w.buf)
	w.enc.SetEscapeHTML(false)
	return w, nil
}

// Write appends one record as a single line and hands it to the kernel before
// returning. It is safe for concurrent use.
func (w *Writer) Write(r *Record) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Reset()
	err := w.enc.Encode(r)
	if err != nil && unsupported(err) && len(dropNonFinite(r)) > 0 {
		// A NaN or an infinity: recorded as null, and said.
		w.buf.Reset()
		err = w.enc.Encode(r)
	}
	if err != nil {
		return fmt.Errorf("encode result %s/%s/%s: %w", r.Provider, r.Model, r.PromptID, err)
	}
	if _, err := w.f.Write(w.buf.Bytes()); err != nil {
		return fmt.Errorf("write %s: %w", w.path, err)
	}
	return nil
}

// Close syncs and closes the file.
func (w *Writer) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.f.Sync(); err != nil {
		w.f.Close()
		return fmt.Errorf("sync %s: %w", w.path, err)
	}
	return w.f.Close()
}

// The Writer is a run's results.jsonl output (package output), the only
// one whose failure stops the run.

// AddRecord is Write: results.jsonl has each record before any other output
// sees it.
func (w *Writer) AddRecord(r *Record) error { return w.Write(r) }

// Critical marks results.jsonl as the run's source of truth
// (output.Critical): a failure to write or close it stops the run.
func (w *Writer) Critical() {}

// Stop is Close, once the run has ended (output.WithStop).
func (w *Writer) Stop() error { return w.Close() }
