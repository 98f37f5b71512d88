package main

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"bench/internal/exitcode"
	"bench/internal/record/results"
	"bench/internal/testpeer/faultserver"
	"bench/internal/testpeer/otelcoltest"
)

// The secret matrix over every command (issue 31, items 2 and 7): a key
// planted in the config's key variable, echoed by a server in plain and in
// each standard encoding (base64 std and URL, padded or not, at each of
// the three alignments inside a longer blob; hex in both cases; URL
// encoding), and printed by command validators in the same forms on
// their stderr and in their verdict's reason, appears in no byte, after
// every decoding, of any file, stdout, stderr or OTLP export of bench run,
// rescore (whose checks run again: item 2's leak), merge, report, compare
// and history, of the request an llm_judge was sent, nor of what a command
// validator read on its stdin. A run directory whose results.jsonl holds
// the key (an older bench's leak, planted here by hand) is scrubbed by
// every reader that writes from it: report, merge, compare, history.

// specialKey is a key with characters base64's alphabets and URL encoding
// write differently, so every encoding is its own text.
func specialKey() string {
	const abc = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	r := func(n int) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = abc[rand.IntN(len(abc))]
		}
		return string(b)
	}
	return "sk-" + r(12) + "+" + r(12) + "/" + r(12) + "=" + r(6) + "~" + r(6)
}

var (
	base64Run = regexp.MustCompile(`[A-Za-z0-9+/_-]{11,}`)
	hexRun    = regexp.MustCompile(`[0-9a-fA-F]{16,}`)
	pctByte   = regexp.MustCompile(`%[0-9a-fA-F]{2}`)
)

// decodedViews are the texts a reader could recover from text: as it is,
// its JSON escapes read once and twice, its %XX escapes read (and + as a
// space), and every run of base64 (either alphabet, each of the four
// character alignments) or hex (both nibble alignments) decoded.
func decodedViews(text string) []string {
	views := []string{text, unescape(text), unescape(unescape(text))}
	for _, v := range views[:3] {
		views = append(views, pctByte.ReplaceAllStringFunc(v, func(m string) string {
			b, _ := hex.DecodeString(m[1:])
			return string(b)
		}))
	}
	var dec bytes.Buffer
	for _, v := range views[:3] {
		for _, run := range base64Run.FindAllString(v, -1) {
			std := strings.NewReplacer("-", "+", "_", "/").Replace(run)
			for shift := range 4 {
				if shift >= len(std) {
					break
				}
				s := std[shift:]
				if len(s)%4 == 1 {
					s = s[:len(s)-1]
				}
				if b, err := base64.RawStdEncoding.DecodeString(s); err == nil {
					dec.Write(b)
					dec.WriteByte('\n')
				}
			}
		}
		for _, run := range hexRun.FindAllString(v, -1) {
			for shift := range 2 {
				s := run[shift:]
				s = s[:len(s)/2*2]
				if b, err := hex.DecodeString(s); err == nil {
					dec.Write(b)
					dec.WriteByte('\n')
				}
			}
		}
	}
	return append(views, dec.String())
}

// leaksDecoded reports every 8-byte piece of a key in any decoded view of
// the texts.
func leaksDecoded(t *testing.T, where map[string]string, keys ...string) {
	t.Helper()
	for name, text := range where {
	next:
		for _, key := range keys {
			for v, view := range decodedViews(text) {
				for i := 0; i+8 <= len(key); i++ {
					if j := strings.Index(view, key[i:i+8]); j >= 0 {
						t.Errorf("%s holds %q, a piece of a key (view %d), in: %q", name, key[i:i+8], v, view[max(0, j-100):min(len(view), j+60)])
						break next
					}
				}
			}
		}
	}
}

// checkScript is a command validator that records what it read on stdin
// (under $STDIN_DIR) and prints the key it is given in every form: on
// stderr and exiting 3 with "error" as its argument (a validator_error
// quoting the stderr tail), else as a failing verdict's reason.
const checkScript = `#!/bin/sh
cat > "$STDIN_DIR/stdin.$$"
K="$BENCH_SECRET_KEY"
b64() { printf '%s' "$1" | base64 -w0; }
forms="plain $K b64 $(b64 "$K") b64at0 $(b64 "{\"k\":\"$K\"}") b64at1 $(b64 "{\"kk\":\"$K\"}") b64at2 $(b64 "{\"kkk\":\"$K\"}") url $(b64 "$K" | tr '+/' '-_') hex $(printf '%s' "$K" | od -An -tx1 | tr -d ' \n') pct $(printf '%s' "$K" | sed 's/+/%2B/g; s#/#%2F#g; s/=/%3D/g; s/~/%7E/g')"
if [ "$1" = error ]; then
  printf 'checker crashed: %s\n' "$forms" >&2
  exit 3
fi
printf '{"pass": false, "reason": "%s"}\n' "$forms"
`

func secretPrompts(script string) string {
	return fmt.Sprintf(`prompts:
  - id: K1
    name: judged_and_checked
    prompt: "Say the phrase: alpha"
    validators:
      - {type: command, argv: [%[1]q], env: [BENCH_SECRET_KEY, STDIN_DIR]}
      - {type: llm_judge, judge: judge, model: ok, rubric: "The answer says the phrase."}
  - id: K2
    name: checker_crashes
    prompt: "Say the phrase: beta"
    validator: {type: command, argv: [%[1]q, error], env: [BENCH_SECRET_KEY, STDIN_DIR]}
`, script)
}

func TestSecretMatrixEveryCommand(t *testing.T) {
	s := faultserver.Start(t)
	col := otelcoltest.Start(t)
	// key is the entries' api_key_env; token a header's ${VAR}, which the
	// readers know of from run.json's secret_env alone.
	key, token := specialKey(), specialKey()
	work := t.TempDir()
	stdinDir := filepath.Join(t.TempDir(), "stdin")
	os.MkdirAll(stdinDir, 0o755)
	env := []string{"BENCH_SECRET_KEY=" + key, "BENCH_GATEWAY_TOKEN=" + token, "STDIN_DIR=" + stdinDir,
		"OTEL_EXPORTER_OTLP_ENDPOINT=" + col.HTTPEndpoint(), "OTEL_EXPORTER_OTLP_PROTOCOL=http/json"}

	var models []string
	for n := range faultserver.EncodedForms {
		models = append(models, fmt.Sprintf("%s:%d", faultserver.EchoKeyEncoded, n))
	}
	models = append(models, faultserver.EchoKeyFrame, faultserver.EchoKey, faultserver.EchoKeyArgs)
	// The hosted kinds read each protocol's own frames; the scrub after
	// them is the records', the same for every kind: a few of the forms
	// (one base64, hex, URL encoding) are enough for them, on a busy
	// machine.
	hosted := []string{faultserver.EchoKeyFrame, faultserver.EchoKey, faultserver.EchoKeyArgs}
	for _, n := range []int{0, 13, 15} {
		hosted = append(hosted, fmt.Sprintf("%s:%d", faultserver.EchoKeyEncoded, n))
	}
	s.AddModels(models...)
	script := filepath.Join(work, "check.sh")
	os.WriteFile(script, []byte(checkScript), 0o755)
	os.WriteFile(filepath.Join(work, "prompts.yaml"), []byte(secretPrompts(script)), 0o644)
	cfg := fmt.Sprintf(`run:
  timeout: 60s
  warmup: false
  concurrency: 4
providers:
  - type: ollama_openai
    base_url: %[1]s/v1
    api_key_env: BENCH_SECRET_KEY
    max_retries: 0
    models: [%[2]s]
  - type: ollama
    base_url: %[1]s
    api_key_env: BENCH_SECRET_KEY
    max_retries: 0
    models: [%[2]s]
  - type: anthropic
    base_url: %[1]s/v1
    api_key_env: BENCH_SECRET_KEY
    max_retries: 0
    headers: {X-Gateway-Token: "gw ${BENCH_GATEWAY_TOKEN}"}
    models: [%[3]s]
  - type: openai_chat
    base_url: %[1]s/v1
    api_key_env: BENCH_SECRET_KEY
    max_retries: 0
    models: [%[3]s]
  - type: gemini
    base_url: %[1]s/v1beta
    api_key_env: BENCH_SECRET_KEY
    max_retries: 0
    models: [%[3]s]
  - name: judge
    type: ollama_openai
    base_url: %[1]s/v1
    api_key_env: BENCH_SECRET_KEY
    max_retries: 0
prompts:
  files: [prompts.yaml]
`, s.URL(), strings.Join(models, ", "), strings.Join(hosted, ", "))
	os.WriteFile(filepath.Join(work, "bench.yaml"), []byte(cfg), 0o644)

	where := map[string]string{}
	cmd := func(name string, want []int, args ...string) {
		t.Helper()
		code, stdout, stderr := benchIn(t, work, env, args...)
		where[name+" stdout"], where[name+" stderr"] = stdout, stderr
		if !slices.Contains(want, code) {
			t.Fatalf("bench %s: exit %d, want %v\n%s\n%s", strings.Join(args, " "), code, want, stdout, stderr)
		}
	}
	// run, then the run's checks again (the leak of item 2), its reports
	// again, and the two compared. The crashing checker leaves every group
	// without verdicts: run, rescore and merge exit 5 (issue 31, item 1).
	cmd("run", []int{exitcode.Unjudged}, "run", "--config", "bench.yaml", "--run-id", "a")
	cmd("rescore", []int{exitcode.Unjudged}, "rescore", "runs/a", "--out", "runs/a_rescored")
	cmd("report", []int{exitcode.OK, exitcode.Unjudged}, "report", "runs/a_rescored")
	cmd("compare", []int{exitcode.OK, exitcode.Regression}, "compare", "runs/a", "runs/a_rescored", "--out", "cmp")
	// Two shards, merged.
	cmd("shard 1", []int{exitcode.Unjudged}, "run", "--config", "bench.yaml", "--run-id", "s", "--out", "shards/1", "--shard", "1/2")
	cmd("shard 2", []int{exitcode.Unjudged}, "run", "--config", "bench.yaml", "--run-id", "s", "--out", "shards/2", "--shard", "2/2")
	cmd("merge", []int{exitcode.Unjudged}, "merge", "merged", "shards/1/s", "shards/2/s")

	// A run whose results.jsonl an older bench let the key into, in every
	// form, read by every command that writes from a run directory.
	planted := filepath.Join(work, "old", "planted")
	copyDir(t, filepath.Join(work, "runs", "a"), planted)
	plantKey(t, filepath.Join(planted, "results.jsonl"), key)
	plantKey(t, filepath.Join(planted, "results.jsonl"), token)
	plantedShard := filepath.Join(work, "old", "shard1")
	copyDir(t, filepath.Join(work, "shards", "1", "s"), plantedShard)
	plantKey(t, filepath.Join(plantedShard, "results.jsonl"), key)
	plantKey(t, filepath.Join(plantedShard, "results.jsonl"), token)
	cmd("report planted", []int{exitcode.OK, exitcode.Unjudged}, "report", planted)
	cmd("compare planted", []int{exitcode.OK, exitcode.Regression}, "compare", "runs/a", planted, "--out", "cmp_planted")
	cmd("merge planted", []int{exitcode.Unjudged}, "merge", "merged_planted", plantedShard, "shards/2/s")
	cmd("history", []int{exitcode.OK}, "history", "--out", "hist", "runs", "old", "merged", "merged_planted")

	// The matrix means something only if the key came back and the checks
	// ran: every encoding was answered, every checker saw a cell.
	recs := readRecords(t, filepath.Join(work, "runs", "a", "results.jsonl"))
	checkErrs := 0
	for _, r := range recs {
		checkErrs += len(r.CheckErrors)
	}
	// Each answer bench altered says so (read as text: the field is the
	// record's extra, raw_output_redacted).
	raw, _ := os.ReadFile(filepath.Join(work, "runs", "a", "results.jsonl"))
	redacted := strings.Count(string(raw), `"raw_output_redacted":true`)
	if want := 2*2*(len(faultserver.EncodedForms)+1) + 3*2*(3+1); redacted < want {
		t.Errorf("%d answers marked raw_output_redacted, want at least %d", redacted, want)
	}
	if checkErrs == 0 {
		t.Error("no check error recorded: the validators and the judge did not run")
	}
	rescored := readRecords(t, filepath.Join(work, "runs", "a_rescored", "results.jsonl"))
	if !strings.Contains(fmt.Sprint(rescored), "checker crashed: plain [redacted]") {
		t.Errorf("the rescored check errors do not quote the checker's stderr, scrubbed")
	}
	stdins, _ := filepath.Glob(filepath.Join(stdinDir, "stdin.*"))
	if len(stdins) < 2*len(models) {
		t.Errorf("the command validators read %d answers", len(stdins))
	}
	for _, p := range stdins {
		b, _ := os.ReadFile(p)
		where["a command's stdin "+filepath.Base(p)] = string(b)
	}
	judged := 0
	for _, r := range s.Requests() {
		if r.Model == "ok" {
			judged++
			where[fmt.Sprintf("judge request %d", judged)] = string(r.Body)
		}
	}
	if judged == 0 {
		t.Error("the judge was never asked")
	}
	for _, d := range []string{"runs", "cmp", "cmp_planted", "merged", "merged_planted", "hist", "old"} {
		readTree(t, where, d+"/", filepath.Join(work, d))
	}
	for _, f := range []string{"runs/a/results.jsonl", "runs/a_rescored/results.jsonl", "runs/a_rescored/summary.md", "runs/a_rescored/report.html",
		"runs/a_rescored/junit.xml", "runs/a_rescored/answers.html", "merged/results.jsonl", "merged_planted/results.jsonl", "old/planted/report.html",
		"cmp/compare.json", "cmp_planted/compare.json", "hist/history.json"} {
		if _, ok := where[f]; !ok {
			t.Errorf("no %s was written", f)
		}
	}
	col.Stop()
	otlp, err := os.ReadFile(col.OutputPath())
	if err != nil || len(otlp) == 0 {
		t.Fatalf("the collector received no spans (%v)", err)
	}
	where["otlp export"] = string(otlp)
	// The planted files themselves hold the key: that is the input.
	delete(where, "old/planted/results.jsonl")
	delete(where, "old/shard1/results.jsonl")
	leaksDecoded(t, where, key, token)
}

// plantKey writes the key, in every form, into every record's answer,
// error and check errors, as a bench that let it through would have.
func plantKey(t *testing.T, path, key string) {
	t.Helper()
	var forms []string
	for n := range faultserver.EncodedForms {
		forms = append(forms, faultserver.Encode(n, key))
	}
	leak := "leaked " + key + " " + strings.Join(forms, " ")
	var out bytes.Buffer
	for _, r := range readRecords(t, path) {
		r.RawOutput += " " + leak
		msg := leak
		r.ErrorMessage = &msg
		r.CheckErrors = append(r.CheckErrors, results.CheckError{Type: "validator_error", Check: "command", Message: leak})
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		out.Write(b)
		out.WriteByte('\n')
	}
	os.WriteFile(path, out.Bytes(), 0o644)
}
