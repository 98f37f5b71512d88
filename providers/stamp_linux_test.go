package providers

import (
	"io"
	"net"
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
