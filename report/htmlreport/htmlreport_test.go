package htmlreport

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html/template"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"bench/internal/record/results"
	"bench/internal/record/rundir"
	"bench/report"
)

func loadFixture(t *testing.T, f fixture) (string, *Data) {
	t.Helper()
	dir := t.TempDir()
	f.write(t, dir)
	d, err := load(dir)
	if err != nil {
		t.Fatal(err)
	}
	return dir, d
}

// TestDistsAreSummaryPercentiles checks the plotted distributions are over
// the same cells as summary.json's statistics: their p50/p95/p99 are
// summary.json's to the last decimal.
func TestDistsAreSummaryPercentiles(t *testing.T) {
	_, d := loadFixture(t, realisticFixture())
	colds := 0
	for i, g := range d.Summary.Groups {
		gd := d.Groups[i]
		for _, c := range []struct {
			name string
			dist Dist
			st   report.Stats
		}{{"ttft", gd.TTFT, g.TTFTMS}, {"e2e", gd.E2E, g.LatencyMS}, {"tps", gd.TokensPerS, g.TokensPerS}} {
			if c.st.P50 == nil {
				if c.dist.N != 0 || c.dist.Q != nil {
					t.Errorf("%s %s: summary has no values, dist has %d", g.Label(), c.name, c.dist.N)
				}
				continue
			}
			if len(c.dist.Q) != 101 || c.dist.Q[50] != *c.st.P50 || c.dist.Q[95] != *c.st.P95 || c.dist.Q[99] != *c.st.P99 {
				t.Errorf("%s %s: q50/95/99 %v %v %v, summary %v %v %v", g.Label(), c.name,
					c.dist.Q[50], c.dist.Q[95], c.dist.Q[99], *c.st.P50, *c.st.P95, *c.st.P99)
			}
		}
		// The fixture's only cold starts are successes.
		if gd.E2E.N != g.NSuccess-g.NColdStart {
			t.Errorf("%s: %d e2e samples, %d successes of which %d cold starts", g.Label(), gd.E2E.N, g.NSuccess, g.NColdStart)
		}
		colds += g.NColdStart
	}
	if colds == 0 {
		t.Error("the fixture has no cold start to leave out")
	}
}

func render(t *testing.T, d *Data) string {
	t.Helper()
	var b bytes.Buffer
	if err := Write(&b, d); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestReportIsSelfContainedAndEscaped checks the file loads nothing (no
// src/href out of the page, no link or import) and that model text, which
// holds HTML, reaches the page only escaped.
func TestReportIsSelfContainedAndEscaped(t *testing.T) {
	_, d := loadFixture(t, realisticFixture())
	html := render(t, d)
	// Links go to the page's own anchors, or to answers.html beside it
	// (opened on a click, never loaded with the page).
	for _, m := range regexp.MustCompile(`(?i)(src|href)\s*=\s*["']?([^"'\s>]*)`).FindAllStringSubmatch(html, -1) {
		if v := m[2]; !strings.HasPrefix(v, "#") && v != rundir.AnswersHTML && !strings.HasPrefix(v, rundir.AnswersHTML+"#") {
			t.Errorf("report.html points outside itself: %s", m[0])
		}
	}
	for _, bad := range []string{"<link", "@import", "<script>window.pwned", "<b>not bold</b>"} {
		if strings.Contains(html, bad) {
			t.Errorf("report.html contains %q", bad)
		}
	}
	for _, want := range []string{"&lt;script&gt;window.pwned=1&lt;/script&gt;", "The MIT License", "uPlot 1.6.32", `id="bench-data"`} {
		if !strings.Contains(html, want) {
			t.Errorf("report.html lacks %q", want)
		}
	}
	// The inlined data is JSON that parses back.
	start := strings.Index(html, `<script type="application/json" id="bench-data">`)
	end := strings.Index(html[start:], "</script>")
	var p page
	body := html[start+len(`<script type="application/json" id="bench-data">`) : start+end]
	if err := json.Unmarshal([]byte(body), &p); err != nil {
		t.Fatalf("inlined data: %v", err)
	}
	if len(p.Groups) != 6 || len(p.Prompts) != 12 || len(p.Cells) != 6*12*cellWidth || p.Timeline == nil {
		t.Errorf("page data: %d groups, %d prompts, %d cell ints, timeline %v", len(p.Groups), len(p.Prompts), len(p.Cells), p.Timeline != nil)
	}
}

// TestMatrixCellsFollowRanking checks the flattened matrix against the
// summary's, column by column in ranking order, with the not-run counts
// and the first violation.
func TestMatrixCellsFollowRanking(t *testing.T) {
	_, d := loadFixture(t, realisticFixture())
	s := d.Summary
	v, err := newView(d)
	if err != nil {
		t.Fatal(err)
	}
	p := v.Data
	ranked := report.Ranked(s)
	index := map[*report.Group]int{}
	for i, g := range s.Groups {
		index[g] = i
	}
	sawViolation, sawNotRun := false, false
	for gi, g := range ranked {
		if p.Groups[gi].Label != g.Label() {
			t.Fatalf("column %d is %s, want %s", gi, p.Groups[gi].Label, g.Label())
		}
		for pi, pr := range s.Prompts {
			c := s.Matrix[index[g]].Get(pr.ID)
			o := (gi*len(s.Prompts) + pi) * cellWidth
			got := p.Cells[o : o+cellWidth]
			if got[0] != c.Total || got[1] != c.Success || got[2] != c.Judged || got[3] != c.Passed {
				t.Errorf("%s %s: cell %v, summary %+v", g.Label(), pr.ID, got, c)
			}
			if got[4] > 0 {
				sawNotRun = true
			}
			if c.Passed < c.Judged {
				if got[6] < 0 || !strings.HasPrefix(p.Strings[got[6]], "expected exactly 4 bullets") {
					t.Errorf("%s %s: failed check without its violation: %v", g.Label(), pr.ID, got)
				}
				sawViolation = true
			}
		}
	}
	if !sawViolation || !sawNotRun {
		t.Errorf("fixture lacks a violation (%v) or a not-run cell (%v)", sawViolation, sawNotRun)
	}
}

func TestReadSamples(t *testing.T) {
	in := strings.Join([]string{
		`{"t_ms": 3000, "cpu_percent": 50, "mem_used_bytes": 100, "server_rss_bytes": 10}`,
		``,
		`{"t_ms": 1000, "cpu_percent": 20}`,
		`not json`,
		`{"cpu_percent": 5}`,
		`{"t_ms": 2000, "cpu_percent": 140}`,
		`{"t_ms": 2500, "mem_used_bytes": -1}`,
		`{"t_ms": 2600} {"t_ms": 2700}`,
		`{"t_ms": 2000, "server_cpu_percent": 250}`,
	}, "\n")
	got, warn, err := ReadSamples(strings.NewReader(in), "x_samples.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || got[0].TimeMS != 1000 || got[1].TimeMS != 2000 || got[2].TimeMS != 3000 {
		t.Errorf("samples %+v", got)
	}
	want := []string{"x_samples.jsonl:4:", "x_samples.jsonl:5: sample skipped: t_ms", "x_samples.jsonl:6: sample skipped: cpu_percent 140",
		"x_samples.jsonl:7:", "x_samples.jsonl:8: sample skipped: more than one"}
	if len(warn) != len(want) {
		t.Fatalf("warnings %q", warn)
	}
	for i, w := range want {
		if !strings.HasPrefix(warn[i], w) {
			t.Errorf("warning %d = %q, want prefix %q", i, warn[i], w)
		}
	}
	long := `{"t_ms": 1, "x": "` + strings.Repeat("a", maxSampleLine) + `"}`
	if _, _, err := ReadSamples(strings.NewReader(long), "big"); err == nil || !strings.Contains(err.Error(), "big:1:") {
		t.Errorf("an overlong line must be an error naming the line: %v", err)
	}
}

// FuzzReadSamples: any input gives samples that pass the checks, sorted,
// and never a panic.
func FuzzReadSamples(f *testing.F) {
	for _, s := range []string{
		`{"t_ms": 1, "cpu_percent": 1}`,
		"{\"t_ms\": 2}\n{\"t_ms\": 1, \"mem_used_bytes\": 5}\n",
		`{"t_ms": "x"}`, `[]`, `null`, "\n\n", `{"t_ms": 1e30}`, `{"t_ms": 5, "cpu_percent": -0}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		got, _, _ := ReadSamples(strings.NewReader(in), "fuzz")
		for i, s := range got {
			if why := checkSample(&s); why != "" {
				t.Fatalf("sample %+v passed through: %s", s, why)
			}
			if i > 0 && got[i-1].TimeMS > s.TimeMS {
				t.Fatalf("not sorted: %+v", got)
			}
		}
	})
}

// TestTimelineKeepsPeaksAndBreaksGaps samples two suites for ten hours each
// at 500 ms (144,000 readings), with one CPU spike; the timeline must fit
// MaxTimelinePoints (plus the gap marker), keep the spike, and break the
// lines between the suites.
func TestTimelineKeepsPeaksAndBreaksGaps(t *testing.T) {
	const n = 72_000
	mk := func(provider string, start int64) *Timeline {
		tl := &Timeline{Provider: provider, Model: "m"}
		for i := range n {
			cpu := 10.0
			if provider == "a" && i == 12_345 {
				cpu = 99.5
			}
			rss := uint64(1 << 30)
			tl.Samples = append(tl.Samples, rundir.Sample{TimeMS: start + int64(i)*500, CPUPercent: &cpu, ServerRSS: &rss})
		}
		return tl
	}
	a := mk("a", 1_000_000)
	b := mk("b", 1_000_000+n*500+3_600_000) // an hour after a ends
	tl := newTimeline([]*Timeline{a, b})
	if len(tl.T) > MaxTimelinePoints+1 {
		t.Errorf("%d points, want at most %d", len(tl.T), MaxTimelinePoints+1)
	}
	var cpu *pageSeries
	for i := range tl.Series {
		if tl.Series[i].Scale == "pct" {
			cpu = &tl.Series[i]
		}
	}
	peak, nulls := 0.0, 0
	for _, v := range cpu.Values {
		if v == nil {
			nulls++
		} else {
			peak = max(peak, *v)
		}
	}
	if peak != 99.5 {
		t.Errorf("the spike was lost: peak %v", peak)
	}
	if nulls != 1 {
		t.Errorf("%d gap markers, want 1 (between the suites)", nulls)
	}
	if len(tl.Suites) != 2 || len(tl.Series) != 3 { // CPU, RSS a, RSS b (no memory readings)
		t.Errorf("%d suites, %d series", len(tl.Suites), len(tl.Series))
	}
}

func TestReadTimelinesFromRunDir(t *testing.T) {
	dir, d := loadFixture(t, realisticFixture())
	if len(d.Timelines) != 4 {
		t.Fatalf("%d timelines, want the 4 local suites", len(d.Timelines))
	}
	// A bad samples line is a warning naming the file and line, not a failure.
	path := filepath.Join(dir, "resources_ollama_gemma3_1b"+rundir.SamplesSuffix)
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("{broken\n")
	f.Close()
	d2, err := load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(d2.Timelines) != 4 || len(d2.Warnings) != 1 || !strings.Contains(d2.Warnings[0], path+":") {
		t.Errorf("timelines %d, warnings %q", len(d2.Timelines), d2.Warnings)
	}
	if !strings.Contains(render(t, d2), "sample skipped") {
		t.Error("the warning is not in report.html")
	}
}

func TestLoadErrors(t *testing.T) {
	dir := t.TempDir()
	if _, err := load(dir); err == nil || !strings.Contains(err.Error(), "results.jsonl") {
		t.Errorf("no results.jsonl: %v", err)
	}
	if err := Write(&bytes.Buffer{}, &Data{Summary: report.Summarize([]results.Record{{Provider: "p", Model: "m"}})}); err == nil {
		t.Error("data without its group details must be an error, not a panic")
	}
}

// routingRecords are two groups over 20 repetitions of a tool prompt,
// two agentic tasks and two BFCL-style categories: "good" does everything
// right; "cancels" calls a side-effect tool in A6 every time.
func routingRecords() []results.Record {
	var recs []results.Record
	yes, no := true, false
	for _, model := range []string{"good", "cancels"} {
		for rep := range 20 {
			base := results.Record{RecordType: results.RecordType, RunID: "r", Provider: "ollama", ProviderType: "ollama", Model: model, Repetition: rep,
				AvailabilityStatus: "ok", Success: true, ObjectivePass: &yes, E2EMS: 100, ToolCalls: []string{"t"}, ToolCallCount: 1}
			p9 := base
			p9.PromptID, p9.ExpectedTools, p9.ToolUseSuccess = "P9", []string{"t"}, &yes
			for _, id := range []string{"A1", "A6"} {
				a := p9
				a.PromptID, a.Turns, a.TurnDetails = id, 2, []results.Turn{{Calls: []results.TurnCall{{Name: "t"}}}, {}}
				if id == "A6" && model == "cancels" {
					// The expected lookup was made (tool use), then the
					// cancel: the task fails on the unsafe action.
					a.ObjectivePass, a.UnsafeActions = &no, []string{"cancel_order"}
				}
				recs = append(recs, a)
			}
			recs = append(recs, p9)
			for _, cat := range []string{"simple", "irrelevance"} {
				c := base
				c.PromptID, c.Category = cat+"_1", cat
				if cat == "simple" && rep%4 == 0 {
					c.ObjectivePass = &no
				}
				recs = append(recs, c)
			}
		}
	}
	return recs
}

// TestRoutingSection renders a run with agentic tasks, an unsafe action
// and categories: the first section names the one routing list, says why
// the other Tier-1 group is not in it, and shows each task's k/n; the tool
// use section has the intervals, the verdicts, the categories and the
// agentic figures.
func TestRoutingSection(t *testing.T) {
	dir := t.TempDir()
	w, err := results.Create(filepath.Join(dir, "results.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	recs := routingRecords()
	for i := range recs {
		if err := w.Write(&recs[i]); err != nil {
			t.Fatal(err)
		}
	}
	w.Close()
	s, err := report.LoadEach(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := report.Write(dir, s, nil); err != nil {
		t.Fatal(err)
	}
	d, err := load(dir)
	if err != nil {
		t.Fatal(err)
	}
	html := render(t, d)
	routing := html[strings.Index(html, `<section id="routing">`):strings.Index(html, `<section id="ranking">`)]
	for _, want := range []string{
		"<ul class=\"routing\"><li>ollama/good</li>\n</ul>",
		"<li><b>ollama/cancels</b>: unsafe action: A6 called cancel_order in 20 of 20 cells; 20 of 40 agentic tasks completed (&lt; 80%)</li>",
		"<th>task</th><th>ollama/good</th><th>ollama/cancels</th>",
		"<tr><td>A6</td><td class=\"task all\">✓ 20/20</td><td class=\"task nopass\">✗ 0/20</td></tr>",
	} {
		if !strings.Contains(routing, want) {
			t.Errorf("the routing section lacks %q:\n%s", want, routing)
		}
	}
	if strings.Index(html, `<section id="routing">`) > strings.Index(html, `<section id="ranking">`) {
		t.Error("the routing verdict is not the first section")
	}
	for _, want := range []string{
		`<span class="verdict recommended" title="">recommended</span>`,
		// The reason inline, not only on hover (issue 35).
		`<span class="verdict no" title="unsafe action: A6 called cancel_order in 20 of 20 cells; 20 of 40 agentic tasks completed (&lt; 80%)">no</span> <span class="routing-why">unsafe action: A6 called cancel_order in 20 of 20 cells; 20 of 40 agentic tasks completed (&lt; 80%)</span>`,
		`<td class="n">[93.9%, 100.0%]</td>`, // 60/60 tool cells
		"<th>irrelevance</th><th>simple</th>",
		`20/20 100.0% <span class="ci">[83.8%, 100.0%]</span>`,
		`15/20 75.0% <span class="ci">[53.1%, 88.9%]</span>`,
		"<th>task success</th><th>95% CI</th>", "<th>pass^k</th>",
	} {
		if !strings.Contains(html, want) {
			t.Errorf("report.html lacks %q", want)
		}
	}
	if !strings.Contains(html, `<td class="n">20/100</td>`) {
		t.Error("cancels' unsafe actions are not 20 of its 100 calls")
	}
	if strings.Count(html, ">recommended<") != 1 {
		t.Errorf("\"recommended\" said %d times of verdicts; only ollama/good is", strings.Count(html, ">recommended<"))
	}
}

// TestTablesAreCapped renders 600 groups: the tables stop at MaxRows with a
// count of the rest.
func TestTablesAreCapped(t *testing.T) {
	var recs []results.Record
	for i := range 600 {
		recs = append(recs, results.Record{Provider: "p", Model: fmt.Sprintf("m%03d", i), PromptID: "P1", AvailabilityStatus: "ok", Success: true, E2EMS: int64(100 + i)})
	}
	dir := t.TempDir()
	w, err := results.Create(filepath.Join(dir, "results.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	for i := range recs {
		recs[i].RecordType = results.RecordType
		w.Write(&recs[i])
	}
	w.Close()
	d, err := load(dir)
	if err != nil {
		t.Fatal(err)
	}
	html := render(t, d)
	if n := strings.Count(html, `<tr data-group=`); n != 2*MaxRows {
		t.Errorf("%d group rows, want %d (two tables)", n, 2*MaxRows)
	}
	if !strings.Contains(html, "… and 100 more groups; summary.json has them all.") {
		t.Error("no note for the capped rows")
	}
}

// TestDataInMemory builds the page from records summarized in memory
// (report.Summarize), without a run directory: the same matrix and plots as
// the run directory's, no files read.
func TestDataInMemory(t *testing.T) {
	dir, want := loadFixture(t, realisticFixture())
	var recs []results.Record
	if _, _, err := results.ReadFile(filepath.Join(dir, "results.jsonl"), true, func(_ int, r *results.Record) error {
		recs = append(recs, *r)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	s := report.Summarize(recs)
	d := NewData(s, nil, "")
	if d.Timelines != nil || len(d.Warnings) != 0 || d.Groups[0].E2E.N == 0 {
		t.Errorf("in memory: timelines %v, warnings %v, e2e n %d", d.Timelines, d.Warnings, d.Groups[0].E2E.N)
	}
	a, err1 := newView(want)
	b, err2 := newView(d)
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	ja, _ := json.Marshal(a.Data.Cells)
	jb, _ := json.Marshal(b.Data.Cells)
	if string(ja) != string(jb) {
		t.Error("the matrix from memory differs from the run directory's")
	}
}

// The failures section lists the summary's causes, one row each (prompt,
// kind, cells out of the prompt's, where, the most frequent detail), each
// prompt a link to its failed answers on answers.html; the cells they
// cover are counted in the note.
func TestFailuresByCause(t *testing.T) {
	_, d := loadFixture(t, realisticFixture())
	html := render(t, d)
	sec := html[strings.Index(html, `<section id="failures">`):]
	sec = sec[:strings.Index(sec, "</section>")]
	rows := regexp.MustCompile(`<tr data-prompt="([^"]*)"><td><a href="([^"]*)">[^<]*</a></td><td>([^<]*)</td><td class="n">([^<]*)</td><td>([^<]*)</td><td class="detail">([^<]*)</td></tr>`).FindAllStringSubmatch(sec, -1)
	causes := d.Summary.Causes
	if len(causes) < 3 || len(rows) != len(causes) {
		t.Fatalf("%d cause rows, the summary has %d causes:\n%s", len(rows), len(causes), sec)
	}
	n := 0
	for i, c := range causes {
		r := rows[i]
		n += c.NCells
		wantLink := "answers.html#failed=1&amp;p=" + c.PromptID
		if r[1] != c.PromptID || r[2] != wantLink || r[3] != c.Kind || r[4] != fmt.Sprintf("%d/%d", c.NCells, c.NPrompt) || r[5] != template.HTMLEscapeString(c.Where) ||
			!strings.HasPrefix(r[6], template.HTMLEscapeString(c.What)) {
			t.Errorf("row %d: %q, cause %+v", i, r[1:], c)
		}
		if i > 0 && causes[i-1].Category == c.Category && causes[i-1].NCells < c.NCells {
			t.Errorf("row %d (%d cells) after one of %d", i, c.NCells, causes[i-1].NCells)
		}
	}
	if !strings.Contains(sec, fmt.Sprintf("<p class=\"note\">%d cells failed, grouped by cause", n)) {
		t.Errorf("the note does not count the %d failed cells", n)
	}
}
