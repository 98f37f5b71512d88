package providers

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"
)

// A read is stamped with when its bytes reached the socket, not when the
// reader got round to it: bytes that were waiting before the read began
// carry a time before it began, on the cell's clock. (The kernel turns
// receive timestamps on shortly after the first socket asks, so the first
// exchanges of a process may be stamped when read; the test asks until one
// is stamped by the kernel, which a plain read never would be.)
func TestKernelReceiveStamp(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	wrote := make(chan time.Time)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		buf := make([]byte, 1)
		for {
			if _, err := c.Read(buf); err != nil { // a request
				return
			}
			before := time.Now()
			c.Write([]byte("data: x\n\n")) // its answer
			wrote <- before
		}
	}()
	raw, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	c := newStampedConn(raw)
	if c.raw == nil {
		t.Fatal("no kernel receive timestamps on a TCP connection on Linux")
	}
	c.setClock(time.Now)
	buf := make([]byte, 64)
	for attempt := 0; ; attempt++ {
		c.Write([]byte("?"))
		writeStart := <-wrote
		waitQueued(t, c)
		readStart := time.Now()
		n, err := c.Read(buf)
		if err != nil || string(buf[:n]) != "data: x\n\n" {
			t.Fatalf("read %q, %v", buf[:n], err)
		}
		at := c.readAt()
		if at.Before(writeStart) {
			t.Fatalf("stamped %v, before the answer was written (%v)", at, writeStart)
		}
		if at.Before(readStart) {
			break // stamped when the bytes arrived
		}
		if attempt == 200 {
			t.Fatalf("never stamped before the read began: last %v, read at %v", at, readStart)
		}
		time.Sleep(5 * time.Millisecond)
	}
	// The end of the stream reads as io.EOF, as net.Conn's Read says.
	c.Conn.(*net.TCPConn).CloseWrite()
	if n, err := c.Read(buf); n != 0 || err != io.EOF {
		t.Errorf("after close: %d, %v", n, err)
	}
	c.Close()
	if _, err := c.Read(buf); err == nil {
		t.Error("read on a closed connection: no error")
	}
}

// waitQueued waits until bytes are queued on the socket (FIONREAD).
func waitQueued(t *testing.T, c *stampedConn) {
	t.Helper()
	for i := 0; i < 5000; i++ {
		var queued int32
		c.raw.Control(func(fd uintptr) {
			syscall.Syscall(syscall.SYS_IOCTL, fd, syscall.TIOCINQ, uintptr(unsafe.Pointer(&queued)))
		})
		if queued > 0 {
			return
		}
		time.Sleep(time.Millisecond)
	}
	t.Fatal("nothing queued on the socket")
}

// frameServer answers each byte it reads with frames, written (and so
// sent) one at a time gap apart, and reports when it began each write.
func frameServer(t *testing.T, frames []string, gap time.Duration) (addr string, writes <-chan []time.Time) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	ch := make(chan []time.Time, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		buf := make([]byte, 1)
		for {
			if _, err := c.Read(buf); err != nil {
				return
			}
			var at []time.Time
			for i, f := range frames {
				if i > 0 {
					time.Sleep(gap)
				}
				at = append(at, time.Now())
				c.Write([]byte(f))
			}
			ch <- at
		}
	}()
	return ln.Addr().String(), ch
}

// queued is how many bytes wait on the socket (FIONREAD).
func queued(c *stampedConn) int {
	var n int32
	c.raw.Control(func(fd uintptr) {
		syscall.Syscall(syscall.SYS_IOCTL, fd, syscall.TIOCINQ, uintptr(unsafe.Pointer(&n)))
	})
	return int(n)
}

// While a first token is awaited, a reader that comes late to three frames
// sent 10 ms apart gets them one per read, each stamped with its own
// segment's arrival, never before it was sent; the first read takes all
// three off the socket, so no half-read segment is left for the kernel to
// merge later ones into. Once the first token is in, one read takes all.
// (Each frame's stamp is the kernel's: the first exchanges may find
// receive timestamps not yet on, and segments the kernel merged go over
// together with the later one's stamp, so the test asks until one round
// has every frame apart, and holds every round to the rest: whole frames,
// the socket drained, no stamp before its bytes were sent.)
func TestSplitReadsStampEachFrame(t *testing.T) {
	frames := []string{
		"1e\r\ndata: {\"delta\":\"first\"}\n\n\r\n",
		"1f\r\ndata: {\"delta\":\"second\"}\n\n\r\n",
		"1e\r\ndata: {\"delta\":\"third\"}\n\n\r\n",
	}
	total := len(strings.Join(frames, ""))
	addr, writes := frameServer(t, frames, 10*time.Millisecond)
	raw, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	c := newStampedConn(raw)
	defer c.Close()
	c.setClock(time.Now)
	buf := make([]byte, 4096)
	apart := false
	var req uint64
	for round := 0; round < 50 && !apart; round++ {
		req = c.awaitFirstToken()
		c.Write([]byte("?"))
		sent := <-writes
		for queued(c) < total {
			time.Sleep(time.Millisecond)
		}
		apart = true
		for i, reads := 0, 0; i < len(frames); reads++ {
			n, err := c.Read(buf)
			if err != nil {
				t.Fatal(err)
			}
			// The read holds frames i..j, whole.
			got, j := string(buf[:n]), i
			for rest := got; ; j++ {
				if j == len(frames) || !strings.HasPrefix(rest, frames[j]) {
					t.Fatalf("round %d, read %d: %q is not whole frames from frame %d", round, reads, got, i)
				}
				if rest = rest[len(frames[j]):]; rest == "" {
					break
				}
			}
			if reads == 0 && queued(c) != 0 {
				t.Fatalf("round %d: %d bytes left on the socket after the first read", round, queued(c))
			}
			at := c.readAt()
			if at.Before(sent[j]) {
				t.Fatalf("round %d: frame %d stamped %v, before it was sent (%v)", round, j, at, sent[j])
			}
			if j > i || (j+1 < len(sent) && !at.Before(sent[j+1])) {
				apart = false // stamped with a later frame's arrival
			}
			i = j + 1
		}
	}
	if !apart {
		t.Error("in 50 rounds, never a round with each frame stamped by its own arrival")
	}
	// The first token is in: all that is queued comes in one read.
	c.doneAwaiting(req + 1) // not the request awaited: no change
	if !c.splitting() {
		t.Fatal("another request's end ended the wait")
	}
	c.doneAwaiting(req)
	c.Write([]byte("?"))
	<-writes
	for queued(c) < total {
		time.Sleep(time.Millisecond)
	}
	if n, err := c.Read(buf); err != nil || n != total {
		t.Errorf("after the first token: read %d bytes, %v; want all %d", n, err, total)
	}
}

// Through the whole HTTP path (ollama_openai's provider on bench's
// transport), a reader held up after the headers (a loaded machine) while
// three tokens arrive 10 ms apart stamps the first token with its own
// arrival, not the third's: ttft_ms is what the server took. (As above,
// rounds are asked until one is stamped by the kernel apart.)
func TestFirstTokenStampedByItsOwnSegment(t *testing.T) {
	rounds := make(chan []time.Time, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		fl := w.(http.Flusher)
		fl.Flush() // the headers go alone
		var sent []time.Time
		for _, tok := range []string{"one", "two", "three"} {
			time.Sleep(10 * time.Millisecond)
			sent = append(sent, time.Now())
			fmt.Fprintf(w, "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"content\":%q},\"finish_reason\":null}]}\n\n", tok+" ")
			fl.Flush()
		}
		rounds <- sent
		io.WriteString(w, "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n")
	}))
	defer srv.Close()
	p := newKind(t, "ollama_openai", &ollamaOpenAIOptions{httpOptions: httpOptions{BaseURL: srv.URL + "/v1"}})
	var ok bool
	for attempt := 0; attempt < 30 && !ok; attempt++ {
		var first time.Time
		var sent []time.Time
		emit := func(e Event) {
			switch {
			case e.Kind == EventRequestWritten:
				// The reader comes to the body once all three are sent.
				sent = <-rounds
				time.Sleep(2 * time.Millisecond)
			case e.Kind == EventText && first.IsZero():
				first = e.At
			}
		}
		resp, err := p.Stream(context.Background(), Request{Model: "m", Prompt: "go"}, emit)
		if err != nil || resp.Text != "one two three " {
			t.Fatalf("stream: %q, %v", resp.Text, err)
		}
		if first.Before(sent[0]) {
			t.Fatalf("first token stamped %v, before it was sent (%v)", first, sent[0])
		}
		ok = first.Before(sent[1])
		if !ok {
			t.Logf("attempt %d: first token stamped %v after it was sent; the second was sent %v after it", attempt, first.Sub(sent[0]), sent[1].Sub(sent[0]))
		}
	}
	if !ok {
		t.Error("the first token was never stamped before the second was sent")
	}
}

// An answer that brings no token (an error, a reasoning-only answer) ends
// the wait for one when its body is closed: the connection's next reads
// are plain ones, not split for a token that will not come.
func TestWaitEndsWithTheAnswer(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/fail" {
			http.Error(w, "overloaded", http.StatusServiceUnavailable)
			return
		}
		io.WriteString(w, "data: {\"choices\":[{\"delta\":{\"reasoning\":\"hm\"}}]}\n\ndata: [DONE]\n\n")
	}))
	defer srv.Close()
	e := &httpEndpoint{client: httpClient(), backoff: time.Millisecond}
	res, err := e.post(context.Background(), Request{}, httpRequest{URL: srv.URL + "/ok"}, &Response{}, func(Event) {})
	if err != nil {
		t.Fatal(err)
	}
	if res.conn == nil || !res.conn.splitting() {
		t.Fatal("no first token awaited while the answer streams")
	}
	io.ReadAll(res.Body)
	res.Body.Close()
	if res.conn.splitting() {
		t.Error("still awaiting a first token after the answer's body was closed")
	}
	conn := res.conn
	if _, err := e.post(context.Background(), Request{}, httpRequest{URL: srv.URL + "/fail"}, &Response{}, func(Event) {}); err == nil {
		t.Fatal("a 503 was accepted")
	}
	if conn.requests.Load() < 2 {
		t.Fatal("the failed request did not reuse the connection")
	}
	if conn.splitting() {
		t.Error("still awaiting a first token after an error answer")
	}
}

// BenchmarkFirstTokenStamping is what stamping the first token by its own
// segment adds to reading an answer: the same answer (headers and ten SSE
// events in one write, as from an instant server, or the headers and
// first event, then the rest, each in a write of its own) read through
// bench's connection with a first token awaited (split) and without
// (plain), taking turns, on one keep-alive connection. CPU is the whole
// process's (the server's writes are the same in both) per answer.
//
//	go test ./providers -run '^$' -bench FirstTokenStamping -benchtime 2000x
func BenchmarkFirstTokenStamping(b *testing.B) {
	var frames []string
	for i := 0; i < 10; i++ {
		data := fmt.Sprintf("data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"token %d\"}}]}\n\n", i)
		frames = append(frames, fmt.Sprintf("%x\r\n%s\r\n", len(data), data))
	}
	head := "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"
	for _, shape := range []string{"instant", "streamed"} {
		b.Run(shape, func(b *testing.B) {
			writes := []string{head + strings.Join(frames, "")}
			if shape == "streamed" {
				writes = append([]string{head + frames[0]}, frames[1:]...)
			}
			total := len(strings.Join(writes, ""))
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				b.Fatal(err)
			}
			defer ln.Close()
			go func() {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				defer c.Close()
				one := make([]byte, 1)
				for {
					if _, err := c.Read(one); err != nil {
						return
					}
					for _, w := range writes {
						c.Write([]byte(w))
					}
				}
			}()
			raw, err := net.Dial("tcp", ln.Addr().String())
			if err != nil {
				b.Fatal(err)
			}
			c := newStampedConn(raw)
			defer c.Close()
			c.setClock(time.Now)
			buf := make([]byte, 4096)
			answer := func(split bool) {
				var req uint64
				if split {
					req = c.awaitFirstToken()
				}
				c.Write([]byte("?"))
				for got := 0; got < total; {
					n, err := c.Read(buf)
					if err != nil {
						b.Fatal(err)
					}
					got += n
					if split && got > len(head) {
						c.doneAwaiting(req) // the first event is in
						split = false
					}
				}
			}
			var cpu [2]time.Duration
			for i := 0; i < b.N; i++ {
				for j := 0; j < 2; j++ {
					mode := (i + j) % 2
					c0 := cpuTime()
					answer(mode == 1)
					cpu[mode] += cpuTime() - c0
				}
			}
			b.ReportMetric(float64(cpu[0].Nanoseconds())/1e3/float64(b.N), "plain-cpu-µs/answer")
			b.ReportMetric(float64(cpu[1].Nanoseconds())/1e3/float64(b.N), "split-cpu-µs/answer")
			b.ReportMetric(float64(cpu[1]-cpu[0])/1e3/float64(b.N), "added-cpu-µs/answer")
		})
	}
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
