package answers

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"bench/internal/record/results"
	"bench/internal/record/rundir"
	"bench/internal/testpeer/browsertest"
	"bench/report"
)

// writeScaleRun writes a run of models × prompts × reps cells with answers
// of about 600 bytes, different in every cell (nothing for the page to
// share), every tenth prompt agentic with three turns, and the summary.
func writeScaleRun(tb testing.TB, models, prompts, reps int) (string, *report.Summary) {
	tb.Helper()
	dir := tb.TempDir()
	w, err := results.Create(filepath.Join(dir, rundir.ResultsFile))
	if err != nil {
		tb.Fatal(err)
	}
	filler := strings.Repeat("The quick brown fox jumps over the lazy dog. ", 12)
	yes, no := true, false
	for m := range models {
		for p := range prompts {
			for r := range reps {
				rec := &results.Record{RecordType: results.RecordType, RunID: "scale", Provider: []string{"ollama", "ollama_openai", "openai"}[m%3],
					Model: fmt.Sprintf("model-%03d", m), PromptID: fmt.Sprintf("P%d", p), PromptName: fmt.Sprintf("prompt_%d", p), Repetition: r,
					AvailabilityStatus: "ok", Success: true, E2EMS: int64(100 + m + p), TTFTMS: ptr(int64(20 + m)), OutputTokens: ptr(120)}
				rec.ProviderType = rec.Provider
				rec.RawOutput = fmt.Sprintf("Answer of model %d to prompt %d, repetition %d. %s", m, p, r, filler)
				rec.RawOutputBytes = len(rec.RawOutput)
				rec.ObjectivePass = &yes
				if (m+p+r)%4 == 0 {
					rec.ObjectivePass, rec.Violation = &no, ptr("expected exactly 4 bullets, got 3")
				}
				if p%10 == 9 {
					rec.TurnDetails = []results.Turn{
						{Calls: []results.TurnCall{{Name: "get_weather", Arguments: []byte(`{"city":"Paris"}`), Result: `{"temp_c": 18}`}}},
						{Calls: []results.TurnCall{{Name: "convert_temperature", Arguments: []byte(`{"value":18,"to":"F"}`), Result: "18 C = 64.4 F"}}},
						{Text: "64.4 °F"},
					}
					rec.Turns = 3
				}
				if err := w.Write(rec); err != nil {
					tb.Fatal(err)
				}
			}
		}
	}
	if err := w.Close(); err != nil {
		tb.Fatal(err)
	}
	s, err := report.LoadEach(dir, nil)
	if err != nil {
		tb.Fatal(err)
	}
	return dir, s
}

// BenchmarkAnswersBuild100k is the Go side of answers.html for 100 models
// × 100 prompts × 10 repetitions: reading results.jsonl with its answers
// and writing the page. Metrics: size-MiB (answers.html).
//
//	go test ./report/answers -run '^$' -bench AnswersBuild100k -benchmem -benchtime 2x
func BenchmarkAnswersBuild100k(b *testing.B) {
	dir, s := writeScaleRun(b, 100, 100, 10)
	for b.Loop() {
		if err := Start(dir, s).Finish(); err != nil {
			b.Fatal(err)
		}
	}
	page, err := os.ReadFile(filepath.Join(dir, rundir.AnswersHTML))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(len(page))/(1<<20), "size-MiB")
	// Texts left out past the budget: none, at this scale.
	m := regexp.MustCompile(`"dropped":(\d+)`).FindSubmatch(page)
	if m == nil {
		b.Fatal("no dropped count in the page")
	}
	dropped, _ := strconv.Atoi(string(m[1]))
	b.ReportMetric(float64(dropped), "dropped-texts")
}

// BenchmarkAnswersLoad100k opens answers.html of 100,000 cells in headless
// Chromium, from the navigation to the first prompt drawn, then switches
// prompt. Metrics: render-ms (the page's performance.now() when the first
// prompt is drawn: reading and parsing the file, its JSON, indexing every
// cell, 100 cards), script-ms (the part of it the page's script took,
// JSON.parse included), switch-ms (picking another prompt: its 100 cards), wall-ms
// (navigation request to the test seeing the page drawn).
//
//	go test ./report/answers -run '^$' -bench AnswersLoad100k -benchtime 3x
func BenchmarkAnswersLoad100k(b *testing.B) {
	dir, s := writeScaleRun(b, 100, 100, 10)
	if err := Start(dir, s).Finish(); err != nil {
		b.Fatal(err)
	}
	br := browsertest.New(b)
	p := br.NewPage(b)
	url := browsertest.FileURL(filepath.Join(dir, rundir.AnswersHTML))
	var render, script, wall, switched float64
	n := 0
	for b.Loop() {
		start := time.Now()
		if err := p.Open(fmt.Sprintf("%s?load=%d", url, n), 2*time.Minute); err != nil {
			b.Fatal(err)
		}
		if err := p.WaitFor(`document.documentElement.dataset.rendered === "true"`, 2*time.Minute); err != nil {
			b.Fatal(err)
		}
		wall += float64(time.Since(start).Microseconds()) / 1000
		var st struct {
			Render float64 `json:"render"`
			Script float64 `json:"script"`
			Switch float64 `json:"switch"`
			Cards  int     `json:"cards"`
		}
		if err := p.Eval(`(() => { const t = performance.now(); window.benchAnswers.show("P57", 3);
			return {render: window.benchAnswers.renderMS, script: window.benchAnswers.scriptMS, switch: performance.now() - t, cards: document.querySelectorAll("#cards .card").length}; })()`, &st); err != nil {
			b.Fatal(err)
		}
		if st.Cards != 100 {
			b.Fatalf("%d cards for P57, want 100", st.Cards)
		}
		render += st.Render
		script += st.Script
		switched += st.Switch
		n++
	}
	if errs, err := p.Errors(); err != nil || len(errs) > 0 {
		b.Fatalf("console errors (%v):\n%s", err, strings.Join(errs, "\n"))
	}
	b.ReportMetric(render/float64(n), "render-ms")
	b.ReportMetric(script/float64(n), "script-ms")
	b.ReportMetric(switched/float64(n), "switch-ms")
	b.ReportMetric(wall/float64(n), "wall-ms")
}
