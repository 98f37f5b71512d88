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

// delayAcks: without the kernel's receive times there is nothing for
// merged segments to spoil; ACKs are left alone.
func (c *stampedConn) delayAcks(bool) {}
