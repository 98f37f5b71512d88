package toolparse

import (
	"reflect"
	"sort"
	"strings"
	"testing"
)

func TestQuestionKind(t *testing.T) {
	cases := []struct {
		q    string
		want ask
	}{
		{"", askNone},
		{"How do I free up disk space?", askWay},
		{"how to see cpu temperature on linux", askWay},
		{"How much memory is free on this server right now? Use the available tool.", askWay},
		{"Which command shows the kernel version?", askWay},
		{"Which process is listening on port 80?", askWay},
		{"What's the command to change the hostname?", askWay},
		{"What's the easiest way to serve a directory over HTTP?", askWay},
		{"What flag makes ls show hidden files?", askWay},
		{"What should I do?", askWay},
		{"Is there a way to list open pull requests?", askWay},
		{"Can you show me how to check swap usage?", askWay},
		{"Could you tell me how to find my IP address?", askWay},
		{"Can I undo a commit?", askWay},
		{"Where can I see the nginx error log?", askWay},
		{"Find files larger than 500 MB in my home directory.", askWay},
		{"I need to see the last 50 lines of the log.", askWay},
		{"Any idea how to fix this?", askWay},
		{"Explain how to use `grep` recursively.", askWay},
		{"On Debian, how do I find which package provides a file?", askWay},
		{"`npm install` fails with EACCES. What do I do?", askWay},
		{"What does this error mean? How do I fix it?", askWay},
		{"You operate a Linux shell. To run a command, reply with the command in backticks, like `uptime`.\n\nCheck how much disk space is left.", askWay},
		{"What's using port 8080?", askWay},
		{"What is eating all my disk space?", askWay},
		{"What is `nohup`?", askAbout},
		{"What does `rm -i` do?", askAbout},
		{"What's the difference between `git fetch` and `git pull`?", askAbout},
		{"Why does `df` disagree with `du`?", askAbout},
		{"How does `git bisect` work?", askAbout},
		{"How come `curl` hangs?", askAbout},
		{"Which is faster, `locate` or `find`?", askAbout},
		{"Is `kill -9` bad practice?", askAbout},
		{"Does `git stash` keep untracked files?", askAbout},
		{"Should I run `npm audit fix`?", askAbout},
		{"Can `grep` search gzipped files?", askAbout},
		{"Can you explain what `xargs` does here?", askAbout},
		{"Can you tell me what `-exec {} \\;` means in find?", askAbout},
		{"If I run `apt full-upgrade`, will it remove packages?", askAbout},
		{"I ran `docker system prune -a`. What happened to my images?", askAbout},
		{"Explain this crontab line: `0 3 * * * /opt/backup.sh`", askAbout},
		{"Translate this into plain English: `find . -mtime +7 -delete`", askAbout},
		{"Write a haiku about benchmarking language models.", askNone},
		{"Tell me a joke about sysadmins.", askNone},
		{"Any ideas?", askNone},
	}
	for _, c := range cases {
		if got := readQuestion(c.q).kind; got != c.want {
			t.Errorf("%q: kind %d, want %d", c.q, got, c.want)
		}
	}
}

func TestQuestionNames(t *testing.T) {
	cases := []struct {
		q            string
		keys, names  []string
		subject, not []string // reply command lines that are, or are not, subjects
	}{
		{q: "What does `sudo rm -i` do?", keys: []string{"rm"},
			subject: []string{"rm -I", "sudo rm -rf /tmp/x"}, not: []string{"ls -i"}},
		{q: "Does `git stash` keep untracked files?", keys: []string{"git stash"},
			subject: []string{"git stash -u"}, not: []string{"git status", "git"}},
		{q: "Why is git pull --rebase better than a plain git pull?", keys: []string{"git pull"}, names: []string{"git"},
			subject: []string{"git pull", "git pull --rebase", "git"}, not: []string{"git fetch"}},
		{q: "Which is better for backups, rsync or tar?", names: []string{"rsync", "tar"},
			subject: []string{"tar"}, not: []string{"tar -czf a.tgz dir"}},
		{q: "What does `nohup` do?", keys: []string{"nohup"},
			subject: []string{"nohup ./job.sh &"}},
		{q: "What does this mean?\n```\nnpm ERR! code ERESOLVE\n```\nand `git: 'x' is not a git command`?",
			not: []string{"npm ls react", "git status"}},
		{q: "Why does this script fail?\n```bash\n# back up\nrsync -a src/ dst/\n```", keys: []string{"rsync"},
			subject: []string{"rsync -av src/ dst/"}},
		{q: "Why does 5\" tape and `ls -la` fail?", keys: []string{"ls"},
			subject: []string{"ls -la"}},
		// A question that asks for a way: only the user's own command line.
		{q: "`npm install -g typescript` fails with EACCES. What do I do?", keys: []string{"npm install"},
			subject: []string{"sudo npm install -g typescript"}, not: []string{"npm install", "npm config set prefix ~/.npm"}},
	}
	for _, c := range cases {
		q := readQuestion(c.q)
		keys, names := mapKeys(q.keys), mapKeys(q.names)
		if want := sorted(c.keys); !reflect.DeepEqual(keys, want) {
			t.Errorf("%q: keys %q, want %q", c.q, keys, want)
		}
		if want := sorted(c.names); !reflect.DeepEqual(names, want) {
			t.Errorf("%q: names %q, want %q", c.q, names, want)
		}
		for _, s := range c.subject {
			if !q.subject(s) {
				t.Errorf("%q: %q should be a subject", c.q, s)
			}
		}
		for _, s := range c.not {
			if q.subject(s) {
				t.Errorf("%q: %q should not be a subject", c.q, s)
			}
		}
	}
}

func mapKeys(m map[string]bool) []string {
	out := []string{}
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func sorted(s []string) []string {
	out := append([]string{}, s...)
	sort.Strings(out)
	return out
}

// TestDetectInQuestionDecides holds replies whose calls only the question
// decides: the same sentence answers one question and explains another.
func TestDetectInQuestionDecides(t *testing.T) {
	cases := []struct {
		name, reply, question string
		want                  []string
	}{
		{"described answer", "`lsof -i :8080` will list the process holding the port.",
			"How do I find what uses port 8080?", []string{"lsof"}},
		{"described subject", "`lsof -i :8080` will list the process holding the port.",
			"What does `lsof -i :8080` show?", nil},
		{"timeless answer", "`sudo nginx -s reload` applies the new config.",
			"How do I apply my nginx changes?", []string{"nginx"}},
		{"timeless subject", "`sudo nginx -s reload` applies the new config.",
			"What does `nginx -s reload` do?", nil},
		{"timeless without question", "`sudo nginx -s reload` applies the new config.", "", nil},
		{"subject told to run", "Yes, run `npm audit fix` after installing.",
			"Should I run `npm audit fix`?", []string{"npm"}},
		{"subject variant used", "Use `git stash -u` to include them.",
			"Does `git stash` keep untracked files?", []string{"git"}},
		{"gerund subject", "Running `fsck` on a mounted disk can corrupt it.",
			"Is `fsck` safe on a mounted disk?", nil},
		{"subject in a condition", "When you run `make clean`, it deletes the build directory.",
			"What does `make clean` do?", nil},
		{"new command in an explanation", "The three commits aren't gone: `git reflog` still lists them.",
			"I ran `git reset --hard HEAD~3`. What did that do?", []string{"git"}},
		{"subcommand outside the list", "The simplest check is `redis-cli ping`.",
			"How can I check that Redis is running?", []string{"redis-cli"}},
		{"subcommand outside the list, no way asked", "The simplest check is `redis-cli ping`.", "", nil},
		{"copula answer", "`kill -9 4242` is the way to stop it.",
			"How do I stop process 4242?", []string{"kill"}},
		{"bare word run", "Run `nvidia-smi` while training.",
			"How can I see GPU usage?", []string{"nvidia-smi"}},
		{"bare word described", "`nvidia-smi` ships with the driver.",
			"How can I see GPU usage?", nil},
		{"bare definition", "`kubectl` is the Kubernetes CLI.",
			"How do I list pods?", nil},
		{"passive state", "`kubectl get pods` is configured by your kubeconfig.",
			"How do I list pods?", nil},
		{"english in backticks", "`summarize the results`", "How do I summarize a log?", nil},
		{"code in backticks", "`import json` at the top, then call `json.loads`.",
			"How do I parse JSON in Python?", nil},
		{"config line", "Add `server_tokens off;` to the http block.",
			"How do I hide the nginx version?", nil},
		{"reported advice", "Many guides recommend `sudo sysctl vm.swappiness=10`, but I would not.",
			"How do I tune swap?", nil},
		{"reported with a run verb", "The docs say to run `make install` afterwards.", "", nil},
		{"own advice", "I'd suggest `sudo sysctl vm.swappiness=10` here.",
			"How do I tune swap?", []string{"sysctl"}},
		{"mentioned pair", "You need `sudo` for commands like `apt install` or `apt remove`.",
			"Is `sudo` needed for `apt list`?", nil},
		{"glossary under a pipeline", "```bash\nps aux | head -n 6\n```\n- `head -n 6`: the header and five lines",
			"Show the top processes.", []string{"ps"}},
		{"glossary answer", "1. `brew update` — refreshes the formulae\n2. `brew upgrade` — upgrades them",
			"How do I update Homebrew packages?", []string{"brew", "brew"}},
		{"shell block word alone", "```bash\nsudo sensors-detect\nsensors\n```",
			"", []string{"sensors-detect", "sensors"}},
		{"unlabeled block with subcommand", "```\nyarn install\n```",
			"How do I install the dependencies?", []string{"yarn"}},
		{"unlabeled block, no way asked", "```\nyarn install\n```", "", nil},
		{"the user's command as a step", "Run `git pull --rebase` first. Then `git push` again.",
			"`git push` is rejected. What should I do?", []string{"git", "git"}},
		{"the user's command predicted", "After the rebase, `git push` will go through.",
			"`git push` is rejected. What should I do?", nil},
		{"a fact in a label", "The commits aren't gone: `git reflog` still lists them.",
			"I ran `git reset --hard HEAD~3`. What did that do?", []string{"git"}},
		{"instrument of a task", "Find its device name with `lsblk`.",
			"How do I mount a USB drive?", []string{"lsblk"}},
		{"appositive way", "Start it with the inspector enabled, `node --inspect server.js`, then open Chrome.",
			"How do I profile my Node app?", []string{"node"}},
		{"prose prompt sentence", "$ signs mark variables.", "How do I use variables?", nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := Names(DetectIn(nil, tc.reply, tc.question)); !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("names = %q, want %q", got, tc.want)
			}
		})
	}
}

// TestDetectIsDetectInWithoutQuestion: Detect is DetectIn with no question.
func TestDetectIsDetectInWithoutQuestion(t *testing.T) {
	for _, c := range loadCorpus(t, "testdata/corpus.txt") {
		if a, b := Detect(nil, c.text), DetectIn(nil, c.text, ""); !reflect.DeepEqual(a, b) {
			t.Fatalf("%s: Detect %v, DetectIn %v", c.id, a, b)
		}
	}
}

// TestReadQuestionLinear reads prompts built to make an opening-clause or
// request parser recurse or rescan: one long sentence of commas, and one
// of nested requests. A quadratic reading would take minutes at this size.
func TestReadQuestionLinear(t *testing.T) {
	for _, q := range []string{
		"if " + strings.Repeat("a, ", 200000) + "how do I x?",
		strings.Repeat("can you show me ", 100000) + "how to x?",
		strings.Repeat("`a` \"b ", 100000),
	} {
		readQuestion(q)
	}
}
