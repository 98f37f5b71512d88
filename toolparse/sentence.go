package toolparse

import (
	"regexp"
	"strings"
	"unicode"
)

// A command in backticks or quotes inside prose is either used (the reply
// tells the reader to run it, or gives it as the answer or the fix) or
// talked about (named, explained, compared, warned against, narrated).
// judge tells which from the role the command plays in its sentence, read
// from the words on either side, as the package doc states: set phrases
// would only catch the replies they were collected from.

// use is judge's verdict on one span.
type use struct {
	call bool // the span is used, not talked about
	bare bool // even a bare command name counts: strong evidence of use
	// direct: the reply tells the reader to run it (a run verb addressed
	// to the reader, or the span alone on its line): what a command the
	// question asks about needs to count.
	direct bool
	// answer: the command is what the sentence offers, described in the
	// present ("`x` lists them"), named by a copula ("the check is `x`")
	// or after a goal; in reply to a question that asks for a way, that
	// is the answer.
	answer bool
	// gloss: a glossary line or a definition ("`kubectl` is the
	// Kubernetes CLI"): an answer only for a command with arguments.
	gloss bool
	// goal: after a label, a purpose clause or step words ("Then `x`").
	goal bool
	// strictRun: alone on its line or after a verb that means execute
	// ("run", "type"), not one that also means adopt ("use", "try"): what
	// a bare word outside the known list needs.
	strictRun bool
}

// judge decides whether the span between before and after (the rest of
// its line on each side) is used or talked about.
func judge(before, after string) use {
	standalone := isStandalone(before, after)
	// A list marker and quote or emphasis marks are all that may precede
	// a span that starts its line; a long before cannot be that.
	lineStart := len(before) <= maxSpan && strings.Trim(listMarker.ReplaceAllString(before, ""), " \t>*_") == ""
	// A span that opens a list item is one of the options or steps the
	// list gives ("1. `docker system df` shows how much space...").
	item := lineStart && listMarker.MatchString(before)
	if len(before) > maxSpan {
		before = before[len(before)-maxSpan:] // keeps long lines linear
	}
	if len(after) > maxSpan {
		after = after[:maxSpan]
	}
	verb := runVerbBefore(before)
	bw := clauseWords(before, false)
	if narratedBefore(bw) || negatedBefore(bw) || reportedBefore(bw) {
		return use{}
	}
	p := predicateAfter(clauseWords(after, true), after, coordinatedBefore(bw), lineStart)
	if p.kind == predNegated || p.kind == predNarrated {
		return use{}
	}
	if p.state && !standalone && !verb {
		return use{} // "`vi` is installed almost everywhere": a state, whatever the label
	}
	if standalone || verb {
		strict := standalone || isRunVerb(lastWord(before)) && executing[strings.TrimPrefix(strings.TrimPrefix(lastWord(before), "re"), "-")]
		// A gerund that opens its clause is a subject ("Running `fsck`
		// on a mounted disk can corrupt it"), not an instruction.
		gerund := len(bw) == 1 && strings.HasSuffix(bw[0], "ing")
		return use{call: true, bare: true, direct: standalone || !subordinate(bw) && !gerund, answer: true, strictRun: strict}
	}
	if p.gloss {
		// It explains the command; when a way was asked for, a command
		// with its arguments listed so is an option offered.
		return use{answer: true, gloss: true}
	}
	if mentionBefore(before) || p.kind == predNoun || mentionedConjunct(bw) {
		return use{}
	}
	if runVerbAhead(bw) {
		return use{call: true, bare: true, direct: !subordinate(bw), answer: true} // "run a quick `uptime`"
	}
	goal := goalBefore(before)
	if appositive(before, after) && !goal {
		// "The second command, `grep -c x f`, counts...": a name for
		// something already there; when a way was asked for, the way
		// named ("Start it with the inspector, `node --inspect x`, ...").
		return use{answer: true}
	}
	switch {
	case p.kind == predDirected:
		return use{call: true, bare: p.strong || goal, answer: true, goal: goal}
	case determinerBefore(before):
		return use{} // "the `x` trick", "a `x` call": a noun phrase
	case p.kind == predTalk:
		return use{call: goal || item, bare: goal, answer: !p.state, gloss: p.defines, goal: goal}
	}
	// "Find its name with `lsblk`": the instrument of the reader's task.
	instrument := lastWord(before) == "with"
	return use{call: true, bare: goal, answer: goal || copulaBefore(bw) || instrument, goal: goal}
}

// copulaBefore reports a span that completes "X is": "the quickest check
// is `x`", "that's `x`", "what you want is `x`".
func copulaBefore(ws []string) bool {
	n := len(ws)
	if n == 0 {
		return false
	}
	w := ws[n-1]
	return copulas[w] || strings.HasSuffix(w, "'s") && len(w) > 2 || strings.HasSuffix(w, "'re")
}

// subordinators open a clause that states a condition or a time, not an
// instruction: "when you run `x`", "if you run `x`".
var subordinators = wordSet(`when whenever if once after before while because since until unless every each`)

func subordinate(ws []string) bool {
	for _, w := range ws {
		if subordinators[w] {
			return true
		}
	}
	return false
}

// reporting are the verbs that report someone's advice: "the article
// recommends `x`", "blog posts suggesting `x`", "the docs say to run
// `x`". The reply's own advice ("I'd suggest `x`") and the passive
// ("the recommended way is `x`") are not reports.
var reporting = wordSet(`recommend recommends recommended recommending suggest suggests suggested suggesting advise advises advised advising say says said saying tell tells told telling mention mentions mentioned mentioning propose proposes proposed proposing claim claims claimed insist insists insisted`)

// ownSubjects make a reporting verb the reply's own advice, or one put to
// the reader.
var ownSubjects = wordSet(`i we i'd we'd i'll we'll i'm we're let's let you you'd you'll`)

// reportedBefore reports a span in the clause of a reporting verb whose
// subject is someone else.
func reportedBefore(ws []string) bool {
	for i, w := range ws {
		if !reporting[w] {
			continue
		}
		j := i - 1
		for j >= 0 && (adverbs[ws[j]] || modals[ws[j]] || strings.HasSuffix(ws[j], "ly") && len(ws[j]) > 4) {
			j--
		}
		if j < 0 {
			continue // an imperative, or no subject in this clause
		}
		s := ws[j]
		if ownSubjects[s] || determiners[s] || copulas[s] || s == "it's" || s == "be" || s == "been" || s == "was" || s == "were" || s == "being" {
			continue
		}
		return true
	}
	return false
}

// lastWord is the last word of s, lower-cased and stripped of emphasis and
// opening quotes.
func lastWord(s string) string {
	s = strings.TrimRightFunc(s, unicode.IsSpace)
	i := strings.LastIndexFunc(s, unicode.IsSpace)
	return normWord(strings.Trim(s[i+1:], "*_\"'("))
}

func normWord(w string) string {
	for i := 0; i < len(w); i++ {
		if c := w[i]; c >= 'A' && c <= 'Z' || c >= 0x80 {
			return strings.ReplaceAll(strings.ToLower(w), "’", "'")
		}
	}
	return w
}

// runVerbs are the present forms that tell someone to run a command; past
// and third-person forms narrate or describe (see narratedBefore).
var runVerbs = wordSet(`run running execute executing exec type typing enter invoke invoking try issue issuing use using doing`)

// executing are the run verbs that can only mean execute.
var executing = wordSet(`run running execute executing exec type typing enter invoke invoking`)

// isRunVerb also knows the forms with re- ("re-run", "rerun", "retry").
func isRunVerb(w string) bool {
	if runVerbs[w] {
		return true
	}
	if r, ok := strings.CutPrefix(w, "re"); ok {
		r = strings.TrimPrefix(r, "-")
		return r != "" && runVerbs[r]
	}
	return false
}

func runVerbBefore(before string) bool {
	return isRunVerb(lastWord(before))
}

// runVerbAhead reports a run verb whose object the span ends: a determiner
// and at most one more word between them ("do a `git fetch --all`", "run
// a quick `uptime`"). A bare "do" is left out of runVerbs because it also
// asks questions ("what do `ps` and `top` show?").
func runVerbAhead(ws []string) bool {
	n := len(ws)
	switch {
	case n >= 2 && determiners[ws[n-1]]:
		return isRunVerb(ws[n-2]) || ws[n-2] == "do"
	case n >= 3 && determiners[ws[n-2]] && ws[n-1] != "`":
		return isRunVerb(ws[n-3]) || ws[n-3] == "do"
	}
	return false
}

// appositive reports a span set off by commas after a noun phrase: a name
// for something already there, not a call.
func appositive(before, after string) bool {
	b := strings.TrimRight(before, " \t")
	return strings.HasSuffix(b, ",") && strings.HasPrefix(strings.TrimLeft(after, " \t"), ",")
}

// narrating are run verbs that report a run rather than ask for one: past
// forms ("I ran `df -h`") and third-person ones ("the target runs `x`").
var narrating = wordSet(`ran executed invoked typed entered issued tried used called runs executes invokes calls uses tries`)

// perfect are the words that turn a following run verb into a report of a
// run ("had run `x`", "you've tried `x`").
var perfect = wordSet(`had has have 've did already was were been`)

// narratedBefore takes the words of the clause before the span.
func narratedBefore(ws []string) bool {
	n := len(ws)
	if n == 0 || narrating[ws[n-1]] {
		return n > 0
	}
	if !isRunVerb(ws[n-1]) || n < 2 {
		return false
	}
	prev := ws[n-2]
	return perfect[prev] || strings.HasSuffix(prev, "'ve")
}

// mentionWordsBefore make the span an object of talk: comparisons,
// prepositions of reference, possessives and the auxiliary of a question
// ("than `top`", "the output of `df -h`", "In `rsync -avz`, ...", "your
// `npm install`", "what does `uname -m` print").
var mentionWordsBefore = wordSet(`of than like unlike about called named from as in inside within its their such via versus vs vs. your my our his her does do did`)

func mentionBefore(before string) bool {
	return mentionWordsBefore[lastWord(before)]
}

// coordinatedBefore reports a span that is the second of two joined by
// "and" or "or" ("Both `ps -ef` and `ps aux` list...").
func coordinatedBefore(ws []string) bool {
	n := len(ws)
	return n >= 2 && (ws[n-1] == "and" || ws[n-1] == "or") && ws[n-2] == "`"
}

// mentionedConjunct reports the second of two spans whose first is an
// object of talk: "like `apt install` or `apt remove`".
func mentionedConjunct(ws []string) bool {
	n := len(ws)
	return coordinatedBefore(ws) && n >= 3 && mentionWordsBefore[ws[n-3]]
}

var determiners = wordSet(`the a an`)

func determinerBefore(before string) bool {
	return determiners[lastWord(before)]
}

// negators mark a clause that advises against what follows it; warnings
// and the negations that address the reader also do so from a label
// before a colon ("Careful: `x`", "Don't: `x`"), the others only inside
// the span's own clause ("Nothing fancy needed: `wc -l f`" is advice).
var (
	negators = wordSet(`not never no nothing nor neither avoid avoiding without cannot careful warning caution beware danger dangerous mistake pitfall`)
	warnings = wordSet(`not never avoid cannot careful warning caution beware danger dangerous mistake pitfall`)
)

// negatedBefore reports a negation or warning in the span's clause ("don't
// run `x`", "there's no need to run `x`", "Careful: `x` ..."); a clause
// ends at . ! ? ; , ( and dashes, so "Don't run `x`, run `y`" keeps `y`.
// ws are the clause's words, with ":" standing for a colon.
func negatedBefore(ws []string) bool {
	label := 0 // words before the last colon belong to a label
	for i, w := range ws {
		if w == ":" {
			label = i + 1
		}
	}
	for i, w := range ws {
		if w == ":" {
			continue
		}
		if i < label {
			// A warning, or a label that opens as a negated imperative
			// ("Don't: `x`"); "The commits aren't gone: `x` lists them"
			// states a fact before the span.
			if warnings[w] || strings.HasSuffix(w, "n't") && labelOpening(ws[:i]) {
				return true
			}
			continue
		}
		if negators[w] || strings.HasSuffix(w, "n't") {
			return true
		}
		if i+1 < len(ws) && (w == "instead" && ws[i+1] == "of" || w == "rather" && ws[i+1] == "than") {
			return true
		}
	}
	return false
}

// labelOpening reports words that may precede an imperative: none, or
// only politeness and conjunctions.
func labelOpening(ws []string) bool {
	for _, w := range ws {
		if w != "please" && w != "and" && w != "but" && w != "just" && w != ":" {
			return false
		}
	}
	return true
}

// goalBefore reports a span introduced as the way to a goal: after a
// label ("Fix: `x` ..."), a purpose clause ("To free the space, `x` ..."),
// or step words ("Then `x` ...", "First, `x` ...").
func goalBefore(before string) bool {
	b := strings.TrimRight(before, "*_ \t")
	if strings.HasSuffix(b, ":") {
		if m := listMarker.FindStringIndex(b); m != nil {
			b = b[m[1]:]
		}
		return strings.TrimLeft(b, ":*_ \t") != ""
	}
	seg := sentenceOf(before)
	if strings.HasSuffix(b, ",") {
		// "To free the space, `x` ...": only the first word matters.
		ws := sentenceWords(seg[:min(len(seg), 8)])
		if len(ws) > 0 && ws[0] == "to" && strings.ContainsAny(strings.TrimSpace(seg), " \t") {
			return true
		}
	}
	if len(seg) > maxStepBytes {
		return false // longer than any run of step words
	}
	ws := sentenceWords(seg)
	if len(ws) == 0 {
		return false
	}
	for _, w := range ws {
		if !steps[w] {
			return false
		}
	}
	return true
}

// maxStepBytes bounds a sentence opening made only of step words ("And
// then, finally,"), which keeps goalBefore cheap on long sentences.
const maxStepBytes = 48

// sentenceOf is the sentence that ends s: from the last . ! or ? followed
// by a space, without a list marker.
func sentenceOf(s string) string {
	for i := len(s) - 1; i >= 0; i-- {
		if c := s[i]; (c == '.' || c == '!' || c == '?') && (i+1 >= len(s) || s[i+1] == ' ') {
			s = s[i+1:]
			break
		}
	}
	if m := listMarker.FindStringIndex(s); m != nil {
		s = s[m[1]:]
	}
	return s
}

var steps = wordSet(`then next finally first second third afterwards after that now and`)

// predicate kinds: what the words after a span say about it.
const (
	predNone     = iota // nothing is said of it: it ends the clause or is an object
	predNoun            // it modifies a noun: "`df` command", "`x`'s", a glossary line
	predTalk            // a description: "`ls -l` lists files"
	predNarrated        // past: "`x` was misleading", "`x` failed"
	predNegated         // "`x` won't help"
	predDirected        // aimed at the reader's task: "`x` will show", "`x` fixes it"
)

type predicate struct {
	kind   int
	strong bool // directed by a future or the reader, not only a pronoun
	state  bool // a passive: the command's state, not what it does
	gloss  bool // a glossary line: "`x` — what it does"
	// defines: "`x` is ...": with arguments the way to do it, of a bare
	// name what the tool is.
	defines bool
}

// participlesIrregular are passive participles without -ed.
var participlesIrregular = wordSet(`built set done made gone shown known run written given kept found left put bound`)

// nounsAfter are the nouns a command names when it is talked about.
var nounsAfter = wordSet(`command commands utility utilities tool tools program programs binary binaries flag flags option options output package man manual page syntax subcommand invocation`)

var (
	strongModals = wordSet(`will 'll should shall`)
	weakModals   = wordSet(`can could would may might must`)
	copulas      = wordSet(`is are`)
	auxiliaries  = wordSet(`does do has have`)
	pastMarkers  = wordSet(`was were did had already gave told ran took got found said broke hung made kept threw sent saw wrote used`)
	adverbs      = wordSet(`also then just still now only alone even again both all right always sometimes perhaps afterwards`)
	reader       = wordSet(`you yourself your yours you'll you're you've you'd`)
	prepositions = wordSet(`on in at inside under with from for within over across against per of`)
	participles  = wordSet(`by into through`)
	// nonVerbs cannot start the predicate of a coordinated subject ("`x`
	// and `y` list..."), whose verb has no third-person s to find it by.
	nonVerbs = wordSet("to as than ` the a an and or")
)

// predicateAfter reads the clause after a span (ws, its words) as a
// predicate of which the command is the subject. secondConjunct tells that
// the span follows "`x` and" or "`x` or", so that its verb is plural;
// lineStart that it begins its line, where "`x` — text" is a glossary
// entry (elsewhere a dash only ends the clause).
func predicateAfter(ws []string, after string, secondConjunct, lineStart bool) predicate {
	a := strings.TrimLeft(after, " \t")
	if strings.HasPrefix(a, "'s") || strings.HasPrefix(a, "’s") {
		return predicate{kind: predNoun}
	}
	if lineStart && glossary.MatchString(after) {
		return predicate{kind: predNoun, gloss: true}
	}
	if len(ws) == 0 {
		return predicate{}
	}
	i := 0
	coordinated := secondConjunct
	if ws[0] == "and" || ws[0] == "or" {
		// "`x` and `y` will confirm it", "`x` or a reboot will stop it":
		// the predicate follows the other conjunct; with none, a list of
		// names is talk.
		coordinated = true
		i = 1
		if len(ws) > 1 && ws[1] == "`" {
			i = 2
		} else {
			for i < len(ws) && !closedVerb(ws[i]) {
				i++
			}
			if i == len(ws) {
				return predicate{kind: predTalk}
			}
		}
	}
	p := verbPhrase(ws, i, coordinated)
	if coordinated && p.kind != predDirected {
		p.kind = predTalk
	}
	return p
}

func verbPhrase(ws []string, i int, coordinated bool) predicate {
	start := i
	if i < len(ws) && prepositions[ws[i]] {
		// "`x` on a shared branch will ...", "`x` at the root installs
		// ...": skip the phrase to a closed-class verb, or to a present
		// verb after its noun (not a plural right after "the" or "in").
		for i++; i < len(ws) && !closedVerb(ws[i]); i++ {
			if thirdPerson(ws[i]) && !determiners[ws[i-1]] && !prepositions[ws[i-1]] && i+1 < len(ws) && !prepositions[ws[i+1]] && !nonVerbs[ws[i+1]] {
				break // a verb has an object; "for detailed counters and" is a noun
			}
		}
	}
	i = skipAdverbs(ws, i)
	if i >= len(ws) {
		return predicate{}
	}
	w := ws[i]
	rest := ws[i+1:]
	readerIn := false
	for k := range rest {
		readerIn = readerIn || readerAt(rest, k)
	}
	switch {
	case i == start && nounsAfter[w]:
		return predicate{kind: predNoun}
	case negative(w):
		return predicate{kind: predNegated}
	case pastMarkers[w] || (i == start && pastForm(w) && !(len(rest) > 0 && participles[rest[0]])):
		return predicate{kind: predNarrated}
	case strongModals[w] || weakModals[w] || copulas[w] || auxiliaries[w]:
		j := skipAdverbs(ws, i+1)
		if j < len(ws) && (ws[j] == "not" || ws[j] == "never") {
			return predicate{kind: predNegated}
		}
		if copulas[w] && j < len(ws) && (pastForm(ws[j]) || participlesIrregular[ws[j]]) {
			return predicate{kind: predTalk, state: true} // "`x` is configured"
		}
		if strongModals[w] || readerIn {
			return predicate{kind: predDirected, strong: true}
		}
		if copulas[w] {
			return predicate{kind: predTalk, defines: true} // "`x` is the way", "`x` is the Kubernetes CLI"
		}
		if weakModals[w] || auxiliaries[w] {
			// "`x` can show it": the object decides, after the verb.
			if j+1 < len(ws) && objectAt(ws, skipAdverbs(ws, j+1)) {
				return predicate{kind: predDirected}
			}
			if auxiliaries[w] && objectAt(ws, j) {
				return predicate{kind: predDirected} // "`x` does it"
			}
		}
		return predicate{kind: predTalk}
	case thirdPerson(w) || (coordinated && !prepositions[w] && !nonVerbs[w]):
		if objectAt(ws, skipAdverbs(ws, i+1)) {
			return predicate{kind: predDirected, strong: readerAt(ws, skipAdverbs(ws, i+1))}
		}
		if readerIn {
			return predicate{kind: predDirected, strong: true}
		}
		return predicate{kind: predTalk}
	}
	return predicate{}
}

// readerAt reports the reader at ws[j]: "you", "your"..., but not the
// subject of a relative clause in the past ("the figures you sent").
func readerAt(ws []string, j int) bool {
	if j >= len(ws) || !reader[ws[j]] {
		return false
	}
	if ws[j] != "you" || j+1 >= len(ws) {
		return true // "you've staged" is the reader, not a relative clause
	}
	return !(pastMarkers[ws[j+1]] || pastForm(ws[j+1]))
}

// objectAt reports the reader or a pronoun for the answer at ws[j]: "shows
// you", "prints it", "lists them", "gives exactly that".
func objectAt(ws []string, j int) bool {
	if j >= len(ws) {
		return false
	}
	if readerAt(ws, j) || ws[j] == "it" || ws[j] == "them" {
		return true
	}
	return (ws[j] == "that" || ws[j] == "this") && j == len(ws)-1
}

func skipAdverbs(ws []string, i int) int {
	for i < len(ws) && (adverbs[ws[i]] || len(ws[i]) > 4 && strings.HasSuffix(ws[i], "ly")) {
		i++
	}
	return i
}

func closedVerb(w string) bool {
	return strongModals[w] || weakModals[w] || copulas[w] || auxiliaries[w] || pastMarkers[w] || negative(w)
}

func negative(w string) bool {
	return strings.HasSuffix(w, "n't") || w == "cannot" || w == "never"
}

func pastForm(w string) bool {
	return len(w) > 4 && strings.HasSuffix(w, "ed")
}

// thirdPerson reports a word shaped like a present verb after a singular
// subject: shows, prints, fixes, does.
func thirdPerson(w string) bool {
	return len(w) > 2 && strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") && !strings.HasSuffix(w, "'s") && !nounsAfter[w]
}

// glossary matches the rest of a "`ps aux`: lists processes" or
// "`df` — disk free" line: a command being explained, not run.
var glossary = regexp.MustCompile(`^(?::|\s+[-–—])\s+\S`)

// clauseWords returns the words of the clause next to a span: forward from
// the start of s when forward, else back from its end. A clause ends at
// . ! ? ; , : ( ) and dashes (a colon only going forward, since "Fix:" or
// "Careful:" introduce the span's clause, and back from the span a colon
// is the word ":"). Inline code inside the clause is the one word "`".
// Words are lower-cased, with ’ as '.
func clauseWords(s string, forward bool) []string {
	ws := make([]string, 0, 8)
	if !forward {
		s = s[clauseStart(s):]
		if len(s) > maxClauseBytes {
			// Keep the clause's end, from a word's start.
			s = s[len(s)-maxClauseBytes:]
			if k := strings.IndexByte(s, ' '); k >= 0 {
				s = s[k:]
			}
		}
	}
	w := -1 // start of the current word
	flush := func(i int) {
		if w >= 0 {
			ws = append(ws, normWord(s[w:i]))
			w = -1
		}
	}
	for i := 0; i < len(s) && (!forward || len(ws) < maxClauseWords); i++ {
		c := s[i]
		switch {
		case c == '`':
			flush(i)
			ws = append(ws, "`")
			n := runLen(s, i, '`')
			k := strings.Index(s[i+n:], s[i:i+n])
			if k < 0 {
				return ws
			}
			i += n + k + n - 1
		case forward && boundary(s, i, true):
			flush(i)
			return ws
		case !forward && c == ':':
			flush(i)
			ws = append(ws, ":")
		case c == '\'' || c == '-' || c >= 0x80 || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9':
			if w < 0 {
				w = i
			}
		default:
			flush(i)
		}
	}
	flush(len(s))
	return ws
}

// maxClauseWords and maxClauseBytes bound what is read after and before a
// span: a predicate or a negation further away belongs to another clause,
// and the bound keeps Detect linear on long lines.
const (
	maxClauseWords = 24
	maxClauseBytes = 160
)

// clauseStart is where the clause that ends s begins.
func clauseStart(s string) int {
	for i := len(s) - 1; i >= 0; i-- {
		if boundary(s, i, false) {
			return i + 1
		}
	}
	return 0
}

// boundary reports a clause break at s[i]: punctuation followed by a space
// or the end (so "1.1.1.1" and "e.g" do not break), a bracket, or a dash.
func boundary(s string, i int, colon bool) bool {
	c := s[i]
	spaced := i+1 >= len(s) || s[i+1] == ' ' || s[i+1] == '\t' || s[i+1] == '\r'
	switch c {
	case '.', '!', '?', ';', ',':
		return spaced
	case ':':
		return colon && spaced
	case '(', ')':
		return true
	case '-':
		return i > 0 && s[i-1] == ' ' && spaced // " - "
	case 0xe2: // — and –
		return strings.HasPrefix(s[i:], "—") || strings.HasPrefix(s[i:], "–")
	}
	return false
}

// sentenceWords returns the words of s, lower-cased.
func sentenceWords(s string) []string {
	var ws []string
	for _, f := range strings.FieldsFunc(s, func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '\''
	}) {
		ws = append(ws, normWord(f))
	}
	return ws
}
