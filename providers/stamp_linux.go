package providers

import (
	"errors"
	"io"
	"net"
	"os"
	"syscall"
	"time"
	"unsafe"
)

// kernelStamps turns on the kernel's receive timestamps of a TCP
// connection (SO_TIMESTAMPNS): each recvmsg then says when the last bytes
// it returns reached the socket. It returns nil when the connection cannot
// have them, and reads stay plain.
func kernelStamps(c net.Conn) (syscall.RawConn, []byte) {
	tc, ok := c.(*net.TCPConn)
	if !ok {
		return nil, nil
	}
	rc, err := tc.SyscallConn()
	if err != nil {
		return nil, nil
	}
	var serr error
	if err := rc.Control(func(fd uintptr) {
		serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_TIMESTAMPNS, 1)
	}); err != nil || serr != nil {
		return nil, nil
	}
	return rc, make([]byte, syscall.CmsgSpace(int(unsafe.Sizeof(syscall.Timespec{}))))
}

// readStamped reads through recvmsg, as net.Conn's Read would (waiting on
// the runtime's poller, retrying interrupted calls), and returns how long
// ago the kernel received the bytes (0 when it did not say). While a first
// token is awaited (c.splitting) it reads frame by frame (readFrames).
func (c *stampedConn) readStamped(p []byte) (n int, age time.Duration, err error) {
	if len(p) == 0 {
		return 0, 0, nil
	}
	var ts int64
	var serr error
	rerr := c.raw.Read(func(fd uintptr) bool {
		if c.splitting() {
			n, ts, serr = c.readFrames(int(fd), p)
		} else {
			var oobn int
			n, oobn, serr = recvmsg(int(fd), p, c.oob, 0)
			if serr == nil {
				ts = stampTS(c.oob[:oobn])
			}
		}
		return serr != syscall.EAGAIN
	})
	switch {
	case rerr != nil:
		return 0, 0, &net.OpError{Op: "read", Net: "tcp", Source: c.LocalAddr(), Addr: c.RemoteAddr(), Err: rerr}
	case serr != nil:
		return 0, 0, &net.OpError{Op: "read", Net: "tcp", Source: c.LocalAddr(), Addr: c.RemoteAddr(), Err: os.NewSyscallError("recvmsg", serr)}
	case n == 0:
		return 0, 0, io.EOF
	}
	if n < 0 {
		return 0, 0, errors.New("recvmsg: negative count")
	}
	c.held.keepTail(p[:n])
	return n, ageOf(ts), nil
}

// readFrames is a read while a first token is awaited (see frames.go): it
// peeks at what is queued, stamps each frame's end with a peek that copies
// nothing, then takes it all off the socket, returns the first frame in p
// and holds the rest for the next Reads. It returns the first frame's
// length and arrival.
func (c *stampedConn) readFrames(fd int, p []byte) (int, int64, error) {
	n, oobn, err := recvmsg(fd, p, c.oob, syscall.MSG_PEEK)
	if err != nil || n <= 0 {
		return n, 0, err
	}
	last := stampTS(c.oob[:oobn])
	var buf [maxHeldFrames + 1]heldEnd
	ends := buf[:0]
	tail := c.held.tail
	if last != 0 {
		for from := 0; len(ends) < maxHeldFrames; {
			e := frameEnd(tail, p[:n], from)
			if e == 0 || e == n {
				break
			}
			// Up to the frame's end: its stamp is the segment holding it.
			_, oobn, err := recvmsg(fd, p[:e], c.oob, syscall.MSG_PEEK|syscall.MSG_TRUNC)
			if err != nil {
				break
			}
			ts := stampTS(c.oob[:oobn])
			if ts == last {
				// This frame came in the last segment, and so did all
				// after it (a stream's bytes arrive in order): they go
				// over together, as one read, with no more probes.
				break
			}
			ends = append(ends, heldEnd{end: e, ts: ts})
			from = e
		}
	}
	// Everything peeked at once: a segment left half read would take the
	// stamp of the next one the kernel merges into it.
	m, _, err := recvmsg(fd, p[:n], nil, 0)
	if err != nil {
		return 0, 0, err
	}
	if m != n {
		// Cannot happen (the bytes were queued); hand over what came, as
		// one frame.
		return m, last, nil
	}
	ends = append(ends, heldEnd{end: n, ts: last})
	// ACK what was read, now, and stay in delayed-ACK mode (see delayAcks).
	syscall.SetsockoptInt(fd, syscall.IPPROTO_TCP, syscall.TCP_QUICKACK, ackNowKeepDelaying)
	first := ends[0]
	if len(ends) > 1 {
		c.held.hold(p[:n], first.end, ends[1:])
	}
	return first.end, first.ts, nil
}

// While a first token is awaited, bench ACKs what it has read when it
// reads it, and holds the ACK of what it has not. A segment stays apart in
// the receive queue, with its own receive time, only while the server
// still holds its copy for retransmission; once an ACK covers it, Linux
// merges the next segment into it (TCP receive coalescing) and the merged
// segment carries the later time. ACKed on arrival (quick-ACK mode: a
// connection's start, after an idle spell, and after any delayed ACK goes
// out by its timer, which is routine for a loaded client), the first
// token's segment takes in the next token's, and a reader that comes to it
// after that finds one segment stamped with the next token's arrival: a
// one-gap error no read can undo. So when the request goes out, quick ACKs
// are turned off (delayed ACKs: the kernel's usual mode on a
// request/response connection); after each read the ACK of what was read
// goes out at once and the mode is kept (TCP_QUICKACK 2: the kernel's own
// "ACK now, stay delayed"), so the delayed-ACK timer never finds an ACK of
// read bytes pending, which would end the mode; unread segments stay apart
// until the timer or two segments' worth of bytes forces their ACK. Once
// the first token is in, the mode the connection had before the request
// is put back, with any held ACK sent at once, so a server that waits for
// it (Nagle's algorithm) is released no later than the first token's read,
// and the rest of the answer is ACKed as it would have been.

// ackNowKeepDelaying is TCP_QUICKACK's value that sends a pending ACK and
// stays in delayed-ACK mode (any even value but 0, in tcp_setsockopt).
const ackNowKeepDelaying = 2

// delayAcks turns quick ACKs off (on: a first token is awaited), noting
// the mode the connection had, or puts that mode back. A connection
// already delaying its ACKs (the usual case) is left as it is, both ways:
// the ACKs of what was read went out after each read.
func (c *stampedConn) delayAcks(on bool) {
	if c.raw == nil {
		return
	}
	c.raw.Control(func(fd uintptr) {
		if on {
			quick, err := syscall.GetsockoptInt(int(fd), syscall.IPPROTO_TCP, syscall.TCP_QUICKACK)
			c.quickBefore.Store(err == nil && quick != 0)
			if c.quickBefore.Load() {
				syscall.SetsockoptInt(int(fd), syscall.IPPROTO_TCP, syscall.TCP_QUICKACK, 0)
			}
			return
		}
		if c.quickBefore.Load() {
			syscall.SetsockoptInt(int(fd), syscall.IPPROTO_TCP, syscall.TCP_QUICKACK, 1)
		}
	})
}

// recvmsg is syscall.Recvmsg, retried when interrupted.
func recvmsg(fd int, p, oob []byte, flags int) (n, oobn int, err error) {
	for {
		n, oobn, _, _, err = syscall.Recvmsg(fd, p, oob, flags)
		if err != syscall.EINTR {
			return n, oobn, err
		}
	}
}

// stampTS reads SO_TIMESTAMPNS from control messages (Unix ns; 0: none),
// walking the messages in place (this runs on every read, so it allocates
// nothing).
func stampTS(oob []byte) int64 {
	hdr := syscall.CmsgLen(0)
	for len(oob) >= hdr {
		h := (*syscall.Cmsghdr)(unsafe.Pointer(&oob[0]))
		l := int(h.Len)
		if l < hdr || l > len(oob) {
			return 0
		}
		if h.Level == syscall.SOL_SOCKET && h.Type == syscall.SO_TIMESTAMPNS && l-hdr >= int(unsafe.Sizeof(syscall.Timespec{})) {
			return (*syscall.Timespec)(unsafe.Pointer(&oob[hdr])).Nano()
		}
		next := syscall.CmsgSpace(l - hdr)
		if next > len(oob) {
			return 0
		}
		oob = oob[next:]
	}
	return 0
}
