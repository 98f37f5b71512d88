// Package toolparse finds tool calls: native ones the provider returned, and
// commands a model wrote in text when it has no native tools.
//
// Native calls (OpenAI chat tool_calls, Responses function_call items,
// Ollama tool_calls, Claude tool_use blocks) are the primary evidence and are
// recorded as given, source "native". Text detection looks for the five
// patterns of the results schema, source "text", name = the command word
// ("free -h" → free, "sudo df -h" → df, "/usr/bin/top" → top):
//
//   - backticks: `df -h`
//   - quoted commands: "df -h" or 'df -h'
//   - shell prompts: "$ free -h", "# free -h", "user@host:~$ free -h" at the
//     start of a line; and every command line of a fenced shell block
//     (```bash, sh, shell, zsh, console; a block without a language when its
//     first command is a known one)
//   - <tool>name</tool>
//   - [tool: name] / [TOOL: name]
//
// # What counts
//
// A text tool call is a command the reply issues: it shows it to be run (a
// shell block, a prompt line, a marker, a command alone on its line), tells
// the reader to run it, or gives it as the answer to the question (the
// command that shows or prints what was asked, or that stops, fixes or does
// what the user asked how to do). A command the reply only talks about is
// not one: explained, compared, warned against, reported as someone else's
// advice, narrated as already run, or written as a template or in another
// language. A false positive labels a model that only talks about commands
// as tool capable, so detection leans to precision.
//
// # The question decides what a described command is
//
// "`lsof -i :5173` will list the process holding the port" answers "what
// is using port 5173?" and explains "what does `lsof -i :5173` show?": the
// words are the same, only the question differs. DetectIn reads the prompt
// the reply answers (system text and user prompt); Detect is DetectIn with
// no question and keeps the reading of the reply alone. The prompt is read
// for what it asks, from how its questions open (its imperatives when it
// has no question):
//
//   - a way to do something: "how do I...", "how much...", "which
//     command/process...", "what's the command/easiest way to...", "what
//     should I do?", "is there a way...", "can you show me how...", "I need
//     to...", or an imperative ("Check the disk space.", "Find the large
//     files."). The reply's commands are the answer, so one it describes
//     in the present or names by a copula counts ("`pnpm install` installs
//     every workspace package", "the simplest check is `redis-cli ping`",
//     "`kill -9 4242` is the way to stop it"), and so does a listed option
//     ("1. `brew update` — refreshes the formulae") or the instrument of a
//     task ("find it with `lsblk`"); a glossary line that explains part of
//     a command the reply showed above it does not, nor a bare tool name
//     that is only defined ("`kubectl` is the Kubernetes CLI").
//   - about something: "what does `x` do/print/mean", "why...", "how does
//     `x` work", "what's the difference...", "which is better...", yes/no
//     questions ("is `kill -9` bad?", "does `git stash` keep...?",
//     "should I run `x`?"), "explain/translate/summarize...". The
//     commands the question names are its subject (a command starting with
//     the same words: `git stash -u` for a question about `git stash`,
//     `rm -I` for one about `rm -i`; a tool named bare in prose, "rsync or
//     tar?", only as itself): the reply explains them, so they count only
//     when it tells the reader to run them ("Yes, run `npm audit fix`",
//     "Use `git stash -u`", alone on a line), not in a condition ("when you
//     run `x`") or as a gerund subject ("Running `fsck` on a mounted disk
//     can corrupt it"). A command the reply brings that the question does
//     not name keeps the reading of Detect ("`git reflog` still lists
//     them" counts).
//   - neither, or no question: the reading of the reply alone (below).
//
// In a question that asks for a way, the question's own command line
// repeated by the reply ("`npm install -g typescript` fails. What do I
// do?") is the subject too: it counts when the reply tells the reader to
// run it again, or as a step ("Then `git push`."). Commands inside error
// messages ("npm ERR! ...") or output in the question name nothing.
//
// # The reading of a reply
//
//   - A command word must look like one (lower case letters, digits, . _ + -
//     or a ./script or /usr/bin/x path) and be a well-known command; an
//     unknown word counts when its first argument is a flag (mytool --check)
//     or it is a ./script. In a labeled shell block any command-shaped
//     word counts, alone or with arguments. In reply to a question that
//     asks for a way, a word outside the list also counts with a
//     subcommand or operand ("redis-cli ping", "poetry lock", "cloc .",
//     "ssh-copy-id deploy@host") when the sentence gives strong evidence
//     of use or offers it as the answer, or alone after "run" or "type"
//     ("Run `nvidia-smi`"); never with English function words as arguments
//     ("`summarize the results`") or as a statement of another language
//     ("`import json`", "`for f in *`"). That is the list's extension, and
//     why it is kept to the way questions: there the reply is expected to
//     bring a command, and a subcommand shape is what commands outside any
//     list share. A command with placeholders (ssh -i <key> user@host) is
//     syntax to fill in, not a call.
//   - In prose, a backticked or quoted command counts when the sentence
//     uses it, not when it talks about it; this is read from the role the
//     command plays in its sentence, not from set phrases. Used: the
//     object of a run verb ("run `uptime`", "re-run `./configure`", "do a
//     `git fetch --all`", "run a quick `uptime`"), alone on its line
//     (possibly as a list item or after "command:"), standing in a
//     sentence with nothing said about it ("I'd check `df -h` first"),
//     or the subject of a predicate aimed at the reader's task, so the
//     command is given as the answer or the fix: a future or "should"
//     ("`df -h` will show it", "a `git switch main` should take you
//     back"), the reader as object ("`ss -tlnp` tells you", but not "the
//     `df` figures you sent"), or the answer or problem as a pronoun
//     object ("`pip list --outdated` lists them", "`x` fixes it"). Any
//     predicate counts when the sentence opens as the way to a goal: a
//     purpose clause ("To free the space, `journalctl --vacuum-time=7d`
//     trims the journal"), a label ("Fix: `x` ..."), step words ("Then
//     `x` ..."), or a list item the span opens ("1. `docker system df`
//     shows how much space each part takes"). A bare name needs the
//     strongest of these (alone, a run verb, a future, the reader, a
//     goal), and a bare word that is also a literal or an English word
//     (`true`, `file`, `test`, "free") never counts alone.
//   - Talking about a command is not running it: a noun it modifies ("the
//     `df` command", "the `crontab -e` editor", "the output of `df -h`",
//     "`top`'s view"), a comparison, reference, possessive or apposition
//     ("instead of `top`", "In `rsync -avz`, ...", "your `git pull`",
//     "like `apt install` or `apt remove`", "the second command, `grep
//     -c x f`, counts..."), a question about it ("what does `uname -m`
//     print"), a negation or warning in its clause ("don't run `rm -rf
//     /`", "a common mistake is running `x`"; "Don't run `top`, run
//     `htop -d 10`" keeps htop) or in a label before it ("Careful: `x`
//     ...", "Don't: `x`"; but "Nothing fancy needed: `wc -l f`" is advice
//     and "The commits aren't gone: `git reflog` lists them" a fact),
//     someone else's advice ("the article recommends `x`", "the docs say
//     to run `x`", "guides suggesting `x`"; "I'd suggest `x`" is the
//     reply's own), a past or third-person run verb ("I ran `x`", "you
//     have tried `x`", "the target runs `x`"), a timeless description
//     ("`ps aux` lists every process", "`grep -v` inverts the match"), a
//     past, negated or passive predicate ("`x` was misleading", "`x`
//     won't help", "`vi` is installed everywhere"), and glossary lines
//     that explain a command ("- `head -n 6`: keeps the first lines",
//     "`df` — disk free"; only at the start of a line: elsewhere a dash
//     ends the clause, as in "You'll need `x` — the Events section says
//     why"). A quoted command also needs a flag, path or operator
//     argument or a run verb ("free time" is prose), and a quoted string
//     in JSON ("cmd": "df -h", an escaped \"df -h\", any string of a
//     line that starts as JSON) is data.
//   - "# title" is a markdown heading unless the word is a known command
//     with a flag, path, number or operator argument: "# free -h" is a root
//     prompt, "# top", "# top processes" and "# Disk usage" are headings.
//     In shell blocks, # lines are comments; in console blocks and blocks
//     with "$ " lines, only prompt lines are commands (the rest is output).
//   - Code blocks in other languages (json, python, yaml...) hold no calls:
//     JSON function-call text and <tool_call>{...}</tool_call> written as
//     text are not tool calls, since no agent would execute them.
//   - <tool>name</tool> and [tool: name] count outside inline code and
//     code blocks; placeholder names (name, tool_name, command) do not
//     count.
//
// Each command of a line counts (cd /srv && ls: cd, ls); a pipeline is one
// call named by its first command. The same command line written twice
// (inline and again in a block) is one call. When native calls exist, text
// detections are added after them unless a native call has the same name,
// so a model that calls a tool and also shows the command is not counted
// twice.
//
// Detection is linear in the reply and the question: spans, quotes and
// the clauses read around them are bounded.
//
// Layer: scoring (pure functions of prompt and response).
package toolparse

import (
	"encoding/json"
	"regexp"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"bench/internal/record/results"
)

// Call is one detected tool invocation; results owns the type.
type Call = results.ToolCall

// Sources of a Call.
const (
	SourceNative = results.SourceNative
	SourceText   = results.SourceText
)

// Detect returns the tool calls to record for a response: the native calls
// first, then the text detections whose name no native call has, without
// repeats of the same command line. It judges the reply without knowing
// what it answers; DetectIn reads the question too.
func Detect(native []Call, text string) []Call {
	return DetectIn(native, text, "")
}

// DetectIn is Detect for a reply to question, the prompt the model
// answered (its system text and user prompt, in any order): what the
// question asks for decides whether a command the reply describes is the
// answer or the subject of an explanation. An empty question is Detect.
func DetectIn(native []Call, text, question string) []Call {
	out := make([]Call, 0, len(native))
	nativeNames := map[string]bool{}
	for _, c := range native {
		if c.Source == "" {
			c.Source = SourceNative
		}
		nativeNames[c.Name] = true
		out = append(out, c)
	}
	seen := map[string]bool{}
	for _, c := range detectText(text, readQuestion(question)) {
		if nativeNames[c.Name] {
			continue
		}
		key := c.Name + "\x00" + string(c.Arguments)
		if seen[key] {
			continue
		}
		seen[key] = true
		out = append(out, c)
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// Names returns the calls' names in order.
func Names(calls []Call) []string {
	var out []string
	for _, c := range calls {
		out = append(out, c.Name)
	}
	return out
}

// UseSuccess reports whether at least one call's name equals one of the
// expected tools (case-sensitive); nil when nothing is expected. A call
// whose arguments failed the tool's JSON Schema (SchemaValid false) is not
// a successful use of it.
func UseSuccess(calls []Call, expected []string) *bool {
	if len(expected) == 0 {
		return nil
	}
	ok := false
	for _, c := range calls {
		if c.SchemaValid != nil && !*c.SchemaValid {
			continue
		}
		for _, e := range expected {
			ok = ok || c.Name == e
		}
	}
	return &ok
}

// maxSpan bounds inline spans and quotes, which keeps scanning linear.
const maxSpan = 300

// detector collects text detections in order.
type detector struct {
	calls []Call
	q     question
	// shown are the last command lines of blocks and prompt lines: a
	// span that quotes part of one explains it ("`head -n 6`: shows the
	// first lines" under a pipeline), whatever the question.
	shown []string
}

// maxShown bounds shown and each of its lines, which keeps the check of a
// span against them constant work.
const maxShown = 8

func (d *detector) show(cmdline string) {
	if len(cmdline) > 4*maxSpan {
		cmdline = cmdline[:4*maxSpan]
	}
	if len(d.shown) == maxShown {
		copy(d.shown, d.shown[1:])
		d.shown = d.shown[:maxShown-1]
	}
	d.shown = append(d.shown, cmdline)
}

// partOfShown reports a span that quotes part of a command line shown
// before it.
func (d *detector) partOfShown(content string) bool {
	for _, l := range d.shown {
		if len(content) < len(l) && strings.Contains(l, content) {
			return true
		}
	}
	return false
}

func detectText(text string, q question) []Call {
	d := detector{q: q}
	lines := strings.Split(text, "\n")
	for i := 0; i < len(lines); i++ {
		line := strings.TrimRight(lines[i], "\r")
		trim := strings.TrimLeft(line, " \t")
		if fence, lang, ok := openFence(trim); ok {
			j := i + 1
			for ; j < len(lines); j++ {
				if isCloseFence(strings.TrimSpace(lines[j]), fence) {
					break
				}
			}
			end := j
			if end > len(lines) {
				end = len(lines)
			}
			d.block(lang, lines[i+1:end])
			i = j
			continue
		}
		d.proseLine(line)
	}
	return d.calls
}

func openFence(t string) (fence, lang string, ok bool) {
	for _, f := range []string{"```", "~~~"} {
		if strings.HasPrefix(t, f) {
			n := len(t) - len(strings.TrimLeft(t, f[:1]))
			info := strings.TrimSpace(t[n:])
			if f == "```" && strings.Contains(info, "`") {
				return "", "", false // inline code like ```x```
			}
			if fs := strings.Fields(info); len(fs) > 0 {
				lang = strings.ToLower(strings.Trim(fs[0], "{}."))
			}
			return t[:n], lang, true
		}
	}
	return "", "", false
}

func isCloseFence(t, fence string) bool {
	return strings.HasPrefix(t, fence) && strings.Trim(t, fence[:1]) == ""
}

// block detects commands in a fenced code block.
func (d *detector) block(lang string, lines []string) {
	shell := shellLangs[lang]
	plain := plainLangs[lang]
	if lang == "" {
		// An unlabeled block is shell when its first line is a command.
		for _, l := range lines {
			t := strings.TrimSpace(l)
			if t == "" {
				continue
			}
			t = strings.TrimPrefix(t, "$ ")
			name, args, ok := firstCommand(t)
			shell = ok && (known[name] || d.q.kind == askWay && plainCommand(name, args))
			plain = !shell
			break
		}
	}
	if !shell && !plain {
		return
	}
	prompted := lang == "console" || lang == "terminal" || lang == "shell-session" || lang == "shellsession" || plain
	if !prompted {
		for _, l := range lines {
			if strings.HasPrefix(strings.TrimSpace(l), "$ ") {
				prompted = true
				break
			}
		}
	}
	// A block labeled as shell holds commands line by line; one that
	// looks like shell only by its first command is trusted less.
	trust := trustKnown
	switch {
	case shellLangs[lang]:
		trust = trustShell
	case d.q.kind == askWay:
		trust = trustPlain
	}
	cont := false
	for _, l := range lines {
		t := strings.TrimSpace(strings.TrimRight(l, "\r"))
		wasCont := cont
		cont = strings.HasSuffix(t, "\\")
		if wasCont || t == "" {
			continue
		}
		if prompted {
			cmd, ok := promptCommand(t, !plain)
			if ok {
				d.commandLine(cmd, t, false, trustShell)
			}
			continue
		}
		if strings.HasPrefix(t, "#") {
			continue // comment
		}
		d.commandLine(t, t, false, trust)
	}
}

// proseTrust is the trust of a prompt line in prose: words with a
// subcommand count only in reply to a question that asks for a way, and
// not on a line that ends as a sentence ("$ signs mark variables.").
func (d *detector) proseTrust(line string) int {
	if d.q.kind == askWay && !strings.HasSuffix(line, ".") {
		return trustPlain
	}
	return trustKnown
}

// promptCommand strips a shell prompt ("$ ", "user@host:~$ ", and "# " when
// root prompts are allowed) from a line.
func promptCommand(t string, allowRoot bool) (string, bool) {
	if strings.HasPrefix(t, "$ ") {
		return t[2:], true
	}
	if allowRoot && strings.HasPrefix(t, "# ") {
		return t[2:], true
	}
	if m := userPrompt.FindStringSubmatchIndex(t); m != nil {
		return t[m[2]:], true
	}
	return "", false
}

var userPrompt = regexp.MustCompile(`^[A-Za-z0-9_.-]+@[A-Za-z0-9_.-]+:[^\s$#]*[$#] (\S.*)$`)

// proseLine detects prompts, markers, backticks and quotes on a line of
// prose (outside code blocks).
func (d *detector) proseLine(line string) {
	t := strings.TrimSpace(line)
	t = strings.TrimSpace(strings.TrimLeft(t, ">")) // blockquote
	switch {
	case strings.HasPrefix(t, "$ "):
		d.commandLine(t[2:], t, false, d.proseTrust(t))
		return
	case strings.HasPrefix(t, "# "):
		d.commandLine(t[2:], t, true, trustKnown)
		return
	case strings.Contains(t, "@") && userPrompt.MatchString(t):
		cmd, _ := promptCommand(t, false)
		d.commandLine(cmd, t, false, d.proseTrust(t))
		return
	}
	code := d.inlineCode(line)
	d.markers(line, code)
	if !jsonLine(t) {
		d.quotes(line, code)
	}
}

// jsonLine reports a line of JSON written as text ({"name": ...} or
// [{...}]): its strings are data, even when one holds a command.
func jsonLine(t string) bool {
	return strings.HasPrefix(t, "{\"") || strings.HasPrefix(t, "[{") || strings.HasPrefix(t, "[\"")
}

// How far a command line is trusted with words outside the known list.
const (
	trustKnown = iota // known words, or a flag after the word
	trustPlain        // also a word with a subcommand or operand (plainCommand)
	trustShell        // also a word alone: the line is a command by its place
)

// commandLine records each command of a shell command line (split at &&,
// || and ;). heading marks a "# " line outside code, held to a stricter
// rule; trust says which words outside the known list count.
func (d *detector) commandLine(cmdline, match string, heading bool, trust int) {
	for _, part := range splitCommands(cmdline) {
		name, args, ok := firstCommand(part)
		if !ok {
			continue
		}
		if !heading {
			d.show(part)
		}
		switch {
		case accept(name, args, false):
		case heading:
			continue
		case trust >= trustPlain && plainCommand(name, args):
		case trust == trustShell && len(args) == 0 && !known[name] && !codeWords[name] && !fileLike(name):
		default:
			continue
		}
		if heading && (!known[name] || !anyShellish(args)) {
			continue
		}
		d.add(name, part, match)
	}
}

func (d *detector) add(name, cmdline, match string) {
	args, _ := json.Marshal(map[string]string{"command": strings.Join(strings.Fields(cmdline), " ")})
	if len(match) > maxSpan {
		match = match[:maxSpan]
		for len(match) > 0 && !utf8.ValidString(match) {
			match = match[:len(match)-1]
		}
	}
	d.calls = append(d.calls, Call{Name: name, Arguments: args, Source: SourceText, Match: match})
}

// splitCommands splits a command line at &&, || and ; (pipes stay: a
// pipeline is one call).
func splitCommands(s string) []string {
	var out []string
	start := 0
	for i := 0; i < len(s); i++ {
		switch {
		case s[i] == ';':
			out = append(out, s[start:i])
			start = i + 1
		case i+1 < len(s) && (s[i:i+2] == "&&" || s[i:i+2] == "||"):
			out = append(out, s[start:i])
			start = i + 2
			i++
		}
	}
	return append(out, s[start:])
}

// firstCommand returns the command word of a command line and its
// arguments, skipping sudo/env/time prefixes and VAR=value assignments.
func firstCommand(s string) (name string, args []string, ok bool) {
	fs := strings.Fields(s)
	i := 0
	for i < len(fs) {
		w := fs[i]
		switch {
		case prefixes[w]:
			i++
			for i < len(fs) && strings.HasPrefix(fs[i], "-") {
				if fs[i] == "-u" || fs[i] == "-g" || fs[i] == "-n" {
					i++ // sudo -u user, nice -n 10
				}
				i++
			}
			continue
		case strings.Contains(w, "=") && !strings.HasPrefix(w, "="):
			i++
			continue
		}
		break
	}
	if i >= len(fs) {
		if len(fs) > 0 && prefixes[fs[0]] && len(fs) == 1 {
			return fs[0], nil, commandWord(fs[0])
		}
		return "", nil, false
	}
	w := fs[i]
	if strings.Contains(w, "/") {
		base := w[strings.LastIndexByte(w, '/')+1:]
		switch {
		case strings.HasPrefix(w, "./"), strings.HasPrefix(w, "~/"), strings.HasPrefix(w, "../"):
			if !commandWord(base) {
				return "", nil, false
			}
			return "./" + base, fs[i+1:], true
		case binPath(w):
			return base, fs[i+1:], commandWord(base)
		}
		return "", nil, false
	}
	return w, fs[i+1:], commandWord(w)
}

func binPath(w string) bool {
	for _, p := range []string{"/bin/", "/usr/bin/", "/sbin/", "/usr/sbin/", "/usr/local/bin/"} {
		if strings.HasPrefix(w, p) && !strings.Contains(w[len(p):], "/") {
			return true
		}
	}
	return false
}

// commandWord reports whether w is shaped like a command name.
func commandWord(w string) bool {
	if w == "" || len(w) > 64 {
		return false
	}
	c := w[0]
	if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_') {
		return false
	}
	for i := 1; i < len(w); i++ {
		c := w[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.' || c == '+') {
			return false
		}
	}
	if c >= '0' && c <= '9' && strings.Trim(w, "0123456789.") == "" {
		return false // a number
	}
	return true
}

// accept decides whether a command word with its arguments is a command:
// known words, ./scripts, or unknown words followed by a flag.
func accept(name string, args []string, bare bool) bool {
	if template(args) {
		return false
	}
	if strings.HasPrefix(name, "./") {
		return true
	}
	if known[name] {
		return !(bare && len(args) == 0 && bareless[name])
	}
	if fileLike(name) {
		return false
	}
	return len(args) > 0 && isFlag(args[0])
}

// placeholderArg matches an argument to fill in: <file>, <user>@<host>.
var placeholderArg = regexp.MustCompile(`<[A-Za-z][A-Za-z0-9._-]*>`)

// template reports a command written with placeholders ("ssh -i <key>
// user@host"): syntax to fill in, which nothing could run as written.
func template(args []string) bool {
	for _, a := range args {
		if strings.Contains(a, ">") && placeholderArg.MatchString(a) {
			return true
		}
	}
	return false
}

// fileLike reports names such as config.yaml or main.go.
func fileLike(w string) bool {
	dot := strings.LastIndexByte(w, '.')
	if dot <= 0 || dot == len(w)-1 {
		return false
	}
	ext := w[dot+1:]
	return strings.Trim(ext, "abcdefghijklmnopqrstuvwxyz") == ""
}

func isFlag(a string) bool {
	return len(a) > 1 && a[0] == '-' && (a[1] == '-' || unicode.IsLetter(rune(a[1])))
}

// shellish reports an argument that prose would not write: a flag, a path,
// an operator, a glob, a number or a variable.
func shellish(a string) bool {
	if isFlag(a) {
		return true
	}
	if strings.ContainsAny(a, "/|<>=$~*.:%&") {
		return true
	}
	return strings.Trim(a, "0123456789") == ""
}

// anyShellish reports whether some argument is shellish: what tells a
// "# free -h" root prompt from a "# top processes" heading.
func anyShellish(args []string) bool {
	for _, a := range args {
		if shellish(a) {
			return true
		}
	}
	return false
}

// span is a piece of inline code on a line: [start, end) including the
// backticks.
type span struct{ start, end int }

// inlineCode detects commands in `code spans` and returns the spans so that
// markers and quotes inside them are ignored.
func (d *detector) inlineCode(line string) []span {
	var spans []span
	for i := 0; i < len(line); {
		if line[i] != '`' {
			i++
			continue
		}
		n := runLen(line, i, '`')
		open := i
		i += n
		closeAt := -1
		for j := i; j < len(line) && j-i <= maxSpan; {
			if line[j] != '`' {
				j++
				continue
			}
			m := runLen(line, j, '`')
			if m == n {
				closeAt = j
				break
			}
			j += m
		}
		if closeAt < 0 {
			continue
		}
		content := strings.TrimSpace(line[i:closeAt])
		end := closeAt + n
		spans = append(spans, span{open, end})
		i = end
		d.inline(line, open, end, content)
	}
	return spans
}

func runLen(s string, i int, c byte) int {
	n := 0
	for i+n < len(s) && s[i+n] == c {
		n++
	}
	return n
}

// inline judges one backticked or quoted command in prose: a call when the
// sentence uses it (see sentence.go), not when it talks about it; the
// question decides what a described command is (see question.go).
func (d *detector) inline(line string, start, end int, content string) {
	content = strings.TrimPrefix(content, "$ ")
	if content == "" {
		return
	}
	way := d.q.kind == askWay
	var u *use // judged once, and only for a span that holds a command
	for _, part := range splitCommands(content) {
		name, args, ok := firstCommand(part)
		if !ok {
			continue
		}
		subject := d.q.subject(part)
		trusted := accept(name, args, true)
		// A word outside the known list is a command when the question
		// names it, or, in reply to a question that asks for a way, with a
		// subcommand or an operand, or run by itself.
		plain := !trusted && (way || subject) && plainCommand(name, args)
		alone := !trusted && !plain && way && len(args) == 0 && !known[name] && !bareless[name] && !codeWords[name] && !fileLike(name) && !strings.HasPrefix(name, "./")
		if !trusted && !plain && !alone {
			continue
		}
		if u == nil {
			v := judge(line[:start], line[end:])
			u = &v
		}
		// An answer to a way is a command the reply brings, not a part
		// of one it showed and now explains.
		answer := way && u.answer && !d.partOfShown(part)
		var used bool
		switch {
		case subject:
			// What the question asks about is explained unless run; the
			// user's own command, asked how to get past, also counts as
			// a step ("Then `git push`.").
			used = u.direct || way && u.goal
		case alone:
			used = u.direct && u.strictRun // "run `nvidia-smi`"
		case plain:
			used = u.bare || answer
		case len(args) == 0:
			used = u.call && u.bare || answer && !u.gloss // a bare name needs strong evidence
		default:
			used = u.call || answer
		}
		if used {
			d.add(name, part, line[start:end])
		}
	}
}

// plainCommand reports a word outside the known list used the way
// commands are: followed by a subcommand or an operand ("redis-cli ping",
// "pnpm install", "cloc ."). Prose says that of words too ("`import
// json`", "`server_tokens off`"), so it is trusted only in shell blocks,
// after a prompt, or in reply to a question that asks for a way, and
// there only with strong evidence of use.
func plainCommand(name string, args []string) bool {
	if len(args) == 0 || known[name] || codeWords[name] || fileLike(name) || strings.HasPrefix(name, "./") || template(args) {
		return false
	}
	for _, a := range args {
		if functionWords[strings.ToLower(a)] {
			return false // "`summarize the results`" is English
		}
	}
	a := args[0]
	switch {
	case subcommand(a), isFlag(a), a == ".", a == "..":
		return true
	case strings.HasPrefix(a, "./"), strings.HasPrefix(a, "../"), strings.HasPrefix(a, "~/"), strings.HasPrefix(a, "/"), strings.Contains(a, "://"), strings.Contains(a, "@"):
		return true
	case strings.HasPrefix(a, "\"") || strings.HasPrefix(a, "'"):
		return strings.Contains(a, "://") || strings.Contains(a, "/")
	}
	return fileLike(a)
}

// functionWords are English words no command takes as an argument.
var functionWords = wordSet(`the a an to of and or nor is are was be for with your my our this that it its their there than vs versus but`)

// codeWords open statements of programming languages and shell syntax,
// not commands: `import json`, `for f in *.log`, `return nil`.
var codeWords = wordSet(`
import from def class return let const var func fn package public private
static struct interface impl use require include extern namespace using
typedef for while do done if then else elif fi case esac function select
until in print println printf_s await async yield lambda new delete
exit break continue shift local declare readonly true false trap eval
`)

var listMarker = regexp.MustCompile(`^\s*(?:[-*+•]|\d+[.)])\s+`)

// isStandalone reports a span alone on its line: nothing around it but a
// list marker, an introduction ending in ':' and closing punctuation.
func isStandalone(before, after string) bool {
	if len(before) > maxSpan || len(after) > maxSpan {
		return false // also keeps long lines linear
	}
	b := listMarker.ReplaceAllString(before, "")
	b = strings.TrimSpace(b)
	if b != "" && !strings.HasSuffix(b, ":") {
		return false
	}
	return strings.Trim(after, " \t\r.,;:!") == ""
}

var (
	markerName  = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_.-]{0,63}$`)
	placeholder = wordSet(`name tool tool_name toolname command cmd function function_name your_tool x foo`)
)

// markers detects <tool>name</tool> and [tool: name] (any case) outside
// inline code. The body may not hold a newline or exceed 200 bytes.
func (d *detector) markers(line string, code []span) {
	if !strings.Contains(line, "</") && !strings.Contains(line, ":") {
		return
	}
	low := asciiLower(line)
	for _, m := range []struct{ open, close string }{{"<tool>", "</tool>"}, {"[tool:", "]"}} {
		for i := 0; ; {
			k := strings.Index(low[i:], m.open)
			if k < 0 {
				break
			}
			start := i + k
			bodyAt := start + len(m.open)
			i = bodyAt
			limit := min(len(low), bodyAt+200+len(m.close))
			e := strings.Index(low[bodyAt:limit], m.close)
			if e < 0 || inSpans(code, start) {
				continue
			}
			body := strings.TrimSpace(line[bodyAt : bodyAt+e])
			end := bodyAt + e + len(m.close)
			i = end
			fs := strings.Fields(body)
			if len(fs) == 0 || strings.ContainsAny(body, "<>[") {
				continue
			}
			name := fs[0]
			if !markerName.MatchString(name) || placeholder[strings.ToLower(name)] {
				continue
			}
			d.add(name, body, line[start:end])
		}
	}
}

// asciiLower lowers ASCII letters only, so byte offsets stay valid.
func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// inSpans reports whether offset i lies in one of the sorted spans.
func inSpans(spans []span, i int) bool {
	k := sort.Search(len(spans), func(k int) bool { return spans[k].end > i })
	return k < len(spans) && spans[k].start <= i
}

// quotes detects "cmd args" and 'cmd args' in prose. A quoted command needs
// a shellish first argument or a run verb before it, and is skipped in JSON
// context.
func (d *detector) quotes(line string, code []span) {
	for i := 0; i < len(line); {
		r, size := utf8.DecodeRuneInString(line[i:])
		closer, ok := quotePair(r)
		if !ok || inSpans(code, i) {
			i += size
			continue
		}
		if i > 0 {
			p, _ := utf8.DecodeLastRuneInString(line[:i])
			if unicode.IsLetter(p) || unicode.IsDigit(p) || p == '\\' {
				i += size // an apostrophe inside a word, or an escaped quote
				continue
			}
		}
		open := i
		i += size
		limit := min(len(line), i+maxSpan)
		j := strings.IndexRune(line[i:limit], closer)
		if j < 0 {
			continue
		}
		closeAt := i + j
		end := closeAt + utf8.RuneLen(closer)
		if end < len(line) {
			n, _ := utf8.DecodeRuneInString(line[end:])
			if unicode.IsLetter(n) || unicode.IsDigit(n) {
				continue
			}
		}
		content := line[i:closeAt]
		i = end
		if jsonContext(line[:open], line[end:]) {
			continue
		}
		name, args, ok := firstCommand(content)
		if !ok || content != strings.TrimSpace(content) {
			continue
		}
		if !runVerbBefore(line[:open]) && (len(args) == 0 || !shellish(args[0]) || !known[name]) {
			continue
		}
		d.inline(line, open, end, content)
	}
}

func quotePair(r rune) (rune, bool) {
	switch r {
	case '"':
		return '"', true
	case '\'':
		return '\'', true
	case '“':
		return '”', true
	case '‘':
		return '’', true
	}
	return 0, false
}

// jsonContext reports a quoted string that is a JSON key or value: after
// a key's colon, or after { [ or a comma on a line that opened an object
// or array (a comma alone ends a clause of prose).
func jsonContext(before, after string) bool {
	b := strings.TrimRight(before, " \t")
	if b != "" {
		switch b[len(b)-1] {
		case '{', '[':
			return true
		case ':':
			if strings.HasSuffix(strings.TrimRight(b[:len(b)-1], " \t"), "\"") {
				return true
			}
		case ',':
			if strings.ContainsAny(b, "{[") {
				return true
			}
		}
	}
	a := strings.TrimLeft(after, " \t")
	return strings.HasPrefix(a, ":")
}
