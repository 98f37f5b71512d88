package main

// The docs as a reader uses them: every command the README gives runs as
// written, every script and package a doc names exists, and no relative
// link or #anchor points nowhere. The demo and the test command themselves
// are run by .ci/run, which this checks calls them.

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"

	"bench/internal/exitcode"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/text"
	"gopkg.in/yaml.v3"
	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

// repoRoot is the checkout, seen from cmd/bench.
const repoRoot = "../.."

// readmeMaxLines keeps the README to what a user types first.
const readmeMaxLines = 250

// sampleVars are the values the README's shell variables take when its
// commands are checked; a variable missing here fails the test, so a new
// one is given a value on purpose.
var sampleVars = map[string]string{
	"night": "20261122",
	"base":  "--baseline runs/baseline",
}

// sampleExprs are the values of the GitHub Actions expressions (${{ ... }})
// in the README's workflow.
var sampleExprs = map[string]string{
	"matrix.shard": "1",
}

// mdDoc is one markdown file, parsed.
type mdDoc struct {
	rel    string // path from the repository root
	src    []byte
	blocks []codeBlock
	links  []mdLink
	// anchors are the #fragments its headings get on GitHub.
	anchors map[string]bool
}

type codeBlock struct {
	lang, text string
	line       int
}

type mdLink struct {
	dest string
	line int
}

// docFiles are the markdown files a person reads.
func docFiles(t *testing.T) []string {
	t.Helper()
	files := []string{"README.md", "CONTRIBUTING.md"}
	more, err := filepath.Glob(filepath.Join(repoRoot, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	if len(more) == 0 {
		t.Fatal("docs/ has no markdown files")
	}
	for _, f := range more {
		rel, _ := filepath.Rel(repoRoot, f)
		files = append(files, filepath.ToSlash(rel))
	}
	return files
}

func parseDoc(t *testing.T, rel string) *mdDoc {
	t.Helper()
	src, err := os.ReadFile(filepath.Join(repoRoot, rel))
	if err != nil {
		t.Fatal(err)
	}
	d := &mdDoc{rel: rel, src: src, anchors: map[string]bool{}}
	root := goldmark.New().Parser().Parse(text.NewReader(src))
	seen := map[string]int{}
	err = ast.Walk(root, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch n := n.(type) {
		case *ast.FencedCodeBlock:
			var b strings.Builder
			lines := n.Lines()
			for i := 0; i < lines.Len(); i++ {
				seg := lines.At(i)
				b.Write(seg.Value(src))
			}
			line := 0
			if lines.Len() > 0 {
				first := lines.At(0)
				line = lineOf(src, first.Start)
			}
			d.blocks = append(d.blocks, codeBlock{lang: string(n.Language(src)), text: b.String(), line: line})
		case *ast.Link:
			d.links = append(d.links, mdLink{dest: string(n.Destination), line: nodeLine(n, src)})
		case *ast.Image:
			d.links = append(d.links, mdLink{dest: string(n.Destination), line: nodeLine(n, src)})
		case *ast.Heading:
			s := slug(inlineText(n, src))
			if k := seen[s]; k > 0 {
				d.anchors[fmt.Sprintf("%s-%d", s, k)] = true
			} else {
				d.anchors[s] = true
			}
			seen[s]++
		}
		return ast.WalkContinue, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// lineOf is the 1-based line of a byte offset.
func lineOf(src []byte, off int) int { return bytes.Count(src[:off], []byte("\n")) + 1 }

// nodeLine is the line of an inline node's first text, 0 when it has none.
func nodeLine(n ast.Node, src []byte) int {
	line := 0
	ast.Walk(n, func(c ast.Node, entering bool) (ast.WalkStatus, error) {
		if t, ok := c.(*ast.Text); ok && entering {
			line = lineOf(src, t.Segment.Start)
			return ast.WalkStop, nil
		}
		return ast.WalkContinue, nil
	})
	return line
}

// inlineText is a heading's text as GitHub slugs it: its words and code
// spans, without markup.
func inlineText(n ast.Node, src []byte) string {
	var b strings.Builder
	ast.Walk(n, func(c ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch c := c.(type) {
		case *ast.Text:
			b.Write(c.Segment.Value(src))
			if c.SoftLineBreak() {
				b.WriteByte(' ')
			}
		case *ast.String:
			b.Write(c.Value)
		}
		return ast.WalkContinue, nil
	})
	return b.String()
}

// slug is the anchor GitHub gives a heading: lower case, punctuation and
// symbols dropped (but - and _), each space a -.
func slug(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(s)) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsNumber(r) || unicode.IsMark(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

func TestSlug(t *testing.T) {
	for in, want := range map[string]string{
		"Nightly CI":                       "nightly-ci",
		"bench run --shard i/N":            "bench-run---shard-in",
		"results.jsonl":                    "resultsjsonl",
		"Running a sweep: bench init":      "running-a-sweep-bench-init",
		"Tool-use tiers and routing_ready": "tool-use-tiers-and-routing_ready",
		"models × prompts":                 "models--prompts",
	} {
		if got := slug(in); got != want {
			t.Errorf("slug(%q) = %q, want %q", in, got, want)
		}
	}
}

// The README is short, and its first command is the demo.
func TestReadmeShape(t *testing.T) {
	d := parseDoc(t, "README.md")
	if n := bytes.Count(d.src, []byte("\n")); n > readmeMaxLines {
		t.Errorf("README.md has %d lines, at most %d: move the reference to docs/", n, readmeMaxLines)
	}
	first := ""
	for _, b := range d.blocks {
		if isShell(b.lang) {
			first = strings.TrimSpace(strings.SplitN(b.text, "\n", 2)[0])
			break
		}
	}
	if first != "scripts/demo.sh" {
		t.Errorf("the README's first command is %q, want scripts/demo.sh (the main job first)", first)
	}
}

// No relative link in the docs points at a missing file or heading.
func TestDocLinks(t *testing.T) {
	docs := map[string]*mdDoc{}
	files := docFiles(t)
	for _, f := range files {
		docs[f] = parseDoc(t, f)
	}
	checked := 0
	for _, f := range files {
		d := docs[f]
		for _, l := range d.links {
			if l.dest == "" || strings.Contains(l.dest, "://") || strings.HasPrefix(l.dest, "mailto:") {
				continue
			}
			checked++
			target, frag, _ := strings.Cut(l.dest, "#")
			rel := f
			if target != "" {
				rel = path.Clean(path.Join(path.Dir(f), target))
				if strings.HasPrefix(rel, "../") {
					t.Errorf("%s:%d: link %s leaves the repository", f, l.line, l.dest)
					continue
				}
				if _, err := os.Stat(filepath.Join(repoRoot, rel)); err != nil {
					t.Errorf("%s:%d: link %s: %s does not exist", f, l.line, l.dest, rel)
					continue
				}
			}
			if frag == "" {
				continue
			}
			td, ok := docs[rel]
			if !ok && strings.HasSuffix(rel, ".md") {
				td = parseDoc(t, rel)
				docs[rel] = td
			}
			if td != nil && !td.anchors[frag] {
				t.Errorf("%s:%d: link %s: %s has no heading #%s", f, l.line, l.dest, rel, frag)
			}
		}
	}
	if checked == 0 {
		t.Fatal("no relative links found: the parser found nothing to check")
	}
}

// Every command in the README runs as written: bench commands in order in
// one directory, `bench init` for real (no Ollama answers), `bench run`
// with --dry-run, the others parsed with -h after their flags; scripts
// exist and .ci/run runs each one the README names.
func TestReadmeCommands(t *testing.T) {
	d := parseDoc(t, "README.md")
	c := &cmdChecker{t: t, root: mustAbs(t, repoRoot), live: true, configExample: configExample(t)}
	t.Chdir(t.TempDir())
	t.Setenv("OLLAMA_HOST", "http://127.0.0.1:9") // nothing listens: bench init writes its defaults
	t.Setenv(envShardCount, "")
	for _, cmd := range shellCommands(t, d) {
		c.check(cmd)
	}
	if c.bench == 0 {
		t.Fatal("no bench command found in the README")
	}
	ci := shellCalls(t, readFile(t, filepath.Join(c.root, ".ci", "run")), ".ci/run", nil)
	var called []string
	for _, call := range ci {
		called = append(called, call.args[0])
	}
	for _, s := range c.scripts {
		if !slices.Contains(called, s) {
			t.Errorf("the README names %s but .ci/run does not run it", s)
		}
	}
	if !slices.Contains(c.scripts, "scripts/test.sh") {
		t.Error("the README does not give the test command scripts/test.sh")
	}
}

// The commands in CONTRIBUTING.md and docs/ name real scripts, packages,
// tests and benchmarks, and their bench lines parse.
func TestDocCommands(t *testing.T) {
	c := &cmdChecker{t: t, root: mustAbs(t, repoRoot)}
	for _, f := range docFiles(t)[1:] {
		for _, cmd := range shellCommands(t, parseDoc(t, f)) {
			c.check(cmd)
		}
	}
	if c.bench == 0 || c.goTests == 0 {
		t.Fatalf("found %d bench and %d go test commands in the docs; the extraction is broken", c.bench, c.goTests)
	}
}

// The YAML examples of docs/ load: the bench.yaml of config.md, every
// prompt file, and the traces: block.
func TestDocConfigExamples(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "bench.yaml")
	writeFile(t, cfg, configExample(t))
	docDryRun(t, "docs/config.md's bench.yaml", cfg)

	minimal := "providers:\n  - type: ollama\n    models: [m]\n"
	prompts, traces := 0, 0
	for _, f := range docFiles(t)[2:] {
		// A doc's bench.yaml (a block with providers) is the config of the
		// prompt file right after it: its judges are what its checks name.
		docCfg := ""
		for _, b := range parseDoc(t, f).blocks {
			if b.lang != "yaml" {
				continue
			}
			var top map[string]yaml.Node
			if err := yaml.Unmarshal([]byte(b.text), &top); err != nil {
				continue // a Kubernetes manifest of several documents, say
			}
			where := fmt.Sprintf("%s:%d", f, b.line)
			if _, ok := top["providers"]; ok {
				docCfg = b.text
			}
			if p, ok := top["prompts"]; ok && p.Kind == yaml.SequenceNode {
				pf := filepath.Join(dir, fmt.Sprintf("prompts%d.yaml", prompts))
				writeFile(t, pf, b.text)
				docPrograms(t, pf, b.text)
				c := filepath.Join(dir, fmt.Sprintf("prompts%d-bench.yaml", prompts))
				writeFile(t, c, withPromptFile(t, minimal, docCfg, pf))
				docCfg = "" // it names the prompt file right after it only
				docDryRun(t, where, c)
				prompts++
			}
			if _, ok := top["traces"]; ok {
				c := filepath.Join(dir, fmt.Sprintf("traces%d-bench.yaml", traces))
				writeFile(t, c, minimal+b.text)
				docDryRun(t, where, c)
				traces++
			}
		}
	}
	if prompts < 2 || traces < 1 {
		t.Errorf("found %d prompt files and %d traces blocks in docs/, want the config and agentic examples", prompts, traces)
	}
}

// withPromptFile is the doc's own bench.yaml (or the minimal one) with
// the prompt file pf as its only prompts.
func withPromptFile(t *testing.T, minimal, docCfg, pf string) string {
	t.Helper()
	if docCfg == "" {
		return minimal + "prompts:\n  files: [" + pf + "]\n"
	}
	var m map[string]any
	if err := yaml.Unmarshal([]byte(docCfg), &m); err != nil {
		t.Fatalf("a doc's bench.yaml: %v", err)
	}
	m["prompts"] = map[string]any{"files": []string{pf}}
	b, err := yaml.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// docPrograms creates the command validators' programs a doc's prompt
// file names by path (a dry run checks that each exists and runs).
func docPrograms(t *testing.T, pf, text string) {
	t.Helper()
	type check struct{ Argv []string }
	var doc struct {
		Prompts []struct {
			Validator  *check
			Validators []check
		}
	}
	if err := yaml.Unmarshal([]byte(text), &doc); err != nil {
		return
	}
	for _, p := range doc.Prompts {
		checks := p.Validators
		if p.Validator != nil {
			checks = append(checks, *p.Validator)
		}
		for _, c := range checks {
			if len(c.Argv) > 0 && strings.Contains(c.Argv[0], "/") && !filepath.IsAbs(c.Argv[0]) {
				prog := filepath.Join(filepath.Dir(pf), c.Argv[0])
				if err := os.MkdirAll(filepath.Dir(prog), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(prog, []byte("#!/bin/sh\necho '{\"pass\": true}'\n"), 0o755); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
}

func docDryRun(t *testing.T, where, cfg string) {
	t.Helper()
	code, stdout, stderr := runCLI("run", "--config", cfg, "--dry-run")
	if code != exitcode.OK {
		t.Errorf("%s: bench run --dry-run exits %d:\n%s%s", where, code, stdout, stderr)
	}
}

// configExample is the first bench.yaml of docs/config.md.
func configExample(t *testing.T) string {
	t.Helper()
	for _, b := range parseDoc(t, "docs/config.md").blocks {
		if b.lang == "yaml" && strings.HasPrefix(b.text, "run:") {
			return b.text
		}
	}
	t.Fatal("docs/config.md has no bench.yaml example (a yaml block starting with run:)")
	return ""
}

// shellCall is one simple command of a doc, its words expanded.
type shellCall struct {
	where string
	args  []string
}

func isShell(lang string) bool { return lang == "sh" || lang == "bash" || lang == "shell" }

// shellCommands are the commands of a doc's shell blocks and of the run:
// steps of its GitHub Actions workflows.
func shellCommands(t *testing.T, d *mdDoc) []shellCall {
	t.Helper()
	var out []shellCall
	for _, b := range d.blocks {
		where := fmt.Sprintf("%s:%d", d.rel, b.line)
		switch {
		case isShell(b.lang):
			out = append(out, shellCalls(t, b.text, where, sampleVars)...)
		case b.lang == "yaml":
			for _, step := range workflowSteps(t, b.text, where) {
				out = append(out, shellCalls(t, step, where, sampleVars)...)
			}
		}
	}
	return out
}

var ghExpr = regexp.MustCompile(`\$\{\{\s*(.*?)\s*\}\}`)

// workflowSteps are the run: scripts of a GitHub Actions workflow, its
// expressions replaced by sample values; nil for other YAML.
func workflowSteps(t *testing.T, src, where string) []string {
	t.Helper()
	var wf struct {
		Jobs map[string]struct {
			Steps []struct {
				Run string `yaml:"run"`
			} `yaml:"steps"`
		} `yaml:"jobs"`
	}
	if err := yaml.Unmarshal([]byte(src), &wf); err != nil || len(wf.Jobs) == 0 {
		return nil
	}
	var out []string
	for _, job := range wf.Jobs {
		for _, s := range job.Steps {
			if s.Run == "" {
				continue
			}
			out = append(out, ghExpr.ReplaceAllStringFunc(s.Run, func(m string) string {
				e := ghExpr.FindStringSubmatch(m)[1]
				v, ok := sampleExprs[e]
				if !ok {
					t.Errorf("%s: the workflow's ${{ %s }} has no sample value in readme_test.go", where, e)
				}
				return v
			}))
		}
	}
	return out
}

// shellCalls parses a shell script and returns its simple commands in
// order, expanded with vars (nil: only the literal first word is kept).
func shellCalls(t *testing.T, script, where string, vars map[string]string) []shellCall {
	t.Helper()
	f, err := syntax.NewParser().Parse(strings.NewReader(script), where)
	if err != nil {
		t.Errorf("%s: not a shell script: %v", where, err)
		return nil
	}
	var env []string
	for k, v := range vars {
		env = append(env, k+"="+v)
	}
	cfg := &expand.Config{
		Env:     expand.ListEnviron(env...),
		NoUnset: true,
		CmdSubst: func(w io.Writer, cs *syntax.CmdSubst) error {
			_, err := io.WriteString(w, "20261122")
			return err
		},
	}
	var out []shellCall
	syntax.Walk(f, func(n syntax.Node) bool {
		call, ok := n.(*syntax.CallExpr)
		if !ok || len(call.Args) == 0 {
			return true
		}
		pos := fmt.Sprintf("%s (+%d)", where, call.Pos().Line()-1)
		lit := call.Args[0].Lit()
		if vars == nil || (lit != "" && !checked(lit)) {
			// Only the name: nothing checks the arguments of echo, [ ...
			if lit != "" {
				out = append(out, shellCall{where: pos, args: []string{lit}})
			}
			return true
		}
		args, err := expand.Fields(cfg, call.Args...)
		if err != nil {
			t.Errorf("%s: %v (give the variable a value in sampleVars)", pos, err)
			return true
		}
		if len(args) > 0 {
			out = append(out, shellCall{where: pos, args: args})
		}
		return true
	})
	return out
}

// checked says whether check looks at a command's arguments.
func checked(name string) bool {
	switch path.Base(name) {
	case "bench", "go", "time", "exec":
		return true
	}
	return strings.Contains(name, "/")
}

// cmdChecker checks commands one by one.
type cmdChecker struct {
	t    *testing.T
	root string
	// live runs bench init for real and bench run with --dry-run, in the
	// current directory.
	live          bool
	configExample string
	// scripts are the repository scripts the commands named, in order.
	scripts        []string
	bench, goTests int
}

func (c *cmdChecker) check(call shellCall) {
	args := call.args
	if base := path.Base(args[0]); base == "time" || base == "exec" {
		args = args[1:]
		for len(args) > 0 && strings.HasPrefix(args[0], "-") {
			args = args[1:]
		}
		if len(args) == 0 {
			return
		}
	}
	name := args[0]
	switch {
	case path.Base(name) == "bench":
		c.bench++
		c.benchCmd(call.where, args[1:])
	case name == "go":
		c.goCmd(call.where, args[1:])
	case strings.Contains(name, "/") && !path.IsAbs(name):
		st, err := os.Stat(filepath.Join(c.root, name))
		if err != nil {
			c.t.Errorf("%s: %s does not exist", call.where, name)
		} else if st.Mode()&0o111 == 0 {
			c.t.Errorf("%s: %s is not executable", call.where, name)
		}
		if !slices.Contains(c.scripts, name) {
			c.scripts = append(c.scripts, name)
		}
	}
}

// benchCmd checks one bench command line: the command exists, each flag
// exists and its value parses, the positional arguments are as many as the
// usage line says and sit where the command reads them.
func (c *cmdChecker) benchCmd(where string, args []string) {
	t := c.t
	line := "bench " + strings.Join(args, " ")
	if len(args) == 0 {
		t.Errorf("%s: %s: no command", where, line)
		return
	}
	cmd := args[0]
	if cmd == "help" || cmd == "version" {
		if code, _, stderr := runCLI(args...); code != exitcode.OK {
			t.Errorf("%s: %s exits %d: %s", where, line, code, stderr)
		}
		return
	}
	code, stdout, stderr := runCLI(cmd, "-h")
	if code != exitcode.OK {
		t.Errorf("%s: %s: bench %s -h exits %d: %s", where, line, cmd, code, stderr)
		return
	}
	usage := stdout + stderr
	valued := flagTable(usage)
	var flags, pos []string
	flagAfterPos := false
	for i := 1; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			pos = append(pos, args[i+1:]...)
			break
		}
		if !strings.HasPrefix(a, "-") || a == "-" {
			pos = append(pos, a)
			continue
		}
		name, _, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		takes, ok := valued[name]
		if !ok {
			t.Errorf("%s: %s: bench %s has no flag --%s", where, line, cmd, name)
			return
		}
		flagAfterPos = flagAfterPos || len(pos) > 0
		flags = append(flags, a)
		if takes && !hasValue {
			if i+1 >= len(args) {
				t.Errorf("%s: %s: --%s needs a value", where, line, name)
				return
			}
			i++
			flags = append(flags, args[i])
		}
	}
	if flagAfterPos {
		// Only commands that read flags between their arguments take
		// this: bench CMD ARG -h then still asks for help.
		if code, _, _ := runCLI(cmd, "ARG", "-h"); code != exitcode.OK {
			t.Errorf("%s: %s: bench %s reads no flag after its arguments", where, line, cmd)
		}
	}
	min, max := arity(usage, cmd)
	switch {
	case max < 0 && len(pos) < min:
		t.Errorf("%s: %s: %d arguments, the usage says at least %d", where, line, len(pos), min)
	case max >= 0 && (len(pos) < min || len(pos) > max):
		t.Errorf("%s: %s: %d arguments, the usage says %d", where, line, len(pos), min)
	}
	if code, _, stderr := runCLI(append(append([]string{cmd}, flags...), "-h")...); code != exitcode.OK {
		t.Errorf("%s: %s: its flags do not parse (exit %d): %s", where, line, code, lastLine(stderr))
	}
	if !c.live {
		return
	}
	switch cmd {
	case "init":
		if code, stdout, stderr := runCLI(args...); code != exitcode.OK {
			t.Errorf("%s: %s exits %d:\n%s%s", where, line, code, stdout, stderr)
		}
	case "run":
		if slices.Contains(flags, "--resume") {
			return
		}
		c.prepareRun(flags)
		if code, stdout, stderr := runCLI(append(args, "--dry-run")...); code != exitcode.OK {
			t.Errorf("%s: %s --dry-run exits %d:\n%s%s", where, line, code, stdout, stderr)
		}
	}
}

// prepareRun makes what a bench run line needs in the current directory:
// its config (docs/config.md's example, unless bench init wrote one) and
// each --baseline directory.
func (c *cmdChecker) prepareRun(flags []string) {
	cfg := "bench.yaml"
	for i, f := range flags {
		v, isValue := "", false
		switch {
		case (f == "--config" || f == "-config") && i+1 < len(flags):
			cfg = flags[i+1]
		case (f == "--baseline" || f == "-baseline") && i+1 < len(flags):
			v, isValue = flags[i+1], true
		case strings.HasPrefix(strings.TrimLeft(f, "-"), "baseline="):
			_, v, isValue = strings.Cut(f, "=")
		}
		if isValue {
			os.MkdirAll(v, 0o755)
			writeFile(c.t, filepath.Join(v, "results.jsonl"), "")
		}
	}
	if _, err := os.Stat(cfg); err != nil {
		writeFile(c.t, cfg, c.configExample)
	}
}

var flagLine = regexp.MustCompile(`(?m)^  --(\S+)(?: (\S+))?$`)

// flagTable reads flag.PrintDefaults output: each flag, and whether it
// takes a value (a bool flag has no type word).
func flagTable(usage string) map[string]bool {
	m := map[string]bool{"h": false, "help": false}
	for _, f := range flagLine.FindAllStringSubmatch(usage, -1) {
		m[f[1]] = f[2] != ""
	}
	return m
}

var optional = regexp.MustCompile(`\[[^\]]*\]`)

// arity reads the usage line: its upper-case words are the arguments, one
// ending in ... takes one or more (max -1).
func arity(usage, cmd string) (min, max int) {
	for _, l := range strings.Split(usage, "\n") {
		rest, ok := strings.CutPrefix(strings.TrimSpace(l), "usage: bench "+cmd)
		if !ok {
			continue
		}
		words := strings.Fields(optional.ReplaceAllString(rest, ""))
		for i := 0; i < len(words); i++ {
			w := words[i]
			switch {
			case w == "...": // what an optional group's "..." leaves
				continue
			case strings.HasPrefix(w, "-"): // a required flag and its value
				if i+1 < len(words) && strings.ToUpper(words[i+1]) == words[i+1] {
					i++
				}
				continue
			}
			min++
			if strings.HasSuffix(w, "...") {
				max = -1
			}
		}
		if max != -1 {
			max = min
		}
		return min, max
	}
	return 0, -1
}

var testFunc = regexp.MustCompile(`(?m)^func ((?:Test|Benchmark|Fuzz)\w*)\(`)

// goCmd checks go build/install/test/vet lines: their package directories
// exist, and a test's -run and -bench select something in its package.
func (c *cmdChecker) goCmd(where string, args []string) {
	if len(args) == 0 {
		return
	}
	sub := args[0]
	if sub == "test" {
		c.goTests++
	}
	var pkgs []string
	sel := map[string]string{}
	for i := 1; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "-args":
			i = len(args)
		case a == "-run" || a == "-bench":
			if i+1 < len(args) {
				sel[a] = args[i+1]
				i++
			}
		case slices.Contains([]string{"-benchtime", "-timeout", "-count", "-o", "-ldflags", "-tags", "-cpu"}, a):
			i++
		case strings.HasPrefix(a, "-"):
		case strings.HasPrefix(a, "./"):
			pkgs = append(pkgs, a)
		}
	}
	for _, p := range pkgs {
		dir := filepath.Join(c.root, strings.TrimSuffix(strings.TrimSuffix(p, "..."), "/"))
		if st, err := os.Stat(dir); err != nil || !st.IsDir() {
			c.t.Errorf("%s: go %s %s: no such package directory", where, sub, p)
			continue
		}
		if sub != "test" || strings.HasSuffix(p, "...") || len(pkgs) != 1 {
			continue
		}
		var names []string
		files, _ := filepath.Glob(filepath.Join(dir, "*_test.go"))
		for _, f := range files {
			for _, m := range testFunc.FindAllStringSubmatch(readFile(c.t, f), -1) {
				names = append(names, m[1])
			}
		}
		for flag, prefix := range map[string]string{"-run": "Test", "-bench": "Benchmark"} {
			pat, ok := sel[flag]
			if !ok || pat == "^$" {
				continue
			}
			re, err := regexp.Compile(strings.Split(pat, "/")[0])
			if err != nil {
				c.t.Errorf("%s: go test %s %s: %v", where, flag, pat, err)
				continue
			}
			if !slices.ContainsFunc(names, func(n string) bool { return strings.HasPrefix(n, prefix) && re.MatchString(n) }) {
				c.t.Errorf("%s: go test %s %s %q selects nothing", where, p, flag, pat)
			}
		}
	}
}

// lastLine is the last line of a command's stderr: the error, after any
// usage the flag package printed.
func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

func mustAbs(t *testing.T, p string) string {
	t.Helper()
	a, err := filepath.Abs(p)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func readFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func writeFile(t *testing.T, p, s string) {
	t.Helper()
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}
