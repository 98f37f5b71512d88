package results

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

const (
	goodA = `{"record_type":"result","run_id":"r1","provider":"p","model":"m","thinking_level":null,"prompt_id":"P0","availability_status":"ok","success":true,"raw_output":"hi"}`
	goodB = `{"record_type":"result","run_id":"r1","provider":"p","model":"m2","thinking_level":"low","prompt_id":"P1","availability_status":"error","ttft_ms":12}`
)

func readAll(t *testing.T, in string) ([]Record, []int, *Reader) {
	t.Helper()
	rd := NewReader(strings.NewReader(in))
	var recs []Record
	var lines []int
	for {
		var rec Record
		line, err := rd.Next(&rec)
		if errors.Is(err, io.EOF) {
			return recs, lines, rd
		}
		if err != nil {
			t.Fatalf("Next: %v", err)
		}
		recs = append(recs, rec)
		lines = append(lines, line)
	}
}

func TestReaderSkipsBadLines(t *testing.T) {
	tests := []struct {
		name      string
		in        string
		wantLines []int
		wantProbs []Problem // Reason checked by substring
	}{
		{"clean", goodA + "\n" + goodB + "\n", []int{1, 2}, nil},
		{"last line without newline is fine when whole", goodA + "\n" + goodB, []int{1, 2}, nil},
		{"truncated last line", goodA + "\n" + goodB[:40], []int{1},
			[]Problem{{Line: 2, Truncated: true, Reason: "unexpected end of JSON"}}},
		{"malformed middle line", goodA + "\n{not json\n" + goodB + "\n", []int{1, 3},
			[]Problem{{Line: 2, Reason: "not a result record"}}},
		{"malformed last line with newline is not truncation", goodA + "\n{\"record_type\":\n", []int{1},
			[]Problem{{Line: 2, Reason: "not a result record"}}},
		{"blank lines are ignored", "\n" + goodA + "\n  \n" + goodB + "\n", []int{2, 4}, nil},
		{"wrong record type", `{"record_type":"run_end","provider":"p","model":"m","availability_status":"ok"}` + "\n" + goodA + "\n", []int{2},
			[]Problem{{Line: 1, Reason: `record_type is "run_end"`}}},
		{"missing model", `{"record_type":"result","provider":"p","availability_status":"ok"}` + "\n", nil,
			[]Problem{{Line: 1, Reason: "model is empty"}}},
		{"json array", "[1,2]\n" + goodA, []int{2}, []Problem{{Line: 1, Reason: "cannot unmarshal array"}}},
		{"empty input", "", nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, lines, rd := readAll(t, tt.in)
			if !equalInts(lines, tt.wantLines) {
				t.Errorf("lines = %v, want %v", lines, tt.wantLines)
			}
			got := rd.Problems()
			if len(got) != len(tt.wantProbs) || rd.ProblemCount() != len(tt.wantProbs) {
				t.Fatalf("problems = %+v, want %+v", got, tt.wantProbs)
			}
			for i, w := range tt.wantProbs {
				g := got[i]
				if g.Line != w.Line || g.Truncated != w.Truncated || !strings.Contains(g.Reason, w.Reason) {
					t.Errorf("problem %d = %+v, want %+v", i, g, w)
				}
			}
		})
	}
}

func TestReaderDoesNotLeakFieldsBetweenRecords(t *testing.T) {
	recs, _, _ := readAll(t, goodB+"\n"+goodA+"\n")
	if len(recs) != 2 {
		t.Fatalf("got %d records", len(recs))
	}
	// Next zeroes the record, so goodA (no ttft_ms) must not inherit goodB's.
	var rd = NewReader(strings.NewReader(goodB + "\n" + goodA + "\n"))
	var rec Record
	if _, err := rd.Next(&rec); err != nil || rec.TTFTMS == nil || *rec.TTFTMS != 12 {
		t.Fatalf("first record: %v %+v", err, rec.TTFTMS)
	}
	if _, err := rd.Next(&rec); err != nil || rec.TTFTMS != nil || rec.ThinkingLevel != nil {
		t.Fatalf("second record kept fields of the first: ttft=%v thinking=%v err=%v", rec.TTFTMS, rec.ThinkingLevel, err)
	}
}

func TestReaderLongLines(t *testing.T) {
	// A line bigger than bufio's buffer is still read whole.
	big := strings.Replace(goodA, `"hi"`, `"`+strings.Repeat("x", 3<<20)+`"`, 1)
	recs, lines, rd := readAll(t, big+"\n"+goodB+"\n")
	if len(recs) != 2 || rd.ProblemCount() != 0 || lines[1] != 2 {
		t.Fatalf("records=%d problems=%v lines=%v", len(recs), rd.Problems(), lines)
	}
	if len(recs[0].RawOutput) != 3<<20 {
		t.Fatalf("raw_output length %d", len(recs[0].RawOutput))
	}
}

func TestReaderTooLongLineIsSkipped(t *testing.T) {
	huge := strings.Repeat("x", MaxLineBytes+10)
	for _, tail := range []string{"\n" + goodA + "\n", ""} {
		_, lines, rd := readAll(t, huge+tail)
		probs := rd.Problems()
		if len(probs) != 1 || probs[0].Line != 1 || !strings.Contains(probs[0].Reason, "longer than") {
			t.Fatalf("problems = %+v", probs)
		}
		if tail != "" && (len(lines) != 1 || lines[0] != 2) {
			t.Fatalf("lines = %v", lines)
		}
	}
}

func TestReadFileRoundTripsWriter(t *testing.T) {
	path := filepath.Join(t.TempDir(), "results.jsonl")
	w, err := Create(path)
	if err != nil {
		t.Fatal(err)
	}
	low := "low"
	for i, m := range []string{"a", "b", "c"} {
		if err := w.Write(&Record{RecordType: RecordType, Provider: "p", Model: m, ThinkingLevel: &low, Repetition: i, AvailabilityStatus: "ok", RawOutput: "x\ny"}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	// Simulate a kill in the middle of a fourth line.
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"record_type":"result","provider":"p","mod`)
	f.Close()

	var models []string
	probs, n, err := ReadFile(path, false, func(line int, rec *Record) error {
		models = append(models, rec.Model)
		if rec.ThinkingLevel == nil || *rec.ThinkingLevel != "low" || rec.RawOutput != "x\ny" || rec.Repetition != line-1 {
			t.Errorf("line %d decoded as %+v", line, rec)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(models, ",") != "a,b,c" || n != 1 || !probs[0].Truncated || probs[0].Line != 4 {
		t.Fatalf("models=%v problems=%+v", models, probs)
	}
	if !strings.Contains(probs[0].String(), "line 4: truncated") {
		t.Errorf("String() = %q", probs[0].String())
	}
	if _, _, err := ReadFile(filepath.Join(t.TempDir(), "missing.jsonl"), false, nil); err == nil {
		t.Error("missing file: no error")
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// FuzzReader feeds arbitrary bytes: the reader must not panic, line numbers
// must increase, and every line must be a record, a problem or blank.
func FuzzReader(f *testing.F) {
	f.Add([]byte(goodA + "\n" + goodB + "\n"))
	f.Add([]byte(goodA + "\n" + goodB[:30]))
	f.Add([]byte("{\n}\n[]\nnull\n\"x\"\n"))
	f.Add([]byte("\r\n" + goodA + "\r\n"))
	f.Add([]byte(`{"record_type":"result","provider":"p","model":"m","availability_status":"ok","tool_calls":null,"ttft_ms":1e400}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		rd := NewReader(bytes.NewReader(data))
		rd.Detail = Detail(len(data) % int(nDetails)) // every detail
		last, n := 0, 0
		for {
			var rec Record
			line, err := rd.Next(&rec)
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatalf("I/O error from a bytes reader: %v", err)
			}
			if line <= last {
				t.Fatalf("line %d after %d", line, last)
			}
			if rec.RecordType != RecordType || rec.Provider == "" || rec.Model == "" {
				t.Fatalf("accepted an unusable record: %+v", rec)
			}
			last = line
			n++
		}
		lines := bytes.Count(data, []byte("\n"))
		if len(data) > 0 && data[len(data)-1] != '\n' {
			lines++
		}
		if rd.line != lines {
			t.Fatalf("read %d lines, input has %d", rd.line, lines)
		}
		if n+rd.ProblemCount() > lines {
			t.Fatalf("%d records + %d problems > %d lines", n, rd.ProblemCount(), lines)
		}
		for _, p := range rd.Problems() {
			if p.Truncated && p.Line != lines {
				t.Fatalf("truncated problem on line %d of %d", p.Line, lines)
			}
		}
	})
}

func TestReaderDetail(t *testing.T) {
	line := `{"record_type":"result","provider":"p","model":"m","availability_status":"ok","raw_output":"big","reasoning":"r","parsed_output":{"a":1},"tool_call_details":[{"name":"free"}],"provider_metrics":{"x":1},"tool_calls":["free"],"ttft_ms":5,"timeline":[{"event":"end","at_ms":1}],"turn_details":[{"text":"t"}]}`
	for _, cs := range []struct {
		detail Detail
		empty  []string // the fields it leaves out
	}{
		{Full, nil},
		{Aggregates, []string{"raw_output", "reasoning", "parsed_output", "tool_call_details", "provider_metrics"}},
		{Answers, []string{"timeline", "reasoning", "parsed_output", "provider_metrics"}},
	} {
		for _, strayKey := range []bool{false, true} { // the fast decoder, then encoding/json
			in := line
			if strayKey {
				in = `{"Provider":"p",` + line[1:]
			}
			rd := NewReader(strings.NewReader(in + "\n"))
			rd.Detail = cs.detail
			var rec Record
			if _, err := rd.Next(&rec); err != nil {
				t.Fatal(err)
			}
			if rec.TTFTMS == nil || *rec.TTFTMS != 5 || len(rec.ToolCalls) != 1 || rec.Provider != "p" {
				t.Errorf("detail %d: kept fields lost: %+v", cs.detail, rec)
			}
			present := map[string]bool{"raw_output": rec.RawOutput != "", "reasoning": rec.Reasoning != "", "parsed_output": rec.ParsedOutput != nil,
				"tool_call_details": rec.ToolCallDetails != nil, "provider_metrics": rec.ProviderMetrics != nil, "timeline": rec.Timeline != nil,
				"turn_details": rec.TurnDetails != nil}
			for f, there := range present {
				if want := !slices.Contains(cs.empty, f); there != want {
					t.Errorf("detail %d (stray key %v): %s present=%v, want %v", cs.detail, strayKey, f, there, want)
				}
			}
		}
	}
}

// sameAsSequential checks that the parallel reading of Scan hands fn the
// same records, in the same order, and finds the same problems as Next.
func sameAsSequential(t *testing.T, data []byte, workers int) {
	t.Helper()
	type got struct {
		lines    []string
		problems []Problem
		n        int
	}
	// The whole record, taken while fn has it (a borrowing scan's texts
	// are valid only then).
	show := func(line int, rec *Record) string {
		b, err := json.Marshal(rec)
		if err != nil {
			t.Fatal(err)
		}
		return fmt.Sprintf("%d:%s", line, b)
	}
	var seq got
	rd := NewReader(bytes.NewReader(data))
	for {
		var rec Record
		line, err := rd.Next(&rec)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		seq.lines = append(seq.lines, show(line, &rec))
	}
	seq.problems, seq.n = rd.Problems(), rd.ProblemCount()
	for _, borrow := range []bool{false, true} {
		var par got
		rd = NewReader(bytes.NewReader(data))
		err := rd.scan(workers, ScanOptions{Borrow: borrow}, func(line int, rec *Record) error {
			par.lines = append(par.lines, show(line, rec))
			return nil
		})
		if err != nil {
			t.Fatalf("workers=%d: %v", workers, err)
		}
		par.problems, par.n = rd.Problems(), rd.ProblemCount()
		if !reflect.DeepEqual(seq, par) {
			t.Fatalf("parallel read (borrowing %v) differs:\nsequential %+v\nparallel   %+v", borrow, seq, par)
		}
	}
}

func TestParallelReadMatchesSequential(t *testing.T) {
	var b bytes.Buffer
	for i := 0; i < 20000; i++ { // ~6 MiB: several batches
		switch {
		case i%997 == 0:
			b.WriteString("{not json\n")
		case i%1499 == 0:
			b.WriteString("\n")
		case i%101 == 0:
			// Every field, every pointer and slice set (a borrowing
			// scan's come from its batch's pools).
			rec := filled(reflect.TypeFor[Record](), i).Interface().(Record)
			rec.RecordType = RecordType
			b.Write(encodeLine(t, &rec))
			b.WriteString("\n")
		case i%2003 == 0:
			b.WriteString(`{"record_type":"summary","provider":"p","model":"m","availability_status":"ok"}` + "\n")
		default:
			// Plain answers, escaped ones (a borrowing scan unquotes them
			// into its arena), and a few longer than a batch.
			raw := strings.Repeat("x", i%300)
			switch {
			case i%7 == 0:
				raw += "\n\"é\u0001\u2028" + string([]byte{0xff}) + "\\"
			case i%4999 == 0:
				raw = strings.Repeat("long line\n", 70_000)
			}
			q, _ := json.Marshal(raw)
			fmt.Fprintf(&b, `{"record_type":"result","provider":"p%d","model":"m","prompt_id":"P%d","availability_status":"ok","raw_output":%s,"reasoning":%s}`+"\n", i%3, i, q, q)
		}
	}
	b.WriteString(goodA[:40]) // killed mid-line
	sameAsSequential(t, b.Bytes(), 4)

	// fn's error stops the calls and is returned.
	rd := NewReader(bytes.NewReader(b.Bytes()))
	calls := 0
	stop := errors.New("stop")
	if err := rd.scan(3, ScanOptions{}, func(int, *Record) error { calls++; return stop }); err != stop || calls != 1 {
		t.Errorf("err %v after %d calls, want stop after 1", err, calls)
	}
}

func FuzzParallelRead(f *testing.F) {
	f.Add([]byte(goodA + "\n" + goodB + "\n"))
	f.Add([]byte(goodA + "\n\n{\n" + goodB[:30]))
	f.Fuzz(func(t *testing.T, data []byte) { sameAsSequential(t, data, 3) })
}
