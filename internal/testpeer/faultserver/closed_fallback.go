package faultserver

import (
	"fmt"
	"net"
)

// fallbackClosedPort returns a loopback port that was free a moment ago:
// it listens and closes at once. Another process could take the port before
// the test connects; reserveClosedPort avoids that where it can.
func fallbackClosedPort() *closedPort {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		// No loopback at all: a port in the reserved range is refused too.
		return &closedPort{url: "http://127.0.0.1:1", fd: -1}
	}
	port := l.Addr().(*net.TCPAddr).Port
	_ = l.Close()
	return &closedPort{url: fmt.Sprintf("http://127.0.0.1:%d", port), fd: -1}
}
