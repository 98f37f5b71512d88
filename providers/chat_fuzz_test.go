package providers

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	jsonv2 "github.com/go-json-experiment/json"
)

// FuzzReadChatStream: any body gives text equal to the text events, a
// classified failure or none, and every chunk encoding/json would decode
// is decoded to the same value by the faster decoder bench uses.
func FuzzReadChatStream(f *testing.F) {
	files, _ := filepath.Glob("testdata/chat/*.http")
	for _, name := range files {
		raw, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		if _, body, ok := bytes.Cut(raw, []byte("\r\n\r\n")); ok {
			f.Add(body)
		} else if _, body, ok := bytes.Cut(raw, []byte("\n\n")); ok {
			f.Add(body)
		}
	}
	// encoding/json's leniencies: names in any case, a name twice (the last
	// wins), invalid UTF-8 (replaced), a numeric error code.
	f.Add([]byte("data: {\"choices\":[{\"Delta\":{\"CONTENT\":\"a\"},\"finish_reason\":\"stop\"}]}\n\n"))
	f.Add([]byte("data: {\"choices\":[{\"delta\":{\"content\":\"a\",\"content\":\"b\"},\"finish_reason\":\"stop\"}]}\n\n"))
	f.Add([]byte("data: {\"choices\":[{\"delta\":{\"content\":\"\xff\xfe\"},\"finish_reason\":\"stop\"}]}\n\n"))
	f.Add([]byte("data: {\"error\":{\"message\":\"m\",\"code\":429}}\n\n"))
	f.Add([]byte("data: {\"choices\":[{\"delta\":{\"reasoning\":\"r\",\"reasoning_content\":\"c\",\"tool_calls\":[{\"index\":1,\"function\":{\"name\":\"f\",\"arguments\":\"{}\"}}]}}],\"usage\":{\"prompt_tokens\":1,\"completion_tokens\":2,\"completion_tokens_details\":{\"reasoning_tokens\":1}}}\n\ndata: [DONE]\n\n"))
	f.Fuzz(func(t *testing.T, body []byte) {
		var text strings.Builder
		resp := &Response{}
		err := readChatStream(bytes.NewReader(body), Secrets{}, resp, func(e Event) {
			if e.Kind == EventText {
				text.WriteString(e.Text)
			}
		})
		if resp.Text != text.String() {
			t.Errorf("resp.Text %q != emitted text %q", resp.Text, text.String())
		}
		var fl *Failure
		if err != nil && !errors.As(err, &fl) {
			t.Errorf("unclassified error %v", err)
		}
		// The same chunks through both decoders.
		sr := NewSSEReader(bytes.NewReader(body))
		for {
			ev, err := sr.Next()
			if err != nil {
				break
			}
			var a, b chatChunk
			if json.Unmarshal(ev.Data, &a) != nil {
				continue
			}
			if err := jsonv2.Unmarshal(ev.Data, &b, chunkJSON); err != nil {
				t.Fatalf("encoding/json decodes %q, the chunk decoder fails: %v", ev.Data, err)
			}
			if !reflect.DeepEqual(a, b) {
				t.Fatalf("%q decodes differently:\nencoding/json %+v\nchunk decoder %+v", ev.Data, a, b)
			}
		}
	})
}
