package results

// A borrowing scan's records point into their batch (ScanOptions.Borrow):
// besides the bulky texts, every value a Record holds by pointer or in a
// slice (the timeline, the ITL histogram, the judge and its samples, the
// calls, the turns, each *int and *float64) comes from the batch's pools,
// which the batch's next read reuses. A line of every field allocated some
// forty values of its own, most of bench report's garbage (issue 31).

// pool hands out Ts from a slice it reuses once reset; a T handed out
// before the slice was outgrown stays where it was (the old slice is not
// reused), so none moves under a record.
type pool[T any] struct {
	buf []T
	// scratch is where an array is built before it is copied out (a
	// decoder's own pools; never lent).
	scratch []T
}

func (p *pool[T]) reset() { p.buf = p.buf[:0] }

// one is a zero T of the pool's.
func (p *pool[T]) one() *T {
	if len(p.buf) == cap(p.buf) {
		p.buf = make([]T, 0, max(64, 2*cap(p.buf)))
	}
	var zero T
	p.buf = append(p.buf, zero)
	return &p.buf[len(p.buf)-1]
}

// copyOf is a copy of s in the pool's slice, its capacity its length.
func (p *pool[T]) copyOf(s []T) []T {
	if cap(p.buf)-len(p.buf) < len(s) {
		p.buf = make([]T, 0, max(64, 2*cap(p.buf), 2*len(s)))
	}
	at := len(p.buf)
	p.buf = append(p.buf, s...)
	return p.buf[at:len(p.buf):len(p.buf)]
}

// pools are a batch's (or, for the scratch, a decoder's) pools, one for
// each type a Record points to.
type pools struct {
	ints      pool[int]
	int64s    pool[int64]
	floats    pool[float64]
	bools     pool[bool]
	strings   pool[string]
	events    pool[TimelineEvent]
	calls     pool[ToolCall]
	turns     pool[Turn]
	turnCalls pool[TurnCall]
	samples   pool[JudgeSample]
	checks    pool[CheckError]
	judges    pool[Judge]
	itls      pool[ITL]
}

func (p *pools) reset() {
	p.ints.reset()
	p.int64s.reset()
	p.floats.reset()
	p.bools.reset()
	p.strings.reset()
	p.events.reset()
	p.calls.reset()
	p.turns.reset()
	p.turnCalls.reset()
	p.samples.reset()
	p.checks.reset()
	p.judges.reset()
	p.itls.reset()
}

// ptr is a pointer to v: into the lent pools when the decoder borrows,
// else a new one.
func ptr[T any](d *fastDecoder, pick func(*pools) *pool[T], v T) *T {
	if d.lent == nil {
		return &v
	}
	p := pick(d.lent).one()
	*p = v
	return p
}
