// Package browsertest drives a real headless Chromium for tests that must see
// a page as a person would: open a file:// URL, collect the console errors and
// uncaught exceptions, list the network requests, evaluate JavaScript and take
// a screenshot. It uses chromedp over the DevTools protocol.
//
// The browser comes from BENCH_CHROMIUM_BIN (scripts/install-chromium.sh
// prints it), else /usr/bin/chromium. A missing browser skips the test,
// unless BENCH_REQUIRE_SERVERS=1, where it fails: CI must not pass a browser
// test it never ran.
//
// Layer: test peers (tests only; production code never imports it).
package browsertest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
)

// EnvBin names the variable holding the Chromium binary's path.
const EnvBin = "BENCH_CHROMIUM_BIN"

// DefaultBin is where Debian's chromium package puts the browser.
const DefaultBin = "/usr/bin/chromium"

// Window is the size of the browser window, which is also the viewport a
// screenshot starts from.
var Window = struct{ Width, Height int }{1400, 1000}

// Bin returns the Chromium binary to use, or skips tb (fails it when
// BENCH_REQUIRE_SERVERS=1) when there is none.
func Bin(tb testing.TB) string {
	tb.Helper()
	bin, err := FindBin()
	if err != nil {
		if os.Getenv("BENCH_REQUIRE_SERVERS") == "1" {
			tb.Fatalf("%v (BENCH_REQUIRE_SERVERS=1: run scripts/install-chromium.sh)", err)
		}
		tb.Skipf("%v; run scripts/install-chromium.sh or set %s", err, EnvBin)
	}
	return bin
}

// FindBin looks for Chromium: $BENCH_CHROMIUM_BIN, /usr/bin/chromium, then
// chromium or chromium-browser on PATH.
func FindBin() (string, error) {
	if p := os.Getenv(EnvBin); p != "" {
		if isExec(p) {
			return p, nil
		}
		return "", fmt.Errorf("%s=%s is not an executable file", EnvBin, p)
	}
	if isExec(DefaultBin) {
		return DefaultBin, nil
	}
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
	}
	return "", errors.New("no Chromium found")
}

func isExec(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0
}

// FileURL turns a local path into the file:// URL a person would open.
func FileURL(path string) string {
	abs, err := filepath.Abs(path)
	if err != nil {
		abs = path
	}
	return (&url.URL{Scheme: "file", Path: filepath.ToSlash(abs)}).String()
}

// Browser is one headless Chromium with a fresh profile, closed when the
// test ends.
type Browser struct {
	ctx context.Context
}

// New starts Chromium for tb. The profile (--user-data-dir) is a new
// temporary directory, so no state leaks between tests; the flags keep the
// browser from reaching for a network the machine does not have.
func New(tb testing.TB) *Browser {
	tb.Helper()
	bin := Bin(tb)
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(bin),
		chromedp.UserDataDir(tb.TempDir()),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.WindowSize(Window.Width, Window.Height),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-extensions", true),
		chromedp.Flag("disable-default-apps", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("disable-breakpad", true),
		chromedp.Flag("disable-features", "Translate,MediaRouter,OptimizationHints"),
		chromedp.Flag("force-device-scale-factor", "1"),
	}
	actx, acancel := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	tb.Cleanup(func() {
		cancel()
		acancel()
	})
	// The first Run starts the browser, bound to ctx (no timeout here: a
	// timeout on the first Run would end the browser with it).
	if err := chromedp.Do(ctx); err != nil {
		tb.Fatalf("start %s: %v", bin, err)
	}
	return &Browser{ctx: ctx}
}

// Page is one tab. Its console messages and requests are recorded from
// before the first navigation.
type Page struct {
	ctx    context.Context
	cancel context.CancelFunc

	mu       sync.Mutex
	console  []chromedp.ConsoleMessage
	requests []string
	marks    map[string]chan struct{}
}

// NewPage opens a tab and starts recording its console and requests.
func (b *Browser) NewPage(tb testing.TB) *Page {
	tb.Helper()
	ctx, cancel := chromedp.NewContext(b.ctx)
	p := &Page{ctx: ctx, cancel: cancel, marks: map[string]chan struct{}{}}
	tb.Cleanup(cancel)
	if err := chromedp.Listen(ctx, func(ev any) {
		if e, ok := ev.(*network.EventRequestWillBeSent); ok && e.Request != nil {
			p.mu.Lock()
			p.requests = append(p.requests, e.Request.URL)
			p.mu.Unlock()
		}
	}); err != nil {
		tb.Fatalf("open tab: %v", err)
	}
	msgs := chromedp.Console(ctx)
	go func() {
		for m, err := range msgs {
			if err != nil {
				return
			}
			p.mu.Lock()
			if ch, ok := p.marks[m.Text]; ok && m.Type == chromedp.ConsoleDebug {
				close(ch)
				delete(p.marks, m.Text)
			} else {
				p.console = append(p.console, m)
			}
			p.mu.Unlock()
		}
	}()
	return p
}

// Open navigates to url and waits for the load event, up to timeout.
func (p *Page) Open(url string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(p.ctx, timeout)
	defer cancel()
	if err := chromedp.Do(ctx, chromedp.Navigate(url)); err != nil {
		return fmt.Errorf("open %s: %w", url, err)
	}
	return nil
}

// Eval evaluates the JavaScript expression and decodes its JSON value into
// out (a pointer, or nil to drop it).
func (p *Page) Eval(expr string, out any) error {
	ctx, cancel := context.WithTimeout(p.ctx, time.Minute)
	defer cancel()
	raw, err := chromedp.Run(ctx, chromedp.Evaluate[[]byte](expr))
	if err != nil {
		return fmt.Errorf("evaluate %.80q: %w", expr, err)
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return fmt.Errorf("evaluate %.80q: decode %.200s: %w", expr, raw, err)
	}
	return nil
}

// Resize emulates a viewport of the given size (the page reflows), for
// checks of what fits a window narrower than Window.
func (p *Page) Resize(width, height int) error {
	ctx, cancel := context.WithTimeout(p.ctx, time.Minute)
	defer cancel()
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(int64(width), int64(height))); err != nil {
		return fmt.Errorf("resize to %dx%d: %w", width, height, err)
	}
	return nil
}

// WaitFor polls the JavaScript expression until it is truthy, up to
// timeout.
func (p *Page) WaitFor(expr string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(p.ctx, timeout)
	defer cancel()
	if _, err := chromedp.Run(ctx, chromedp.Poll[chromedp.Void](expr, chromedp.WithPollingInterval(10*time.Millisecond), chromedp.WithPollingTimeout(timeout))); err != nil {
		return fmt.Errorf("wait for %q: %w", expr, err)
	}
	return nil
}

// Screenshot saves the whole page (beyond the viewport) as a PNG.
func (p *Page) Screenshot(path string) error {
	ctx, cancel := context.WithTimeout(p.ctx, time.Minute)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		return fmt.Errorf("screenshot: %w", err)
	}
	if err := os.WriteFile(path, png, 0o644); err != nil {
		return fmt.Errorf("screenshot: %w", err)
	}
	return nil
}

// Console returns the console messages so far: calls of the console API,
// uncaught exceptions and browser log entries (a failed load is one). It
// first flushes the messages still on their way from the browser.
func (p *Page) Console() ([]chromedp.ConsoleMessage, error) {
	if err := p.flush(); err != nil {
		return nil, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]chromedp.ConsoleMessage(nil), p.console...), nil
}

// Errors returns the console errors and uncaught exceptions so far, one
// line each with where they came from.
func (p *Page) Errors() ([]string, error) {
	msgs, err := p.Console()
	if err != nil {
		return nil, err
	}
	var out []string
	for _, m := range msgs {
		if m.Type == chromedp.ConsoleError || m.IsException() {
			s := m.String()
			if m.URL != "" {
				s += fmt.Sprintf(" (%s:%d)", m.URL, m.Line+1)
			}
			out = append(out, s)
		}
	}
	return out, nil
}

// Requests returns the URLs the page requested, the document included.
func (p *Page) Requests() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.requests...)
}

// RemoteRequests returns the requests that left the machine's files: any
// scheme but file:, data:, blob: and about:. An offline report has none.
func (p *Page) RemoteRequests() []string {
	var out []string
	for _, u := range p.Requests() {
		switch scheme, _, _ := strings.Cut(u, ":"); scheme {
		case "file", "data", "blob", "about":
		default:
			out = append(out, u)
		}
	}
	return out
}

// flush logs a unique marker and waits until the collector has seen it: the
// console stream keeps order, so every earlier message has arrived too.
func (p *Page) flush() error {
	mark := fmt.Sprintf("browsertest-flush-%d", time.Now().UnixNano())
	ch := make(chan struct{})
	p.mu.Lock()
	p.marks[mark] = ch
	p.mu.Unlock()
	if err := p.Eval(fmt.Sprintf("console.debug(%q)", mark), nil); err != nil {
		return err
	}
	select {
	case <-ch:
		return nil
	case <-time.After(10 * time.Second):
		return errors.New("console messages did not arrive within 10s")
	}
}

// Load opens the file at path and waits, up to 20 s, for the page to set
// data-rendered="true" on its root element, as bench's pages do once
// their scripts have drawn everything.
func (p *Page) Load(path string) error {
	if err := p.Open(FileURL(path), 30*time.Second); err != nil {
		return err
	}
	return p.WaitFor(`document.documentElement.dataset.rendered === "true"`, 20*time.Second)
}

// Plot is what one [data-plot] element of a page shows: its canvases, how
// many of their pixels are painted (of Area), and how many distinct
// colours those have (sampled up to 64, in 4-bit channels).
type Plot struct {
	Name     string `json:"name"`
	Canvases int    `json:"canvases"`
	Painted  int    `json:"painted"`
	Colours  int    `json:"colours"`
	Area     int    `json:"area"`
}

// Blank says why a plot looks empty, or "" when it is drawn: a canvas, at
// least 0.5 % of its pixels painted, and three colours or more (a frame
// and a background alone have fewer).
func (pl Plot) Blank() string {
	if pl.Canvases == 0 || pl.Painted < pl.Area/200 || pl.Colours < 3 {
		return fmt.Sprintf("plot %s looks blank: %d canvases, %d of %d pixels painted, %d colours", pl.Name, pl.Canvases, pl.Painted, pl.Area, pl.Colours)
	}
	return ""
}

// plotsJS reads every [data-plot] element's canvases.
const plotsJS = `[...document.querySelectorAll("[data-plot]")].map(el => {
	const p = {name: el.dataset.plot, canvases: 0, painted: 0, colours: 0, area: 0};
	const seen = new Set();
	for (const c of el.querySelectorAll("canvas")) {
		p.canvases++;
		if (!c.width || !c.height) continue;
		p.area += c.width * c.height;
		const px = c.getContext("2d").getImageData(0, 0, c.width, c.height).data;
		for (let i = 0; i < px.length; i += 4) {
			if (px[i + 3] === 0) continue;
			p.painted++;
			if (seen.size < 64) seen.add((px[i] >> 4) + "," + (px[i + 1] >> 4) + "," + (px[i + 2] >> 4));
		}
	}
	p.colours = seen.size;
	return p;
})`

// Plots reads the page's plots, in document order.
func (p *Page) Plots() ([]Plot, error) {
	var out []Plot
	err := p.Eval(plotsJS, &out)
	return out, err
}
