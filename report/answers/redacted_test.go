package answers

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"bench/internal/record/results"
	"bench/internal/record/rundir"
	"bench/internal/testpeer/browsertest"
	"bench/report"
)

// An answer bench altered says so where it is shown, and one only the
// scrub shortened is not labelled as cut at max_output_bytes (issue 31,
// item 14): its raw_output_bytes, the answer's length as it came, is
// more than the answer kept, and that is no cut. One max_output_bytes
// did cut still says so, redacted or not.
func TestRedactedAnswerIsMarkedNotCut(t *testing.T) {
	dir := t.TempDir()
	var buf bytes.Buffer
	for _, r := range []results.Record{
		// "the key is sk-...48 bytes..." came as 61 bytes, kept as 24.
		{PromptID: "R", RawOutput: "the key is [redacted].", RawOutputBytes: 61, RawOutputRedacted: true},
		{PromptID: "C", RawOutput: strings.Repeat("x", 100) + " [redacted]", RawOutputBytes: 5000, RawOutputTruncated: true, RawOutputRedacted: true},
		{PromptID: "P", RawOutput: "plain answer", RawOutputBytes: 12},
	} {
		r.RecordType, r.RunID, r.Provider, r.ProviderType, r.Model = "result", "rx", "ollama", "ollama", "demo"
		r.AvailabilityStatus, r.Success, r.PromptName = "ok", true, r.PromptID
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		buf.Write(append(b, '\n'))
	}
	os.WriteFile(filepath.Join(dir, rundir.ResultsFile), buf.Bytes(), 0o644)
	s, err := report.LoadEach(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := Start(dir, s).Finish(); err != nil {
		t.Fatal(err)
	}
	b := browsertest.New(t)
	p := b.NewPage(t)
	if err := p.Load(filepath.Join(dir, rundir.AnswersHTML)); err != nil {
		t.Fatal(err)
	}
	notes := func(prompt string) string {
		cards := show(t, p, prompt, 0)
		if len(cards) != 1 {
			t.Fatalf("%s: %d cards", prompt, len(cards))
		}
		return strings.Join(cards[0].Cut, " | ")
	}
	if n := notes("R"); !strings.Contains(n, "bench replaced a secret in this answer with [redacted]") || strings.Contains(n, "max_output_bytes") {
		t.Errorf("an answer only the scrub shortened: notes %q", n)
	}
	if n := notes("C"); !strings.Contains(n, "keeps 111 of its 5000 bytes (max_output_bytes)") || !strings.Contains(n, "bench replaced a secret") {
		t.Errorf("an answer cut and redacted: notes %q", n)
	}
	if n := notes("P"); n != "" {
		t.Errorf("a plain answer: notes %q", n)
	}
}
