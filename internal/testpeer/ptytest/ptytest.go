// Package ptytest is a pseudo-terminal for the tests of what bench draws on
// a terminal (the progress bar): the display under test writes to TTY, and
// the test reads what a terminal would show, escape codes removed.
//
// Layer: test peers (tests only; production code never imports it).
package ptytest

import (
	"bytes"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"
)

// Terminal is a 120×40 pseudo-terminal whose output is collected as it
// comes.
type Terminal struct {
	// TTY is the terminal's side a program writes to.
	TTY *os.File
	mu  sync.Mutex
	out bytes.Buffer
}

// Open opens a terminal, closed when the test ends; the test is skipped
// where the system has none.
func Open(t *testing.T) *Terminal {
	t.Helper()
	master, tty, err := pty.Open()
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	if err := pty.Setsize(master, &pty.Winsize{Rows: 40, Cols: 120}); err != nil {
		t.Fatal(err)
	}
	term := &Terminal{TTY: tty}
	done := make(chan struct{})
	go func() {
		defer close(done)
		buf := make([]byte, 4096)
		for {
			n, err := master.Read(buf)
			term.mu.Lock()
			term.out.Write(buf[:n])
			term.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() { tty.Close(); master.Close(); <-done })
	return term
}

var ansi = regexp.MustCompile(`\x1b\[[0-9;]*[A-Za-z]`)

// WaitFor waits until the terminal has shown want (escape codes removed),
// failing after a generous limit that only a hung display reaches.
func (term *Terminal) WaitFor(t *testing.T, want string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if strings.Contains(term.Text(), want) {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("the terminal never showed %q; it shows:\n%s", want, term.Text())
}

// Text is everything shown so far, escape codes and carriage returns
// removed.
func (term *Terminal) Text() string {
	term.mu.Lock()
	defer term.mu.Unlock()
	return strings.ReplaceAll(ansi.ReplaceAllString(term.out.String(), ""), "\r", "")
}
