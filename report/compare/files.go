package compare

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/jstemmer/go-junit-report/v2/junit"

	"bench/internal/record/rundir"
	"bench/report/stats"
)

// Output file names, in the --out directory (by default the new run's
// rundir.CompareDir).
const (
	JSONFile  = "compare.json"
	MDFile    = "compare.md"
	JUnitFile = "junit.xml"
)

// OutError is the error of an --out that would overwrite a run's files:
// one of the two run directories, or any other run directory (its
// junit.xml would be replaced). It is a usage error, found before anything
// is read.
type OutError struct {
	Dir, Why string
}

func (e *OutError) Error() string { return "--out " + e.Dir + " " + e.Why }

// CheckOut says whether dir can take the outputs of comparing baseDir with
// newDir: not a run directory (one with a results.jsonl or a run.json),
// the two compared included.
func CheckOut(dir, baseDir, newDir string) error {
	def := filepath.Join(newDir, rundir.CompareDir)
	for _, run := range []string{baseDir, newDir} {
		if same, err := sameDir(dir, run); err != nil {
			return err
		} else if same {
			return &OutError{dir, fmt.Sprintf("is the run directory %s itself; give a directory of its own (default %s)", run, def)}
		}
	}
	for _, name := range []string{rundir.ResultsFile, rundir.RunFile} {
		if _, err := os.Lstat(rundir.Path(dir, name)); err == nil {
			return &OutError{dir, fmt.Sprintf("holds a run (its %s), whose junit.xml compare would replace; give a directory of its own (default %s)", name, def)}
		}
	}
	return nil
}

// WriteFiles writes compare.json, compare.md, junit.xml and compare.html into dir
// (created if needed), each atomically and streamed, so a compare of
// 100,000 cells holds no copy of a file in memory. It refuses a dir that
// CheckOut refuses, so a compare can never overwrite a run's own files,
// and holds dir's lock while it writes (two compares into one dir cannot
// mix their files; the temporary files a killed compare left are removed).
func WriteFiles(dir string, r *Result) error {
	if err := CheckOut(dir, r.BaseDir, r.NewDir); err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	lock, err := rundir.Lock(dir)
	if err != nil {
		return err
	}
	defer lock.Close()
	for _, f := range []struct {
		name  string
		write func(io.Writer, *Result) error
	}{{JSONFile, WriteJSON}, {MDFile, WriteMarkdown}, {JUnitFile, WriteJUnit}, {HTMLFile, WriteHTML}} {
		if err := writeAtomic(filepath.Join(dir, f.name), func(w io.Writer) error { return f.write(w, r) }); err != nil {
			return err
		}
	}
	return nil
}

// writeAtomic writes path through a temporary file in its directory,
// synced and renamed over it (as rundir.WriteFile, but streamed).
func writeAtomic(path string, write func(io.Writer) error) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	tmp := f.Name()
	bw := bufio.NewWriterSize(f, 256<<10)
	err = write(bw)
	if err == nil {
		err = bw.Flush()
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp, 0o644)
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// WriteJSON writes compare.json: the result indented as every run
// directory file is, except the cells, one compact object per line
// (100,000 of them stay readable and cost no indentation pass).
func WriteJSON(w io.Writer, r *Result) error {
	head := *r
	head.Cells = nil
	b, err := rundir.MarshalJSON(&head)
	if err != nil {
		return fmt.Errorf("encode %s: %w", JSONFile, err)
	}
	tail := []byte(`"cells": null` + "\n}\n")
	if !bytes.HasSuffix(b, tail) {
		return fmt.Errorf("encode %s: cells are not the last field", JSONFile)
	}
	if _, err := w.Write(b[:len(b)-len(tail)]); err != nil {
		return err
	}
	io.WriteString(w, `"cells": [`)
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	for i, c := range r.Cells {
		buf.Reset()
		// The cell's whole form, encoded here rather than by its
		// MarshalJSON, whose output encoding/json would compact again.
		whole, err := c.whole()
		if err != nil {
			return fmt.Errorf("encode %s: %w", JSONFile, err)
		}
		if err := enc.Encode(whole); err != nil {
			return err
		}
		if i > 0 {
			io.WriteString(w, ",")
		}
		io.WriteString(w, "\n    ")
		w.Write(bytes.TrimSuffix(buf.Bytes(), []byte("\n")))
	}
	if len(r.Cells) > 0 {
		io.WriteString(w, "\n  ")
	}
	_, err = io.WriteString(w, "]\n}\n")
	return err
}

// sameDir reports whether a and b are the same directory (b exists).
func sameDir(a, b string) (bool, error) {
	sb, err := os.Stat(b)
	if err != nil {
		return false, nil // the run was read; a vanished one is no output target
	}
	sa, err := os.Stat(a)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return os.SameFile(sa, sb), nil
}

// WriteJUnit writes junit.xml: one testsuite per group, one testcase per
// cell key (classname the group, name "PROMPT rep N"), plus one testcase
// per group for each of pass_rate, tool_use_success, tier and each latency
// metric. A finding that fails the gate is a <failure> whose message
// lists the changes; a cell that was not judged (changed prompt, missing,
// new, unavailable) is <skipped> with the reason; everything else passes
// (drift, improvement and notes keep their text in <system-out>).
func WriteJUnit(w io.Writer, r *Result) error {
	suites := junit.Testsuites{Name: "bench compare " + r.BaseRunID + " -> " + r.NewRunID}
	byGroup := map[groupKey][]*Cell{}
	for _, c := range r.Cells {
		gk := groupOf(c.k)
		byGroup[gk] = append(byGroup[gk], c)
	}
	for i, g := range r.Groups {
		s := junit.Testsuite{Name: xmlText(g.Label()), ID: i, Time: "0.000", Package: xmlText(g.Provider)}
		for _, c := range byGroup[g.key] {
			s.AddTestcase(cellCase(g, c, r.Options))
		}
		for _, tc := range groupCases(g, r) {
			s.AddTestcase(tc)
		}
		// Jenkins' xunit schema has no skipped attribute on <testsuites>:
		// the totals there are the tests, failures and errors only.
		suites.Suites = append(suites.Suites, s)
		suites.Tests += s.Tests
		suites.Failures += s.Failures
		suites.Errors += s.Errors
	}
	return suites.WriteXML(w)
}

func cellCase(g *Group, c *Cell, opt Options) junit.Testcase {
	tc := junit.Testcase{Name: xmlText(fmt.Sprintf("%s rep %d", c.PromptID, c.Repetition)), Classname: xmlText(g.Label()), Time: "0.000"}
	switch c.Verdict {
	case Regression, Drift:
		if opt.failsOn(c.Category) {
			tc.Failure = &junit.Result{Message: xmlText(oneLine(c.Verdict+" ("+c.Category+"): "+cellSummary(c), 1000)), Type: c.Category, Data: xmlText(cellDetail(c))}
			return tc
		}
	case Changed, Missing, New, Unavailable:
		tc.Skipped = &junit.Result{Message: xmlText(oneLine(c.Verdict+": "+skipReason(c), 1000))}
		return tc
	}
	if c.Verdict != Match {
		tc.SystemOut = &junit.Output{Data: xmlText(c.Verdict + ": " + cellSummary(c))}
	}
	return tc
}

func skipReason(c *Cell) string { return cellSummary(c) }

// cellDetail lists every change of a cell, one per line, each value cut
// at maxDetail bytes (compare.json has them whole).
func cellDetail(c *Cell) string {
	var b strings.Builder
	for _, ch := range c.shownChanges() {
		fmt.Fprintf(&b, "%s: %s -> %s\n", ch.Path, cut(ch.From, maxDetail), cut(ch.To, maxDetail))
	}
	if c.Agentsnap != "" {
		fmt.Fprintf(&b, "agentsnap status: %s\n", c.Agentsnap)
	}
	fmt.Fprintf(&b, "results.jsonl lines: base %d, new %d\n", c.BaseLine, c.NewLine)
	return b.String()
}

// groupCases are a group's testcases beyond its cells: pass_rate,
// tool_use_success, the injection figures (attack_success_rate, per style
// too, and utility_under_attack), tier and each latency metric of the group, and each
// prompt's latency metric that has a finding or was not judged. What was
// not judged is <skipped> with the reason, so a CI page counts it.
func groupCases(g *Group, r *Result) []junit.Testcase {
	var out []junit.Testcase
	add := func(name, text, skipped string, failing *Finding) {
		tc := junit.Testcase{Name: xmlText(name), Classname: xmlText(g.Label()), Time: "0.000"}
		switch {
		case failing != nil && failing.FailsGate:
			tc.Failure = &junit.Result{Message: xmlText(oneLine(failing.Message, 1000)), Type: failing.Category, Data: xmlText(text)}
		case skipped != "":
			tc.Skipped = &junit.Result{Message: xmlText(oneLine("not judged ("+skipped+"): "+text, 1000))}
		default:
			tc.SystemOut = &junit.Output{Data: xmlText(text)}
		}
		out = append(out, tc)
	}
	find := func(metric, prompt string) *Finding {
		for i := range r.Findings {
			f := &r.Findings[i]
			if f.Scope != "cell" && f.Metric == metric && f.PromptID == prompt && f.Provider == g.Provider && f.Model == g.Model &&
				ptrEq(f.ThinkingLevel, g.ThinkingLevel) {
				return f
			}
		}
		return nil
	}
	rateCase := func(metric, name string, t RateTest) {
		text := name + " " + rateChange(t) + ", " + t.Test + " p " + pText(t)
		if t.NotJudged != "" {
			text = t.NotJudged
		}
		add("[group] "+metric, text, t.NotJudged, find(metric, ""))
	}
	rateCase(MetricPassRate, "pass rate", g.PassRate)
	rateCase(MetricToolUse, "tool-use success", g.ToolUse)
	for _, ct := range g.Categories {
		text := "pass rate " + rateChange(ct.RateTest) + ", " + ct.RateTest.Test + " p " + pText(ct.RateTest)
		if ct.NotJudged != "" {
			text = ct.NotJudged
		}
		add("[category] "+ct.Category, text, ct.NotJudged, find(MetricCategoryPassRate+":"+ct.Category, ""))
	}
	if in := g.Injection; in != nil {
		rateCase(MetricAttackSuccess, "attack success", in.AttackSuccess)
		rateCase(MetricUtilityUnderAttack, "utility under attack", in.UtilityUnderAttack)
		for _, st := range in.Styles {
			text := "attack success " + rateChange(st.RateTest) + ", " + st.RateTest.Test + " p " + pText(st.RateTest)
			if st.NotJudged != "" {
				text = st.NotJudged
			}
			add("[injection style] "+st.Style, text, st.NotJudged, find(MetricAttackSuccess+":"+st.Style, ""))
		}
	}
	tierText := "tier " + tierText(g.Tier)
	if g.Tier.NotJudged != "" {
		tierText = g.Tier.NotJudged
	}
	add("[group] "+MetricTier, tierText, g.Tier.NotJudged, find(MetricTier, ""))
	skip := func(v *stats.Verdict) string {
		if v == nil {
			return stats.WhyNoSamples
		}
		return v.NotJudged
	}
	for _, m := range Metrics {
		add("[group] latency "+m, verdictText(g.Latency[m]), skip(g.Latency[m]), find(m, ""))
	}
	for _, p := range g.Prompts {
		for _, m := range Metrics {
			v := p.Latency[m]
			f := find(m, p.PromptID)
			if f != nil || v == nil || !v.Judged() {
				add("[prompt] "+p.PromptID+" latency "+m, verdictText(v), skip(v), f)
			}
		}
	}
	if c := g.Capacity; c != nil {
		findStage := func(metric, stage string) *Finding {
			for i := range r.Findings {
				f := &r.Findings[i]
				if f.Category == CapacityCat && f.Metric == metric && f.Stage == stage && f.Provider == g.Provider && f.Model == g.Model &&
					ptrEq(f.ThinkingLevel, g.ThinkingLevel) {
					return f
				}
			}
			return nil
		}
		for _, s := range c.Stages {
			add("[stage] "+s.Stage+" "+MetricThroughput, verdictText(s.Throughput), skip(s.Throughput), findStage(MetricThroughput, s.Stage))
			add("[stage] "+s.Stage+" "+MetricGoodput, "goodput "+goodputText(&s.Goodput), s.Goodput.NotJudged, findStage(MetricGoodput, s.Stage))
		}
		if l := c.Limit; l != nil {
			add("[group] "+MetricSLOLimit, l.Reason, l.NotJudged, findStage(MetricSLOLimit, ""))
		} else {
			add("[group] "+MetricSaturation, c.Saturation.Reason, c.Saturation.NotJudged, findStage(MetricSaturation, ""))
		}
	}
	return out
}

func verdictText(v *stats.Verdict) string {
	if v == nil {
		return "no samples"
	}
	if !v.Judged() {
		return fmt.Sprintf("not judged (%s): %s", v.NotJudged, v.Reason)
	}
	base, cur := effect(v)
	return fmt.Sprintf("%s -> %s (%s %%), n %d/%d: %s; %s", num(base), num(cur), signedPct(v.ShiftPct), v.NBase, v.NCur, changeMark(v), v.Reason)
}

func ptrEq(a, b *string) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

// xmlText replaces what XML 1.0 cannot hold (control characters other
// than tab, newline and carriage return; U+FFFE and U+FFFF; invalid
// UTF-8) by U+FFFD: model output can hold anything.
func xmlText(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r == 0x09 || r == 0x0A || r == 0x0D,
			r >= 0x20 && r <= 0xD7FF,
			r >= 0xE000 && r <= 0xFFFD,
			r >= 0x10000 && r <= 0x10FFFF:
			return r
		}
		return '\uFFFD'
	}, strings.ToValidUTF8(s, "\uFFFD"))
}

// maxDetail bounds one value in junit.xml.
const maxDetail = 2000

// cut shortens a JSON value for junit.xml, on a UTF-8 boundary.
func cut(v json.RawMessage, max int) string {
	s := string(v)
	if len(s) <= max {
		return s
	}
	n := max
	for n > 0 && (s[n]&0xC0) == 0x80 {
		n--
	}
	return fmt.Sprintf("%s… (%d more bytes)", s[:n], len(s)-n)
}
