//go:build unix

package faultserver

import (
	"fmt"
	"syscall"
)

// closedPort is a loopback TCP port that is bound but not listening: the
// kernel refuses connections to it, and no one else can bind it while it
// is held.
type closedPort struct {
	url string
	fd  int
}

// reserveClosedPort binds a socket to a free loopback port without
// listening. If that fails it falls back to a port that was free a moment
// ago.
func reserveClosedPort() *closedPort {
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
	if err != nil {
		return fallbackClosedPort()
	}
	syscall.CloseOnExec(fd)
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		syscall.Close(fd)
		return fallbackClosedPort()
	}
	sa, err := syscall.Getsockname(fd)
	in, ok := sa.(*syscall.SockaddrInet4)
	if err != nil || !ok {
		syscall.Close(fd)
		return fallbackClosedPort()
	}
	return &closedPort{url: fmt.Sprintf("http://127.0.0.1:%d", in.Port), fd: fd}
}

func (c *closedPort) release() {
	if c.fd >= 0 {
		syscall.Close(c.fd)
		c.fd = -1
	}
}
