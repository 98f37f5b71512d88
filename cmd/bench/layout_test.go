package main

import (
	"fmt"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// layers are CONTRIBUTING.md's layout, top to bottom: a package's folder
// decides its layer (the longest prefix wins), its doc comment's "Layer:"
// line must name it, and production code imports only from its own layer
// or those below it. run/ and report/ share a rank but are rooms apart:
// neither imports the other, the run directory is the contract between
// them, and the verdicts import nothing above the record: they read run
// directories, never the config decoder, a provider or a check. Test-only
// packages (internal/testpeer/..., and any folder whose
// name ends in "test") are never imported by production code.
var layers = []struct {
	prefix, name string
	rank         int
}{
	{"cmd/", "command", 0},
	{"run/", "the run", 1},
	{"report/", "verdicts", 1},
	{"providers/", "providers", 2},
	{"config/", "configuration", 3},
	{"prompts/", "scoring", 4},
	{"validators/", "scoring", 4},
	{"toolparse/", "scoring", 4},
	{"internal/record/", "the record", 5},
	{"internal/testpeer/", "test peers", -1},
	{"internal/", "internal helpers", 6},
}

// layerOf is the layer of the package in folder rel (slash-separated, from
// the repository's root).
func layerOf(rel string) (name string, rank int, ok bool) {
	if strings.HasSuffix(filepath.Base(rel), "test") {
		return "test peers", -1, true
	}
	best := -1
	for i, l := range layers {
		if strings.HasPrefix(rel+"/", l.prefix) && (best < 0 || len(l.prefix) > len(layers[best].prefix)) {
			best = i
		}
	}
	if best < 0 {
		return "", 0, false
	}
	return layers[best].name, layers[best].rank, true
}

// apart says rooms a and b must not import each other: the run and the
// verdicts meet only in the run directory.
func apart(a, b string) bool {
	return a != b && (a == "run" || a == "report") && (b == "run" || b == "report")
}

// room is a package's top-level folder.
func room(rel string) string { return strings.SplitN(rel, "/", 2)[0] }

type goPackage struct {
	rel     string
	layer   string // from its doc comment's Layer: line
	imports map[string]bool
}

// readPackages parses every package's non-test files under root: their
// doc comments and imports.
func readPackages(t *testing.T, root string) []goPackage {
	t.Helper()
	var pkgs []goPackage
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		if n := d.Name(); p != root && (strings.HasPrefix(n, ".") || n == "testdata" || n == "runs" || n == "node_modules") {
			return filepath.SkipDir
		}
		files, _ := filepath.Glob(filepath.Join(p, "*.go"))
		rel, _ := filepath.Rel(root, p)
		pkg := goPackage{rel: filepath.ToSlash(rel), imports: map[string]bool{}}
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			af, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ImportsOnly|parser.ParseComments)
			if err != nil {
				return err
			}
			if af.Doc != nil {
				if m := regexp.MustCompile(`(?m)^Layer: ([a-z ]+)`).FindStringSubmatch(af.Doc.Text()); m != nil {
					pkg.layer = strings.TrimSpace(m[1])
				}
			}
			for _, im := range af.Imports {
				path, _ := strconv.Unquote(im.Path.Value)
				if rest, ok := strings.CutPrefix(path, "bench/"); ok {
					pkg.imports[rest] = true
				}
			}
		}
		for _, f := range files {
			if !strings.HasSuffix(f, "_test.go") {
				pkgs = append(pkgs, pkg) // a folder of tests alone is no package to place
				break
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return pkgs
}

// Every package names its folder's layer, and no production import runs
// up a layer, across from run/ to report/ (or back), or into a test-only
// package.
func TestPackageLayers(t *testing.T) {
	pkgs := readPackages(t, mustAbs(t, repoRoot))
	if len(pkgs) < 40 {
		t.Fatalf("found %d packages; the walk missed some", len(pkgs))
	}
	for _, p := range layerProblems(pkgs) {
		t.Error(p)
	}
}

// The guard fails on each kind of wrong import and doc line.
func TestLayerProblemsCatches(t *testing.T) {
	for _, tc := range []struct {
		pkg  goPackage
		want string
	}{
		{goPackage{rel: "run/progress", layer: "the run", imports: map[string]bool{"report": true}}, "rooms apart"},
		{goPackage{rel: "report/compare", layer: "verdicts", imports: map[string]bool{"run/plan": true}}, "run directories only"},
		{goPackage{rel: "report", layer: "verdicts", imports: map[string]bool{"config": true}}, "run directories only"},
		{goPackage{rel: "report/htmlreport", layer: "verdicts", imports: map[string]bool{"providers": true}}, "run directories only"},
		{goPackage{rel: "config", layer: "configuration", imports: map[string]bool{"providers": true}}, "up a layer"},
		{goPackage{rel: "internal/record/results", layer: "the record", imports: map[string]bool{"toolparse": true}}, "up a layer"},
		{goPackage{rel: "providers", layer: "providers", imports: map[string]bool{"internal/testpeer/faultserver": true}}, "test-only"},
		{goPackage{rel: "run/traces", layer: "the run", imports: map[string]bool{"run/traces/tracetest": true}}, "test-only"},
		{goPackage{rel: "prompts", layer: "configuration", imports: map[string]bool{}}, "its folder is in layer"},
		{goPackage{rel: "lib/x", layer: "the run", imports: map[string]bool{}}, "in no layer"},
		{goPackage{rel: "report/view", layer: "verdicts", imports: map[string]bool{"report/compare": true, "internal/record/rundir": true}}, ""},
	} {
		got := strings.Join(layerProblems([]goPackage{tc.pkg}), "\n")
		if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
			t.Errorf("%s importing %v: problems %q, want one saying %q", tc.pkg.rel, tc.pkg.imports, got, tc.want)
		}
	}
}

// layerProblems is what is wrong with pkgs' layers and imports.
func layerProblems(pkgs []goPackage) []string {
	var out []string
	bad := func(format string, a ...any) { out = append(out, fmt.Sprintf(format, a...)) }
	for _, p := range pkgs {
		name, rank, ok := layerOf(p.rel)
		if !ok {
			bad("%s: its folder is in no layer of CONTRIBUTING.md#layout", p.rel)
			continue
		}
		if p.layer == "" {
			bad("%s: no package doc comment says its layer (a line starting \"Layer: %s\")", p.rel, name)
		} else if !strings.HasPrefix(p.layer, name) {
			bad("%s: its doc comment says \"Layer: %s\"; its folder is in layer %q", p.rel, p.layer, name)
		}
		for im := range p.imports {
			imName, imRank, ok := layerOf(im)
			switch {
			case !ok:
				bad("%s imports bench/%s, which is in no layer", p.rel, im)
			case imRank < 0 && rank >= 0:
				bad("%s imports bench/%s: production code never imports a test-only package", p.rel, im)
			case rank >= 0 && imRank < rank:
				bad("%s (%s) imports bench/%s (%s): an import up a layer", p.rel, name, im, imName)
			case room(p.rel) == "report" && room(im) != "report" && imRank >= 0 && imRank < 5:
				bad("%s imports bench/%s: the verdicts read run directories only (the record and helpers), never %s code", p.rel, im, imName)
			case apart(room(p.rel), room(im)):
				bad("%s imports bench/%s: %s/ and %s/ are rooms apart (the run directory is the contract between them)", p.rel, im, room(p.rel), room(im))
			}
		}
	}
	return out
}

// Every top-level folder is one CONTRIBUTING.md's layout block names, so a
// new room is a decision written down, not an accident of a commit.
func TestTopLevelFoldersInLayout(t *testing.T) {
	root := mustAbs(t, repoRoot)
	block := layoutBlock(t, readFile(t, filepath.Join(root, "CONTRIBUTING.md")))
	named := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^([a-z][a-z0-9_-]*)/`).FindAllStringSubmatch(block, -1) {
		named[m[1]] = true
	}
	entries, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range entries {
		if !e.IsDir() || strings.HasPrefix(e.Name(), ".") || e.Name() == "runs" || e.Name() == "node_modules" {
			continue
		}
		n++
		if !named[e.Name()] {
			t.Errorf("top-level folder %s/ is not in CONTRIBUTING.md's layout block (add it there, or fold it into a room)", e.Name())
		}
	}
	for name := range named {
		if _, err := os.Stat(filepath.Join(root, name)); err != nil {
			t.Errorf("CONTRIBUTING.md's layout block names %s/, which does not exist", name)
		}
	}
	if n < 8 {
		t.Errorf("found %d top-level folders; the listing missed some", n)
	}
}

// layoutBlock is the fenced block under CONTRIBUTING.md's "## Layout".
func layoutBlock(t *testing.T, doc string) string {
	t.Helper()
	_, after, ok := strings.Cut(doc, "\n## Layout\n")
	if !ok {
		t.Fatal("CONTRIBUTING.md has no ## Layout section")
	}
	_, after, ok = strings.Cut(after, "```\n")
	if !ok {
		t.Fatal("CONTRIBUTING.md's layout has no fenced block")
	}
	block, _, ok := strings.Cut(after, "```")
	if !ok {
		t.Fatal("CONTRIBUTING.md's layout block is not closed")
	}
	return block
}
