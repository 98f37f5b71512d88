package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"

	"bench/internal/exitcode"
	"bench/report/view"
)

const viewUsage = `usage: bench view [--addr HOST:PORT] DIR...

Serves a local web page over the run directories named (each a run
directory, or a directory of them such as runs/): every run found, newest
first, with its time, config, setup, gate result and headline figures (a
run being written shown as in progress; a killed, corrupt or foreign one
as what it is); each run's report.html, answers.html, gate result and
traces as they are on disk; a run's cells filtered by group, prompt,
verdict, failure type and text; and any two runs compared with bench
compare's verdicts. Read-only: it writes nothing and takes no lock.
Ctrl-C stops it.

Flags:
`

// viewCmd is `bench view DIR...`.
func viewCmd(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("bench view", flag.ContinueOnError)
	addr := fs.String("addr", "127.0.0.1:8484", "the `address` to serve on (port 0: a free one); a non-loopback one serves the runs to the network")
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stdout, viewUsage); printFlags(fs, stdout) }
	pos, err := parseInterleaved(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		return exitcode.OK
	} else if err != nil {
		return exitcode.Usage
	}
	if len(pos) == 0 {
		fmt.Fprintln(stderr, "bench view: want run directories or a directory of them (runs/); see 'bench view --help'")
		return exitcode.Usage
	}
	srv, err := view.New(pos)
	if err == nil {
		var ln interface{ Close() error }
		if ln, err = serveView(srv, *addr, stdout, stderr); err == nil {
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			<-ctx.Done()
			ln.Close()
			return exitcode.OK
		}
	}
	fmt.Fprintf(stderr, "bench view: %v\n", err)
	return exitcode.Usage
}

// serveView listens on addr and serves in the background, saying where.
func serveView(srv *view.Server, addr string, stdout, stderr io.Writer) (interface{ Close() error }, error) {
	ln, err := srv.Listen(addr)
	if err != nil {
		return nil, err
	}
	if !view.IsLoopback(ln.Addr().String()) {
		fmt.Fprintf(stderr, "bench view: warning: %s is not a loopback address: anyone who reaches it reads these runs\n", ln.Addr())
	}
	fmt.Fprintf(stdout, "bench view: serving on http://%s/ (Ctrl-C stops)\n", ln.Addr())
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) && !errors.Is(err, net.ErrClosed) {
			fmt.Fprintf(stderr, "bench view: %v\n", err)
		}
	}()
	return ln, nil
}
