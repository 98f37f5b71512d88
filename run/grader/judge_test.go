package grader

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"bench/config"
	"bench/internal/record/results"
	"bench/internal/testpeer/anthropictest"
	"bench/internal/testpeer/ollamatest"
	"bench/internal/testpeer/testmodel"
	"bench/prompts"
	"bench/providers"
)

// judgeScript is a judge model's script: the last word of the judge's
// request is the last word of the rubric, which picks the reply.
var judgeScript = testmodel.Script{
	"judgepass":    {`{"verdict": "pass", `, `"reason": "It thanks the customer."}`},
	"judgefail":    {`{"verdict": "fail", `, `"reason": "It is curt."}`},
	"judgegarbage": {"Looks", " good", " to", " me!"},
	"judgeprose":   {"Verdict:", " pass.", ` {"verdict": "pass", "reason": "ok"}`},
	"judgescore":   {`{"score": 0.8, "reason": "Mostly right."}`},
	"judgelow":     {`{"score": 0.3, "reason": "Mostly wrong."}`},
	"judgefenced":  {"```json\n", `{"verdict": "pass", "reason": "Fenced."}`, "\n```"},
	"judgenull":    {`{"score": null, "reason": "Cannot tell."}`},
}

var (
	judgeSrv *ollamatest.Server
	srvErr   error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if judgeSrv != nil {
		judgeSrv.Close()
	}
	os.Exit(code)
}

// judgeServer starts (once) a real Ollama serving the scripted judge.
func judgeServer(t *testing.T) *ollamatest.Server {
	t.Helper()
	if judgeSrv == nil && srvErr == nil {
		judgeSrv, srvErr = ollamatest.StartServer()
		if srvErr == nil {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			srvErr = judgeSrv.Create(ctx, "judge", judgeScript)
			cancel()
		}
	}
	ollamatest.Check(t, srvErr)
	return judgeSrv
}

// judgeProviders are the config's provider entries, built: the judge
// through the server's native API and through /v1.
func judgeProviders(t *testing.T, url string) map[string]providers.Provider {
	t.Helper()
	dir := t.TempDir()
	yaml := fmt.Sprintf("providers:\n  - name: grader\n    type: ollama\n    base_url: %s\n    max_retries: 0\n  - name: grader_v1\n    type: ollama_openai\n    base_url: %s/v1\n    max_retries: 0\n", url, url)
	os.WriteFile(filepath.Join(dir, "p.yaml"), []byte("prompts:\n  - {id: X, prompt: x, validators: [{type: llm_judge, rubric: r, judge: grader, model: judge}, {type: noop}]}\n  - {id: Y, prompt: y, validator: {type: llm_judge, rubric: r, judge: grader_v1, model: judge}}\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "bench.yaml"), []byte(yaml+"prompts:\n  files: [p.yaml]\n"), 0o644)
	cfg, err := config.Load(filepath.Join(dir, "bench.yaml"), providers.Kinds)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]providers.Provider{}
	for i := range cfg.Providers {
		p, err := providers.New(&cfg.Providers[i])
		if err != nil {
			t.Fatal(err)
		}
		out[cfg.Providers[i].Name] = p
	}
	return out
}

func judgePrompt(t *testing.T, judge, rubric, extra string) *prompts.Prompt {
	t.Helper()
	src := fmt.Sprintf("prompts:\n  - id: J1\n    prompt: \"Reply to the customer whose order is late.\"\n    validators:\n      - {type: max_words, value: 30}\n      - {type: llm_judge, judge: %s, model: judge, rubric: %q%s}\n", judge, rubric, extra)
	ps, err := prompts.Parse("p.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	return &ps[0]
}

// A scripted judge through both Ollama protocols: verdicts and reasons
// recorded, a score against its threshold, and every reply that is not
// the verdict object alone (prose, a verdict smuggled in it) a
// judge_error, never a pass.
func TestJudgeVerdicts(t *testing.T) {
	srv := judgeServer(t)
	provs := judgeProviders(t, srv.URL())
	g := New(Options{Judges: provs, Concurrency: 2, Timeout: 60 * time.Second})
	cases := []struct {
		rubric, extra string
		pass          string // true, false, null
		verdict       string
		reason        string
		score         string
		violation     string
	}{
		{"Does it apologise? judgepass", "", "true", "pass", "It thanks the customer.", "", ""},
		{"Does it apologise? judgefail", "", "false", "fail", "It is curt.", "", "judge: It is curt."},
		{"Does it apologise? judgefenced", "", "true", "pass", "Fenced.", "", ""},
		{"How right is it? judgescore", ", pass_threshold: 0.7", "true", "pass", "Mostly right.", "0.8", ""},
		{"How right is it? judgelow", ", pass_threshold: 0.7", "false", "fail", "Mostly wrong.", "0.3", "judge: Mostly wrong."},
		{"Does it apologise? judgegarbage", "", "null", "error", "not a verdict: not a JSON object", "", ""},
		{"Does it apologise? judgeprose", "", "null", "error", "not a verdict: not a JSON object", "", ""},
		{"Does it apologise? judgepass", ", pass_threshold: 0.7", "null", "error", `not a verdict: no "score"`, "", ""},
		{"How right is it? judgenull", ", pass_threshold: 0.7", "null", "error", `not a verdict: "score" must be a number from 0 to 1, got null`, "", ""},
	}
	for _, judge := range []string{"grader", "grader_v1"} {
		for _, tc := range cases {
			t.Run(judge+"/"+tc.rubric+tc.extra, func(t *testing.T) {
				p := judgePrompt(t, judge, tc.rubric, tc.extra)
				rec := answered(p, "Sorry, it ships tomorrow.")
				g.Grade(context.Background(), p, rec, "")
				j := rec.Judge
				if j == nil {
					t.Fatal("no judge object")
				}
				pass := "null"
				if rec.ObjectivePass != nil {
					pass = fmt.Sprint(*rec.ObjectivePass)
				}
				if pass != tc.pass || j.Verdict != tc.verdict || !strings.HasPrefix(j.Reason, tc.reason) {
					t.Fatalf("pass %s verdict %s reason %q; want %s %s %q\nsamples %+v", pass, j.Verdict, j.Reason, tc.pass, tc.verdict, tc.reason, j.Samples)
				}
				if score := fmt.Sprint(deref(j.Score)); tc.score != "" && score != tc.score {
					t.Errorf("score %s, want %s", score, tc.score)
				}
				if tc.violation != "" && (rec.Violation == nil || *rec.Violation != tc.violation) {
					t.Errorf("violation %v", rec.Violation)
				}
				if j.Provider != judge || j.Model != "judge" || len(j.Samples) != 1 || j.OutputTokens == nil || *j.OutputTokens == 0 || j.InputTokens == nil || j.StartedAtMS == 0 || !strings.HasPrefix(j.Spec, "sha256:") {
					t.Errorf("judge = %+v", j)
				}
				if tc.verdict == "error" {
					if len(rec.CheckErrors) != 1 || rec.CheckErrors[0].Type != results.JudgeError || rec.CheckErrors[0].Index != 1 || j.Samples[0].Reply == "" {
						t.Errorf("check errors %+v, sample %+v", rec.CheckErrors, j.Samples[0])
					}
				} else if rec.CheckErrors != nil {
					t.Errorf("check errors %+v", rec.CheckErrors)
				}
			})
		}
	}
}

// judge_samples asks k times and the majority decides; a judge that is
// down gives judge errors, bounded, and never a pass.
func TestJudgeSamplesAndOutage(t *testing.T) {
	srv := judgeServer(t)
	provs := judgeProviders(t, srv.URL())
	g := New(Options{Judges: provs, Concurrency: 3, Timeout: 60 * time.Second})
	p := judgePrompt(t, "grader", "Apologises? judgefail", ", judge_samples: 3")
	rec := answered(p, "Late. Deal with it.")
	g.Grade(context.Background(), p, rec, "")
	if j := rec.Judge; j.Verdict != "fail" || len(j.Samples) != 3 || *rec.ObjectivePass {
		t.Errorf("three samples: %+v", j)
	}

	down := judgeProviders(t, "http://127.0.0.1:1")
	g = New(Options{Judges: down, Concurrency: 1, Timeout: 5 * time.Second})
	rec = answered(p, "Sorry!")
	start := time.Now()
	g.Grade(context.Background(), p, rec, "")
	if time.Since(start) > 30*time.Second {
		t.Errorf("an outage took %s", time.Since(start))
	}
	if rec.ObjectivePass != nil || rec.Judge.Verdict != "error" || len(rec.CheckErrors) != 1 || !strings.Contains(rec.CheckErrors[0].Message, "connection_refused") {
		t.Errorf("outage: pass %v judge %+v errors %+v", rec.ObjectivePass, rec.Judge, rec.CheckErrors)
	}
	if !rec.Success {
		t.Error("a judge outage made a cell error")
	}
}

// --no-judge keeps the verdict the record holds of the same check, and
// sends nothing; a changed rubric has no verdict to keep.
func TestNoJudge(t *testing.T) {
	p := judgePrompt(t, "grader", "Apologises? judgepass", "")
	rec := answered(p, "Sorry!")
	rec.Judge = &results.Judge{Verdict: "pass", Reason: "kept", Spec: p.Checks()[1].Fingerprint()}
	g := New(Options{NoJudge: true, Judges: map[string]providers.Provider{}})
	g.Grade(context.Background(), p, rec, "")
	if rec.Judge.Reason != "kept" || rec.ObjectivePass == nil || !*rec.ObjectivePass {
		t.Errorf("kept: %+v %v", rec.Judge, rec.ObjectivePass)
	}
	changed := judgePrompt(t, "grader", "Apologises sincerely? judgepass", "")
	rec.ObjectivePass = ptr(true)
	g.Grade(context.Background(), changed, rec, "")
	if rec.ObjectivePass != nil || rec.Judge.Verdict != "error" || !strings.Contains(rec.Judge.Reason, "--no-judge") {
		t.Errorf("changed rubric: %+v %v", rec.Judge, rec.ObjectivePass)
	}
}

// Any provider kind can judge: the Claude Code CLI (the real one, against
// a scripted Anthropic server) judges through its own stream, and the
// judge's secret (its token) never reaches the record.
func TestClaudeCodeJudge(t *testing.T) {
	bin := anthropictest.ClaudeBin(t)
	srv := anthropictest.Start(t)
	const token = "sk-ant-judge-" + "Zx9Qw8Er7Ty6Ui5Op4"
	srv.Script("judge-pass", anthropictest.Reply{Text: []string{`{"verdict": "fail", `, `"reason": "It never apologises; token ` + token + `"}`}, InputTokens: 900, OutputTokens: 20})
	t.Setenv("BENCH_JUDGE_TOKEN", token)
	dir := t.TempDir()
	yaml := fmt.Sprintf(`providers:
  - name: cli_judge
    type: claude_code_cli
    command: %s
    env:
      ANTHROPIC_BASE_URL: %s
      ANTHROPIC_AUTH_TOKEN: ${BENCH_JUDGE_TOKEN}
      ANTHROPIC_API_KEY: ""
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1"
      CLAUDE_CODE_MAX_RETRIES: "0"
      HOME: %s
prompts:
  files: [p.yaml]
`, bin, srv.URL, dir)
	os.WriteFile(filepath.Join(dir, "p.yaml"), []byte("prompts:\n  - {id: X, prompt: x, validator: {type: llm_judge, rubric: r, judge: cli_judge, model: judge-pass}}\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "bench.yaml"), []byte(yaml), 0o644)
	cfg, err := config.Load(filepath.Join(dir, "bench.yaml"), providers.Kinds)
	if err != nil {
		t.Fatal(err)
	}
	p, err := providers.New(&cfg.Providers[0])
	if err != nil {
		t.Fatal(err)
	}
	g := New(Options{Judges: map[string]providers.Provider{"cli_judge": p}, Concurrency: 1, Timeout: 2 * time.Minute})
	pr := judgePrompt(t, "cli_judge", "Does it apologise?", "")
	pr.Validators[1].Model = "judge-pass"
	rec := answered(pr, "Late. Deal with it.")
	g.Grade(context.Background(), pr, rec, "")
	j := rec.Judge
	if j == nil || j.Verdict != "fail" || rec.ObjectivePass == nil || *rec.ObjectivePass || !strings.HasPrefix(j.Reason, "It never apologises") {
		t.Fatalf("judge %+v pass %v errors %+v", j, rec.ObjectivePass, rec.CheckErrors)
	}
	if strings.Contains(j.Reason, token) || strings.Contains(*rec.Violation, token) {
		t.Errorf("the judge's token reached the record: %q", j.Reason)
	}
	if j.OutputTokens == nil || *j.OutputTokens == 0 {
		t.Errorf("tokens %v", j.OutputTokens)
	}
	if reqs := srv.Requests(); len(reqs) == 0 {
		t.Error("the CLI never asked the server")
	}
}

func deref(f *float64) float64 {
	if f == nil {
		return 0
	}
	return *f
}
