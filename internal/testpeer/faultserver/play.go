package faultserver

import (
	"bytes"
	"fmt"
	"math"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// flushEvery is how much a flood writes between flushes: large enough to
// stream fast, small enough that nothing piles up on the server.
const flushEvery = 32 << 10

// marker stands for streamed content in a rendered frame, which is then
// split around it so the content can be written piece by piece.
const marker = "FAULTSERVER-CONTENT-MARKER-7f3a"

// player answers one request according to its behaviour.
type player struct {
	s   *Server
	w   http.ResponseWriter
	r   *http.Request
	rc  *http.ResponseController
	doc document
	// d is nil when the answer is one JSON body (a non-streamed request, or
	// an endpoint that never streams).
	d     dialect
	f     frames
	st    Stall
	key   string
	beh   behaviour
	retry time.Duration

	blocks []*block
	cur    *block
	// started says the status line has been written.
	started bool
	// batch makes send flush only every flushEvery bytes (floods).
	batch     bool
	unflushed int
}

// Write sends bytes to the client, counting what is not yet flushed.
func (p *player) Write(b []byte) (int, error) {
	n, err := p.w.Write(b)
	p.unflushed += n
	return n, err
}

// alive reports whether the client is still there and the server open.
func (p *player) alive() bool {
	select {
	case <-p.r.Context().Done():
		return false
	case <-p.s.done:
		return false
	default:
		return true
	}
}

// send writes the frames built so far and flushes them (a flood flushes
// every flushEvery bytes). It reports whether to go on.
func (p *player) send() bool {
	p.f.spill()
	if p.f.err != nil {
		return false
	}
	if !p.batch || p.unflushed >= flushEvery {
		if err := p.rc.Flush(); err != nil {
			return false
		}
		p.unflushed = 0
	}
	return p.alive()
}

// flush pushes out anything a batched flood still holds.
func (p *player) flush() bool {
	if err := p.rc.Flush(); err != nil {
		return false
	}
	p.unflushed = 0
	return p.alive()
}

func (p *player) start(status int, contentType string) {
	h := p.w.Header()
	h.Set("Content-Type", contentType)
	if strings.HasPrefix(contentType, "text/event-stream") {
		h.Set("Cache-Control", "no-cache")
	}
	p.w.WriteHeader(status)
	p.started = true
}

// fail answers with an HTTP error in the protocol's shape. 429 and 503 name
// a wait in both Retry-After (whole seconds) and retry-after-ms, as OpenAI
// and Anthropic do.
func (p *player) fail(e apiError) {
	if e.status == http.StatusTooManyRequests || e.status == http.StatusServiceUnavailable {
		secs := int(math.Ceil(p.retry.Seconds()))
		p.w.Header().Set("Retry-After", strconv.Itoa(secs))
		p.w.Header().Set("Retry-After-Ms", strconv.FormatInt(p.retry.Milliseconds(), 10))
	}
	p.start(e.status, p.doc.jsonType())
	p.doc.errorBody(&p.f, e)
	p.f.str("\n")
	p.send()
}

// stall holds the request open without another byte until the client goes
// away or the server closes.
func (p *player) stall() {
	p.s.notifyStalled(p.st)
	select {
	case <-p.r.Context().Done():
	case <-p.s.done:
	}
}

// reset drops the connection with a TCP RST: SO_LINGER 0, then close.
// What was sent is flushed first (Hijack does that once a status line is
// out); before that, not even a status line leaves.
func (p *player) reset() {
	if p.started {
		_ = p.rc.Flush()
	}
	conn, _, err := p.rc.Hijack()
	if err != nil {
		return
	}
	if tc, ok := conn.(*net.TCPConn); ok {
		_ = tc.SetLinger(0)
	}
	_ = conn.Close()
}

// drop closes the connection without ending the response.
func (p *player) drop() {
	if conn, _, err := p.rc.Hijack(); err == nil {
		_ = conn.Close()
	}
}

// echoed is the credential the request carried, or a placeholder that says
// there was none.
func (p *player) echoed() string {
	if p.key == "" {
		return "(no credential was sent)"
	}
	return p.key
}

// echoMessage quotes the key back as OpenAI's 401 does.
func (p *player) echoMessage() string {
	return "Incorrect API key provided: " + p.echoed() + ". You can find your API key at https://platform.openai.com/account/api-keys."
}

// longEcho is a long message with the key starting at byte n.
func (p *player) longEcho(n int) string {
	return fill(n) + p.echoed() + " " + fill(1024)
}

// play answers the request.
func (p *player) play() {
	b := p.beh
	switch b.name {
	case httpPrefix:
		if !b.hasN || p.s.attempt(b.full) <= b.n {
			p.fail(statusError(b.status, p.st.Model))
			return
		}
		b.name = OK // httpNNN:N after its N failures
		p.beh = b
	case EchoKey:
		p.fail(echoError(p.echoMessage()))
		return
	case EchoKeyLong:
		p.fail(echoError(p.longEcho(b.n)))
		return
	case Hostile:
		e := statusError(http.StatusInternalServerError, p.st.Model)
		e.msg = HostileText
		p.fail(e)
		return
	case StallHeaders:
		p.stall()
		return
	case DieHeaders:
		p.reset()
		return
	}
	if p.d == nil {
		p.playJSON()
		return
	}
	p.playStream()
}

// ---- streams ----

func (p *player) open() bool {
	p.start(http.StatusOK, p.d.streamType())
	p.d.head(&p.f)
	return p.send()
}

func (p *player) begin(k kind) bool {
	p.cur = &block{kind: k, index: len(p.blocks)}
	p.blocks = append(p.blocks, p.cur)
	p.d.begin(&p.f, p.cur)
	return p.send()
}

func (p *player) delta(s string) bool {
	p.d.delta(&p.f, p.cur, s)
	p.cur.text.add(s, 1)
	p.cur.deltas++
	return p.send()
}

// deltas sends each piece in turn.
func (p *player) deltas(pieces ...string) bool {
	for _, s := range pieces {
		if !p.delta(s) {
			return false
		}
	}
	return true
}

func (p *player) end() bool {
	p.d.end(&p.f, p.cur)
	return p.send()
}

func (p *player) finish() bool {
	p.d.finish(&p.f, p.blocks)
	return p.send()
}

// text streams a whole text block and the terminator.
func (p *player) text(pieces ...string) bool {
	return p.begin(kindText) && p.deltas(pieces...) && p.end() && p.finish()
}

// split renders fn with the marker as content and returns the bytes
// before and after it.
func split(fn func(f *frames)) (before, after []byte) {
	var buf bytes.Buffer
	f := frames{w: &buf}
	fn(&f)
	f.spill()
	b := buf.Bytes()
	i := bytes.Index(b, []byte(marker))
	return b[:i], b[i+len(marker):]
}

// repeat writes unit n times (forever when n < 0) in flushed batches,
// between before and after. It reports whether to go on.
func (p *player) repeat(before, after []byte, unit string, n int) bool {
	p.f.buf = append(p.f.buf, before...)
	if !p.send() {
		return false
	}
	chunk := []byte(strings.Repeat(unit, max(1, flushEvery/len(unit))))
	per := len(chunk) / len(unit)
	for left := n; n < 0 || left > 0; left -= per {
		c := chunk
		if n >= 0 && left < per {
			c = chunk[:left*len(unit)]
		}
		if _, err := p.Write(c); err != nil || !p.flush() {
			return false
		}
	}
	p.f.buf = append(p.f.buf, after...)
	return p.send()
}

// long streams one delta whose content is unit n times (forever when
// n < 0): a single line that is as long as asked, or never ends.
func (p *player) long(unit string, n int) bool {
	before, after := split(func(f *frames) { p.d.delta(f, p.cur, marker) })
	if !p.repeat(before, after, unit, n) {
		return false
	}
	p.cur.text.add(unit, n)
	p.cur.deltas++
	return true
}

// flood streams n deltas of k (forever when n < 0), then the block's end and
// the terminator. Frames that do not change (no sequence number) are
// rendered once and rewritten.
func (p *player) flood(k kind, n int) bool {
	p.batch = true
	if !p.begin(k) {
		return false
	}
	piece := k == kindTool && p.d.pieceArgs()
	if piece && !p.delta(`{"data":"`) {
		return false
	}
	// last is the previous frame; once two in a row are equal, batch holds
	// as many copies as fit in flushEvery and is written whole.
	var last, batch []byte
	per := 0
	for i := 0; n < 0 || i < n; {
		if batch != nil {
			k := per
			if n >= 0 {
				k = min(k, n-i)
			}
			if _, err := p.Write(batch[:k*len(last)]); err != nil {
				return false
			}
			p.cur.text.add(floodUnit, k)
			p.cur.deltas += k
			i += k
			if !p.send() {
				return false
			}
			continue
		}
		p.d.delta(&p.f, p.cur, floodUnit)
		if bytes.Equal(p.f.buf, last) {
			per = max(1, flushEvery/len(last))
			batch = bytes.Repeat(last, per)
		}
		last = append(last[:0], p.f.buf...)
		p.cur.text.add(floodUnit, 1)
		p.cur.deltas++
		i++
		if !p.send() {
			return false
		}
	}
	if piece && !p.delta(`"}`) {
		return false
	}
	return p.end() && p.finish() && p.flush()
}

// keepAlives writes n keep-alive lines (forever when n < 0).
func (p *player) keepAlives(line string, n int) bool {
	p.batch = true
	for i := 0; n < 0 || i < n; i++ {
		p.f.str(line)
		if !p.send() {
			return false
		}
	}
	p.batch = false
	return p.flush()
}

func (p *player) count(def int) int {
	if p.beh.hasN {
		return p.beh.n
	}
	return def
}

func (p *player) playStream() {
	a := p.d.answer()
	switch p.beh.name {
	case OK:
		_ = p.open() && p.text(a...)
	case Cut:
		_ = p.open() && p.begin(kindText) && p.deltas(a[0], a[1])
	case CutFrame:
		if p.open() && p.begin(kindText) && p.delta(a[0]) {
			p.d.delta(&p.f, p.cur, a[1])
			p.f.buf = p.f.buf[:len(p.f.buf)/2]
			p.send()
		}
	case StallBody:
		if p.open() && p.begin(kindText) && p.delta(a[0]) {
			p.stall()
		}
	case Die:
		if p.open() && p.begin(kindText) && p.delta(a[0]) {
			p.reset()
		}
	case Flood:
		_ = p.open() && p.flood(kindText, p.count(-1))
	case FloodReasoning:
		_ = p.open() && p.flood(kindReasoning, p.count(-1))
	case FloodTool:
		_ = p.open() && p.flood(kindTool, p.count(-1))
	case EndlessLine:
		_ = p.open() && p.begin(kindText) && p.long("x", -1)
	case LongLine:
		_ = p.open() && p.begin(kindText) && p.long("x", p.beh.n) && p.end() && p.finish()
	case CommentFlood:
		p.start(http.StatusOK, p.d.streamType())
		if p.keepAlives(p.d.keepAlive(), p.count(-1)) {
			p.d.head(&p.f)
			_ = p.send() && p.text(a...)
		}
	case Malformed:
		if p.open() && p.begin(kindText) && p.delta(a[0]) {
			p.d.malformed(&p.f)
			_ = p.send() && p.deltas(a[1:]...) && p.end() && p.finish()
		}
	case StreamError:
		if p.open() && p.begin(kindText) && p.delta(a[0]) {
			p.d.streamError(&p.f, statusError(http.StatusInternalServerError, p.st.Model))
			p.send()
		}
	case EchoKeyEvent, EchoKeyLongEvent:
		msg := p.echoMessage()
		if p.beh.name == EchoKeyLongEvent {
			msg = p.longEcho(p.beh.n)
		}
		if p.open() && p.begin(kindText) && p.delta(a[0]) {
			p.d.streamError(&p.f, echoError(msg))
			p.send()
		}
	case EchoKeyFrame:
		_ = p.open() && p.text(a[0], "The key you sent is "+p.echoed()+". ", a[1], a[2])
	case EchoKeySplit:
		k := p.echoed()
		h := len(k) / 2
		_ = p.open() && p.text(a[0], "The key you sent is "+k[:h], k[h:]+". ", a[1], a[2])
	case EchoKeyLongFrame:
		_ = p.open() && p.text(p.longEcho(p.beh.n))
	case EchoKeyEncoded:
		_ = p.open() && p.text(a[0], "The key you sent, encoded: "+Encode(p.beh.n, p.echoed())+". ", a[1], a[2])
	case EchoKeyFinish:
		p.d.setFinish(p.echoed())
		_ = p.open() && p.text(a...)
	case EchoKeyArgs:
		// The arguments are JSON text, sent as the protocol sends a
		// tool call's arguments (a string, or Ollama's object).
		if p.open() && p.begin(kindTool) {
			p.cur.raw = true
			_ = p.delta(`{"data":"`+escapeAll(p.echoed())+`"}`) && p.end() && p.finish()
		}
	}
}

// escapeAll writes every character of s as a JSON \u escape.
func escapeAll(s string) string {
	var b strings.Builder
	for _, r := range s {
		fmt.Fprintf(&b, `\u%04x`, r)
	}
	return b.String()
}

// ---- one JSON body ----

// body renders the whole answer with t as its text.
func (p *player) body(t text) []byte {
	var buf bytes.Buffer
	f := frames{w: &buf}
	p.doc.whole(&f, t)
	f.spill()
	return buf.Bytes()
}

func (p *player) playJSON() {
	ok := text{{p.doc.okText(), 1}}
	write := func(b []byte) bool {
		p.f.buf = append(p.f.buf, b...)
		return p.send()
	}
	longBody := func(unit string, n int) {
		p.batch = true
		before, after := split(func(f *frames) { p.doc.whole(f, text{{marker, 1}}) })
		p.start(http.StatusOK, p.doc.jsonType())
		p.repeat(before, after, unit, n)
	}
	switch p.beh.name {
	case OK:
		p.start(http.StatusOK, p.doc.jsonType())
		write(p.body(ok))
	case Cut, CutFrame, StallBody, Die, Malformed:
		b := p.body(ok)
		p.start(http.StatusOK, p.doc.jsonType())
		if !write(b[:len(b)/2]) {
			return
		}
		switch p.beh.name {
		case StallBody:
			p.stall()
		case Die:
			p.reset()
		case Malformed:
			write([]byte(`"}}<!-- malformed -->` + "\n"))
		}
	case Flood, FloodReasoning, FloodTool:
		longBody(floodUnit, p.count(-1))
	case EndlessLine:
		longBody("x", -1)
	case LongLine:
		longBody("x", p.beh.n)
	case CommentFlood:
		p.start(http.StatusOK, p.doc.jsonType())
		if p.keepAlives("\n", p.count(-1)) {
			write(p.body(ok))
		}
	case StreamError:
		p.fail(statusError(http.StatusInternalServerError, p.st.Model))
	case EchoKeyEvent, EchoKeyLongEvent:
		e := statusError(http.StatusInternalServerError, p.st.Model)
		e.msg = p.echoMessage()
		if p.beh.name == EchoKeyLongEvent {
			e.msg = p.longEcho(p.beh.n)
		}
		p.fail(e)
	case EchoKeyFrame, EchoKeySplit, EchoKeyFinish, EchoKeyArgs:
		p.start(http.StatusOK, p.doc.jsonType())
		write(p.body(text{{p.doc.okText() + " The key you sent is " + p.echoed() + ".", 1}}))
	case EchoKeyLongFrame:
		p.start(http.StatusOK, p.doc.jsonType())
		write(p.body(text{{p.longEcho(p.beh.n), 1}}))
	}
}
