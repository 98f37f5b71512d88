package mcpserve

import (
	"bufio"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// A line that is not a JSON-RPC message gets its JSON-RPC error (-32700
// not JSON, -32600 not a message), and the session goes on: the server is
// the real process a CLI starts (this test binary as `bench mcp-serve`),
// fed one line at a time, and exits 0 when stdin closes.
func TestServeAnswersBadLinesAndGoesOn(t *testing.T) {
	dir := t.TempDir()
	task := filepath.Join(dir, "task.yaml")
	os.WriteFile(task, []byte(taskYAML), 0o644)
	cmd := exec.Command(os.Args[0], "mcp-serve", task, filepath.Join(dir, "calls.jsonl"))
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	out := bufio.NewReader(stdout)
	type reply struct {
		ID     json.RawMessage `json:"id"`
		Result json.RawMessage `json:"result"`
		Error  *struct {
			Code int `json:"code"`
		} `json:"error"`
	}
	exchange := func(line string) reply {
		t.Helper()
		if _, err := io.WriteString(stdin, line+"\n"); err != nil {
			t.Fatalf("write %q: %v (stderr %s)", line, err, stderr.String())
		}
		b, err := out.ReadString('\n')
		if err != nil {
			t.Fatalf("after %.60q: %v (stderr %s)", line, err, stderr.String())
		}
		var r reply
		if err := json.Unmarshal([]byte(b), &r); err != nil {
			t.Fatalf("reply %q: %v", b, err)
		}
		return r
	}
	wantErr := func(line string, code int, id string) {
		t.Helper()
		if r := exchange(line); r.Error == nil || r.Error.Code != code || string(r.ID) != id {
			t.Errorf("%.60q: reply id %s error %+v, want code %d id %s", line, r.ID, r.Error, code, id)
		}
	}
	wantErr("this is not json", -32700, "null")
	wantErr(`{"jsonrpc":"2.0","id":7,"method":"tools/list"`, -32700, "null")
	wantErr(strings.Repeat("x", maxFrameBytes+10), -32700, "null")
	if r := exchange(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`); r.Error != nil || len(r.Result) == 0 {
		t.Fatalf("initialize: %+v", r)
	}
	io.WriteString(stdin, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n")
	wantErr(`{"foo":1}`, -32600, "null")
	wantErr(`{"jsonrpc":"1.0","id":"a","method":"tools/list"}`, -32600, `"a"`)
	wantErr(`[]`, -32600, "null")
	wantErr("\x1b[2J\x00", -32700, "null")
	r := exchange(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"flaky_lookup","arguments":{}}}`)
	if r.Error != nil || string(r.ID) != "2" || !strings.Contains(string(r.Result), "503 upstream timeout") {
		t.Errorf("a call after the bad lines: %+v %s", r, r.Result)
	}
	stdin.Close()
	if err := cmd.Wait(); err != nil {
		t.Errorf("exit: %v (stderr %s)", err, stderr.String())
	}
}
