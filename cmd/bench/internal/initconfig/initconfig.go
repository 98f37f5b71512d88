// Package initconfig writes the commented bench.yaml that `bench init`
// starts a user with: every key of the config with what it does, and the
// models of the Ollama it finds (or two small ones to pull).
//
// Layer: command (bench init's logic; cmd/bench keeps its flags).
package initconfig

import (
	"context"
	"errors"
	"fmt"
	iofs "io/fs"
	"net"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"text/template"
	"time"

	"github.com/ollama/ollama/api"
	"github.com/ollama/ollama/envconfig"

	"bench/config"
	"bench/internal/format"
	"bench/prompts"
	"bench/providers"
	"bench/report/compare"
)

// probeTimeout bounds the look for a running Ollama: bench init must
// answer at once whether or not one is there.
const probeTimeout = 3 * time.Second

// defaultModels go into bench.yaml when no Ollama answered: small models
// that run on a laptop, one with thinking.
var defaultModels = []string{"llama3.2:3b", "qwen3:4b"}

// ErrExists is Write's error for a file that is already there: it is never
// overwritten.
var ErrExists = iofs.ErrExist

// Write writes a new bench.yaml at path for the Ollama at base (see Base)
// and returns the notes to show the user (what was found, what to pull).
// It refuses a file that exists (ErrExists, even one that appeared while
// it looked), and checks that what it wrote loads.
func Write(path, base string, detect float64) (notes []string, err error) {
	if _, err := os.Stat(path); err == nil {
		return nil, fmt.Errorf("%s: %w", path, ErrExists)
	}
	data := describeOllama(base)
	if detect > 0 {
		plan, err := compare.PlanDetect(detect, data.NPrompts, data.nModels, "", compare.DefaultOptions())
		if err != nil {
			return nil, err
		}
		data.Detect = plan.Text()
	}
	var b strings.Builder
	if err := initFile.Execute(&b, data); err != nil {
		return nil, err
	}
	if err := writeNew(path, []byte(b.String())); err != nil {
		return nil, err
	}
	// What was written must load: a template slip is caught here, not by
	// the user's first run.
	if _, err := config.Load(path, providers.Kinds); err != nil {
		// The file is this call's (created above, never there before):
		// taking it back lets the next init write a good one.
		os.Remove(path)
		return nil, fmt.Errorf("the file written does not load (a bug in bench), so it was removed again:\n%w", err)
	}
	if data.Detect != "" {
		return append(data.Notes, data.Detect), nil
	}
	return data.Notes, nil
}

// initFile is what bench init writes. Every key of the README's bench.yaml
// is there, with what it does, so the file is its own documentation.
var initFile = template.Must(template.New("bench.yaml").Parse(`# bench.yaml, written by 'bench init' on {{.Date}}.
{{- range .Notes}}
# {{.}}
{{- end}}
#
# Run it:   bench run                (--dry-run first shows the plan)
# Then:     bench report RUN_DIR     rebuilds summary.md, report.html, junit.xml
run:
  id: ""                 # default: UTC timestamp YYYYMMDD_HHMMSS
  out_dir: runs          # relative to this file
  concurrency: 4         # cells in flight across all providers
  # Each cell repeated, with a repetition index in results. {{.Reps}} is what a
  # nightly gate needs: 'bench compare' judges one prompt's latency from
  # {{.Reps}} samples a side ({{.RepsWhy}}); with fewer it judges latency
  # per model only, across prompts. 1 is enough for a first look.
{{- if .Detect}}
  # bench init --detect: {{.Detect}}
{{- end}}
  repetitions: {{.Reps}}
  timeout: 120s          # per cell: the whole stream, retries included
  max_output_bytes: 65536
providers:
  # Ollama's OpenAI-compatible API. Add an entry of type ollama for its
  # native API (it can pull: true missing models and warmup: true them).
  - name: ollama_openai  # the provider value in results; defaults to type
    type: ollama_openai  # ollama_openai | ollama | openai_responses | claude_code_cli | anthropic | openai_chat | gemini
    base_url: {{.BaseURL}}/v1
    api_key_env: ""      # the NAME of an environment variable, never a key
    concurrency: 2       # per-provider limit
    models: [{{.Models}}]
{{- range .Left}}
    # {{.}}
{{- end}}
    thinking_levels: [null]   # null or low|medium|high|xhigh; one cell per level
    # temperature: 0
    # seed: 42
    # max_tokens: 512
  # A hosted model through the Responses API (the key stays in the variable):
  # - type: openai_responses
  #   api_key_env: OPENAI_API_KEY
  #   models: [gpt-5-mini]
  #   thinking_levels: [low]
  # The Claude Code CLI, one process per cell:
  # - type: claude_code_cli
  #   models: [sonnet]
prompts:
  files: []              # empty: the built-in suite ({{.NPrompts}} prompts, embedded)
  only: []               # optional list of prompt ids, e.g. [P0, P3]
`))

type initData struct {
	Date    string
	Notes   []string
	BaseURL string
	Models  string
	Left    []string
	// Reps are the repetitions a nightly compare needs, RepsWhy the sizes
	// they were worked out for.
	Reps    int
	RepsWhy string
	// NPrompts is the built-in suite's size, said wherever the file
	// counts its prompts.
	NPrompts int
	// Detect is the repetitions a chosen latency change needs (bench
	// init --detect), "" without it.
	Detect  string
	nModels int
}

// describeOllama fills what the written config says of the Ollama at
// base: its chat models, or what to start and pull.
func describeOllama(base string) initData {
	data := initData{Date: time.Now().UTC().Format("2006-01-02"), BaseURL: base}
	models, left, err := pulledModels(base)
	switch {
	case err != nil:
		data.Models = yamlList(defaultModels)
		data.Notes = []string{
			"No Ollama answered at " + base + " (" + err.Error() + ").",
			"Start it (ollama serve, or the desktop app) and pull the models below:",
			"  ollama pull " + strings.Join(defaultModels, " && ollama pull "),
		}
	case len(models) == 0:
		data.Models = yamlList(defaultModels)
		data.Notes = []string{"The Ollama at " + base + " has no chat model yet; pull the models below:",
			"  ollama pull " + strings.Join(defaultModels, " && ollama pull ")}
	default:
		data.Models = yamlList(models)
		data.Notes = []string{fmt.Sprintf("Found an Ollama at %s with %s: all are swept; trim the list to taste.", base, format.Plural(len(models), "chat model"))}
	}
	if len(left) > 0 {
		data.Left = []string{"left out, not chat models: " + strings.Join(left, ", ")}
	}
	n := len(models)
	if n == 0 {
		n = len(defaultModels)
	}
	builtin, _ := prompts.Builtin()
	data.NPrompts = len(builtin)
	data.Reps = compare.RepetitionsNeeded(len(builtin), n, compare.DefaultOptions())
	data.nModels = n
	data.RepsWhy = fmt.Sprintf("%s × %s", format.Plural(len(builtin), "built-in prompt"), format.Plural(n, "model"))
	return data
}

// Base is where to look for Ollama, as its own CLI would: flagValue (bench
// init --ollama), else OLLAMA_HOST, else the default port on loopback. The
// flag is read as OLLAMA_HOST is (host:port, host, :port or a URL), so what
// works in the variable works in the flag; a value it cannot use is an
// error.
func Base(flagValue string) (string, error) {
	u := envconfig.Host()
	if flagValue != "" {
		var err error
		if u, err = ollamaHost(flagValue); err != nil {
			return "", err
		}
	}
	if h := u.Hostname(); h == "0.0.0.0" || h == "::" {
		// A server bound to every interface is reached on loopback.
		u.Host = strings.Replace(u.Host, h, "127.0.0.1", 1)
		if h == "::" {
			u.Host = "127.0.0.1:" + u.Port()
		}
	}
	return strings.TrimRight(u.String(), "/"), nil
}

// ollamaHost reads an address the way Ollama's envconfig.Host reads
// OLLAMA_HOST (which reads only the environment, so its rules are
// repeated here): no scheme is http, no host is 127.0.0.1, no port is
// 11434 (80 or 443 for an explicit http:// or https://). Unlike Ollama it
// refuses what it cannot use rather than falling back to the default.
func ollamaHost(s string) (*url.URL, error) {
	s = strings.TrimSpace(s)
	port := "11434"
	scheme, hostport, ok := strings.Cut(s, "://")
	switch {
	case !ok:
		scheme, hostport = "http", s
	case scheme == "http":
		port = "80"
	case scheme == "https":
		port = "443"
	default:
		return nil, fmt.Errorf("--ollama %q: want http:// or https://, or host:port as OLLAMA_HOST takes", s)
	}
	hostport, path, _ := strings.Cut(hostport, "/")
	host, p, err := net.SplitHostPort(hostport)
	if err != nil {
		host = strings.Trim(hostport, "[]")
	} else {
		port = p
	}
	if host == "" {
		host = "127.0.0.1"
	}
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		return nil, fmt.Errorf("--ollama %q: the port %q is not a number from 1 to 65535", s, port)
	}
	u := &url.URL{Scheme: scheme, Host: net.JoinHostPort(host, port)}
	if path != "" {
		u.Path = "/" + path
	}
	if _, err := url.Parse(u.String()); err != nil || strings.ContainsAny(host, " /?#@") {
		return nil, fmt.Errorf("--ollama %q: not a host bench can reach", s)
	}
	return u, nil
}

// pulledModels lists the chat models of the Ollama at base, in its order
// (most recently modified first), and the embedding models left out. The
// look is bounded by probeTimeout.
func pulledModels(base string) (chat, left []string, err error) {
	u, err := url.Parse(base)
	if err != nil {
		return nil, nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), probeTimeout)
	defer cancel()
	list, err := api.NewClient(u, &http.Client{Timeout: probeTimeout}).List(ctx)
	if err != nil {
		return nil, nil, shortNetErr(err)
	}
	for _, m := range list.Models {
		fam := strings.ToLower(m.Details.Family + " " + strings.Join(m.Details.Families, " "))
		if strings.Contains(strings.ToLower(m.Name), "embed") || strings.Contains(fam, "bert") {
			left = append(left, m.Name)
			continue
		}
		chat = append(chat, m.Name)
	}
	return slices.Compact(chat), left, nil
}

// shortNetErr keeps the part of a connection error a person reads.
func shortNetErr(err error) error {
	msg := err.Error()
	if i := strings.LastIndex(msg, ": "); i >= 0 && strings.Contains(msg, "dial") {
		msg = msg[i+2:]
	}
	return errors.New(msg)
}

// writeNew creates path and writes data, failing if the file exists (even
// if it appeared after the check above).
func writeNew(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		os.Remove(path)
		return err
	}
	return f.Close()
}

// yamlList renders names as the items of a YAML flow sequence, quoting a
// name with characters YAML would read otherwise.
func yamlList(names []string) string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = n
		if n == "" || strings.IndexFunc(n, func(r rune) bool {
			return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("._:/-", r))
		}) >= 0 {
			out[i] = strconv.Quote(n)
		}
	}
	return strings.Join(out, ", ")
}
