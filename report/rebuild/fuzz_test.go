package rebuild

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"bench/internal/record/rundir"
)

// FuzzReport is bench report over any results.jsonl: every report is
// written (bad lines are warnings, never the end of the report), and
// summary.json, tiers.json and junit.xml are well-formed. Seeded with the
// lines of issue 21: rates whose sum is +Inf, a cell recorded twice, a
// 250-character model name, many distinct models and prompts, a run id
// with a newline, a half-written last line.
func FuzzReport(f *testing.F) {
	line := func(model, prompt, extra string) string {
		return `{"record_type":"result","run_id":"r","provider":"p","provider_type":"ollama","model":"` + model + `","prompt_id":"` + prompt +
			`","repetition":0,"availability_status":"ok","success":true,"e2e_ms":40,"ttft_ms":12,"objective_pass":true` + extra + "}\n"
	}
	f.Add([]byte(line("m", "P0", `,"tokens_per_s":1e308`) + line("m", "P1", `,"tokens_per_s":1e308`)))
	f.Add([]byte(line("m", "P0", "") + line("m", "P0", `,"objective_pass":false`)))
	f.Add([]byte(line(strings.Repeat("m", 250), "P0", "")))
	var many strings.Builder
	for i := range 40 {
		many.WriteString(line("m"+string(rune('a'+i%26))+string(rune('a'+i/26)), "P"+string(rune('a'+i%7)), ""))
	}
	f.Add([]byte(many.String()))
	f.Add([]byte(strings.Replace(line("m", "P0", ""), `"run_id":"r"`, `"run_id":"a\nb"`, 1)))
	f.Add([]byte(line("m", "P0", "") + `{"record_type":"result","provider":"p`))
	f.Add([]byte(line("m", "P0", `,"availability_status":"skipped_unavailable","failure_type":"connection_refused","e2e_ms":-9223372036854775808,"started_at_ms":-1,"ended_at_ms":9223372036854775807`)))
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		if err := os.WriteFile(rundir.Path(dir, rundir.ResultsFile), data, 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := All(dir, Options{Warn: io.Discard}); err != nil {
			t.Fatalf("bench report failed on its input: %v", err)
		}
		for _, name := range []string{rundir.SummaryJSON, rundir.TiersFile} {
			b, err := os.ReadFile(rundir.Path(dir, name))
			if err != nil || !json.Valid(b) {
				t.Fatalf("%s: %v, valid JSON %v", name, err, json.Valid(b))
			}
		}
		b, err := os.ReadFile(rundir.Path(dir, rundir.JUnitFile))
		if err != nil {
			t.Fatal(err)
		}
		dec := xml.NewDecoder(bytes.NewReader(b))
		for {
			if _, err := dec.Token(); err == io.EOF {
				break
			} else if err != nil {
				t.Fatalf("junit.xml: %v", err)
			}
		}
		if st, err := os.Stat(filepath.Join(dir, rundir.ReportHTML)); err != nil || st.Size() == 0 {
			t.Fatalf("report.html: %v", err)
		}
	})
}
