package report

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"

	"bench/internal/record/rundir"
)

// writeSpliced writes whole as rundir.MarshalJSON would (two-space indent,
// HTML left unescaped, a final newline), byte for byte, but with its
// top-level array field key (nil in whole) filled by the n values item
// returns, each encoded on its own: the file is streamed, so a summary of
// 100,000 groups never holds its 100 MB of JSON (twice, for the indent) in
// memory at once.
func writeSpliced(w io.Writer, whole any, key string, n int, item func(i int) any) error {
	head, err := rundir.MarshalJSON(whole)
	if err != nil {
		return err
	}
	marker := []byte("\n  \"" + key + "\": null")
	at := bytes.Index(head, marker)
	if at < 0 || bytes.Index(head[at+1:], marker[1:]) != bytes.LastIndex(head[at+1:], marker[1:]) {
		return fmt.Errorf("report: %q is not a top-level null field", key)
	}
	cut := at + len(marker) - len("null")
	if _, err := w.Write(head[:cut]); err != nil {
		return err
	}
	if n == 0 {
		io.WriteString(w, "[]")
	} else {
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		enc.SetIndent("    ", "  ")
		io.WriteString(w, "[")
		for i := range n {
			b.Reset()
			if err := enc.Encode(item(i)); err != nil {
				return err
			}
			sep := ",\n    "
			if i == 0 {
				sep = "\n    "
			}
			io.WriteString(w, sep)
			if _, err := w.Write(bytes.TrimSuffix(b.Bytes(), []byte("\n"))); err != nil {
				return err
			}
		}
		io.WriteString(w, "\n  ]")
	}
	_, err = w.Write(head[cut+len("null"):])
	return err
}

// writeJSONFile writes path atomically through writeSpliced.
func writeJSONFile(path string, whole any, key string, n int, item func(i int) any) error {
	f, err := rundir.CreateAtomic(path)
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(f, 256<<10)
	if err := writeSpliced(bw, whole, key, n, item); err != nil {
		f.Abort()
		return fmt.Errorf("encode %s: %w", path, err)
	}
	if err := bw.Flush(); err != nil {
		f.Abort()
		return err
	}
	return f.Commit()
}
