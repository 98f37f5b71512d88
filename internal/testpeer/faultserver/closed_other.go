//go:build !unix

package faultserver

type closedPort struct {
	url string
	fd  int
}

func reserveClosedPort() *closedPort { return fallbackClosedPort() }

func (c *closedPort) release() {}
