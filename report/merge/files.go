package merge

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
	"slices"
	"strings"

	"bench/internal/record/rundir"
)

// copied says whether a top-level name of a shard is one bench merge
// gathers from the shards: rundir.Layout says so (rundir.Gather); the
// others it writes itself, rebuilds from the merged results, or drops. A
// name the layout does not know (a file someone put there) is gathered
// too, rather than lost.
func copied(name string) bool {
	e, ok := rundir.Lookup(name)
	return !ok || e.Merge == rundir.Gather
}

// files gathers what the shards wrote per suite and per cell (resource
// files, snapshots/, traces/, forsy/, ...), then writes config.json,
// inventory.json and each shard's own files under shards/.
//
// A file only one shard has is copied. One several shards have is copied
// once when they are the same; JSONL files are concatenated in shard order
// (a per-run log of lines); any other that differs is kept per shard under
// shards/shard-<i>-of-<n>/ with a warning, rather than one shard's copy
// passing for the run's.
func (m *merger) files() error {
	has := map[string][]*shard{}
	var rels []string
	for _, s := range m.shards {
		err := filepath.WalkDir(s.dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(s.dir, path)
			if rel == "." {
				return nil
			}
			if (!strings.Contains(rel, string(filepath.Separator)) && !copied(rel)) || isTemp(d.Name()) {
				if d.IsDir() {
					return filepath.SkipDir
				}
				return nil
			}
			switch {
			case d.IsDir():
				return nil
			case !d.Type().IsRegular():
				fmt.Fprintf(m.warn, "warning: %s is not a regular file; not merged\n", path)
				return nil
			}
			if has[rel] == nil {
				rels = append(rels, rel)
			}
			has[rel] = append(has[rel], s)
			return nil
		})
		if err != nil {
			return fmt.Errorf("read %s: %w", s.dir, err)
		}
	}
	slices.Sort(rels)
	for _, rel := range rels {
		if err := m.mergeFile(rel, has[rel]); err != nil {
			return err
		}
	}
	return m.describe()
}

// isTemp says whether name is an atomic write's temporary file.
func isTemp(name string) bool { return strings.HasPrefix(name, ".") && strings.HasSuffix(name, ".tmp") }

func (m *merger) mergeFile(rel string, from []*shard) error {
	dst := filepath.Join(m.out, rel)
	if len(from) == 1 {
		return copyFile(dst, filepath.Join(from[0].dir, rel))
	}
	same := true
	for _, s := range from[1:] {
		eq, err := sameContent(filepath.Join(from[0].dir, rel), filepath.Join(s.dir, rel))
		if err != nil {
			return err
		}
		same = same && eq
	}
	switch {
	case same:
		return copyFile(dst, filepath.Join(from[0].dir, rel))
	case strings.HasSuffix(rel, ".jsonl"):
		var srcs []string
		for _, s := range from {
			srcs = append(srcs, filepath.Join(s.dir, rel))
		}
		return concatFiles(dst, srcs)
	}
	var kept []string
	for _, s := range from {
		k := filepath.Join(s.keptDir(), rel)
		if err := copyFile(filepath.Join(m.out, k), filepath.Join(s.dir, rel)); err != nil {
			return err
		}
		kept = append(kept, k)
	}
	fmt.Fprintf(m.warn, "warning: %s differs between shards; kept each shard's copy: %s\n", rel, strings.Join(kept, ", "))
	return nil
}

// describe writes config.json (the first shard's, with the merged run's id
// and place), inventory.json (the first shard's), and each shard's own
// run.json, config.json and inventory.json under shards/.
func (m *merger) describe() error {
	first := m.shards[0]
	raw, err := rundir.ReadFile(rundir.Path(first.dir, rundir.ConfigFile))
	if err != nil {
		return err
	}
	cfg, err := setRun(raw, m.runID, filepath.Dir(m.out))
	if err != nil {
		return fmt.Errorf("%s: %w", rundir.Path(first.dir, rundir.ConfigFile), err)
	}
	if err := rundir.WriteJSON(rundir.Path(m.out, rundir.ConfigFile), json.RawMessage(cfg)); err != nil {
		return err
	}
	if err := copyIfExists(rundir.Path(m.out, rundir.InventoryFile), rundir.Path(first.dir, rundir.InventoryFile)); err != nil {
		return err
	}
	for _, s := range m.shards {
		for _, name := range []string{rundir.RunFile, rundir.ConfigFile, rundir.InventoryFile} {
			if err := copyIfExists(filepath.Join(m.out, s.keptDir(), name), rundir.Path(s.dir, name)); err != nil {
				return err
			}
		}
	}
	return nil
}

// setRun sets run.id and run.out_dir in a config.json, keeping its member
// order.
func setRun(raw []byte, id, outDir string) ([]byte, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(raw, &top); err != nil {
		return nil, err
	}
	run, ok := top["run"]
	if !ok {
		return raw, nil
	}
	run, err := setMember(run, "id", []byte(quote(id)))
	if err == nil {
		run, err = setMember(run, "out_dir", []byte(quote(outDir)))
	}
	if err != nil {
		return nil, fmt.Errorf("run: %w", err)
	}
	return setMember(raw, "run", run)
}

func copyIfExists(dst, src string) error {
	if _, err := os.Stat(src); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return copyFile(dst, src)
}

// copyFile copies src to dst atomically, making dst's directory.
func copyFile(dst, src string) error {
	return concatFiles(dst, []string{src})
}

// concatFiles writes srcs one after the other into dst, atomically, each
// ended with a newline if it lacks one (so JSONL lines never join).
func concatFiles(dst string, srcs []string) error {
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	af, err := rundir.CreateAtomic(dst)
	if err != nil {
		return err
	}
	for _, src := range srcs {
		if err := appendFile(af, src, len(srcs) > 1); err != nil {
			af.Abort()
			return err
		}
	}
	return af.Commit()
}

func appendFile(w io.Writer, src string, endLine bool) error {
	f, err := rundir.Open(src, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	lw := &lastByte{w: w}
	if _, err := io.Copy(lw, f); err != nil {
		return fmt.Errorf("copy %s: %w", src, err)
	}
	if endLine && lw.n > 0 && lw.last != '\n' {
		_, err = w.Write([]byte{'\n'})
	}
	return err
}

// lastByte passes writes through and remembers the last byte written.
type lastByte struct {
	w    io.Writer
	n    int64
	last byte
}

func (l *lastByte) Write(p []byte) (int, error) {
	n, err := l.w.Write(p)
	if n > 0 {
		l.n += int64(n)
		l.last = p[n-1]
	}
	return n, err
}

// sameContent says whether two files hold the same bytes.
func sameContent(a, b string) (bool, error) {
	sa, err := os.Stat(a)
	if err != nil {
		return false, err
	}
	sb, err := os.Stat(b)
	if err != nil {
		return false, err
	}
	if sa.Size() != sb.Size() {
		return false, nil
	}
	fa, err := rundir.Open(a, 0)
	if err != nil {
		return false, err
	}
	defer fa.Close()
	fb, err := rundir.Open(b, 0)
	if err != nil {
		return false, err
	}
	defer fb.Close()
	ra, rb := bufio.NewReader(fa), bufio.NewReader(fb)
	bufA, bufB := make([]byte, 64<<10), make([]byte, 64<<10)
	for {
		na, errA := io.ReadFull(ra, bufA)
		nb, errB := io.ReadFull(rb, bufB)
		if na != nb || !bytes.Equal(bufA[:na], bufB[:nb]) {
			return false, nil
		}
		if errA == io.EOF || errA == io.ErrUnexpectedEOF {
			return errB == io.EOF || errB == io.ErrUnexpectedEOF, nil
		}
		if errA != nil {
			return false, errA
		}
		if errB != nil {
			return false, errB
		}
	}
}
