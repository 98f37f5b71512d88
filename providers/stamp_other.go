//go:build !linux

package providers

import (
	"net"
	"syscall"
	"time"
)

// kernelStamps: receive timestamps are read on Linux only; elsewhere a
// read is stamped when it returns.
func kernelStamps(net.Conn) (syscall.RawConn, []byte) { return nil, nil }

func (c *stampedConn) readStamped(p []byte) (int, time.Duration, error) {
	n, err := c.Conn.Read(p)
	return n, 0, err
}
