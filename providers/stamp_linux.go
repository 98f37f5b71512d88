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

// maxStampAge bounds a kernel stamp's age; an older one (a clock step) is
// not believed and the read is stamped now.
const maxStampAge = time.Minute

// readStamped reads through recvmsg, as net.Conn's Read would (waiting on
// the runtime's poller, retrying interrupted calls), and returns how long
// ago the kernel received the bytes (0 when it did not say).
func (c *stampedConn) readStamped(p []byte) (n int, age time.Duration, err error) {
	if len(p) == 0 {
		return 0, 0, nil
	}
	var oobn int
	var serr error
	rerr := c.raw.Read(func(fd uintptr) bool {
		for {
			n, oobn, _, _, serr = syscall.Recvmsg(int(fd), p, c.oob, 0)
			if serr != syscall.EINTR {
				break
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
	return n, stampAge(c.oob[:oobn]), nil
}

// stampAge reads SO_TIMESTAMPNS from control messages as an age, walking
// the messages in place (this runs on every read, so it allocates nothing).
func stampAge(oob []byte) time.Duration {
	hdr := syscall.CmsgLen(0)
	for len(oob) >= hdr {
		h := (*syscall.Cmsghdr)(unsafe.Pointer(&oob[0]))
		l := int(h.Len)
		if l < hdr || l > len(oob) {
			return 0
		}
		if h.Level == syscall.SOL_SOCKET && h.Type == syscall.SO_TIMESTAMPNS && l-hdr >= int(unsafe.Sizeof(syscall.Timespec{})) {
			ts := (*syscall.Timespec)(unsafe.Pointer(&oob[hdr]))
			age := time.Duration(time.Now().UnixNano() - ts.Nano())
			if age < 0 || age > maxStampAge {
				return 0
			}
			return age
		}
		next := syscall.CmsgSpace(l - hdr)
		if next > len(oob) {
			return 0
		}
		oob = oob[next:]
	}
	return 0
}
