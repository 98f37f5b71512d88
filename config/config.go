// Package config reads bench.yaml: the types, the defaults, and one place
// where everything is validated before any request is sent. Every error names
// the file, the line and the field.
//
// Layer: configuration (below planning; each provider kind decodes its own
// options).
package config

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"bench/internal/record/slo"

	"gopkg.in/yaml.v3"

	"bench/internal/record/pricing"
	"bench/internal/suggest"
	"bench/internal/yamlerr"
	"bench/prompts"
	"bench/validators"
)

// ThinkingLevels are the accepted non-null thinking levels.
var ThinkingLevels = []string{"low", "medium", "high", "xhigh"}

// Config is bench.yaml after defaults are filled in.
type Config struct {
	Run       Run        `yaml:"run" json:"run"`
	Providers []Provider `yaml:"-" json:"providers"`
	Prompts   Prompts    `yaml:"prompts" json:"prompts"`
	Traces    Traces     `yaml:"traces" json:"traces"`
	// Pricing is what each model costs, for each cell's cost_usd.
	Pricing pricing.Table `yaml:"pricing" json:"pricing,omitempty"`
	// Load is the run-wide load profile (load.go); nil: closed loop at each
	// entry's concurrency, as always.
	Load *LoadProfile `yaml:"load" json:"load,omitempty"`
	// SLO are the latency targets goodput is counted against.
	SLO *slo.SLO `yaml:"slo" json:"slo,omitempty"`

	// Path is the config file; PromptSet the prompts the run will use, in order.
	Path      string           `yaml:"-" json:"config_path"`
	PromptSet []prompts.Prompt `yaml:"-" json:"prompt_set"`
}

// Run holds the sweep-wide settings.
type Run struct {
	ID string `yaml:"id" json:"id"`
	// IDChosen says the id came from the file or a flag rather than the
	// clock: a chosen id that exists is refused, a clock one gets a suffix.
	IDChosen       bool     `yaml:"-" json:"-"`
	OutDir         string   `yaml:"out_dir" json:"out_dir"`
	Concurrency    int      `yaml:"concurrency" json:"concurrency"`
	Repetitions    int      `yaml:"repetitions" json:"repetitions"`
	Timeout        Duration `yaml:"timeout" json:"timeout"`
	MaxOutputBytes int      `yaml:"max_output_bytes" json:"max_output_bytes"`
	// Warmup is the default of each provider entry's warmup: one unrecorded
	// request per suite before its cells, so model load stays out of the
	// figures and is reported as the suite's load time.
	Warmup bool `yaml:"warmup" json:"warmup"`
	// Interleave mixes the cells of suites that share a server instead of
	// running them one suite at a time (for load tests of a server that
	// holds several models); swaps are then flagged as cold starts.
	Interleave bool `yaml:"interleave" json:"interleave"`
	// JudgeConcurrency bounds the external checks in flight at once (an
	// llm_judge's requests, command validators), apart from the cells'
	// slots: they run after a cell has ended.
	JudgeConcurrency int `yaml:"judge_concurrency" json:"judge_concurrency"`
	// MaxCostUSD is the run's budget in US dollars (nil: none): a run
	// whose projected cost passes it does not start (unless told to), and
	// a running one starts no cell its spent and in-flight cost would
	// take past it. Every model it sweeps needs a price.
	MaxCostUSD *float64 `yaml:"max_cost_usd" json:"max_cost_usd,omitempty"`
}

// Provider is one provider entry: the keys every kind shares, and the
// kind's own options, decoded and checked by the kind (see Kind).
type Provider struct {
	Name           string    `yaml:"name" json:"name"`
	Type           string    `yaml:"type" json:"type"`
	Concurrency    int       `yaml:"concurrency" json:"concurrency"`
	Models         []string  `yaml:"models" json:"models"`
	ThinkingLevels []*string `yaml:"thinking_levels" json:"thinking_levels"`
	// Warmup sends one unrecorded request before each of the entry's
	// suites (run.warmup when the entry does not say).
	Warmup bool `yaml:"warmup" json:"warmup"`
	// Load is the entry's load profile: its own load: block, replacing the
	// run-wide one whole, or the run-wide one.
	Load *LoadProfile `yaml:"load" json:"load,omitempty"`
	// MetricsURL is the server's Prometheus /metrics, scraped every
	// MetricsInterval during each of the entry's suites (the kind's
	// default where it knows one: an openai_chat server on this machine;
	// "off" for none).
	MetricsURL      string   `yaml:"metrics_url" json:"metrics_url,omitempty"`
	MetricsInterval Duration `yaml:"metrics_interval" json:"metrics_interval,omitempty"`

	// Options is the kind's options struct (a pointer, as Kind.Options made
	// it), written into config.json beside the shared keys.
	Options any `yaml:"-" json:"-"`
	// Server is where the kind's model server is, filled by Kind.Resolve.
	Server Server `yaml:"-" json:"-"`

	// Line is where the entry starts in the config file, for later errors.
	Line int `yaml:"-" json:"-"`
	// Unsaved, for an entry read back from config.json (LoadResolved),
	// holds what config.json records of values it never holds (a CLI's
	// env keys: their values may be keys), so Restore can find them.
	Unsaved map[string]json.RawMessage `yaml:"-" json:"-"`
}

// Server says where a provider's model server is, as its kind knows it.
type Server struct {
	// Endpoint is the base URL requests go to; "" for a local CLI.
	Endpoint string
	// ProcessNames are names the server's process may run under on this
	// machine, for finding it when the endpoint's port does not tell.
	ProcessNames []string
	// Command is the program a local-CLI kind runs for each cell (as
	// configured: a name or a path); "" for a kind that calls a server.
	// Traces name the CLI's span by its base name.
	Command string
	// Metrics is the server's Prometheus endpoint to scrape ("": none),
	// and MetricsInterval how often: the entry's metrics_url, or the
	// kind's default (Kind.Resolve sets it; metrics_url wins).
	Metrics         string
	MetricsInterval time.Duration
}

// DefaultMetricsInterval is how often a server's /metrics is scraped
// (AIPerf's default too): a stage of a few seconds gets tens of readings.
const DefaultMetricsInterval = 100 * time.Millisecond

// The bounds of metrics_interval.
const (
	minMetricsInterval = 10 * time.Millisecond
	maxMetricsInterval = 10 * time.Second
)

// resolveMetrics checks metrics_url and metrics_interval and settles
// the endpoint scraped: the entry's, "off", or the kind's default.
func (p *Provider) resolveMetrics(problem func(key, msg string)) {
	p.Server.MetricsInterval = time.Duration(p.MetricsInterval)
	switch iv := time.Duration(p.MetricsInterval); {
	case iv == 0:
		p.Server.MetricsInterval = DefaultMetricsInterval
	case iv < minMetricsInterval || iv > maxMetricsInterval:
		problem("metrics_interval", fmt.Sprintf("must be from %s to %s", minMetricsInterval, maxMetricsInterval))
	}
	switch u := strings.TrimSpace(p.MetricsURL); u {
	case "":
	case "off":
		p.Server.Metrics = ""
	default:
		if msg := checkMetricsURL(u); msg != "" {
			problem("metrics_url", msg)
			return
		}
		p.Server.Metrics = u
	}
}

// LoopbackHost says a URL's host is this machine (localhost, a loopback
// or unspecified address).
func LoopbackHost(host string) bool {
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && (ip.IsLoopback() || ip.IsUnspecified())
}

// checkMetricsURL says what is wrong with a metrics_url, "" if nothing.
// A password in it would be written to config.json: credentials go in no
// URL bench records.
func checkMetricsURL(s string) string {
	u, err := url.Parse(s)
	switch {
	case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
		return "must be an http:// or https:// URL (the server's /metrics), or off"
	case u.User != nil:
		return "must not hold credentials (user:password@): the URL is written to config.json"
	}
	return ""
}

// MarshalJSON writes the entry flat, as it is written in bench.yaml: the
// shared keys and the kind's options side by side.
func (p Provider) MarshalJSON() ([]byte, error) {
	type shared Provider
	out, err := json.Marshal(shared(p))
	if err != nil || p.Options == nil {
		return out, err
	}
	opts, err := json.Marshal(p.Options)
	if err != nil {
		return nil, err
	}
	if len(opts) <= 2 { // {}
		return out, nil
	}
	return append(append(out[:len(out)-1], ','), opts[1:]...), nil
}

// Prompts says which prompt files to load and which ids to keep.
type Prompts struct {
	// Suites are built-in suites to run (prompts.Suites: default, bfcl, injection);
	// with neither suites nor files (nor synthetic prompts), the default
	// suite.
	Suites []string     `yaml:"suites" json:"suites,omitempty"`
	Files  []PromptFile `yaml:"files" json:"files"`
	Only   []string     `yaml:"only" json:"only"`
	// Synthetic adds generated prompts of chosen lengths (prompts.Synthetic).
	Synthetic *Synthetic `yaml:"synthetic" json:"synthetic,omitempty"`
	// Conversations adds generated multi-turn conversations with a shared
	// prefix (prompts.Conversations), one prompt a turn.
	Conversations *Conversations `yaml:"conversations" json:"conversations,omitempty"`
	// Replay adds a recorded run's agentic turns, one prompt a model
	// request (prompts.Replay), for load.
	Replay *Replay `yaml:"replay" json:"replay,omitempty"`
}

// Replay is prompts.replay: the run directory whose agentic cells are
// replayed (relative to the config file).
type Replay struct {
	Run string `yaml:"run" json:"run"`
	// Line is where the block's run key is, for its errors.
	Line int `yaml:"-" json:"-"`
}

// Conversations is prompts.conversations: Count conversations of Turns
// turns, each turn sending the shared system prefix and the history so
// far. ContextTokens, when set, is the model's context: a conversation
// whose last turn would not fit is a config error.
type Conversations struct {
	Count         int    `yaml:"count" json:"count"`
	SystemTokens  int    `yaml:"system_tokens" json:"system_tokens"`
	Turns         int    `yaml:"turns" json:"turns"`
	UserTokens    int    `yaml:"user_tokens" json:"user_tokens"`
	OutputTokens  int    `yaml:"output_tokens" json:"output_tokens"`
	Seed          uint64 `yaml:"seed" json:"seed"`
	ContextTokens int    `yaml:"context_tokens" json:"context_tokens,omitempty"`
}

// Spec is the generator's shape of the block (count 1 and seed 1 when
// unset).
func (c *Conversations) Spec() prompts.ConversationSpec {
	return prompts.ConversationSpec{SystemTokens: c.SystemTokens, Turns: c.Turns, UserTokens: c.UserTokens, OutputTokens: c.OutputTokens,
		Conversations: max(c.Count, 1), Seed: cmp.Or(c.Seed, 1)}
}

// The bounds of prompts.conversations.
const (
	MaxConversations     = 10000
	MaxConversationTurns = 1000
)

// PromptFile is one entry of prompts.files: a prompt file (a path), or a
// data file with its template ({path: cases.csv, template: tickets.yaml};
// see package prompts). Paths are relative to the config file.
type PromptFile struct {
	Path     string
	Template string
	// Line is where the entry is in the config file.
	Line int
}

// UnmarshalYAML takes a path, or a mapping {path, template}.
func (f *PromptFile) UnmarshalYAML(n *yaml.Node) error {
	n = resolve(n)
	*f = PromptFile{Line: n.Line}
	switch n.Kind {
	case yaml.ScalarNode:
		if n.Tag != "!!str" {
			return &Error{Line: n.Line, Msg: "want a path, or {path: cases.csv, template: tickets.yaml}, got " + describe(n)}
		}
		f.Path = n.Value
		return nil
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], resolve(n.Content[i+1])
			if v.Kind != yaml.ScalarNode || v.Tag != "!!str" {
				return &Error{Line: v.Line, Msg: k.Value + ": want a path, got " + describe(v)}
			}
			switch k.Value {
			case "path":
				f.Path = v.Value
			case "template":
				f.Template = v.Value
			default:
				return &Error{Line: k.Line, Msg: fmt.Sprintf("unknown field %s%s (a data file entry is {path, template})", yamlerr.Quoted(k.Value), suggest.Hint(k.Value, []string{"path", "template"}))}
			}
		}
		if f.Path == "" {
			return &Error{Line: n.Line, Msg: "path: missing (the data file)"}
		}
		return nil
	}
	return &Error{Line: n.Line, Msg: "want a path, or {path: cases.csv, template: tickets.yaml}, got " + describe(n)}
}

// MarshalJSON writes a prompt file as its path, a data file as {path,
// template}, as bench.yaml has them.
func (f PromptFile) MarshalJSON() ([]byte, error) {
	if f.Template == "" {
		return json.Marshal(f.Path)
	}
	return json.Marshal(struct {
		Path     string `json:"path"`
		Template string `json:"template"`
	}{f.Path, f.Template})
}

// Synthetic is prompts.synthetic: one generated prompt per input length,
// each asking for OutputTokens, for input-length (prefill) sweeps. With
// no prompt files, the built-in suite is left out.
type Synthetic struct {
	InputTokens  []int `yaml:"input_tokens" json:"input_tokens"`
	OutputTokens int   `yaml:"output_tokens" json:"output_tokens"`
}

// MaxSyntheticTokens bounds a synthetic prompt's lengths.
const MaxSyntheticTokens = 1 << 20

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
		return &Error{Line: n.Line, Msg: fmt.Sprintf("%s is not a duration (use e.g. 120s or 2m)", yamlerr.Quoted(n.Value))}
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

// Kind is what the config needs of a provider kind: its name, its options
// and how to check them. The kinds live in package providers, which hands
// them to Load; config itself knows none of them.
type Kind interface {
	// Name is the type's name in bench.yaml.
	Name() string
	// Options returns a pointer to a new options struct holding the kind's
	// defaults. Its yaml tags are the keys the kind takes beside the shared
	// ones (name, type, concurrency, models, thinking_levels); its json tags
	// are what config.json records (never a secret value).
	Options() any
	// Resolve checks the decoded options and fills what depends on them
	// (derived defaults, p.Server). Each problem names its key.
	Resolve(p *Provider, problem func(key, msg string))
}

// Kinds is the registry of provider kinds, in the order the docs give them.
type Kinds interface {
	Kind(name string) (Kind, bool)
	Names() []string
}

// MaxOutputBytesLimit bounds run.max_output_bytes: what a cell keeps of
// each of its answer, reasoning and tool calls, and so its memory and its
// results line.
const MaxOutputBytesLimit = 4 << 20

// MaxCells bounds a plan: a config whose sweep has more cells is refused
// before anything is built (repetitions: 1000000000 would otherwise exhaust
// memory planning it).
const MaxCells = 1_000_000

// Load reads, defaults and validates a config file. The error, if any, joins
// every problem found, each as file:line: field: what is wrong.
func Load(path string, kinds Kinds) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read config: %w", err)
	}
	return Parse(path, data, kinds)
}

// Parse is Load on bytes already read; path names the file in errors and
// anchors relative paths.
func Parse(path string, data []byte, kinds Kinds) (*Config, error) {
	return parseBytes(path, data, kinds, nil)
}

// parseBytes is Parse with the command line's overrides (nil: none).
func parseBytes(path string, data []byte, kinds Kinds, over *Overrides) (*Config, error) {
	if err := yamlerr.CheckUTF8(path, data); err != nil {
		return nil, err
	}
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return nil, yamlerr.Wrap(path, &root, err)
	}
	if len(root.Content) == 0 {
		return nil, &Error{File: path, Msg: "the file is empty; see bench.yaml in the README for the shape"}
	}
	return parse(path, &root, kinds, true, over)
}

// parse decodes, defaults and validates a parsed document; with
// loadPrompts it also loads the prompt set and checks the plan's size.
// over, when not nil, is merged in before anything is checked.
func parse(path string, root *yaml.Node, kinds Kinds, loadPrompts bool, over *Overrides) (*Config, error) {
	c := Config{Path: path, Run: Run{OutDir: "runs", Concurrency: 4, Repetitions: 1,
		Timeout: Duration(120 * time.Second), MaxOutputBytes: 64 << 10, Warmup: true, JudgeConcurrency: 2}, Traces: defaultTraces()}
	d := &decoder{file: path}
	var provs struct {
		Node rawNode `yaml:"providers"`
	}
	d.mapping(root.Content[0], "", nil, &c, &provs)
	v := &validator{file: path, root: node{root.Content[0]}}
	c.decodeProviders(d, provs.Node.n, kinds)
	if over != nil {
		v.flags = over.apply(&c)
	}
	if c.Run.ID == "" {
		c.Run.ID = DefaultRunID(time.Now())
	} else {
		c.Run.IDChosen = true
	}
	// The checks run on what did decode (a value that did not keeps its
	// default), so a type error does not hide the problems after it.
	c.validate(v, kinds)
	v.errs = append(d.errs, v.errs...)
	// The prompts are loaded whatever else is wrong, so a bad prompt file
	// or an unknown prompts.only id comes in the same round as the rest.
	if loadPrompts {
		loaded := c.loadPrompts(v)
		// The judges the prompts name are checked whatever else is
		// wrong (a prompt file's other problems, bench.yaml's), over the
		// prompts that decoded; an entry only a judge would use, once
		// every prompt did.
		if len(c.Providers) > 0 {
			v.errs = append(v.errs, c.checkJudgeNames()...)
		}
		if loaded {
			v.errs = append(v.errs, c.checkJudgeEntries()...)
		}
		if len(v.errs) == 0 && over != nil {
			v.errs = append(v.errs, over.keep(&c)...)
		}
	}
	// This file's problems by line, then those of the prompt files, each
	// file's by line.
	v.errs = yamlerr.Flatten(v.errs...)
	files := map[string]int{}
	for _, e := range v.errs {
		if f := errFile(e); f != path {
			if _, ok := files[f]; !ok {
				files[f] = len(files)
			}
		}
	}
	slices.SortStableFunc(v.errs, func(a, b error) int {
		other := func(e error) int {
			if f := errFile(e); f != "" && f != path {
				return 1 + files[f] // in the order the files were read
			}
			return 0
		}
		return cmp.Or(cmp.Compare(other(a), other(b)), cmp.Compare(errLine(a), errLine(b)))
	})
	if len(v.errs) == 0 && loadPrompts {
		c.checkLoadSpans(v)
		c.checkSize(v)
	}
	if len(v.errs) > 0 {
		return nil, errors.Join(v.errs...)
	}
	return &c, nil
}

// errFile is the file of a positioned error, "" for others.
func errFile(err error) string {
	if e, ok := err.(*Error); ok {
		return e.File
	}
	return ""
}

// errLine is the line of a positioned error, 0 for others.
func errLine(err error) int {
	if e, ok := err.(*Error); ok {
		return e.Line
	}
	return 0
}

// rawNode keeps a YAML node for decoding by hand.
type rawNode struct{ n *yaml.Node }

func (r *rawNode) UnmarshalYAML(n *yaml.Node) error { r.n = n; return nil }

// decodeProviders decodes each entry's shared keys and its kind's options
// in one pass, so every problem of every entry is reported, each at its own
// line. A key of another kind is named as such.
func (c *Config) decodeProviders(d *decoder, n *yaml.Node, kinds Kinds) {
	n = resolve(n)
	if isNull(n) {
		return
	}
	if n.Kind != yaml.SequenceNode {
		d.fail(n, "providers", "wrong type: got "+describe(n)+", want a list")
		return
	}
	for i, item := range n.Content {
		at := fmt.Sprintf("providers[%d]", i)
		item = resolve(item)
		p := Provider{Line: item.Line}
		typ := lookupKey(item, "type")
		var kind Kind
		if typ != nil && typ.Kind == yaml.ScalarNode && typ.Tag == "!!str" {
			k, ok := kinds.Kind(typ.Value)
			if !ok {
				d.fail(typ, at+".type", fmt.Sprintf("unknown provider type %s%s; one of %s", yamlerr.Quoted(typ.Value),
					suggest.Hint(typ.Value, kinds.Names()), strings.Join(kinds.Names(), ", ")))
				// A misspelled type must not hide the entry's other
				// problems: its keys are checked against the kind it
				// was probably meant to be.
				k, _ = kinds.Kind(suggest.Closest(typ.Value, kinds.Names()))
			}
			kind = k
		}
		targets := []any{&p}
		if kind != nil {
			p.Options = kind.Options()
			targets = append(targets, p.Options)
		}
		d.mapping(item, at, func(key string) string {
			if kind == nil {
				// The type is missing, or unknown and like none: a key
				// is unknown when no kind has it.
				all := Keys(&p)
				for _, name := range kinds.Names() {
					other, _ := kinds.Kind(name)
					all = append(all, Keys(other.Options())...)
				}
				if slices.Contains(all, key) {
					return ""
				}
				return fmt.Sprintf("unknown field %s%s", yamlerr.Quoted(key), suggest.Hint(key, all))
			}
			for _, name := range kinds.Names() {
				if other, _ := kinds.Kind(name); name != kind.Name() && slices.Contains(Keys(other.Options()), key) {
					return fmt.Sprintf("does not apply to type %s (it is a key of %s)", kind.Name(), name)
				}
			}
			all := append(Keys(&p), Keys(p.Options)...)
			return fmt.Sprintf("unknown field %s%s", yamlerr.Quoted(key), suggest.Hint(key, all))
		}, targets...)
		if lookupKey(item, "concurrency") == nil {
			p.Concurrency = c.Run.Concurrency
		}
		if lookupKey(item, "warmup") == nil {
			p.Warmup = c.Run.Warmup
		}
		if n := lookupKey(item, "load"); n != nil && p.Load != nil {
			p.Load.Line = n.Line
		}
		c.Providers = append(c.Providers, p)
	}
}

// lookupKey returns the value node of key in a mapping node, or nil.
func lookupKey(n *yaml.Node, key string) *yaml.Node {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}

// DefaultRunID is the run id used when none is given: the UTC time.
func DefaultRunID(now time.Time) string { return now.UTC().Format("20060102_150405") }

var safeID = regexp.MustCompile(`^[A-Za-z0-9._-]+$`)

// MaxRunIDLen is the longest run id: it names a directory, which may get
// "_shard<i>of<N>" or "_<n>" appended, and a file name has 255 bytes.
const MaxRunIDLen = 200

// CheckRunID says why id cannot name a run directory, or nil: only
// letters, digits, '.', '_' and '-' (no separator, no newline or other
// control character to forge a line of output), not "." or "..", at most
// MaxRunIDLen bytes. run.id and --run-id are held to it alike.
func CheckRunID(id string) error {
	if !safeID.MatchString(id) || id == "." || id == ".." {
		return errors.New("must be letters, digits, '.', '_' or '-' (it names a directory)")
	}
	if len(id) > MaxRunIDLen {
		return fmt.Errorf("is %d characters; at most %d (it names a directory)", len(id), MaxRunIDLen)
	}
	return nil
}

func (c *Config) validate(v *validator, kinds Kinds) {
	r := c.Run
	if err := CheckRunID(r.ID); err != nil {
		v.add("run.id", err.Error())
	}
	if r.Concurrency < 1 {
		v.add("run.concurrency", "must be at least 1")
	}
	if r.Repetitions < 1 {
		v.add("run.repetitions", "must be at least 1")
	}
	if r.Timeout <= 0 {
		v.add("run.timeout", "must be more than 0 (e.g. 120s)")
	}
	if r.JudgeConcurrency < 1 {
		v.add("run.judge_concurrency", "must be at least 1")
	}
	if r.MaxOutputBytes < 1 || r.MaxOutputBytes > MaxOutputBytesLimit {
		v.add("run.max_output_bytes", fmt.Sprintf("must be from 1 to %d (4 MiB)", MaxOutputBytesLimit))
	}
	if len(c.Providers) == 0 {
		v.add("providers", "at least one provider is required")
	}
	names := map[string]int{}
	for i := range c.Providers {
		p := &c.Providers[i]
		at := fmt.Sprintf("providers[%d]", i)
		field := func(f string) string { return at + "." + f }
		if p.Type == "" {
			v.addPath([]any{"providers", i}, field("type"), "missing; one of "+strings.Join(kinds.Names(), ", "))
			continue
		}
		// An unknown type was reported while decoding; the entry's other
		// values are checked all the same, its kind's options only with it.
		kind, ok := kinds.Kind(p.Type)
		if p.Name == "" {
			p.Name = p.Type
		}
		if p.Concurrency < 1 {
			v.addPath([]any{"providers", i, "concurrency"}, field("concurrency"), "must be at least 1")
		}
		if len(p.ThinkingLevels) == 0 {
			p.ThinkingLevels = []*string{nil}
		}
		if j, dup := names[p.Name]; dup {
			v.addPath([]any{"providers", i, "name"}, field("name"), fmt.Sprintf("%q is already the name of providers[%d]; give each entry its own name", p.Name, j))
		}
		names[p.Name] = i
		if !safeID.MatchString(p.Name) {
			v.addPath([]any{"providers", i, "name"}, field("name"), "must be letters, digits, '.', '_' or '-'")
		}
		// An entry without models is only a judge: CheckJudges refuses
		// one that no llm_judge names, once the prompts are loaded.
		for j, m := range p.Models {
			if strings.TrimSpace(m) == "" {
				v.addPath([]any{"providers", i, "models", j}, fmt.Sprintf("%s[%d]", field("models"), j), "empty model name")
			}
		}
		for j, t := range p.ThinkingLevels {
			if t != nil && !slices.Contains(ThinkingLevels, *t) {
				v.addPath([]any{"providers", i, "thinking_levels", j}, fmt.Sprintf("%s[%d]", field("thinking_levels"), j),
					fmt.Sprintf("%s is not a thinking level; use null or one of %s", yamlerr.Quoted(*t), strings.Join(ThinkingLevels, ", ")))
			}
		}
		if ok {
			kind.Resolve(p, func(key, msg string) {
				v.addPath([]any{"providers", i, key}, field(key), msg)
			})
		}
		p.resolveMetrics(func(key, msg string) {
			v.addPath([]any{"providers", i, key}, field(key), msg)
		})
	}
	c.Traces.validate(v)
	for i, name := range c.Prompts.Suites {
		field := fmt.Sprintf("prompts.suites[%d]", i)
		switch {
		case !slices.Contains(prompts.Suites, name):
			v.addPath([]any{"prompts", "suites", i}, field, fmt.Sprintf("unknown suite %s; one of %s", yamlerr.Quoted(name), strings.Join(prompts.Suites, ", ")))
		case slices.Index(c.Prompts.Suites, name) < i:
			v.addPath([]any{"prompts", "suites", i}, field, fmt.Sprintf("%s is listed twice", name))
		}
	}
	c.validatePricing(v)
	c.validateBudget(v)
	c.validateLoad(v)
	seenFile := map[string]bool{}
	for i, f := range c.Prompts.Files {
		at := func(msg string) {
			v.addPath([]any{"prompts", "files", i}, fmt.Sprintf("prompts.files[%d]", i), msg)
		}
		switch {
		case strings.TrimSpace(f.Path) == "":
			at("empty path")
		case seenFile[f.Path]:
			at(fmt.Sprintf("%s is listed twice", f.Path))
		case prompts.IsData(f.Path) && f.Template == "":
			at(fmt.Sprintf("%s is a data file: give it a template, {path: %s, template: template.yaml}", f.Path, f.Path))
		case !prompts.IsData(f.Path) && f.Template != "":
			at(fmt.Sprintf("a template fills the rows of a data file (%s), and %s is a prompt file", strings.Join(prompts.DataExtensions, ", "), f.Path))
		}
		seenFile[f.Path] = true
	}
}

// JudgeNames are the provider entries the prompt set's llm_judge checks
// name, sorted.
func (c *Config) JudgeNames() []string {
	var out []string
	for i := range c.PromptSet {
		for _, s := range c.PromptSet[i].Checks() {
			if s.Type == validators.TypeLLMJudge && !slices.Contains(out, s.Judge) {
				out = append(out, s.Judge)
			}
		}
	}
	slices.Sort(out)
	return out
}

// CheckJudges checks the judges against the providers: every llm_judge
// names a provider entry (an error at the prompt's file and line), and an
// entry without models is one that some llm_judge names (it serves only
// as a judge).
func (c *Config) CheckJudges() []error {
	return append(c.checkJudgeNames(), c.checkJudgeEntries()...)
}

// checkJudgeNames is CheckJudges' first half: every llm_judge names a
// provider entry (one whose other keys did not decode too: its judge key
// is checked if it did).
func (c *Config) checkJudgeNames() []error {
	var errs []error
	names := make([]string, len(c.Providers))
	for i, p := range c.Providers {
		names[i] = p.Name
	}
	for i := range c.PromptSet {
		p := &c.PromptSet[i]
		for _, s := range p.Checks() {
			if s.Type == validators.TypeLLMJudge && s.Judge != "" && !slices.Contains(names, s.Judge) {
				errs = append(errs, &Error{File: p.Source, Line: s.Line, Field: "validator.judge",
					Msg: fmt.Sprintf("%s names no provider entry%s (entries: %s); a judge is one of bench.yaml's providers", yamlerr.Quoted(s.Judge), suggest.Hint(s.Judge, names), strings.Join(names, ", "))})
			}
		}
	}
	return errs
}

// checkJudgeEntries is CheckJudges' second half: an entry without models
// is one that some llm_judge names.
func (c *Config) checkJudgeEntries() []error {
	var errs []error
	judges := c.JudgeNames()
	for i, p := range c.Providers {
		if len(p.Models) == 0 && !slices.Contains(judges, p.Name) {
			errs = append(errs, &Error{File: c.Path, Line: p.Line, Field: fmt.Sprintf("providers[%d].models", i),
				Msg: "at least one model is required (an entry without models serves only as a judge, and no llm_judge names it)"})
		}
	}
	return errs
}

// Cells is how many cells the config's plan has.
func (c *Config) Cells() int64 {
	var n int64
	per := c.Run.Repetitions * len(c.PromptSet)
	for _, p := range c.Providers {
		n += int64(len(p.Models)) * int64(len(p.ThinkingLevels)) * p.Load.suiteCells(per)
	}
	return n
}

// checkSize refuses a plan past MaxCells, naming the count.
func (c *Config) checkSize(v *validator) {
	if n := c.Cells(); n > MaxCells {
		v.add("run.repetitions", fmt.Sprintf("the plan would have %d cells (models × thinking levels × prompts × repetitions), more than the limit of %d", n, MaxCells))
	}
}

// loadPrompts loads the prompt set into c.PromptSet and says whether it
// loaded whole; with an error, c.PromptSet holds what decoded (for
// checkJudgeNames).
func (c *Config) loadPrompts(v *validator) bool {
	if rp := c.Prompts.Replay; rp != nil {
		for _, at := range [][]any{{"prompts", "replay", "run"}, {"prompts", "replay"}} {
			if n := v.root.lookup(at...); n != nil && rp.Line == 0 {
				rp.Line = n.Line
			}
		}
	}
	set, err := loadPromptSet(c)
	c.PromptSet = set
	if err != nil {
		var fe *filterError
		if errors.As(err, &fe) {
			v.addPath([]any{"prompts", "only"}, "prompts.only", fe.Error())
			return false
		}
		v.errs = append(v.errs, err)
		return false
	}
	return true
}

type filterError struct{ error }

// loadPromptSet loads the prompts the config names (the built-in suite when
// prompts.files is empty), rejects duplicate ids across files, and keeps
// those in prompts.only.
func loadPromptSet(c *Config) ([]prompts.Prompt, error) {
	var set []prompts.Prompt
	var errs []error
	suites := c.Prompts.Suites
	if len(suites) == 0 && len(c.Prompts.Files) == 0 && c.Prompts.Synthetic == nil && c.Prompts.Conversations == nil && c.Prompts.Replay == nil {
		suites = []string{prompts.SuiteDefault}
	}
	seen := map[string]string{}
	add := func(ps []prompts.Prompt) {
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
	for _, name := range uniqueSuites(suites) {
		ps, err := prompts.Suite(name)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		add(ps)
	}
	for _, f := range c.Prompts.Files {
		var ps []prompts.Prompt
		var err error
		if f.Template != "" {
			ps, err = prompts.LoadData(c.Resolve(f.Path), c.Resolve(f.Template))
		} else {
			ps, err = prompts.LoadFile(c.Resolve(f.Path))
		}
		if err != nil {
			errs = append(errs, err)
		}
		add(ps) // with an error, what of the file decoded
	}
	if sy := c.Prompts.Synthetic; sy != nil {
		var ps []prompts.Prompt
		for _, n := range sy.InputTokens {
			p := prompts.Synthetic(n, sy.OutputTokens)
			if _, dup := seen[p.ID]; dup || slices.ContainsFunc(ps, func(q prompts.Prompt) bool { return q.ID == p.ID }) {
				continue // a length listed twice
			}
			ps = append(ps, p)
		}
		add(ps)
	}
	if cv := c.Prompts.Conversations; cv != nil {
		add(prompts.Conversations(cv.Spec()))
	}
	if rp := c.Prompts.Replay; rp != nil {
		if rp.Run == "" {
			errs = append(errs, &Error{File: c.Path, Line: rp.Line, Field: "prompts.replay.run", Msg: "name the run directory whose agentic cells to replay"})
		} else if ps, err := prompts.Replay(c.Resolve(rp.Run)); err != nil {
			var re *prompts.ReplayError
			if errors.As(err, &re) {
				err = &Error{File: c.Path, Line: rp.Line, Field: "prompts.replay." + re.Field, Msg: re.Msg}
			}
			errs = append(errs, err)
		} else {
			add(ps)
		}
	}
	if len(errs) > 0 {
		return set, errors.Join(errs...)
	}
	kept, err := Filter(set, c.Prompts.Only)
	if err != nil {
		return nil, &filterError{err}
	}
	return kept, nil
}

// uniqueSuites drops a suite named twice (validate reports it) and names
// no built-in one twice.
func uniqueSuites(names []string) []string {
	var out []string
	for _, n := range names {
		if !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out
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
		// A suite of 200 prompts is not listed whole on one line.
		const listed = 20
		list := strings.Join(have[:min(len(have), listed)], ", ")
		if len(have) > listed {
			list = fmt.Sprintf("%d prompts: %s, and %d more", len(have), list, len(have)-listed)
		}
		return nil, fmt.Errorf("unknown prompt id %s (have %s)", strings.Join(missing, ", "), list)
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

// validatePricing checks the pricing block: each entry names a provider
// entry or a model of the config (or both, the model one of that entry's),
// has input and output prices, no negative one, and no two entries price
// the same thing.
func (c *Config) validatePricing(v *validator) {
	entries := map[string]*Provider{}
	models := map[string]bool{}
	for i := range c.Providers {
		p := &c.Providers[i]
		name := p.Name
		if name == "" {
			name = p.Type
		}
		entries[name] = p
		for _, m := range p.Models {
			models[m] = true
		}
	}
	seen := map[[2]string]int{}
	for i, e := range c.Pricing {
		at := fmt.Sprintf("pricing[%d]", i)
		path := func(key string) []any { return []any{"pricing", i, key} }
		switch {
		case e.Provider == "" && e.Model == "":
			v.addPath([]any{"pricing", i}, at, "names neither a model nor a provider entry; give model:, provider: or both")
			continue
		case e.Provider != "" && entries[e.Provider] == nil:
			v.addPath(path("provider"), at+".provider", fmt.Sprintf("%s is not the name of a provider entry", yamlerr.Quoted(e.Provider)))
		case e.Provider != "" && e.Model != "" && !slices.Contains(entries[e.Provider].Models, e.Model):
			v.addPath(path("model"), at+".model", fmt.Sprintf("%s is not a model of provider entry %s", yamlerr.Quoted(e.Model), yamlerr.Quoted(e.Provider)))
		case e.Provider == "" && !models[e.Model]:
			v.addPath(path("model"), at+".model", fmt.Sprintf("%s is not a model of any provider entry", yamlerr.Quoted(e.Model)))
		}
		if key, msg := e.Check(); key != "" {
			v.addPath(path(key), at+"."+key, msg)
		}
		k := [2]string{e.Provider, e.Model}
		if j, dup := seen[k]; dup {
			v.addPath([]any{"pricing", i}, at, fmt.Sprintf("prices the same provider and model as pricing[%d]", j))
		}
		seen[k] = i
	}
}

// validateBudget checks run.max_cost_usd: more than 0, and a price for
// every model it pays for, since a model without one cannot be counted
// (and is never counted as free).
func (c *Config) validateBudget(v *validator) {
	b := c.Run.MaxCostUSD
	if b == nil {
		return
	}
	if !(*b > 0) || *b > MaxCostUSDLimit {
		v.add("run.max_cost_usd", fmt.Sprintf("%v: must be more than 0 USD and at most %g (leave it out for no budget)", *b, float64(MaxCostUSDLimit)))
		return
	}
	for _, u := range c.Unpriced() {
		v.addPath([]any{"providers", u.Entry, "models", u.Model}, fmt.Sprintf("providers[%d].models[%d]", u.Entry, u.Model), u.Msg)
	}
}

// Unpriced is a swept model without a price: providers[Entry].models[Model].
type Unpriced struct {
	Entry, Model int
	Msg          string
}

// Unpriced are the swept models the pricing block has no price for: a
// budget cannot count them.
func (c *Config) Unpriced() []Unpriced {
	var out []Unpriced
	for i, p := range c.Providers {
		name := p.Name
		if name == "" {
			name = p.Type
		}
		for j, m := range p.Models {
			if c.Pricing.Lookup(name, m) == nil {
				out = append(out, Unpriced{i, j, fmt.Sprintf("%s of %s has no price in the pricing block, and run.max_cost_usd cannot count it (give it one, 0 for a free model)",
					yamlerr.Quoted(m), yamlerr.Quoted(name))})
			}
		}
	}
	return out
}

// MaxCostUSDLimit bounds run.max_cost_usd: a budget is money, not a
// disabled check.
const MaxCostUSDLimit = 1e9
