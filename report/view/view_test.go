package view

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"bench/internal/record/results"
	"bench/internal/record/rundir"
	"bench/report"
	"bench/report/compare"
)

// hostile is text a run can hold that must stay text on every page.
const hostile = `<img src=x onerror="window.pwned=1"></script><script>window.pwned=2</script>`

// writeRun writes a finished run directory of groups × prompts × reps
// cells (every fifth answer wrong, every seventh a timeout), with
// run.json, config.json and the summary files as bench run leaves them.
func writeRun(tb testing.TB, dir, id string, groups, prompts, reps int, answer func(g, p, rep int) string) {
	tb.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		tb.Fatal(err)
	}
	w, err := results.Create(filepath.Join(dir, rundir.ResultsFile))
	if err != nil {
		tb.Fatal(err)
	}
	yes, no := true, false
	n := 0
	for g := range groups {
		for p := range prompts {
			for rep := range reps {
				n++
				r := &results.Record{RecordType: results.RecordType, RunID: id, Provider: "ollama", ProviderType: "ollama", Model: fmt.Sprintf("model-%03d", g),
					PromptID: fmt.Sprintf("P%d", p), PromptName: "p", Repetition: rep, AvailabilityStatus: results.StatusOK, Success: true,
					E2EMS: int64(100 + n%50), ObjectivePass: &yes, RawOutput: answer(g, p, rep), ToolCalls: []string{}}
				ttft := int64(20 + n%7)
				r.TTFTMS = &ttft
				switch {
				case n%7 == 0:
					r.AvailabilityStatus, r.Success, r.ObjectivePass = results.StatusError, false, nil
					r.FailureType, r.ErrorMessage = strPtr("timeout"), strPtr("no token in 60s")
				case n%5 == 0:
					r.ObjectivePass, r.Violation = &no, strPtr(fmt.Sprintf("want %q", "answer "+r.PromptID))
				}
				if err := w.Write(r); err != nil {
					tb.Fatal(err)
				}
			}
		}
	}
	if err := w.Close(); err != nil {
		tb.Fatal(err)
	}
	start := time.Date(2026, 12, 1, 2, 0, 0, 0, time.UTC)
	mustJSON(tb, filepath.Join(dir, rundir.RunFile), &rundir.RunInfo{RunID: id, BenchVersion: "devel+0123456789ab", StartedAt: start, EndedAt: start.Add(time.Minute), EndReason: "finished", CellsPlanned: n, CellsRecorded: n})
	var set []map[string]any
	for p := range prompts {
		set = append(set, map[string]any{"id": fmt.Sprintf("P%d", p), "prompt": "say it"})
	}
	mustJSON(tb, filepath.Join(dir, rundir.ConfigFile), map[string]any{"run": map[string]any{"id": id, "repetitions": reps},
		"providers": []any{map[string]any{"name": "ollama", "type": "ollama", "models": []string{"model-000"}}}, "prompt_set": set})
	s, err := report.LoadEach(dir, nil)
	if err != nil {
		tb.Fatal(err)
	}
	if err := report.Write(dir, s, nil); err != nil {
		tb.Fatal(err)
	}
}

func strPtr(s string) *string { return &s }

func mustJSON(tb testing.TB, path string, v any) {
	tb.Helper()
	if err := rundir.WriteJSON(path, v); err != nil {
		tb.Fatal(err)
	}
}

func plain(g, p, rep int) string { return fmt.Sprintf("answer P%d from %d, try %d", p, g, rep) }

// get fetches path from the server and decodes JSON into v (when not nil).
func get(t *testing.T, srv *httptest.Server, path string, v any) (int, string) {
	t.Helper()
	return getB(t, srv, path, v)
}

func getB(t testing.TB, srv *httptest.Server, path string, v any) (int, string) {
	t.Helper()
	resp, err := http.Get(srv.URL + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if v != nil && resp.StatusCode == http.StatusOK {
		if err := json.Unmarshal(body, v); err != nil {
			t.Fatalf("%s: %v\n%s", path, err, body)
		}
	}
	return resp.StatusCode, string(body)
}

// fixtureRuns writes the runs of the list's tests under root: two
// finished nights, one killed (no run.json), one with a run.json that
// does not parse, one whose summary.json does not, a folder that is no
// run, and a run out of the root reached by a symlink.
func fixtureRuns(t *testing.T) (root string, out string) {
	root = t.TempDir()
	writeRun(t, filepath.Join(root, "night1"), "night1", 2, 3, 2, plain)
	writeRun(t, filepath.Join(root, "night2"), "night2", 2, 3, 2, func(g, p, rep int) string {
		if p == 1 {
			return "Sydney " + hostile
		}
		return plain(g, p, rep)
	})
	writeRun(t, filepath.Join(root, "killed"), "killed", 1, 2, 1, plain)
	os.Remove(filepath.Join(root, "killed", rundir.RunFile))
	writeRun(t, filepath.Join(root, "bad-run-json"), "bad", 1, 1, 1, plain)
	os.WriteFile(filepath.Join(root, "bad-run-json", rundir.RunFile), []byte(`{"run_id": "bad", "ended_at": `), 0o644)
	writeRun(t, filepath.Join(root, "bad-summary"), "bads", 1, 1, 1, plain)
	os.WriteFile(filepath.Join(root, "bad-summary", rundir.SummaryJSON), []byte("[1, 2"), 0o644)
	os.MkdirAll(filepath.Join(root, "history"), 0o755)
	os.WriteFile(filepath.Join(root, "history", "history.json"), []byte("{}"), 0o644)
	out = t.TempDir()
	writeRun(t, filepath.Join(out, "secret"), "secret", 1, 1, 1, plain)
	if err := os.Symlink(filepath.Join(out, "secret"), filepath.Join(root, "link-out")); err != nil {
		t.Fatal(err)
	}
	return root, out
}

func byDir(l RunList) map[string]*Run {
	m := map[string]*Run{}
	for _, r := range l.Runs {
		m[filepath.Base(r.Dir)] = r
	}
	return m
}

// The list shows each run as what it is: finished ones with their
// figures, a killed one as partial, a corrupt run.json or summary.json as
// corrupt naming the file, and never the run reached by a symlink out of
// the named directory; a named directory with no run is listed as not a
// run; none of them stops the server.
func TestListShowsEachRunAsWhatItIs(t *testing.T) {
	root, _ := fixtureRuns(t)
	empty := t.TempDir()
	s, err := New([]string{root, empty})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s.Handler())
	defer srv.Close()
	var l RunList
	if code, body := get(t, srv, "/api/runs", &l); code != 200 {
		t.Fatalf("%d %s", code, body)
	}
	m := byDir(l)
	if len(l.Runs) != 6 || m["link-out"] != nil || m["secret"] != nil || m["history"] != nil {
		t.Errorf("runs listed: %v", keysOf(m))
	}
	n1 := m["night1"]
	if n1 == nil || n1.State != StateFinished || n1.Cells != 12 || n1.Groups != 2 || n1.Config != "1 provider, 1 model, 3 prompts × 2 repetitions" ||
		n1.Started != "2026-12-01 02:00:00 UTC" || n1.Best == "" || n1.BestPass == "" || n1.FastestMS == "" || !strings.Contains(n1.Setup, "devel+0123456789ab") {
		t.Errorf("night1: %+v", n1)
	}
	if k := m["killed"]; k == nil || k.State != StatePartial || k.Cells != 2 || !strings.Contains(k.Problem, "no run.json") {
		t.Errorf("killed: %+v", k)
	}
	if b := m["bad-run-json"]; b == nil || b.State != StateCorrupt || !strings.Contains(b.Problem, "run.json") {
		t.Errorf("bad run.json: %+v", b)
	}
	if b := m["bad-summary"]; b == nil || b.State != StateCorrupt || !strings.Contains(b.Problem, "summary.json") {
		t.Errorf("bad summary.json: %+v", b)
	}
	if e := m[filepath.Base(empty)]; e == nil || e.State != StateForeign {
		t.Errorf("the empty directory: %+v", e)
	}
	// Every run's cells can be asked for, corrupt ones included.
	for _, r := range l.Runs {
		if r.State == StateForeign {
			continue
		}
		var a CellsAnswer
		if code, body := get(t, srv, "/api/cells?run="+r.ID, &a); code != 200 || a.Result.Total == 0 {
			t.Errorf("%s: cells %d %s", r.Dir, code, body)
		}
	}
}

func keysOf(m map[string]*Run) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// A run being written: its lock held by another process, no run.json yet,
// results.jsonl growing. It is listed in progress with the cells so far,
// its cells can be filtered, and once its writer is done it is finished.
func TestRunInProgress(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "live")
	writeRun(t, dir, "live", 1, 4, 1, plain)
	os.Remove(filepath.Join(dir, rundir.RunFile))
	os.Remove(filepath.Join(dir, rundir.SummaryJSON))
	d, err := rundir.Lock(dir) // as bench run holds it (in this process: /proc/locks lists it)
	if err != nil {
		t.Fatal(err)
	}
	s, err := New([]string{root})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s.Handler())
	defer srv.Close()
	var l RunList
	get(t, srv, "/api/runs", &l)
	if len(l.Runs) != 1 || l.Runs[0].State != StateInProgress || l.Runs[0].Cells != 4 || l.Runs[0].Problem != "" {
		t.Fatalf("live run: %+v", l.Runs[0])
	}
	var a CellsAnswer
	if code, body := get(t, srv, "/api/cells?run="+l.Runs[0].ID, &a); code != 200 || a.Result.Total != 4 || a.Run.State != StateInProgress {
		t.Errorf("cells of a live run: %d %s", code, body)
	}
	// Two more cells arrive: the index follows.
	f, _ := os.OpenFile(filepath.Join(dir, rundir.ResultsFile), os.O_APPEND|os.O_WRONLY, 0)
	for i := range 2 {
		fmt.Fprintf(f, `{"record_type":"result","run_id":"live","provider":"ollama","provider_type":"ollama","model":"model-000","prompt_id":"P%d","repetition":0,"availability_status":"ok","success":true,"e2e_ms":5,"raw_output":"late","tool_calls":[]}`+"\n", 4+i)
	}
	f.Close()
	if code, _ := get(t, srv, "/api/cells?run="+l.Runs[0].ID+"&q=late", &a); code != 200 || a.Result.Total != 6 || a.Result.Matched != 2 {
		t.Errorf("after two more lines: %+v", a.Result)
	}
	d.Close()
	mustJSON(t, filepath.Join(dir, rundir.RunFile), &rundir.RunInfo{RunID: "live", EndReason: "finished"})
	get(t, srv, "/api/runs", &l)
	if l.Runs[0].State != StateFinished {
		t.Errorf("after its end: %+v", l.Runs[0])
	}
}

// Files are served from inside the run directory only: .., an escaped
// .., an absolute path and a symlink out are refused, an unknown run id
// is not found, a request for another host or with another method is
// refused.
func TestFilesStayInside(t *testing.T) {
	root, out := fixtureRuns(t)
	dir := filepath.Join(root, "night1")
	os.WriteFile(filepath.Join(dir, rundir.ReportHTML), []byte("<p>report</p>"), 0o644)
	if err := os.Symlink(filepath.Join(out, "secret", rundir.RunFile), filepath.Join(dir, "leak.json")); err != nil {
		t.Fatal(err)
	}
	s, err := New([]string{root})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := s.Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(s.Handler())
	srv.Listener.Close()
	srv.Listener = ln
	srv.Start()
	defer srv.Close()
	id := idOf(mustReal(t, dir))
	if code, body := get(t, srv, "/run/"+id+"/report.html", nil); code != 200 || body != "<p>report</p>" {
		t.Errorf("report.html: %d %q", code, body)
	}
	if code, body := get(t, srv, "/run/"+id+"/"+rundir.ResultsFile, nil); code != 200 || !strings.Contains(body, `"run_id":"night1"`) {
		t.Errorf("results.jsonl: %d", code)
	}
	for _, p := range []string{"/run/" + id + "/leak.json", "/run/" + id + "/%2e%2e/killed/results.jsonl", "/run/" + id + "/..%2f..%2fsecret",
		"/run/" + id + "/%2fetc%2fpasswd", "/run/0000000000000000/report.html", "/run/" + idOf(filepath.Join(out, "secret")) + "/run.json"} {
		req, _ := http.NewRequest("GET", srv.URL+p, nil)
		req.URL.RawPath = p
		resp, err := http.DefaultTransport.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode == 200 || strings.Contains(string(body), `"run_id": "secret"`) {
			t.Errorf("%s: %d %q, want a refusal", p, resp.StatusCode, body)
		}
	}
	req, _ := http.NewRequest("GET", srv.URL+"/api/runs", nil)
	req.Host = "attacker.example:80"
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusMisdirectedRequest {
		t.Errorf("another Host: %v %v", resp.StatusCode, err)
	}
	if resp, err := http.Post(srv.URL+"/api/runs", "text/plain", nil); err != nil || resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST: %v %v", resp.StatusCode, err)
	}
	u, _ := url.Parse(srv.URL)
	req, _ = http.NewRequest("GET", "http://localhost:"+u.Port()+"/api/runs", nil)
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != 200 {
		t.Errorf("localhost: %v %v", resp, err)
	}
}

func mustReal(t *testing.T, p string) string {
	r, err := filepath.EvalSymlinks(p)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// The filters pick exactly the cells results.jsonl says: by group, prompt,
// verdict, failure type and text (any case), and their intersections.
func TestFilters(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "r")
	writeRun(t, dir, "r", 3, 4, 5, func(g, p, rep int) string {
		if g == 2 && p == 3 {
			return "The capital is CANBERRA."
		}
		return plain(g, p, rep)
	})
	ix, err := BuildIndex(dir)
	if err != nil {
		t.Fatal(err)
	}
	var recs []results.Record
	if _, _, err := results.ReadFile(filepath.Join(dir, rundir.ResultsFile), false, func(_ int, r *results.Record) error {
		recs = append(recs, *r)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	count := func(keep func(r *results.Record) bool) int {
		n := 0
		for i := range recs {
			if keep(&recs[i]) {
				n++
			}
		}
		return n
	}
	vOf := func(r *results.Record) string { return verdicts[verdictOf(r)] }
	for _, c := range []struct {
		q    Query
		keep func(r *results.Record) bool
	}{
		{Query{}, func(*results.Record) bool { return true }},
		{Query{Group: "ollama/model-001"}, func(r *results.Record) bool { return r.Model == "model-001" }},
		{Query{Prompt: "P2", Verdict: VerdictFail}, func(r *results.Record) bool { return r.PromptID == "P2" && vOf(r) == VerdictFail }},
		{Query{Failure: "timeout"}, func(r *results.Record) bool { return r.FailureType != nil && *r.FailureType == "timeout" }},
		{Query{Verdict: VerdictError, Group: "ollama/model-000"}, func(r *results.Record) bool { return vOf(r) == VerdictError && r.Model == "model-000" }},
		{Query{Text: "canberra"}, func(r *results.Record) bool { return strings.Contains(strings.ToLower(r.RawOutput), "canberra") }},
		{Query{Text: "WANT \"ANSWER P1"}, func(r *results.Record) bool {
			return r.Violation != nil && strings.Contains(*r.Violation, `want "answer P1`)
		}},
		{Query{Group: "nobody"}, func(*results.Record) bool { return false }},
	} {
		res := ix.Filter(c.q)
		want := count(c.keep)
		if res.Matched != want || res.Total != len(recs) || len(res.Rows) != min(want, MaxRows) {
			t.Errorf("%+v: %d matched (%d rows) of %d, want %d", c.q, res.Matched, len(res.Rows), res.Total, want)
		}
		for _, row := range res.Rows {
			r := recs[row.Line-1]
			if !c.keep(&r) || row.Verdict != vOf(&r) || row.Group != "ollama/"+r.Model || row.Prompt != r.PromptID {
				t.Errorf("%+v: row %+v is not its line", c.q, row)
			}
		}
	}
	if want := count(func(r *results.Record) bool { return r.PromptID == "P3" && r.Model == "model-002" }); want == 0 || ix.Filter(Query{Text: "canberra"}).Matched != want {
		t.Error("the text filter missed CANBERRA")
	}
}

// The comparison of two runs is compare.Compare's, verdict and all.
func TestCompareIsBenchCompares(t *testing.T) {
	root, _ := fixtureRuns(t)
	s, err := New([]string{root})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s.Handler())
	defer srv.Close()
	var l RunList
	get(t, srv, "/api/runs", &l)
	m := byDir(l)
	code, page := get(t, srv, "/compare?base="+m["night1"].ID+"&new="+m["night2"].ID, nil)
	res, err := compare.Compare(filepath.Join(root, "night1"), filepath.Join(root, "night2"), compare.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	if code != 200 || !strings.Contains(page, `id="verdict" class="verdict `+res.Verdict+`"`) {
		t.Errorf("compare: %d, the page's verdict is not %s", code, res.Verdict)
	}
	// night2 answers P1 otherwise, its check still passing: drift.
	if n := strings.Count(page, `<tr data-verdict="drift">`); res.Counts[compare.Drift] == 0 || n != res.Counts[compare.Drift] {
		t.Errorf("%d drift rows, compare found %d", n, res.Counts[compare.Drift])
	}
	if strings.Contains(page, hostile) {
		t.Error("the answer's HTML is on the compare page unescaped")
	}
	if code, _ := get(t, srv, "/compare?base="+m["night1"].ID+"&new=nope", nil); code != http.StatusNotFound {
		t.Errorf("an unknown run: %d", code)
	}
}
