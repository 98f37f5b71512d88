package merge

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"slices"
	"strings"

	"bench/internal/record/results"
	"bench/internal/record/rundir"
	"bench/internal/record/secrets"
)

// maxListed bounds the overlapping cells an error names.
const maxListed = 5

// results concatenates the shards' results.jsonl, in shard order, into the
// merged one, each line as it was but for run_id (set to the merged run's),
// and refuses cells recorded by more than one shard. Unusable lines are
// left out with a warning, as the report would skip them.
//
// Overlaps are found with a 64-bit hash of each cell's key (16 bytes a cell
// instead of the key's strings, so a million-cell merge stays small); a
// hash seen in two shards is then checked against the real keys in a
// second pass, so a hash collision never refuses a merge.
func (m *merger) results() error {
	path := rundir.Path(m.out, rundir.ResultsFile)
	af, err := rundir.CreateAtomic(path)
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(af, 1<<20)
	seed := maphash.MakeSeed()
	owner := map[uint64]int32{}
	suspect := map[uint64]bool{}
	m.byStatus = map[string]int{}
	rw := &runIDRewriter{to: m.runID}
	var problems []string
	for si, s := range m.shards {
		a := &audit{}
		pl, planned := planOf(s)
		if !planned {
			fmt.Fprintf(m.warn, "warning: %s: its config.json does not say its plan; its cells are not checked against it\n", s.name())
		}
		onProblem := func(p results.Problem) {
			if p.Truncated {
				return // a half-written last line: never a recorded cell
			}
			a.bad++
			if len(a.badLines) < maxListed {
				a.badLines = append(a.badLines, p.Line)
			}
		}
		err := eachLine(s.dir, m.warn, onProblem, func(rec *results.Record, raw []byte) error {
			h := maphash.Comparable(seed, rec.Key())
			o, seen := owner[h]
			if !seen {
				owner[h] = int32(si)
			} else if o != int32(si) {
				suspect[h] = true // another shard's too: refused as an overlap
			}
			if planned && !pl.has(rec) {
				if a.nOutside++; len(a.outside) < maxListed {
					a.outside = append(a.outside, cellName(rec.Key()))
				}
				return nil // not a cell of this shard's plan: never merged
			}
			if !seen {
				a.cells++
			}
			m.byStatus[rec.AvailabilityStatus]++
			s.records++
			m.records++
			if _, err := bw.Write(rw.rewrite(raw, rec.RunID)); err != nil {
				return err
			}
			return bw.WriteByte('\n')
		})
		if err != nil {
			af.Abort()
			return err
		}
		if planned {
			for k := range pl.cells {
				if o, ok := owner[maphash.Comparable(seed, k)]; !ok || o != int32(si) {
					if a.nMissing++; len(a.missing) < maxListed {
						a.missing = append(a.missing, cellName(k))
					}
				}
			}
		}
		if ps := a.problems(s, pl); len(ps) > 0 {
			problems = append(problems, s.name()+": "+strings.Join(ps, "; "))
		}
	}
	if len(suspect) > 0 {
		if err := m.overlaps(seed, suspect); err != nil {
			af.Abort()
			return err
		}
	}
	if len(problems) > 0 {
		if !m.allowPartial {
			af.Abort()
			return refuse(Incomplete, "%s. A merge of these shards would pass for the whole run; re-run the shard (bench run --resume with its --shard and --run-id), or add --allow-partial to merge what is there as an unfinished run",
				strings.Join(problems, ". "))
		}
		for _, p := range problems {
			fmt.Fprintf(m.warn, "warning: %s (merged as an unfinished run: --allow-partial)\n", p)
		}
		m.problems = problems
	}
	if err := bw.Flush(); err != nil {
		af.Abort()
		return err
	}
	return af.Commit()
}

// eachLine calls fn with every usable record of dir/results.jsonl and its
// line as written; unusable lines are warned about and skipped.
func eachLine(dir string, warn io.Writer, onProblem func(results.Problem), fn func(rec *results.Record, raw []byte) error) error {
	path := rundir.Path(dir, rundir.ResultsFile)
	f, err := rundir.Open(path, 0)
	if err != nil {
		return fmt.Errorf("open results: %w", err)
	}
	defer f.Close()
	rd := results.NewReader(f)
	rd.Detail = results.Aggregates
	// Every line is the shard's record scrubbed with the secrets its run
	// names, re-encoded where the scrub changed it: a merge never copies
	// a secret a shard's results.jsonl holds.
	rd.Scope = secrets.OfRun(dir)
	rd.OnProblem = func(p results.Problem) {
		fmt.Fprintf(warn, "warning: %s %s (not merged)\n", path, p)
		if onProblem != nil {
			onProblem(p)
		}
	}
	var rec results.Record
	for {
		_, raw, err := rd.NextRaw(&rec)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		if err := fn(&rec, raw); err != nil {
			return err
		}
	}
}

// overlaps reads the shards again for the keys whose hashes were seen in
// more than one shard, and refuses the merge if any key really was.
func (m *merger) overlaps(seed maphash.Seed, suspect map[uint64]bool) error {
	in := map[results.Key][]int{}
	for si, s := range m.shards {
		err := eachLine(s.dir, io.Discard, nil, func(rec *results.Record, _ []byte) error {
			if k := rec.Key(); suspect[maphash.Comparable(seed, k)] && !slices.Contains(in[k], si) {
				in[k] = append(in[k], si)
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	var lines []string
	for k, sis := range in {
		if len(sis) < 2 {
			continue
		}
		var dirs []string
		for _, si := range sis {
			dirs = append(dirs, m.shards[si].dir)
		}
		lines = append(lines, fmt.Sprintf("%s in %s", cellName(k), strings.Join(dirs, " and ")))
	}
	if len(lines) == 0 {
		return nil // hash collisions only
	}
	slices.Sort(lines)
	n, more := len(lines), ""
	if n > maxListed {
		more = fmt.Sprintf("; and %d more", n-maxListed)
		lines = lines[:maxListed]
	}
	return refuse(Overlap, "%d cells are recorded by more than one shard: %s%s. The shards of one run never share a cell: were these run with different --shard splits, or is one a copy of another?",
		n, strings.Join(lines, "; "), more)
}

// cellName names a cell as a person reads it.
func cellName(k results.Key) string {
	s := k.Provider + "/" + k.Model
	if k.ThinkingLevel != "" {
		s += "/" + k.ThinkingLevel
	}
	return fmt.Sprintf("%s %s repetition %d", s, k.PromptID, k.Repetition)
}

// runIDRewriter sets the run_id of result lines to the merged run's.
type runIDRewriter struct {
	to       string
	prefixes map[string][2][]byte // from run id: the line prefix with it, and with to
}

// rewrite returns raw with its run_id set to the merged run's. A line as
// results.Writer writes it starts with record_type and run_id, so the
// common case swaps a prefix; any other line has its top-level run_id
// members found by a JSON scan.
func (w *runIDRewriter) rewrite(raw []byte, from string) []byte {
	if from == w.to {
		return raw
	}
	if w.prefixes == nil {
		w.prefixes = map[string][2][]byte{}
	}
	p, ok := w.prefixes[from]
	if !ok {
		p = [2][]byte{
			[]byte(`{"record_type":"result","run_id":` + quote(from)),
			[]byte(`{"record_type":"result","run_id":` + quote(w.to)),
		}
		w.prefixes[from] = p
	}
	if bytes.HasPrefix(raw, p[0]) {
		return append(slices.Clip(p[1]), raw[len(p[0]):]...)
	}
	out, err := setMember(raw, "run_id", []byte(quote(w.to)))
	if err != nil {
		return raw // the reader decoded the line, so this does not happen
	}
	return out
}

// quote is a JSON string as results.Writer encodes it (HTML characters
// kept as they are).
func quote(s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(s)
	return strings.TrimSuffix(b.String(), "\n")
}

// setMember returns the JSON object raw with the value of every top-level
// member named key replaced by val, all else byte for byte as it was.
func setMember(raw []byte, key string, val []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, fmt.Errorf("not a JSON object")
	}
	var out []byte
	last := 0
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, err
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		if t == key {
			end := int(dec.InputOffset())
			start := end - len(v)
			out = append(append(out, raw[last:start]...), val...)
			last = end
		}
	}
	return append(out, raw[last:]...), nil
}
