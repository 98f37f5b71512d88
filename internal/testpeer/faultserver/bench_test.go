package faultserver

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
)

// BenchmarkFlood measures how fast an endless flood reaches a client that
// reads and discards it: bytes/s per protocol, and the server's allocations
// per MiB sent (they are garbage, not growth: see TestFloodMemory).
func BenchmarkFlood(b *testing.B) {
	s := New()
	defer s.Close()
	const chunk = 8 << 20
	for _, p := range protocols {
		b.Run(p.name, func(b *testing.B) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, s.URL()+p.path, strings.NewReader(p.body("flood", true)))
			resp, err := client.Do(req)
			if err != nil {
				b.Fatal(err)
			}
			defer resp.Body.Close()
			b.SetBytes(chunk)
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				if _, err := io.CopyN(io.Discard, resp.Body, chunk); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
