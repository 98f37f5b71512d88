// Package config reads bench.yaml: the types, the defaults, and one place
// where everything is validated before any request is sent. Every error names
// the file, the line and the field.
package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"bench/internal/yamlerr"
	"bench/prompts"
)

// Provider types bench knows.
const (
	TypeOllamaOpenAI    = "ollama_openai"
	TypeOllama          = "ollama"
	TypeOpenAIResponses = "openai_responses"
	TypeClaudeCodeCLI   = "claude_code_cli"
)

// Types lists the provider types in the order the docs give them.
var Types = []string{TypeOllamaOpenAI, TypeOllama, TypeOpenAIResponses, TypeClaudeCodeCLI}

// ThinkingLevels are the accepted non-null thinking levels.
var ThinkingLevels = []string{"low", "medium", "high", "xhigh"}

// Config is bench.yaml after defaults are filled in.
type Config struct {
	Run       Run        `yaml:"run" json:"run"`
	Providers []Provider `yaml:"providers" json:"providers"`
	Prompts   Prompts    `yaml:"prompts" json:"prompts"`

	// Path is the config file; PromptSet the prompts the run will use, in order.
	Path      string           `yaml:"-" json:"config_path"`
	PromptSet []prompts.Prompt `yaml:"-" json:"prompt_set"`
}

// Run holds the sweep-wide settings.
type Run struct {
	ID             string   `yaml:"id" json:"id"`
	OutDir         string   `yaml:"out_dir" json:"out_dir"`
	Concurrency    int      `yaml:"concurrency" json:"concurrency"`
	Repetitions    int      `yaml:"repetitions" json:"repetitions"`
	Timeout        Duration `yaml:"timeout" json:"timeout"`
	MaxOutputBytes int      `yaml:"max_output_bytes" json:"max_output_bytes"`
}

// Provider is one provider entry. Fields past Models apply to some types only;
// Validate rejects the ones that do not apply to the entry's type.
type Provider struct {
	Name           string    `yaml:"name" json:"name"`
	Type           string    `yaml:"type" json:"type"`
	BaseURL        string    `yaml:"base_url" json:"base_url,omitempty"`
	APIKeyEnv      string    `yaml:"api_key_env" json:"api_key_env,omitempty"`
	Concurrency    int       `yaml:"concurrency" json:"concurrency"`
	Models         []string  `yaml:"models" json:"models"`
	ThinkingLevels []*string `yaml:"thinking_levels" json:"thinking_levels"`

	// Sampling, for the protocols that take them.
	Temperature *float64 `yaml:"temperature" json:"temperature,omitempty"`
	Seed        *int     `yaml:"seed" json:"seed,omitempty"`
	MaxTokens   int      `yaml:"max_tokens" json:"max_tokens,omitempty"`

	// MaxRetries bounds retries on 429 and 5xx (openai_responses); nil = default.
	MaxRetries *int `yaml:"max_retries" json:"max_retries,omitempty"`

	// claude_code_cli.
	Command        string            `yaml:"command" json:"command,omitempty"`
	Env            map[string]string `yaml:"env" json:"-"`
	EnvKeys        []string          `yaml:"-" json:"env_keys,omitempty"`
	MaxTurns       int               `yaml:"max_turns" json:"max_turns,omitempty"`
	PermissionMode string            `yaml:"permission_mode" json:"permission_mode,omitempty"`
	AllowedTools   []string          `yaml:"allowed_tools" json:"allowed_tools,omitempty"`

	// ollama (native).
	Options   map[string]any `yaml:"options" json:"options,omitempty"`
	KeepAlive string         `yaml:"keep_alive" json:"keep_alive,omitempty"`
	Pull      bool           `yaml:"pull" json:"pull,omitempty"`
	Warmup    bool           `yaml:"warmup" json:"warmup,omitempty"`

	// Line is where the entry starts in the config file, for later errors.
	Line int `yaml:"-" json:"-"`
}

// Prompts says which prompt files to load and which ids to keep.
type Prompts struct {
	Files []string `yaml:"files" json:"files"`
	Only  []string `yaml:"only" json:"only"`
}

// Duration is a time.Duration written as "120s" in YAML and JSON.
type Duration time.Duration

// UnmarshalYAML accepts Go duration strings ("90s", "2m") or plain seconds.
func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.ScalarNode {
		return &Error{Line: n.Line, Msg: "expected a duration such as 120s"}
	}
	if secs, err := strconv.ParseFloat(n.Value, 64); err == nil {
		*d = Duration(secs * float64(time.Second))
		return nil
	}
	v, err := time.ParseDuration(n.Value)
	if err != nil {
		return &Error{Line: n.Line, Msg: fmt.Sprintf("%q is not a duration (use e.g. 120s or 2m)", n.Value)}
	}
	*d = Duration(v)
	return nil
}

// MarshalJSON writes the duration as a Go duration string.
func (d Duration) MarshalJSON() ([]byte, error) {
	return json.Marshal(time.Duration(d).String())
}

// Error is a config problem at a place in a file.
type Error = yamlerr.Error

// Load reads, defaults and validates a config file. The error, if any, joins
// every problem found, each as file:line: field: what is wrong.
func Load(path string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read config: %w", err)
	}
	return Parse(path, data)
}

// Parse is Load on bytes already read; path names the file in errors and
// anchors relative paths.
func Parse(path string, data []byte) (*Config, error) {
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return nil, yamlerr.Wrap(path, &root, err)
	}
	if len(root.Content) == 0 {
		return nil, &Error{File: path, Msg: "the file is empty; see bench.yaml in the README for the shape"}
	}
	var c Config
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&c); err != nil {
		return nil, yamlerr.Wrap(path, &root, err)
	}
	c.Path = path
	v := validator{file: path, root: node{root.Content[0]}}
	c.applyDefaults(&v)
	c.validate(&v)
	if len(v.errs) == 0 {
		c.loadPrompts(&v)
	}
	if len(v.errs) > 0 {
		return nil, errors.Join(v.errs...)
	}
	return &c, nil
}

// DefaultRunID is the run id used when none is given: the UTC time.
func DefaultRunID(now time.Time) string { return now.UTC().Format("20060102_150405") }

// DefaultBaseURL returns the base URL a provider type uses when none is set.
func DefaultBaseURL(typ string) string {
	switch typ {
	case TypeOllamaOpenAI:
		return "http://127.0.0.1:11434/v1"
	case TypeOllama:
		return "http://127.0.0.1:11434"
	case TypeOpenAIResponses:
		return "https://api.openai.com/v1"
	}
	return ""
}

func (c *Config) applyDefaults(v *validator) {
	r := &c.Run
	if r.ID == "" {
		r.ID = DefaultRunID(time.Now())
	}
	if r.OutDir == "" {
		r.OutDir = "runs"
	}
	if r.Concurrency == 0 {
		r.Concurrency = 4
	}
	if r.Repetitions == 0 {
		r.Repetitions = 1
	}
	if r.Timeout == 0 {
		r.Timeout = Duration(120 * time.Second)
	}
	if r.MaxOutputBytes == 0 {
		r.MaxOutputBytes = 64 << 10
	}
	provs := v.root.lookup("providers")
	for i := range c.Providers {
		p := &c.Providers[i]
		if provs != nil && i < len(provs.Content) {
			p.Line = provs.Content[i].Line
		}
		if p.Name == "" {
			p.Name = p.Type
		}
		if p.BaseURL == "" {
			p.BaseURL = DefaultBaseURL(p.Type)
		}
		if p.Type == TypeOpenAIResponses && p.APIKeyEnv == "" && p.BaseURL == DefaultBaseURL(TypeOpenAIResponses) {
			p.APIKeyEnv = "OPENAI_API_KEY"
		}
		if p.Type == TypeClaudeCodeCLI {
			if p.Command == "" {
				p.Command = "claude"
			}
			if p.MaxTurns == 0 {
				p.MaxTurns = 1
			}
		}
		if p.Concurrency == 0 {
			p.Concurrency = r.Concurrency
		}
		if len(p.ThinkingLevels) == 0 {
			p.ThinkingLevels = []*string{nil}
		}
		p.EnvKeys = p.EnvKeys[:0]
		for k := range p.Env {
			p.EnvKeys = append(p.EnvKeys, k)
		}
		sort.Strings(p.EnvKeys)
	}
}

var (
	envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	safeID  = regexp.MustCompile(`^[A-Za-z0-9._-]+$`)
)

func (c *Config) validate(v *validator) {
	r := c.Run
	if !safeID.MatchString(r.ID) || r.ID == "." || r.ID == ".." {
		v.add("run.id", "must be letters, digits, '.', '_' or '-' (it names a directory)")
	}
	if r.Concurrency < 1 {
		v.add("run.concurrency", "must be at least 1")
	}
	if r.Repetitions < 1 {
		v.add("run.repetitions", "must be at least 1")
	}
	if r.Timeout < 0 {
		v.add("run.timeout", "must be positive")
	}
	if r.MaxOutputBytes < 1 {
		v.add("run.max_output_bytes", "must be at least 1")
	}
	if len(c.Providers) == 0 {
		v.add("providers", "at least one provider is required")
	}
	names := map[string]int{}
	for i, p := range c.Providers {
		at := fmt.Sprintf("providers[%d]", i)
		field := func(f string) string { return at + "." + f }
		if p.Type == "" {
			v.addPath([]any{"providers", i}, field("type"), "missing; one of "+strings.Join(Types, ", "))
			continue
		}
		if !slices.Contains(Types, p.Type) {
			v.addPath([]any{"providers", i, "type"}, field("type"), fmt.Sprintf("unknown provider type %q; one of %s", p.Type, strings.Join(Types, ", ")))
			continue
		}
		if j, dup := names[p.Name]; dup {
			v.addPath([]any{"providers", i, "name"}, field("name"), fmt.Sprintf("%q is already the name of providers[%d]; give each entry its own name", p.Name, j))
		}
		names[p.Name] = i
		if !safeID.MatchString(p.Name) {
			v.addPath([]any{"providers", i, "name"}, field("name"), "must be letters, digits, '.', '_' or '-'")
		}
		if len(p.Models) == 0 {
			v.addPath([]any{"providers", i}, field("models"), "at least one model is required")
		}
		for j, m := range p.Models {
			if strings.TrimSpace(m) == "" {
				v.addPath([]any{"providers", i, "models", j}, fmt.Sprintf("%s[%d]", field("models"), j), "empty model name")
			}
		}
		if p.Concurrency < 1 {
			v.addPath([]any{"providers", i, "concurrency"}, field("concurrency"), "must be at least 1")
		}
		for j, t := range p.ThinkingLevels {
			if t != nil && !slices.Contains(ThinkingLevels, *t) {
				v.addPath([]any{"providers", i, "thinking_levels", j}, fmt.Sprintf("%s[%d]", field("thinking_levels"), j),
					fmt.Sprintf("%q is not a thinking level; use null or one of %s", *t, strings.Join(ThinkingLevels, ", ")))
			}
		}
		if p.APIKeyEnv != "" && looksLikeSecret(p.APIKeyEnv) {
			// Never echo the value: it may be a real key.
			v.addPath([]any{"providers", i, "api_key_env"}, field("api_key_env"),
				"holds what looks like a key itself; put the NAME of an environment variable here (e.g. OPENAI_API_KEY) and export the key in it")
		}
		if p.BaseURL != "" && !strings.HasPrefix(p.BaseURL, "http://") && !strings.HasPrefix(p.BaseURL, "https://") {
			v.addPath([]any{"providers", i, "base_url"}, field("base_url"), fmt.Sprintf("%q must start with http:// or https://", p.BaseURL))
		}
		if p.MaxRetries != nil && *p.MaxRetries < 0 {
			v.addPath([]any{"providers", i, "max_retries"}, field("max_retries"), "must be 0 or more")
		}
		for _, key := range p.inapplicable() {
			v.addPath([]any{"providers", i, key}, field(key), fmt.Sprintf("does not apply to type %s", p.Type))
		}
	}
	seenFile := map[string]bool{}
	for i, f := range c.Prompts.Files {
		if strings.TrimSpace(f) == "" {
			v.addPath([]any{"prompts", "files", i}, fmt.Sprintf("prompts.files[%d]", i), "empty path")
		}
		if seenFile[f] {
			v.addPath([]any{"prompts", "files", i}, fmt.Sprintf("prompts.files[%d]", i), fmt.Sprintf("%s is listed twice", f))
		}
		seenFile[f] = true
	}
}

// inapplicable lists the type-specific keys set on an entry of another type.
func (p *Provider) inapplicable() []string {
	var out []string
	set := func(key string, isSet bool, types ...string) {
		if isSet && !slices.Contains(types, p.Type) {
			out = append(out, key)
		}
	}
	set("command", p.Command != "", TypeClaudeCodeCLI)
	set("env", len(p.Env) > 0, TypeClaudeCodeCLI)
	set("max_turns", p.MaxTurns != 0, TypeClaudeCodeCLI)
	set("permission_mode", p.PermissionMode != "", TypeClaudeCodeCLI)
	set("allowed_tools", len(p.AllowedTools) > 0, TypeClaudeCodeCLI)
	set("options", len(p.Options) > 0, TypeOllama)
	set("keep_alive", p.KeepAlive != "", TypeOllama)
	set("pull", p.Pull, TypeOllama)
	set("warmup", p.Warmup, TypeOllama)
	set("max_retries", p.MaxRetries != nil, TypeOpenAIResponses)
	set("base_url", p.BaseURL != "", TypeOllamaOpenAI, TypeOllama, TypeOpenAIResponses)
	set("api_key_env", p.APIKeyEnv != "", TypeOllamaOpenAI, TypeOllama, TypeOpenAIResponses)
	set("temperature", p.Temperature != nil, TypeOllamaOpenAI, TypeOllama, TypeOpenAIResponses)
	set("seed", p.Seed != nil, TypeOllamaOpenAI, TypeOllama)
	set("max_tokens", p.MaxTokens != 0, TypeOllamaOpenAI, TypeOllama, TypeOpenAIResponses)
	return out
}

// looksLikeSecret tells a key pasted into api_key_env from a variable name.
func looksLikeSecret(s string) bool {
	if !envName.MatchString(s) {
		return true
	}
	// Long mixed-case or digit-heavy names are keys, not the UPPER_SNAKE
	// names people give variables.
	if len(s) >= 32 && strings.ToUpper(s) != s {
		return true
	}
	return false
}

func (c *Config) loadPrompts(v *validator) {
	set, err := LoadPromptSet(c)
	if err != nil {
		var fe *filterError
		if errors.As(err, &fe) {
			v.addPath([]any{"prompts", "only"}, "prompts.only", fe.Error())
			return
		}
		v.errs = append(v.errs, err)
		return
	}
	c.PromptSet = set
}

type filterError struct{ error }

// LoadPromptSet loads the prompts the config names (the built-in suite when
// prompts.files is empty), rejects duplicate ids across files, and keeps
// those in prompts.only.
func LoadPromptSet(c *Config) ([]prompts.Prompt, error) {
	var set []prompts.Prompt
	var errs []error
	if len(c.Prompts.Files) == 0 {
		builtin, err := prompts.Builtin()
		if err != nil {
			return nil, err
		}
		set = builtin
	} else {
		seen := map[string]string{}
		for _, f := range c.Prompts.Files {
			ps, err := prompts.LoadFile(c.Resolve(f))
			if err != nil {
				errs = append(errs, err)
				continue
			}
			for _, p := range ps {
				if where, dup := seen[p.ID]; dup {
					errs = append(errs, &Error{File: p.Source, Line: p.Line, Field: "id",
						Msg: fmt.Sprintf("duplicate prompt id %q (first defined at %s)", p.ID, where)})
					continue
				}
				seen[p.ID] = fmt.Sprintf("%s:%d", p.Source, p.Line)
				set = append(set, p)
			}
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	kept, err := Filter(set, c.Prompts.Only)
	if err != nil {
		return nil, &filterError{err}
	}
	return kept, nil
}

// Filter keeps the prompts whose ids are listed, in suite order; an empty list
// keeps all. An id that names no prompt is an error.
func Filter(set []prompts.Prompt, only []string) ([]prompts.Prompt, error) {
	if len(only) == 0 {
		return set, nil
	}
	want := map[string]bool{}
	for _, id := range only {
		want[id] = true
	}
	var out []prompts.Prompt
	for _, p := range set {
		if want[p.ID] {
			out = append(out, p)
			delete(want, p.ID)
		}
	}
	if len(want) > 0 {
		var missing, have []string
		for _, id := range only {
			if want[id] {
				missing = append(missing, id)
			}
		}
		for _, p := range set {
			have = append(have, p.ID)
		}
		return nil, fmt.Errorf("unknown prompt id %s (have %s)", strings.Join(missing, ", "), strings.Join(have, ", "))
	}
	return out, nil
}

// Resolve makes a path from the config relative to the config file's directory.
func (c *Config) Resolve(p string) string {
	if filepath.IsAbs(p) || c.Path == "" {
		return p
	}
	return filepath.Join(filepath.Dir(c.Path), p)
}

// RunDir is the run's output directory. out_dir is relative to the working
// directory when given on the command line, to the config file otherwise; the
// caller resolves it before calling.
func (c *Config) RunDir() string { return filepath.Join(c.Run.OutDir, c.Run.ID) }
