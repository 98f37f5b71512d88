package traces

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"bench/run/traces/tracetest"
)

// FuzzCheck: the checker reads any bytes without panicking, each problem
// an error. The seeds (cell subtrees bench wrote, the spec's example, junk)
// run in plain go test.
func FuzzCheck(f *testing.F) {
	cfg := testConfig(&testing.T{})
	b := newBuilder(NewTraceID(), cfg)
	var good []byte
	for _, r := range []func() []span{
		func() []span { return b.cell(retried()) }, func() []span { return b.cell(agentic()) },
	} {
		for _, s := range r() {
			good = appendSpan(good, b.tid.String(), &s)
		}
	}
	f.Add(good)
	f.Add([]byte(`{"trace_id":"t_abc123","span_id":"s_001","kind":"skill.execute","name":"juejin-publish","start_time":"2026-02-17T15:00:00Z","status":"ok","duration_ms":3420,"attributes":{"sop.level":"L1"}}`))
	f.Add([]byte("{}\n[]\nnull\n\"x\"\n"))
	f.Add([]byte(`{"trace_id":1,"span_id":{},"events":[{"timestamp":5}],"attributes":[],"duration_ms":"x"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		_, _ = tracetest.Check(bytes.NewReader(data))
	})
}

// FuzzParseFileName: any name parses or is refused; a name FileName made
// parses back.
func FuzzParseFileName(f *testing.F) {
	tid := NewTraceID()
	f.Add(FileName(time.Date(2026, 2, 17, 15, 0, 0, 0, time.UTC), tid))
	f.Add("2026-02-17T150000Z_juejin-publish_t_abc123.jsonl")
	f.Add("2026-02-17T150000Z_a_b_c_" + strings.Repeat("0", 32) + ".jsonl")
	f.Add("")
	f.Fuzz(func(t *testing.T, name string) {
		st, root, id, ok := ParseFileName(name)
		if !ok {
			return
		}
		if again := FileName(st, id); strings.HasSuffix(name, "_"+root+"_"+id.String()+".jsonl") && again != name && root == RootName && !strings.Contains(name, "/") {
			t.Errorf("%q parsed to %s %s %s, which names %q", name, st, root, id, again)
		}
	})
}
