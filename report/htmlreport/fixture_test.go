package htmlreport

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"bench/internal/record/results"
	"bench/internal/record/rundir"
	"bench/report"
)

// fixture describes a generated run directory.
type fixture struct {
	models  []fixtureModel
	prompts int
	reps    int
	// samples writes resource files with sample series for the local
	// suites (the lead's sampler will write them; the report reads them).
	samples bool
	// raw is the raw_output of each cell (bulk the report must skip).
	raw string
}

type fixtureModel struct {
	provider, model string
	thinking        *string
	// ttft is the median time to first token; e2e the median latency.
	ttft, e2e, tps float64
	// pass is the chance a checked answer passes; errRate of an error cell;
	// toolPass the chance a tool cell uses its tool (pass when 0).
	pass, errRate, toolPass float64
	// unavailable: every cell is skipped_unavailable.
	unavailable bool
	local       bool
	// usdPerToken prices the model's output tokens (0: no cost recorded).
	usdPerToken float64
}

func ptr[T any](v T) *T { return &v }

// realisticFixture is a small run shaped like real ones: local and remote
// models, one unavailable, a thinking level, tool prompts, violations whose
// text holds HTML, errors, a rate limit, and resource series for the local
// suites.
func realisticFixture() fixture {
	return fixture{
		prompts: 12, reps: 5, samples: true,
		raw: "The answer is 4.",
		models: []fixtureModel{
			{provider: "ollama_openai", model: "llama3.2:3b", ttft: 90, e2e: 1100, tps: 42, pass: 0.8, errRate: 0.04, local: true},
			{provider: "ollama_openai", model: "qwen3:4b", ttft: 160, e2e: 2600, tps: 28, pass: 0.65, errRate: 0.08, local: true},
			{provider: "claude", model: "claude-sonnet", thinking: ptr("high"), ttft: 1200, e2e: 5200, tps: 75, pass: 0.97, errRate: 0.02, toolPass: 1, usdPerToken: 15e-6},
			{provider: "openai", model: "gpt-5-mini", thinking: ptr("low"), ttft: 600, e2e: 3100, tps: 95, pass: 0.9, errRate: 0.02, usdPerToken: 2e-6},
			{provider: "ollama", model: "gemma3:1b", ttft: 3, e2e: 400, tps: 120, pass: 0.45, errRate: 0.1, local: true},
			{provider: "ollama", model: "missing:7b", unavailable: true, local: true},
		},
	}
}

var promptNames = []string{"sanity_heartbeat", "exact_answer", "tool_free", "word_limit", "json_shape", "list_files",
	"count_lines", "refuse_unsafe", "summarise", "bullet_count", "disk_usage", "regex_extract"}

// write generates results.jsonl (through the real writer), the resource
// files, and the summary files as bench report writes them (buildSummary).
func (f fixture) write(tb testing.TB, dir string) {
	tb.Helper()
	w, err := results.Create(filepath.Join(dir, "results.jsonl"))
	if err != nil {
		tb.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	const t0 = int64(1771000000000)
	clock := t0
	for mi, m := range f.models {
		suiteStart := clock
		for p := range f.prompts {
			for rep := range f.reps {
				r := f.record(rng, m, p, rep, clock)
				clock = r.EndedAtMS + 5
				if err := w.Write(r); err != nil {
					tb.Fatal(err)
				}
			}
		}
		if f.samples && m.local {
			writeResources(tb, dir, m, mi, suiteStart, clock)
		}
		clock += 2000
	}
	if err := w.Close(); err != nil {
		tb.Fatal(err)
	}
	if err := buildSummary(dir); err != nil {
		tb.Fatal(err)
	}
}

// buildSummary writes dir's summary files from its results.jsonl as bench
// report does.
func buildSummary(dir string) error {
	s, err := report.LoadEach(dir, nil)
	if err != nil {
		return err
	}
	return report.Write(dir, s, nil)
}

// load builds a run directory's report data as bench report does: the
// summary (its pass matrix carries the cells' details), then the Data.
func load(dir string) (*Data, error) {
	s, err := report.LoadEach(dir, nil)
	if err != nil {
		return nil, err
	}
	return NewData(s, nil, dir), nil
}

func (f fixture) record(rng *rand.Rand, m fixtureModel, p, rep int, start int64) *results.Record {
	name := fmt.Sprintf("prompt_%d", p)
	if p < len(promptNames) {
		name = promptNames[p]
	}
	r := &results.Record{
		RecordType: results.RecordType, RunID: "20260214_101500", Provider: m.provider, ProviderType: m.provider,
		Model: m.model, ThinkingLevel: m.thinking, PromptID: fmt.Sprintf("P%d", p), PromptName: name,
		Repetition: rep, StartedAtMS: start,
	}
	// Half the prompts expect a tool: 30 tool cells a group, enough for
	// a model that always uses its tool to be a firm Tier 1.
	tool := p%2 == 1
	if tool {
		r.ExpectedTools = []string{"ls"}
	}
	if m.unavailable {
		r.AvailabilityStatus, r.FailureType = "skipped_unavailable", ptr("model_not_found")
		r.ErrorMessage = ptr(fmt.Sprintf("model %q not found; run ollama pull %s", m.model, m.model))
		r.EndedAtMS = start + 1
		return r
	}
	// Log-normal around the medians, with a heavier tail on some prompts.
	spreadF := 0.35 + 0.1*float64(p%3)
	ttft := m.ttft * math.Exp(rng.NormFloat64()*spreadF)
	e2e := ttft + (m.e2e-m.ttft)*math.Exp(rng.NormFloat64()*spreadF)
	r.E2EMS = int64(math.Round(e2e))
	r.EndedAtMS = start + r.E2EMS
	switch u := rng.Float64(); {
	case u < m.errRate:
		r.AvailabilityStatus, r.FailureType = "error", ptr("timeout")
		r.ErrorMessage = ptr("no complete answer within run.timeout (120s)")
		if tool {
			r.ToolUseSuccess = ptr(false)
		}
		return r
	case m.provider == "openai" && p == 3 && rep == 0:
		r.AvailabilityStatus, r.FailureType = "rate_limited", ptr("http_429")
		r.ErrorMessage = ptr("HTTP 429: rate limited")
		return r
	}
	r.AvailabilityStatus, r.Success = "ok", true
	if m.local && p == 1 && rep == 0 {
		// The server loads the model: a cold start, left out of the
		// summary's figures and so of the plotted distributions.
		r.ColdStart = true
		ttft += 4000
		r.E2EMS += 4000
		r.EndedAtMS += 4000
	}
	r.TTFTMS = ptr(int64(math.Round(ttft)))
	out := 40 + rng.IntN(400)
	r.OutputTokens = &out
	if m.usdPerToken > 0 {
		r.CostUSD, r.CostSource = ptr(float64(out)*m.usdPerToken), "pricing"
	}
	r.TokensPerS = ptr(math.Round(m.tps*math.Exp(rng.NormFloat64()*0.15)*100) / 100)
	r.RawOutput = f.raw
	r.RawOutputBytes = len(f.raw)
	if p == 6 && m.local {
		// P6's judge never answered the local models: check errors.
		r.CheckErrors = []results.CheckError{{Type: results.JudgeError, Check: "llm_judge", Message: "connection_refused: the judge is down"}}
	}
	if p%6 != 0 { // P0 and P6 have no check
		pass := rng.Float64() < m.pass
		r.ObjectivePass = &pass
		if !pass {
			r.Violation = ptr(fmt.Sprintf(`expected exactly 4 bullets, got %d: "<b>not bold</b> & <script>window.pwned=1</script>"`, 2+rng.IntN(4)))
		}
	}
	if tool {
		tp := m.toolPass
		if tp == 0 {
			tp = m.pass
		}
		ok := rng.Float64() < tp
		r.ToolUseSuccess = &ok
		if ok {
			r.ToolCalls, r.ToolCallCount = []string{"ls"}, 1
		}
	}
	return r
}

// writeResources writes the suite's resource record (the shape
// resources.SuiteRecord has) and its sample series every 500 ms.
func writeResources(tb testing.TB, dir string, m fixtureModel, mi int, start, end int64) {
	tb.Helper()
	base := filepath.Join(dir, "resources_"+safeName(m.provider)+"_"+safeName(m.model))
	if m.thinking != nil {
		base += "_" + *m.thinking
	}
	memBase := uint64(4<<30) + uint64(mi)<<28
	rec := map[string]any{
		"provider": m.provider, "provider_type": m.provider, "model": m.model, "thinking_level": m.thinking,
		"before": map[string]any{"cpu_percent": 3.5, "mem_used_bytes": memBase, "server": map[string]any{"rss_bytes": 60 << 20}},
		"after":  map[string]any{"cpu_percent": 12.0, "mem_used_bytes": memBase + 3<<30, "server": map[string]any{"rss_bytes": 2 << 30}},
		"peak":   map[string]any{"samples": (end - start) / 500, "interval_ms": 500, "cpu_percent": 97.5, "mem_used_bytes": memBase + 3<<30 + 1<<27, "server_rss_bytes": 2<<30 + 1<<26},
	}
	data, err := json.Marshal(rec)
	if err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(base+".json", data, 0o644); err != nil {
		tb.Fatal(err)
	}
	fh, err := os.Create(base + rundir.SamplesSuffix)
	if err != nil {
		tb.Fatal(err)
	}
	defer fh.Close()
	enc := json.NewEncoder(fh)
	for t := start; t <= end; t += 500 {
		x := float64(t-start) / float64(max(1, end-start))
		s := rundir.Sample{
			TimeMS:     t,
			CPUPercent: ptr(math.Round((40+45*math.Sin(x*20)*math.Sin(x*3))*10)/10 + 45),
			MemUsed:    ptr(memBase + uint64(x*float64(3<<30))),
			ServerRSS:  ptr(uint64(60<<20) + uint64(math.Min(1, x*4)*float64(2<<30))),
		}
		if *s.CPUPercent > 100 {
			s.CPUPercent = ptr(100.0)
		}
		if *s.CPUPercent < 0 {
			s.CPUPercent = ptr(0.0)
		}
		if err := enc.Encode(s); err != nil {
			tb.Fatal(err)
		}
	}
}

func safeName(s string) string {
	b := []byte(s)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '-' || c == '_') {
			b[i] = '_'
		}
	}
	return string(b)
}

// scaleFixture is n models x prompts x reps with mixed behaviour, no
// resource series, small raw outputs.
func scaleFixture(models, prompts, reps int) fixture {
	f := fixture{prompts: prompts, reps: reps, raw: "ok"}
	providers := []string{"ollama_openai", "ollama", "claude", "openai"}
	for i := range models {
		m := fixtureModel{
			provider: providers[i%len(providers)], model: fmt.Sprintf("model-%03d:%db", i, 1+i%14),
			ttft: 20 + float64(i%17)*40, e2e: 600 + float64(i%23)*250, tps: 15 + float64(i%31)*4,
			pass: 0.3 + 0.7*float64((i*37)%100)/100, errRate: float64(i%5) * 0.01,
		}
		if i%3 == 2 {
			m.thinking = ptr([]string{"low", "medium", "high"}[i%3])
		}
		f.models = append(f.models, m)
	}
	return f
}
