package session

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"bench/internal/exitcode"
)

// signals is how Ctrl-C reaches the run: the first closes drain (no new
// cells), the second cancels ctx (cells in flight are aborted).
type signals struct {
	ctx   context.Context
	drain chan struct{}
	stop  func()
}

// catchSignals takes SIGINT and SIGTERM from the process until stop. The
// notes go to log (above a live bar). After the second signal the process
// exits with exitcode.Interrupted within 2 s, whatever a stuck cell does.
func catchSignals(log io.Writer) *signals {
	ctx, cancel := context.WithCancel(context.Background())
	s := &signals{ctx: ctx, drain: make(chan struct{})}
	ch := make(chan os.Signal, 2)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	s.stop = func() { signal.Stop(ch); cancel() }
	go func() {
		n := 0
		for range ch {
			n++
			if n == 1 {
				close(s.drain)
				fmt.Fprintln(log, "\nbench: stopping: no new cells; waiting for the ones in flight (Ctrl-C again to abort)")
				continue
			}
			fmt.Fprintln(log, "\nbench: aborting")
			cancel()
			// Cancelled cells end within moments; do not wait on a stuck one.
			time.AfterFunc(2*time.Second, func() { os.Exit(exitcode.Interrupted) })
		}
	}()
	return s
}
