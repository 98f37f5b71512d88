package browsertest

import (
	"bytes"
	"fmt"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestPageSeesErrorsRequestsAndPixels loads a page that logs an error,
// throws, requests a script over http (loopback; nothing listens) and paints a canvas, and checks that each
// of them is seen: the helper must catch what the report tests rely on it to
// catch.
func TestPageSeesErrorsRequestsAndPixels(t *testing.T) {
	dir := t.TempDir()
	page := filepath.Join(dir, "page.html")
	html := `<!doctype html><html><body>
<canvas id="c" width="40" height="30"></canvas>
<script>
const c = document.getElementById("c").getContext("2d");
c.fillStyle = "#c00"; c.fillRect(0, 0, 40, 30);
console.log("just a log");
console.error("bad thing", 42);
window.answer = {n: 7, s: "seven"};
setTimeout(() => { throw new Error("late boom"); }, 0);
setTimeout(() => { window.done = true; }, 20);
</script>
<script src="http://127.0.0.1:9/x.js"></script>
</body></html>`
	if err := os.WriteFile(page, []byte(html), 0o644); err != nil {
		t.Fatal(err)
	}
	b := New(t)
	p := b.NewPage(t)
	if err := p.Open(FileURL(page), 30*time.Second); err != nil {
		t.Fatal(err)
	}
	if err := p.WaitFor("window.done === true", 10*time.Second); err != nil {
		t.Fatal(err)
	}

	var got struct {
		N int
		S string
	}
	if err := p.Eval("window.answer", &got); err != nil || got.N != 7 || got.S != "seven" {
		t.Errorf("eval: %+v, %v", got, err)
	}
	if err := p.Eval("(() => { throw new Error('x') })()", nil); err == nil {
		t.Error("an exception in Eval must be an error")
	}

	errs, err := p.Errors()
	if err != nil {
		t.Fatal(err)
	}
	joined := strings.Join(errs, "\n")
	for _, want := range []string{"bad thing 42", "late boom"} {
		if !strings.Contains(joined, want) {
			t.Errorf("errors lack %q:\n%s", want, joined)
		}
	}
	if strings.Contains(joined, "just a log") {
		t.Errorf("a plain log is not an error:\n%s", joined)
	}
	if rr := p.RemoteRequests(); len(rr) != 1 || !strings.HasPrefix(rr[0], "http://127.0.0.1:9/") {
		t.Errorf("remote requests %v", rr)
	}
	if all := p.Requests(); len(all) < 2 || !strings.HasPrefix(all[0], "file://") {
		t.Errorf("requests %v", all)
	}

	shot := filepath.Join(dir, "shot.png")
	if err := p.Screenshot(shot); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(shot)
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	if w := img.Bounds().Dx(); w != Window.Width {
		t.Errorf("screenshot width %d, want %d", w, Window.Width)
	}
	// The red canvas sits near the top left, inside the body's margin.
	r, g, bl, _ := img.At(20, 20).RGBA()
	if r>>8 < 180 || g>>8 > 40 || bl>>8 > 40 {
		t.Errorf("pixel (20,20) = %d,%d,%d, want the canvas's red", r>>8, g>>8, bl>>8)
	}
}

func TestFileURL(t *testing.T) {
	if got := FileURL("/tmp/a b/report.html"); got != "file:///tmp/a%20b/report.html" {
		t.Errorf("FileURL = %s", got)
	}
}

func TestFindBinHonoursEnv(t *testing.T) {
	t.Setenv(EnvBin, filepath.Join(t.TempDir(), "nope"))
	if _, err := FindBin(); err == nil || !strings.Contains(err.Error(), EnvBin) {
		t.Errorf("a bad %s must be an error naming it: %v", EnvBin, err)
	}
}

// stopTB records how Bin ended a test: Fatalf or Skipf, which stop the
// caller (here by a panic the test recovers).
type stopTB struct {
	testing.TB
	how, msg string
}

func (s *stopTB) Helper() {}
func (s *stopTB) Fatalf(format string, args ...any) {
	s.how, s.msg = "fatal", fmt.Sprintf(format, args...)
	panic(s)
}
func (s *stopTB) Skipf(format string, args ...any) {
	s.how, s.msg = "skip", fmt.Sprintf(format, args...)
	panic(s)
}

// TestMissingBrowserSkipsOrFails: without Chromium a test is skipped, but
// with BENCH_REQUIRE_SERVERS=1 it fails, so CI cannot pass a browser test
// it never ran.
func TestMissingBrowserSkipsOrFails(t *testing.T) {
	t.Setenv(EnvBin, filepath.Join(t.TempDir(), "no-chromium"))
	for _, c := range []struct{ require, want string }{{"", "skip"}, {"0", "skip"}, {"1", "fatal"}} {
		t.Setenv("BENCH_REQUIRE_SERVERS", c.require)
		tb := &stopTB{TB: t}
		func() {
			defer func() {
				if r := recover(); r != tb {
					panic(r)
				}
			}()
			Bin(tb)
		}()
		if tb.how != c.want || !strings.Contains(tb.msg, "no-chromium") {
			t.Errorf("BENCH_REQUIRE_SERVERS=%q: %s %q, want %s", c.require, tb.how, tb.msg, c.want)
		}
	}
}

// Load waits for data-rendered; Plots reads each [data-plot]'s canvases,
// and Blank tells a drawn plot from an empty one and from one flat colour.
func TestLoadAndPlots(t *testing.T) {
	dir := t.TempDir()
	page := filepath.Join(dir, "page.html")
	html := `<!doctype html><html><body>
<div data-plot="drawn"><canvas id="a" width="50" height="40"></canvas></div>
<div data-plot="empty"><canvas width="50" height="40"></canvas></div>
<div data-plot="flat"><canvas id="f" width="50" height="40"></canvas></div>
<div data-plot="none"></div>
<script>
setTimeout(() => {
	const a = document.getElementById("a").getContext("2d");
	a.fillStyle = "#c00"; a.fillRect(0, 0, 20, 40);
	a.fillStyle = "#0c0"; a.fillRect(20, 0, 15, 40);
	a.fillStyle = "#00c"; a.fillRect(35, 0, 15, 40);
	const f = document.getElementById("f").getContext("2d");
	f.fillStyle = "#888"; f.fillRect(0, 0, 50, 40);
	document.documentElement.dataset.rendered = "true";
}, 30);
</script></body></html>`
	if err := os.WriteFile(page, []byte(html), 0o644); err != nil {
		t.Fatal(err)
	}
	p := New(t).NewPage(t)
	if err := p.Load(page); err != nil {
		t.Fatal(err)
	}
	plots, err := p.Plots()
	if err != nil || len(plots) != 4 {
		t.Fatalf("plots %+v, %v", plots, err)
	}
	want := map[string]bool{"drawn": true, "empty": false, "flat": false, "none": false}
	for _, pl := range plots {
		if drawn := pl.Blank() == ""; drawn != want[pl.Name] {
			t.Errorf("%+v: drawn %v, want %v (%s)", pl, drawn, want[pl.Name], pl.Blank())
		}
	}
	if d := plots[0]; d.Canvases != 1 || d.Area != 2000 || d.Painted != 2000 || d.Colours != 3 {
		t.Errorf("drawn plot read as %+v", d)
	}
}
