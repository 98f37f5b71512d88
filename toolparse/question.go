package toolparse

import (
	"strings"
)

// A reply answers a question, and the question says what its commands are
// for. When it asks for a way to do something ("how do I free space?",
// "which command shows the kernel?", "Check the disk space."), a command
// the reply brings is the answer even when the reply only describes it
// ("`journalctl --vacuum-size=200M` caps the journal"). When it asks about
// something ("what does `rm -i` do?", "why is `ls` colored?", "is `kill -9`
// bad?"), the reply explains, and the command the question names is the
// subject of that explanation: it counts only when the reply tells the
// reader to run it. The same sentence, "`lsof -i :5173` will list the
// process", is the answer to "what uses port 5173?" and an explanation
// of "what does `lsof -i :5173` show?".

// ask is what a question asks for.
type ask int

const (
	askNone  ask = iota // no question, or one that asks for neither
	askWay              // a way to do something: the reply's commands answer it
	askAbout            // knowledge about a command or a behaviour: the reply explains
)

// question is what detection reads from the prompt a reply answers.
type question struct {
	kind ask
	// keys holds the commands the question names, by their leading words
	// (the command word and its subcommands up to the first flag or
	// operand, at most maxKeyWords), joined by spaces: "git stash",
	// "rm" for `rm -i`, "docker compose down".
	keys map[string]bool
	// lines holds the whole command lines the question names, normalized.
	lines map[string]bool
	// names holds tools the question names in prose without arguments:
	// only the bare name in the reply is the subject.
	names map[string]bool
}

const maxKeyWords = 3

// readQuestion reads the kind of a prompt and the commands it names. It is
// linear in the prompt's length.
func readQuestion(q string) question {
	out := question{keys: map[string]bool{}, lines: map[string]bool{}, names: map[string]bool{}}
	if strings.TrimSpace(q) == "" {
		return out
	}
	var k kinds
	inBlock, shell, first := false, false, false
	fence := ""
	for _, line := range strings.Split(q, "\n") {
		line = strings.TrimRight(line, "\r")
		t := strings.TrimSpace(line)
		if inBlock {
			// A block names commands as a reply's block holds them: every
			// line of a shell block, or of an unlabeled one that opens
			// with a known command; prompt lines of any other (the rest
			// is output, logs or code).
			switch {
			case isCloseFence(t, fence):
				inBlock = false
			case strings.HasPrefix(t, "$ "):
				out.name(t[2:])
			case t == "" || strings.HasPrefix(t, "#"):
			default:
				if first {
					first = false
					name, _, ok := firstCommand(t)
					shell = ok && known[name]
				}
				if shell {
					out.name(t)
				}
			}
			continue
		}
		if f, lang, ok := openFence(t); ok {
			inBlock, fence = true, f
			shell, first = shellLangs[lang], lang == ""
			continue
		}
		if c, ok := strings.CutPrefix(t, "$ "); ok {
			out.name(c)
			continue
		}
		out.spans(line)
		questionSentences(line, k.add)
	}
	out.kind = k.kind()
	return out
}

// kinds gathers what the sentences of a prompt ask. The prompt asks what
// its questions ask, or its imperatives when it has no question
// (statements around a question are its context): a way when any
// sentence asks for one ("What does this error mean? How do I fix it?"),
// else about something when any asks that.
type kinds struct {
	questions          bool
	qWay, qAbout       bool // what the questions ask
	restWay, restAbout bool // what the other sentences ask, read as imperatives
}

func (k *kinds) add(ws []string, asks bool) {
	c := classify(ws, asks)
	if asks {
		k.questions = true
		k.qWay = k.qWay || c == askWay
		k.qAbout = k.qAbout || c == askAbout
		return
	}
	k.restWay = k.restWay || c == askWay
	k.restAbout = k.restAbout || c == askAbout
}

func (k *kinds) kind() ask {
	way, about := k.restWay, k.restAbout
	if k.questions {
		way, about = k.qWay, k.qAbout
	}
	switch {
	case way:
		return askWay
	case about:
		return askAbout
	}
	return askNone
}

// spans names the commands in a line's inline code and quotes, and the
// known commands written in prose with a flag ("what does rm -i do?").
func (q *question) spans(line string) {
	for i := 0; i < len(line); {
		c := line[i]
		if c != '`' && c != '"' {
			i++
			continue
		}
		n := 1
		if c == '`' {
			n = runLen(line, i, '`')
		}
		end, ok := closeOf(line, i, n)
		if !ok {
			i += n
			continue
		}
		q.name(strings.TrimSpace(line[i+n : end-n]))
		i = end
	}
	// Commands written in prose: a known word with its subcommands ("why
	// is git pull --rebase better"), or alone, which names only the tool
	// ("rsync or tar?"), not what it is run with.
	fs := strings.Fields(proseOf(line))
	for i := 0; i < len(fs); i++ {
		w := strings.Trim(fs[i], "\"'(),.?!:;")
		if !known[w] || bareless[w] {
			continue
		}
		key := []string{w}
		for k := i + 1; k < len(fs) && len(key) < maxKeyWords; k++ {
			a := strings.Trim(fs[k], "`\"'(),.?!:;")
			if !subcommand(a) || functionWords[a] || strings.ContainsAny(fs[k], ",.?!:;") && !subcommand(strings.TrimRight(fs[k], ",.?!:;")) {
				break
			}
			key = append(key, a)
			if strings.ContainsAny(fs[k], ",.?!:;") {
				break // the phrase ends here
			}
		}
		q.names[w] = true
		for n := 2; n <= len(key); n++ {
			q.keys[strings.Join(key[:n], " ")] = true
		}
	}
}

// closeOf finds the end of the span that the run of n quote bytes at
// line[i] opens: the same run within maxSpan, as inline code is read in a
// reply, which keeps every scan of a line linear.
func closeOf(line string, i, n int) (end int, ok bool) {
	limit := min(len(line), i+n+maxSpan+n)
	k := strings.Index(line[i+n:limit], line[i:i+n])
	if k < 0 {
		return 0, false
	}
	return i + n + k + n, true
}

// proseOf is a line with its inline code blanked out.
func proseOf(line string) string {
	if !strings.Contains(line, "`") {
		return line
	}
	b := []byte(line)
	for i := 0; i < len(b); {
		if b[i] != '`' {
			i++
			continue
		}
		n := runLen(line, i, '`')
		end, ok := closeOf(line, i, n)
		if !ok {
			i += n
			continue
		}
		for j := i; j < end; j++ {
			b[j] = ' '
		}
		i = end
	}
	return string(b)
}

// name records the commands of a command line the question names. A
// message that starts with a command's name ("npm ERR! code ERESOLVE",
// "git: 'x' is not a git command") names none.
func (q *question) name(cmdline string) {
	for _, part := range splitCommands(cmdline) {
		fs := commandFields(part)
		if len(fs) == 0 {
			continue
		}
		if _, _, ok := firstCommand(part); !ok || message(fs) {
			continue
		}
		q.keys[commandKey(fs)] = true
		if len(fs) > 1 {
			q.lines[strings.Join(fs, " ")] = true
		}
	}
}

// message reports words that end like prose within a line's first few:
// "ERR!", "error:", "denied,".
func message(fs []string) bool {
	for i := 1; i < len(fs) && i <= 3; i++ {
		if w := fs[i]; strings.HasSuffix(w, "!") || strings.HasSuffix(w, ":") || strings.HasSuffix(w, ",") {
			return true
		}
	}
	return false
}

// commandFields are the words of a command line without a sudo prefix or
// variable assignments, which do not change what the command is.
func commandFields(s string) []string {
	fs := strings.Fields(s)
	i := 0
	for i < len(fs) {
		w := fs[i]
		switch {
		case w == "sudo" || w == "doas":
			i++
			for i < len(fs) && strings.HasPrefix(fs[i], "-") {
				if fs[i] == "-u" || fs[i] == "-g" {
					i++
				}
				i++
			}
			continue
		case strings.Contains(w, "=") && !strings.HasPrefix(w, "=") && !strings.HasPrefix(w, "-"):
			i++
			continue
		}
		break
	}
	if i >= len(fs) {
		return nil
	}
	return fs[i:]
}

// commandKey is the command word and the subcommands that follow it: the
// words up to the first flag or operand.
func commandKey(fs []string) string {
	n := 1
	for n < len(fs) && n < maxKeyWords && subcommand(fs[n]) {
		n++
	}
	return strings.Join(fs[:n], " ")
}

// subcommand reports a word shaped like a subcommand: "install",
// "full-upgrade", "db:migrate".
func subcommand(w string) bool {
	if w == "" || !(w[0] >= 'a' && w[0] <= 'z') {
		return false
	}
	for i := 1; i < len(w); i++ {
		c := w[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == ':') {
			return false
		}
	}
	return true
}

// subject reports a command line of the reply that is what the question
// asks about: in a question that asks for a way, only the very command
// line the question quotes (the user's own command, run again or not); in
// any other question, every command that starts with what the question
// names (`git stash -u` for a question about `git stash`).
func (q *question) subject(cmdline string) bool {
	if len(q.keys) == 0 && len(q.names) == 0 {
		return false
	}
	fs := commandFields(cmdline)
	if len(fs) == 0 {
		return false
	}
	if q.kind == askWay {
		return len(fs) > 1 && q.lines[strings.Join(fs, " ")]
	}
	if len(fs) == 1 && q.names[fs[0]] {
		return true
	}
	for n := 1; n <= maxKeyWords && n <= len(fs); n++ {
		if q.keys[strings.Join(fs[:n], " ")] {
			return true
		}
	}
	return false
}

// questionSentences splits a line of a prompt into sentences and hands
// each to emit: its words, lower-cased, with inline code as "`" and commas
// as ",", and whether it ends with a question mark. emit must not keep
// the words, whose array is reused.
func questionSentences(line string, emit func(ws []string, asks bool)) {
	ws := make([]string, 0, 16)
	w := -1
	flush := func(i int) {
		if w >= 0 {
			ws = append(ws, normWord(line[w:i]))
			w = -1
		}
	}
	end := func(asks bool) {
		if len(ws) > 0 {
			emit(ws, asks)
		}
		ws = ws[:0]
	}
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case c == '`':
			flush(i)
			n := runLen(line, i, '`')
			end, ok := closeOf(line, i, n)
			if !ok {
				i += n - 1
				break
			}
			ws = append(ws, "`")
			i = end - 1
		case (c == '.' || c == '!' || c == '?' || c == ':') && (i+1 >= len(line) || line[i+1] == ' ' || line[i+1] == '\t'):
			flush(i)
			end(c == '?')
		case c == ',':
			flush(i)
			ws = append(ws, ",")
		case c == '\'' || c == '-' || c >= 0x80 || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9':
			if w < 0 {
				w = i
			}
		default:
			flush(i)
		}
	}
	flush(len(line))
	end(false)
}

var (
	// fillers may open a sentence without changing what it asks.
	fillers = wordSet(`so and but ok okay also then please hey hi now well right`)
	// wayNouns are what a "what" or "which" question asks for when it asks
	// for a way: "what's the command to...", "which tool shows...".
	wayNouns = wordSet(`command commands way ways tool tools utility program fix solution steps step method approach flag option switch argument parameter setting best easiest simplest quickest fastest cleanest safest right proper correct recommended`)
	// fillersBeforeNoun may stand between "what" and the noun it asks for.
	fillersBeforeNoun = wordSet(`is are the a an some any good few 's`)
	// statementStarts open a statement, not an imperative.
	statementStarts = wordSet("i i'm i've i'd my we we're our the a an this that these those it it's there you you're your he she they some all in on at after when whenever if since because as to for with yes no ` here")
	// aboutVerbs ask for an explanation when they open an imperative.
	aboutVerbs = wordSet(`explain describe translate summarize summarise compare define interpret clarify`)
	// makeVerbs open requests for text, which ask for a way only when they
	// ask how ("write a haiku" does not; "tell me how to..." does).
	makeVerbs = wordSet(`write tell give draft compose generate`)
	// subjects of a yes/no or how question that make it a request for a
	// way: "can you show...", "how do I...".
	askers = wordSet(`i we you one`)
	modals = wordSet(`do can could should would will might may must shall`)
	// opensQuestion are the words a question opens with.
	opensQuestion = wordSet(`how what what's whats which why who whom whose where is are isn't aren't can could would will do does did should was were has have had shall doesn't don't didn't am`)
)

// classify reads what one sentence of a prompt asks for, from how it
// opens: how and which questions and imperatives ask for a way; why,
// what-does and yes/no questions, and requests to explain, ask about
// something. A sentence that opens otherwise but embeds "how to" or "how
// do I" ("Any idea how to fix this?", "Explain how to use `grep`") asks
// for a way.
func classify(ws []string, asks bool) ask {
	k := classifyOpening(ws, asks, 0)
	if k == askWay {
		return k
	}
	for i := 1; i+1 < len(ws); i++ {
		if ws[i] == "how" && (ws[i+1] == "to" || modals[ws[i+1]] && i+2 < len(ws) && askers[ws[i+2]]) {
			return askWay
		}
	}
	return k
}

// maxOpening bounds an opening clause ("On Debian,", "If I run `x`,")
// and how many are skipped, which keeps classify linear.
const maxOpening = 12

func classifyOpening(ws []string, asks bool, depth int) ask {
	for len(ws) > 0 && (fillers[ws[0]] || ws[0] == ",") {
		ws = ws[1:]
	}
	if len(ws) == 0 || depth > 4 {
		return askNone
	}
	if !opensQuestion[ws[0]] && depth < 2 {
		// An opening clause ("On Debian, how do I...", "If I run `x`,
		// will it...") leaves the question to what follows its comma.
		for i := 1; i < len(ws) && i <= maxOpening; i++ {
			if ws[i] == "," {
				if k := classifyOpening(ws[i+1:], asks, depth+1); k != askNone {
					return k
				}
				break
			}
		}
	}
	at := func(i int) string {
		if i < len(ws) {
			return ws[i]
		}
		return ""
	}
	w0, w1, w2 := ws[0], at(1), at(2)
	switch w0 {
	case "how":
		switch {
		case w1 == "come":
			return askAbout // how come X fails
		case w1 == "to" || modals[w1] && askers[w2]:
			return askWay // how do I, how can we, how to
		case wordSet(`much many long big old often far`)[w1]:
			return askWay // a quantity to find out
		case modals[w1] || w1 == "is" || w1 == "are" || w1 == "does" || w1 == "did" || w1 == "was":
			return askAbout // how does X work
		}
		return askWay
	case "what", "what's", "whats", "which":
		if modals[w1] && (w2 == "i" || w2 == "we") {
			return askWay // what should I do, what do I run
		}
		for i := 1; i < len(ws) && i <= 4; i++ {
			w := ws[i]
			if wayNouns[w] {
				return askWay // what's the command to, which tool shows
			}
			if w0 != "which" && len(w) > 4 && strings.HasSuffix(w, "ing") && (i == 1 || ws[i-1] == "is" || ws[i-1] == "are") {
				return askWay // what's using port 80: something to find out
			}
			if w0 != "which" && !fillersBeforeNoun[w] {
				break
			}
			if w0 == "which" && i == 1 && (w == "is" || w == "are" || w == "one") {
				return askAbout // which is faster: a comparison
			}
		}
		if w0 == "which" {
			return askWay // which process, which package provides
		}
		return askAbout // what does, what is, what happened
	case "why", "who", "whom", "whose", "when":
		return askAbout
	case "where":
		return askWay
	case "is", "are", "isn't", "aren't":
		if w1 == "there" {
			return askWay // is there a way
		}
		return askAbout
	case "can", "could", "would", "will":
		if w1 == "you" {
			// A request: "can you explain what...", "could you tell me
			// how to...": the verb, or the question it embeds, decides.
			rest := ws[2:]
			if len(rest) > 0 && aboutVerbs[rest[0]] {
				return askAbout
			}
			for len(rest) > 0 && (makeVerbs[rest[0]] || rest[0] == "show" || rest[0] == "me" || rest[0] == "us") {
				rest = rest[1:]
			}
			if len(rest) > 0 && opensQuestion[rest[0]] {
				return classifyOpening(rest, asks, depth+1)
			}
			return askWay
		}
		if w1 == "i" || w1 == "we" {
			return askWay // can I undo
		}
		return askAbout
	case "do", "does", "did", "should", "was", "were", "has", "have", "had", "shall", "doesn't", "don't", "didn't", "am":
		return askAbout
	}
	if asks {
		return askNone // a question in some other shape
	}
	switch {
	case w0 == "i" && (w1 == "need" || w1 == "want" || w1 == "have" || w1 == "would" || w1 == "must"), w0 == "i'd" && w1 == "like", w0 == "help":
		return askWay // I need to..., help me...
	case statementStarts[w0]:
		return askNone
	case aboutVerbs[w0]:
		return askAbout
	case makeVerbs[w0]:
		for _, w := range ws {
			if w == "how" || wayNouns[w] {
				return askWay
			}
		}
		return askNone
	}
	return askWay // an imperative: check, find, show, stop...
}
