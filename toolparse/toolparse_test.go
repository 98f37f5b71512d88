package toolparse

import (
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"reflect"
	"strings"
	"testing"
)

type corpusCase struct {
	id       string
	want     []string
	question string // the prompt the reply answers; "" when the file has none
	text     string
}

// loadCorpus reads a labeled file under testdata: cases start with
// "=== id | want: a b" and run to the next such line. In files that carry
// the question, a line "--- reply" parts the prompt (before it) from the
// reply (after it).
func loadCorpus(t *testing.T, path string) []corpusCase {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read corpus: %v", err)
	}
	var out []corpusCase
	var cur *corpusCase
	var body []string
	flush := func() {
		if cur != nil {
			for i, l := range body {
				if l == "--- reply" {
					cur.question = strings.Join(body[:i], "\n")
					body = body[i+1:]
					break
				}
			}
			cur.text = strings.Join(body, "\n")
			out = append(out, *cur)
		}
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "=== "); ok {
			flush()
			id, want, ok := strings.Cut(rest, "| want:")
			if !ok {
				t.Fatalf("%s: bad case header %q", path, line)
			}
			cur = &corpusCase{id: strings.TrimSpace(id), want: strings.Fields(want)}
			body = nil
			continue
		}
		if cur != nil {
			body = append(body, line)
		}
	}
	flush()
	return out
}

func nameSet(names []string) map[string]bool {
	m := map[string]bool{}
	for _, n := range names {
		m[n] = true
	}
	return m
}

// score is text detection measured on labeled cases, by tool name per
// response: a detected name the label lacks is a false positive, a labeled
// name not detected a false negative. By response, a response counts as
// tool use when it has any name.
type score struct {
	tp, fp, fn             int
	respTP, respFP, respFN int
	misses                 []string // "id: fp name" / "id: fn name"
}

func (s score) precision() float64 { return float64(s.tp) / float64(s.tp+s.fp) }
func (s score) recall() float64    { return float64(s.tp) / float64(s.tp+s.fn) }

func scoreCases(t *testing.T, cases []corpusCase) score {
	t.Helper()
	var s score
	ids := map[string]bool{}
	for _, c := range cases {
		if ids[c.id] {
			t.Errorf("duplicate case id %s", c.id)
		}
		ids[c.id] = true
		got := nameSet(Names(DetectIn(nil, c.text, c.question)))
		want := nameSet(c.want)
		for n := range got {
			if want[n] {
				s.tp++
			} else {
				s.fp++
				s.misses = append(s.misses, c.id+": false positive "+n)
			}
		}
		for n := range want {
			if !got[n] {
				s.fn++
				s.misses = append(s.misses, c.id+": false negative "+n)
			}
		}
		switch {
		case len(got) > 0 && len(want) > 0:
			s.respTP++
		case len(got) > 0:
			s.respFP++
		case len(want) > 0:
			s.respFN++
		}
	}
	return s
}

func (s score) log(t *testing.T, label string, cases []corpusCase) {
	t.Helper()
	positives := 0
	for _, c := range cases {
		if len(c.want) > 0 {
			positives++
		}
	}
	t.Logf("%s: %d responses, %d with tool use", label, len(cases), positives)
	t.Logf("by name:     precision %.3f (%d/%d), recall %.3f (%d/%d)", s.precision(), s.tp, s.tp+s.fp, s.recall(), s.tp, s.tp+s.fn)
	t.Logf("by response: precision %.3f, recall %.3f",
		float64(s.respTP)/float64(s.respTP+s.respFP), float64(s.respTP)/float64(s.respTP+s.respFN))
}

// TestCorpusPrecisionRecall scores text detection against the labeled
// corpus the rules were written on.
func TestCorpusPrecisionRecall(t *testing.T) {
	cases := loadCorpus(t, "testdata/corpus.txt")
	positives := 0
	for _, c := range cases {
		if len(c.want) > 0 {
			positives++
		}
	}
	if len(cases) < 150 || positives < len(cases)*2/5 || positives > len(cases)*3/5 {
		t.Fatalf("corpus has %d cases, %d with tool use; want >= 150, about half", len(cases), positives)
	}
	s := scoreCases(t, cases)
	for _, m := range s.misses {
		t.Log(m)
	}
	s.log(t, "corpus", cases)
	if s.precision() < 0.95 || s.recall() < 0.95 {
		t.Errorf("precision %.3f, recall %.3f; both must be >= 0.95", s.precision(), s.recall())
	}
}

// benchPrompts are the system texts and prompts of the built-in suite's
// text tool prompts (prompts/default.yaml), which the corpus's p11-, p12-
// and p13- replies answer.
var benchPrompts = map[string]string{
	"p11": "You operate a Linux shell. To run a command, reply with the command in backticks, like `uptime`.\n\nCheck how much disk space is left on every mounted filesystem, in human-readable units.",
	"p12": "You operate a Linux shell. To run a command, reply with it on a line of its own after a '$ ' prompt, like: $ uptime\n\nFind out how much RAM and swap are in use, in human-readable form.",
	"p13": "You operate a Linux shell. To run a command, reply with it in a fenced bash code block.\n\nShow the five processes using the most memory.",
}

// TestCorpusWithBenchPrompts scores the corpus's replies to the built-in
// text tool prompts with their prompt: reading the question must keep
// what the corpus labels, the way bench calls DetectIn.
func TestCorpusWithBenchPrompts(t *testing.T) {
	var cases []corpusCase
	for _, c := range loadCorpus(t, "testdata/corpus.txt") {
		if q, ok := benchPrompts[c.id[:min(3, len(c.id))]]; ok {
			c.question = q
			cases = append(cases, c)
		}
	}
	if len(cases) < 50 {
		t.Fatalf("%d replies to bench prompts, want >= 50", len(cases))
	}
	if k := readQuestion(cases[0].question).kind; k != askWay {
		t.Fatalf("bench prompt read as %d, want askWay", k)
	}
	s := scoreCases(t, cases)
	for _, m := range s.misses {
		t.Log(m)
	}
	s.log(t, "corpus replies to bench prompts", cases)
	if s.precision() < 0.95 || s.recall() < 0.95 {
		t.Errorf("precision %.3f, recall %.3f; both must be >= 0.95", s.precision(), s.recall())
	}
}

// TestDevSet scores text detection on the development set for commands
// told to the reader or given as the answer, the cases that rule was tuned
// on.
func TestDevSet(t *testing.T) {
	cases := loadCorpus(t, "testdata/devset.txt")
	s := scoreCases(t, cases)
	for _, m := range s.misses {
		t.Log(m)
	}
	s.log(t, "dev set", cases)
	if s.precision() < 0.95 || s.recall() < 0.95 {
		t.Errorf("precision %.3f, recall %.3f; both must be >= 0.95", s.precision(), s.recall())
	}
}

// TestDevSetQuestions scores detection with the question on the
// development sets that carry one, the cases the question rule was tuned
// on: devsetq.txt, and devsetq2.txt written after the rule's first
// version.
func TestDevSetQuestions(t *testing.T) {
	for _, path := range []string{"testdata/devsetq.txt", "testdata/devsetq2.txt", "testdata/devsetq3.txt"} {
		t.Run(path, func(t *testing.T) {
			cases := loadCorpus(t, path)
			s := scoreCases(t, cases)
			for _, m := range s.misses {
				t.Log(m)
			}
			s.log(t, path, cases)
			if s.precision() < 0.95 || s.recall() < 0.95 {
				t.Errorf("precision %.3f, recall %.3f; both must be >= 0.95", s.precision(), s.recall())
			}
		})
	}
}

// TestHeldOut scores text detection on replies written before a rule
// change and never used to tune it (issue 16, part 7): heldout.txt before
// the sentence rule, heldout2.txt and heldout3.txt before each revision,
// heldout4.txt (which carries each reply's question) before the rule that
// reads the question.
// Only the figures are logged, so that tuning does not drift towards these
// cases.
func TestHeldOut(t *testing.T) {
	for _, path := range []string{"testdata/heldout.txt", "testdata/heldout2.txt", "testdata/heldout3.txt", "testdata/heldout4.txt"} {
		t.Run(path, func(t *testing.T) {
			cases := loadCorpus(t, path)
			positives := 0
			for _, c := range cases {
				if len(c.want) > 0 {
					positives++
				}
			}
			if len(cases) < 40 || positives < len(cases)*2/5 || positives > len(cases)*3/5 {
				t.Fatalf("%s has %d cases, %d with tool use; want >= 40, about half", path, len(cases), positives)
			}
			s := scoreCases(t, cases)
			s.log(t, path, cases)
		})
	}
}

func TestPatterns(t *testing.T) {
	cases := []struct {
		name  string
		text  string
		want  []string
		match string // Match of the first call, when set
	}{
		{"backticks", "`free -h`", []string{"free"}, "`free -h`"},
		{"double quotes", `Run "free -h" now.`, []string{"free"}, `"free -h"`},
		{"single quotes", `Run 'free -h' now.`, []string{"free"}, `'free -h'`},
		{"dollar prompt", "$ free -h", []string{"free"}, "$ free -h"},
		{"root prompt", "# free -h", []string{"free"}, "# free -h"},
		{"user prompt", "me@box:~/src$ go test ./...", []string{"go"}, ""},
		{"tool tag", "<tool>free</tool>", []string{"free"}, "<tool>free</tool>"},
		{"tool bracket", "[tool: free]", []string{"free"}, "[tool: free]"},
		{"TOOL bracket", "[TOOL: free]", []string{"free"}, ""},
		{"bash fence", "```bash\nfree -h\n```", []string{"free"}, "free -h"},
		{"fence with indented closer", "```bash\nfree -h\n  ```\n`df -h`", []string{"free", "df"}, ""},
		{"unterminated fence", "```bash\nfree -h", []string{"free"}, ""},
		{"command word of a pipeline", "`ps aux | sort -k4 | head`", []string{"ps"}, ""},
		{"each command of a chain", "$ cd /srv && ls -la || echo none", []string{"cd", "ls", "echo"}, ""},
		{"sudo prefix", "`sudo -u postgres psql --version`", []string{"psql"}, ""},
		{"bin path", "`/usr/sbin/ss -tlnp`", []string{"ss"}, ""},
		{"file path is no command", "`/etc/hostname`", nil, ""},
		{"script", "`./deploy.sh --dry-run`", []string{"./deploy.sh"}, ""},
		{"file name", "Open `main.go` first.", nil, ""},
		{"markdown heading", "# Memory", nil, ""},
		{"heading with command word", "# top processes", nil, ""},
		{"bare heading command", "# top", nil, ""},
		{"comment in bash", "```bash\n# free -h\n```", nil, ""},
		{"root prompt in console", "```console\n# free -h\n```", []string{"free"}, ""},
		{"output lines in console", "```console\n$ uptime\n 10:00 up 3 days\n```", []string{"uptime"}, ""},
		{"json fence", "```json\n{\"cmd\": \"free -h\"}\n```", nil, ""},
		{"json text", `{"name": "free", "arguments": {}}`, nil, ""},
		{"mention", "The `free` command shows memory.", nil, ""},
		{"bare word with verb", "Run `uptime`.", []string{"uptime"}, ""},
		{"bare literal with verb", "Run `true`.", nil, ""},
		{"negation", "Don't run `free -h` here.", nil, ""},
		{"same command twice", "`free -h`\n\n```bash\nfree -h\n```", []string{"free"}, ""},
		{"different args twice", "`free -h`\n`free -m`", []string{"free", "free"}, ""},
		{"marker in inline code", "Use `[tool: free]` to call.", nil, ""},
		{"placeholder", "[tool: name]", nil, ""},
		{"glossary after block", "```bash\nps aux | head -n 6\n```\n- `ps aux`: lists all processes\n- `head -n 6` — keeps six lines", []string{"ps"}, ""},
		{"crlf", "$ free -h\r\n", []string{"free"}, "$ free -h"},
		// A command given as the answer or the fix, or told to run.
		{"answer in the future", "`timedatectl` will show whether NTP is active.", []string{"timedatectl"}, ""},
		{"answer to the reader", "`ip route get 1.1.1.1` tells you the gateway.", []string{"ip"}, ""},
		{"answer as pronoun", "`pip list --outdated` lists them.", []string{"pip"}, ""},
		{"fix as pronoun", "`sudo mount -o remount,rw /` usually sorts it out.", []string{"mount"}, ""},
		{"determiner and future", "A quick `lsblk -f` should settle it.", []string{"lsblk"}, ""},
		{"purpose clause", "To free the space, `journalctl --vacuum-time=7d` trims the journal.", []string{"journalctl"}, ""},
		{"label", "**Fastest way:** `pgrep -a node` lists each process.", []string{"pgrep"}, ""},
		{"step", "Then `pip install -e .` installs the project.", []string{"pip"}, ""},
		{"coordinated subject", "`systemctl restart sshd` and `systemctl status sshd` will confirm it.", []string{"systemctl", "systemctl"}, ""},
		{"coordinated with a noun", "Either `killall -9 ffmpeg` or a reboot will stop it.", []string{"killall"}, ""},
		{"quote after a comma is prose", `For the parent, "ps -o ppid= -p 42" prints it.`, []string{"ps"}, ""},
		{"negation ends with its clause", "Don't run `top`, run `htop -d 10`.", []string{"htop"}, ""},
		{"re-run", "Then re-run `./configure`.", []string{"./configure"}, ""},
		{"run verb with an article", "Run a quick `uptime` first.", []string{"uptime"}, ""},
		{"do a", "Do a `git fetch --all` before merging.", []string{"git"}, ""},
		{"dash mid-line ends the clause", "You'll need `kubectl describe pod x` — the Events say why.", []string{"kubectl"}, ""},
		{"builtin", "```bash\nsource ~/.bashrc\n```", []string{"source"}, ""},
		{"list item with a description", "Two ways:\n1. `docker system df` shows the space.\n2. `docker image prune -a` frees it.", []string{"docker", "docker"}, ""},
		{"reader in a contraction", "`git rebase --continue` resumes once you've staged the files.", []string{"git"}, ""},
		{"negation in a label is advice", "Nothing fancy needed: `wc -l access.log` counts the lines.", []string{"wc"}, ""},
		// Talk about a command in the same sentence shapes.
		{"warning in a label", "Careful: `git push --force` will overwrite history.", nil, ""},
		{"warning noun", "A common mistake is running `sudo pip install` globally.", nil, ""},
		{"past with to", "The jobs that `git checkout -b x` used to do.", nil, ""},
		{"past with with", "`apt install curl` failed with an error.", nil, ""},
		{"json line", `[{"tool": "shell", "input": "df -h"}]`, nil, ""},
		{"escaped quotes", `"arguments": "{\"cmd\": \"free -m\"}"`, nil, ""},
		{"template", "Usage: `tar -czf <archive> <dir>`", nil, ""},
		{"template in a block", "```bash\nkubectl logs <pod> -n <namespace>\n```", nil, ""},
		{"redirections are no template", "Run `sort <in.txt >out.txt`.", []string{"sort"}, ""},
		{"appositive", "The second command, `grep -c ERROR app.log`, counts lines.", nil, ""},
		{"relative clause with you", "The `df -h` figures you sent show /var full.", nil, ""},
		{"question with do", "What do `ps aux` and `top -b` show?", nil, ""},
		{"description", "`ls -l` lists files with their permissions.", nil, ""},
		{"description of a flag", "`grep -v` inverts the match, so it prints other lines.", nil, ""},
		{"narrated run", "I ran `df -h` and got 97%.", nil, ""},
		{"perfect run", "You have tried `systemctl restart cups` twice.", nil, ""},
		{"possessive", "Your `git pull` printed a conflict.", nil, ""},
		{"warning", "Warning: `dd if=/dev/zero of=/dev/sdb` will wipe the disk.", nil, ""},
		{"negated predicate", "`rm -rf node_modules` won't help here.", nil, ""},
		{"past predicate", "`vmstat 1` on this box was misleading.", nil, ""},
		{"noun after a determiner", "The `crontab -e` editor will open vim.", nil, ""},
		{"third-person run verb", "The `test` target runs `go vet ./...` first.", nil, ""},
		{"question", "What does `uname -m` print on your machine?", nil, ""},
		{"reference", "In `rsync -avz src/ dst/`, `-a` keeps times.", nil, ""},
		{"coordinated description", "Both `ps -ef` and `ps aux` list every process.", nil, ""},
		{"bare name with a pronoun", "The `free` command sums it up, `vmstat` shows it over time.", nil, ""},
		{"empty", "", nil, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			calls := Detect(nil, tc.text)
			if got := Names(calls); !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("names = %q, want %q", got, tc.want)
			}
			for _, c := range calls {
				if c.Source != SourceText || c.Match == "" || !json.Valid(c.Arguments) {
					t.Errorf("bad call %+v", c)
				}
			}
			if tc.match != "" && calls[0].Match != tc.match {
				t.Errorf("match = %q, want %q", calls[0].Match, tc.match)
			}
		})
	}
}

func TestArguments(t *testing.T) {
	calls := Detect(nil, "$ sudo   df  -h /")
	if len(calls) != 1 || string(calls[0].Arguments) != `{"command":"sudo df -h /"}` {
		t.Fatalf("calls = %+v", calls)
	}
	calls = Detect(nil, "<tool>read_file /etc/hostname</tool>")
	if len(calls) != 1 || calls[0].Name != "read_file" || string(calls[0].Arguments) != `{"command":"read_file /etc/hostname"}` {
		t.Fatalf("calls = %+v", calls)
	}
}

func TestNativeFirstAndMerged(t *testing.T) {
	native := []Call{
		{Name: "get_memory_usage", Arguments: json.RawMessage(`{"unit":"GB"}`), ID: "call_1"},
		{Name: "df", Arguments: json.RawMessage(`{}`), Source: SourceNative},
	}
	text := "Calling the tool. Equivalent to `df -h` and `free -h`."
	calls := Detect(native, text)
	names := Names(calls)
	if want := []string{"get_memory_usage", "df", "free"}; !reflect.DeepEqual(names, want) {
		t.Fatalf("names = %q, want %q", names, want)
	}
	if calls[0].Source != SourceNative || calls[0].ID != "call_1" || string(calls[0].Arguments) != `{"unit":"GB"}` {
		t.Errorf("native call changed: %+v", calls[0])
	}
	if calls[2].Source != SourceText {
		t.Errorf("text call source = %q", calls[2].Source)
	}
	if Detect(nil, "no tools here") != nil {
		t.Error("no calls should be nil")
	}
	// Native calls are kept even when duplicated: each is an invocation.
	if n := len(Detect([]Call{{Name: "a"}, {Name: "a"}}, "")); n != 2 {
		t.Errorf("native duplicates: %d calls, want 2", n)
	}
}

func TestUseSuccess(t *testing.T) {
	calls := []Call{{Name: "free"}, {Name: "df"}}
	if UseSuccess(calls, nil) != nil {
		t.Error("nothing expected must be nil")
	}
	if ok := UseSuccess(calls, []string{"ps", "df"}); ok == nil || !*ok {
		t.Error("df expected and called")
	}
	if ok := UseSuccess(calls, []string{"ps"}); ok == nil || *ok {
		t.Error("ps not called")
	}
	if ok := UseSuccess(nil, []string{"ps"}); ok == nil || *ok {
		t.Error("no calls")
	}
	if got := Names(calls); !reflect.DeepEqual(got, []string{"free", "df"}) {
		t.Errorf("Names = %q", got)
	}
}

// noise mixes detection triggers, markdown and invalid UTF-8.
func noise(seed int64, n int) string {
	r := rand.New(rand.NewSource(seed))
	pieces := []string{"`", "``", "```", "```bash\n", "~~~", "\"", "'", "“", "”", "$ ", "# ", "<tool>", "</tool>", "[tool: ", "]", "\n", " ", "df -h", "free", "sudo", "&&", ";", "|", "\\\n", "@host:~$ ", "\xff", "\xc3", "\xe2\x80", "run ", "the ", "-h", "./x", "/usr/bin/", "=", "\r"}
	var b strings.Builder
	for b.Len() < n {
		if r.Intn(5) == 0 {
			b.WriteByte(byte(r.Intn(256)))
		} else {
			b.WriteString(pieces[r.Intn(len(pieces))])
		}
	}
	return b.String()
}

func TestNoPanicOnNoise(t *testing.T) {
	inputs := []string{
		strings.Repeat("`", 64<<10),
		strings.Repeat("\"a", 32<<10),
		strings.Repeat("\xff", 64<<10),
		strings.Repeat("```bash\n", 8<<10),
		strings.Repeat("$ df -h\n", 8<<10),
		strings.Repeat("x", 64<<10),
	}
	for seed := int64(0); seed < 4; seed++ {
		inputs = append(inputs, noise(seed, 64<<10))
	}
	for i, in := range inputs {
		calls := DetectIn([]Call{{Name: "n"}}, in, inputs[(i+1)%len(inputs)])
		if len(calls) == 0 || calls[0].Name != "n" {
			t.Errorf("input %d: native call lost", i)
		}
		if _, err := json.Marshal(calls); err != nil {
			t.Errorf("input %d: calls not encodable: %v", i, err)
		}
		for _, c := range calls {
			if len(c.Match) > maxSpan {
				t.Errorf("input %d: match of %d bytes", i, len(c.Match))
			}
		}
	}
}

func FuzzDetect(f *testing.F) {
	questions := []string{
		"", "How do I check disk space?", "What does `df -h` show?", "Why does `rm -i` ask?",
		"`npm install` fails. What do I do?", "Can you explain `x -y`?", "```bash\nrsync -a a/ b/\n```\nWhy?",
		"why is git pull --rebase better", "\xff`", "How", "?", "`` ` \"",
	}
	for i, s := range []string{
		"`df -h`", "$ free -h", "# free -h", "<tool>df</tool>", "[TOOL: free -h]",
		"Run \"df -h\" now", "```bash\nps aux | head\n```", "```console\n$ uptime\nout\n```",
		"The `df` command", "{\"cmd\": \"df -h\"}", "\xff`\xfe df`", "``` ```", "```",
		"a@b:~$ ls\n", "sudo", "`sudo`", "$ ", "'", "“free -h”", "`./x`",
		"`df -h` will show you it", "To fix it, `x -y` does.", "`a -b` and `c -d` or `e`", "Careful: `rm -rf /`",
		"I ran `df -h`", "`ls` —", "the `df` command’s", "don't, `ps aux`", "`x -h` ``` and ` will",
		"`redis-cli ping` is the check", "Run `nvidia-smi`", "```\nyarn install\n```", "- `brew update` — refreshes",
		"The docs say to run `make install`", "`df -h` shows it", "Running `fsck` corrupts it",
	} {
		f.Add(s, questions[i%len(questions)])
	}
	f.Fuzz(func(t *testing.T, text, question string) {
		calls := DetectIn(nil, text, question)
		if _, err := json.Marshal(calls); err != nil {
			t.Fatalf("calls not encodable: %v", err)
		}
		seen := map[string]bool{}
		for _, c := range calls {
			if c.Name == "" || c.Source != SourceText {
				t.Fatalf("bad call %+v", c)
			}
			if !json.Valid(c.Arguments) {
				t.Fatalf("invalid arguments %q", c.Arguments)
			}
			if len(c.Match) > maxSpan {
				t.Fatalf("match of %d bytes", len(c.Match))
			}
			key := c.Name + string(c.Arguments)
			if seen[key] {
				t.Fatalf("duplicate call %+v", c)
			}
			seen[key] = true
		}
		// Detection is deterministic, and Detect is DetectIn without a
		// question.
		again := Names(DetectIn(nil, text, question))
		if !reflect.DeepEqual(again, Names(calls)) {
			t.Fatalf("not deterministic: %q vs %q", again, Names(calls))
		}
		if a, b := Names(Detect(nil, text)), Names(DetectIn(nil, text, "")); !reflect.DeepEqual(a, b) {
			t.Fatalf("Detect %q, DetectIn without question %q", a, b)
		}
	})
}

// BenchmarkDetect measures Detect on 64 KiB answers: a realistic mix and
// inputs crafted to defeat span and quote matching.
func BenchmarkDetect(b *testing.B) {
	inputs := map[string]string{
		"prose": strings.Repeat("Run `df -h` to see disk space, or \"free -h\" for memory.\n```bash\nps aux | head\n```\n", 700),
		"spans": strings.Repeat("`a` \"x ", 64<<10/7),
		"open":  strings.Repeat("`` ` \" ' [tool: <tool>", 64<<10/22),
		"noise": noise(1, 64<<10),
	}
	for name, in := range inputs {
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(in)))
			for b.Loop() {
				Detect(nil, in)
			}
		})
	}
}

// BenchmarkDetectIn measures DetectIn on a 64 KiB answer to a 64 KiB
// question: reading the question must stay linear too.
func BenchmarkDetectIn(b *testing.B) {
	reply := strings.Repeat("`redis-cli ping` is the check, and `df -h` will show it.\n```\nyarn install\n```\n", 64<<10/80)
	questions := map[string]string{
		"prose": strings.Repeat("How do I check that Redis is up? What does `redis-cli ping` print, and why does git pull --rebase help? ", 64<<10/100),
		"spans": strings.Repeat("`a` \"x ", 64<<10/7),
		"noise": noise(2, 64<<10),
	}
	for name, q := range questions {
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(reply) + len(q)))
			for b.Loop() {
				DetectIn(nil, reply, q)
			}
		})
	}
	for _, size := range []int{64 << 10, 1 << 20} {
		q := strings.Repeat("Why does `git stash` drop files? How do I use rsync -a here? ", size/62)
		b.Run(fmt.Sprintf("question-%dKiB", size>>10), func(b *testing.B) {
			b.SetBytes(int64(len(q)))
			for b.Loop() {
				DetectIn(nil, "`git stash -u` keeps them.", q)
			}
		})
	}
}

// BenchmarkDetectScaling runs Detect on 64 KiB and 1 MiB of the same text:
// time per byte must stay flat (linear time). "commands" is one long line
// of real commands whose sentences are judged word by word.
func BenchmarkDetectScaling(b *testing.B) {
	texts := map[string]string{
		"prose":    "To free the space, `journalctl --vacuum-time=7d` trims it. Don't run `rm -rf /`; \"ps aux\" lists them.\n",
		"commands": "`df -h` and `free -h` will show you it, while the `ps aux` output was long, ",
	}
	for name, unit := range texts {
		for _, size := range []int{64 << 10, 1 << 20} {
			in := strings.Repeat(unit, size/len(unit))
			b.Run(fmt.Sprintf("%s-%dKiB", name, size>>10), func(b *testing.B) {
				b.SetBytes(int64(len(in)))
				for b.Loop() {
					Detect(nil, in)
				}
			})
		}
	}
}
