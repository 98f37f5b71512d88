// Package view is bench view: a local web server over many run
// directories, read-only. It lists every run it finds under the
// directories it is given (time, config, setup, gate result, headline
// figures; a run being written shown as in progress, a killed, corrupt or
// foreign one as what it is), opens any run's report.html, answers.html,
// summary.md, gate result and traces as they are on disk, filters and
// searches a run's cells (group, prompt, verdict, failure type, text) and
// compares any two runs on demand with bench compare's own verdicts
// (report/compare).
//
// It reads and never writes: no lock taken (a run's .lock is read from
// the kernel's table, rundir.Held), no report rebuilt. A URL names a run
// by a hash of its path, so no path travels in a request, and files are
// served through an os.Root of the run directory, which refuses a path
// or symlink leading out of it; a run directory reached through a
// symlink out of the named directories is not listed. It answers only
// requests whose Host is the address it serves (a loopback name by
// default), so a web page elsewhere cannot read it through DNS
// rebinding. Text from runs reaches the pages as JSON set with
// textContent, never as HTML.
//
// A run's cells are filtered through an Index built from results.jsonl in
// one pass and kept (the last MaxIndexes runs): a few numbers a cell and
// a bounded snippet of its texts, not the records; a query is a scan of
// it. The static pages (report.html, answers.html, compare.html) work
// without the server: they are what CI uploads.
//
// Layer: verdicts (reads run directories only).
package view

import (
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"bench/internal/record/rundir"
	"bench/report/compare"
)

var (
	//go:embed assets/view.html.tmpl
	pageSource string
	//go:embed assets/view.js
	appJS string
	//go:embed assets/view.css
	appCSS string

	pageTemplate = template.Must(template.New("view").Parse(pageSource))
)

// Server serves the runs under its roots.
type Server struct {
	roots []root
	cache describeCache
	index indexes
	// compares keeps the last comparisons by pair and stamps; compareMu
	// runs one at a time (a comparison holds both runs' cells).
	compareMu sync.Mutex
	compares  map[string][]byte
	// hosts are the Host headers accepted (set by Listen).
	hosts map[string]bool
	// listed are the runs of the last listing by id, for the requests
	// that name one; an id it lacks makes a new listing.
	listedMu sync.Mutex
	listed   map[string]*Run
}

// New makes a server over the directories named (run directories or
// directories of them). A name that does not exist is an error; one that
// holds no run is listed as such.
func New(dirs []string) (*Server, error) {
	if len(dirs) == 0 {
		return nil, errors.New("no directory to serve")
	}
	s := &Server{cache: describeCache{m: map[string]cachedRun{}}, index: indexes{m: map[string]*Index{}}, compares: map[string][]byte{}}
	for _, d := range dirs {
		abs, err := filepath.Abs(d)
		if err == nil {
			abs, err = filepath.EvalSymlinks(abs)
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", d, unwrapPath(err))
		}
		if st, err := os.Stat(abs); err != nil || !st.IsDir() {
			return nil, fmt.Errorf("%s: not a directory", d)
		}
		s.roots = append(s.roots, root{given: d, abs: abs})
	}
	return s, nil
}

func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// Listen binds addr ("127.0.0.1:8484"; port 0 picks a free one) and
// accepts the Host headers a browser sends for it.
func (s *Server) Listen(addr string) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	host, port, _ := net.SplitHostPort(ln.Addr().String())
	s.hosts = map[string]bool{net.JoinHostPort(host, port): true}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		s.hosts["localhost:"+port] = true
		s.hosts[net.JoinHostPort("127.0.0.1", port)] = true
		s.hosts[net.JoinHostPort("::1", port)] = true
	} else if ip != nil && ip.IsUnspecified() {
		s.hosts = nil // every interface: any Host
	}
	if h, _, err := net.SplitHostPort(addr); err == nil && h != "" {
		s.hosts[net.JoinHostPort(h, port)] = true
	}
	return ln, nil
}

// IsLoopback says whether addr binds only this machine.
func IsLoopback(addr string) bool {
	h, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if h == "localhost" {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// Handler is the server's routes.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", s.page("runs"))
	mux.HandleFunc("GET /cells", s.page("cells"))
	mux.HandleFunc("GET /api/runs", s.apiRuns)
	mux.HandleFunc("GET /api/cells", s.apiCells)
	mux.HandleFunc("GET /api/cell", s.apiCell)
	mux.HandleFunc("GET /compare", s.compare)
	mux.HandleFunc("GET /run/{id}/{file...}", s.file)
	// The pages it serves as they are on disk ask for an icon: none.
	mux.HandleFunc("GET /favicon.ico", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) })
	return s.guard(mux)
}

// guard refuses a request for another host (DNS rebinding) and anything
// but GET and HEAD, and marks every answer as not to be sniffed.
func (s *Server) guard(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.hosts != nil && !s.hosts[r.Host] {
			http.Error(w, "bench view: this server answers only requests for its own address", http.StatusMisdirectedRequest)
			return
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "bench view is read-only", http.StatusMethodNotAllowed)
			return
		}
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.Header().Set("Referrer-Policy", "no-referrer")
		h.ServeHTTP(w, r)
	})
}

// Serve serves on ln until it fails or is closed.
func (s *Server) Serve(ln net.Listener) error {
	srv := &http.Server{Handler: s.Handler(), ReadHeaderTimeout: 10 * time.Second}
	return srv.Serve(ln)
}

type pageView struct {
	Page   string
	Roots  string
	AppJS  template.JS
	AppCSS template.CSS
}

func (s *Server) page(name string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var given []string
		for _, rt := range s.roots {
			given = append(given, rt.given)
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		if err := pageTemplate.Execute(w, pageView{Page: name, Roots: strings.Join(given, ", "), AppJS: template.JS(appJS), AppCSS: template.CSS(appCSS)}); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
		}
	}
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	if err := json.NewEncoder(w).Encode(v); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
	}
}

// RunList is /api/runs: every run found, newest first.
type RunList struct {
	Roots []string `json:"roots"`
	Runs  []*Run   `json:"runs"`
	// More counts the runs past MaxRuns.
	More int `json:"more"`
}

func (s *Server) apiRuns(w http.ResponseWriter, r *http.Request) {
	runs, more := s.list()
	l := RunList{Runs: runs, More: more}
	for _, rt := range s.roots {
		l.Roots = append(l.Roots, rt.given)
	}
	writeJSON(w, l)
}

// find is the run a request names by id, or nil (an id no listing has:
// not a run under the named directories).
func (s *Server) find(id string) *Run {
	s.listedMu.Lock()
	r := s.listed[id]
	s.listedMu.Unlock()
	if r == nil {
		s.list()
		s.listedMu.Lock()
		r = s.listed[id]
		s.listedMu.Unlock()
	}
	if r == nil || r.State == StateForeign {
		return nil
	}
	return r
}

// list scans the roots and keeps the runs by id for find.
func (s *Server) list() ([]*Run, int) {
	runs, more := s.scan()
	m := make(map[string]*Run, len(runs))
	for _, r := range runs {
		m[r.ID] = r
	}
	s.listedMu.Lock()
	s.listed = m
	s.listedMu.Unlock()
	return runs, more
}

func notFound(w http.ResponseWriter, id string) {
	http.Error(w, fmt.Sprintf("bench view: no run %q under the directories this server was given", id), http.StatusNotFound)
}

// CellsAnswer is /api/cells: the run, the menus' values, and the query's
// result.
type CellsAnswer struct {
	Run    *Run    `json:"run"`
	Facets Facets  `json:"facets"`
	Result *Result `json:"result"`
	// BuiltMS is how long the run's index took to build (0: it was kept).
	BuiltMS  float64 `json:"built_ms"`
	NSkipped int     `json:"n_skipped"`
}

func (s *Server) apiCells(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	run := s.find(q.Get("run"))
	if run == nil {
		notFound(w, q.Get("run"))
		return
	}
	run = s.describe(run.dir, run.Dir) // its state now
	before := s.index.kept(run.dir)
	ix, err := s.index.get(run.dir)
	if err != nil {
		http.Error(w, fmt.Sprintf("bench view: %s: %v", run.Dir, err), http.StatusUnprocessableEntity)
		return
	}
	off, _ := strconv.Atoi(q.Get("offset"))
	a := CellsAnswer{Run: run, Facets: ix.Facets(), NSkipped: ix.NSkipped,
		Result: ix.Filter(Query{Group: q.Get("group"), Prompt: q.Get("prompt"), Verdict: q.Get("verdict"), Failure: q.Get("failure"), Text: q.Get("q"), Offset: max(off, 0)})}
	if before != ix {
		a.BuiltMS = ix.BuiltMS
	}
	writeJSON(w, a)
}

// kept is dir's index as kept, without building one.
func (x *indexes) kept(dir string) *Index {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.m[dir]
}

func (s *Server) apiCell(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	run := s.find(q.Get("run"))
	if run == nil {
		notFound(w, q.Get("run"))
		return
	}
	line, err := strconv.Atoi(q.Get("line"))
	if err != nil || line < 1 {
		http.Error(w, "bench view: line: want a line number of results.jsonl", http.StatusBadRequest)
		return
	}
	rec, err := Cell(run.dir, line)
	if err != nil {
		http.Error(w, fmt.Sprintf("bench view: %s: %v", run.Dir, err), http.StatusNotFound)
		return
	}
	writeJSON(w, rec)
}

// compare is /compare?base=ID&new=ID: compare.html of the two runs, made
// by bench compare's own Compare with its default options.
func (s *Server) compare(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	base, cur := s.find(q.Get("base")), s.find(q.Get("new"))
	switch {
	case base == nil:
		notFound(w, q.Get("base"))
		return
	case cur == nil:
		notFound(w, q.Get("new"))
		return
	}
	key := base.dir + "\x00" + stamp(base.dir) + "\x00" + cur.dir + "\x00" + stamp(cur.dir)
	s.compareMu.Lock()
	defer s.compareMu.Unlock()
	page, ok := s.compares[key]
	if !ok {
		res, err := compare.Compare(base.dir, cur.dir, compare.DefaultOptions())
		if err != nil {
			http.Error(w, fmt.Sprintf("bench view: compare %s %s: %v", base.Dir, cur.Dir, err), http.StatusUnprocessableEntity)
			return
		}
		var b strings.Builder
		if err := compare.WriteHTML(&b, res); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		page = []byte(b.String())
		if len(s.compares) >= MaxIndexes {
			clear(s.compares)
		}
		s.compares[key] = page
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Write(page)
}

// file serves a file of a run directory as it is on disk, through an
// os.Root of it: a path out of the directory (.., a symlink) is refused,
// and the open never waits (O_NONBLOCK: a FIFO with no writer is refused
// as not a plain file, as rundir.Open refuses it, instead of hanging the
// request).
func (s *Server) file(w http.ResponseWriter, r *http.Request) {
	run := s.find(r.PathValue("id"))
	if run == nil {
		notFound(w, r.PathValue("id"))
		return
	}
	name := r.PathValue("file")
	if name == "" {
		name = rundir.ReportHTML
	}
	root, err := os.OpenRoot(run.dir)
	if err != nil {
		http.Error(w, err.Error(), http.StatusNotFound)
		return
	}
	defer root.Close()
	f, err := root.OpenFile(filepath.FromSlash(name), os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		http.Error(w, fmt.Sprintf("bench view: %s: %v", name, refusal(err)), http.StatusNotFound)
		return
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		http.Error(w, err.Error(), http.StatusNotFound)
		return
	}
	if st.IsDir() {
		s.listDir(w, r, f, name)
		return
	}
	if !st.Mode().IsRegular() {
		http.Error(w, "bench view: not a plain file", http.StatusNotFound)
		return
	}
	switch filepath.Ext(name) {
	case ".jsonl", ".md", ".xml", ".txt", ".ndjson":
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	}
	http.ServeContent(w, r, name, st.ModTime(), f)
}

// refusal words an os.Root error: one that leads out of the directory is
// said to.
func refusal(err error) string {
	if strings.Contains(err.Error(), "path escapes from parent") {
		return "outside the run directory: refused"
	}
	return unwrapPath(err).Error()
}

// listDir lists a run's folder (traces/) as links, names as text.
func (s *Server) listDir(w http.ResponseWriter, r *http.Request, f *os.File, name string) {
	if !strings.HasSuffix(r.URL.Path, "/") {
		http.Redirect(w, r, r.URL.Path+"/", http.StatusMovedPermanently)
		return
	}
	ents, err := f.ReadDir(-1)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	io.WriteString(w, "<!doctype html><meta charset=utf-8><title>"+template.HTMLEscapeString(name)+"</title><ul>\n")
	for _, e := range ents {
		n := e.Name()
		if e.IsDir() {
			n += "/"
		}
		fmt.Fprintf(w, "<li><a href=\"%s\">%s</a></li>\n", template.HTMLEscapeString(urlPathEscape(n)), template.HTMLEscapeString(n))
	}
	io.WriteString(w, "</ul>\n")
}

func urlPathEscape(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(template.URLQueryEscaper(s), "+", "%20"), "%2F", "/")
}
