// Package apartserver serves a fixed answer from a process of its own: the
// test binary started again, so a benchmark that polls it over loopback
// counts its own CPU alone in getrusage (an in-process httptest server's
// share would be in the figure).
//
// A test binary that uses it calls Serve first thing in its TestMain: in
// the child it serves and never returns; in the parent it returns at once.
//
// Layer: test peers (tests only; production code never imports it).
package apartserver

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
)

const (
	envFile = "BENCH_APART_SERVE_FILE"
	envType = "BENCH_APART_SERVE_TYPE"
)

// Serve is for TestMain: when the process was started by Start, it serves
// the file named there on every path, with its content type, printing its
// address on stdout, until it is killed. Otherwise it returns.
func Serve() {
	path := os.Getenv(envFile)
	if path == "" {
		return
	}
	body, err := os.ReadFile(path)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println(ln.Addr().String())
	typ := os.Getenv(envType)
	http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", typ)
		w.Write(body)
	}))
	os.Exit(0)
}

// Start runs the test binary again as a server of body with content type
// typ and returns its base URL; the process is killed when tb ends.
func Start(tb testing.TB, body, typ string) string {
	tb.Helper()
	f, err := os.CreateTemp(tb.TempDir(), "body")
	if err != nil {
		tb.Fatal(err)
	}
	f.WriteString(body)
	f.Close()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), envFile+"="+f.Name(), envType+"="+typ)
	out, err := cmd.StdoutPipe()
	if err != nil {
		tb.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		tb.Fatalf("the server process said nothing: %v", err)
	}
	return "http://" + strings.TrimSpace(line)
}
