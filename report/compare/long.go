package compare

import (
	"bytes"
	"encoding/json"
	"fmt"

	"bench/internal/record/agentsnap"
	"bench/internal/tape"
)

// longSide is the length past which a side of a cell's change (an answer,
// as a rule) is held on the Result's tape, not in memory: when every
// answer of a 100,000-cell run changed, the two answers of each change
// held 130 MB until compare.json was written. (Vars, so that a test can
// hold every side, or none, and move the tape to its file at once.)
var (
	longSide = 256
	tapeMem  = tape.DefaultMem
)

// longSides are the cell's change sides held on the tape.
type longSides struct {
	tape  *tape.Tape
	sides []side
}

type side struct {
	ignored bool  // in Ignored, else in Changes
	index   int32 // the change's index there
	to      bool  // its To, else its From
	ref     tape.Ref
}

// hold moves out's long change sides onto the tape, leaving them nil in
// memory; Cell.changes gives them back whole.
func (c *comparison) hold(out *Cell) {
	move := func(chs []agentsnap.Change, ignored bool) {
		for i := range chs {
			for _, to := range []bool{false, true} {
				v := &chs[i].From
				if to {
					v = &chs[i].To
				}
				if len(*v) <= longSide {
					continue
				}
				if c.res.tape == nil {
					c.res.tape = &tape.Tape{Mem: tapeMem}
				}
				if out.long == nil {
					out.long = &longSides{tape: c.res.tape}
				}
				out.long.sides = append(out.long.sides, side{ignored: ignored, index: int32(i), to: to, ref: c.res.tape.Put(*v)})
				*v = nil
			}
		}
	}
	move(out.Changes, false)
	move(out.Ignored, true)
}

// changes are the cell's Changes and Ignored with every side whole (read
// back from the tape when held there; the cell's own slices otherwise).
func (c *Cell) changes() (changes, ignored []agentsnap.Change, err error) {
	if c.long == nil {
		return c.Changes, c.Ignored, nil
	}
	changes, ignored = append([]agentsnap.Change(nil), c.Changes...), append([]agentsnap.Change(nil), c.Ignored...)
	for _, s := range c.long.sides {
		p, err := c.long.tape.Get(s.ref)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", c.Label(), err)
		}
		chs := changes
		if s.ignored {
			chs = ignored
		}
		if s.to {
			chs[s.index].To = json.RawMessage(p)
		} else {
			chs[s.index].From = json.RawMessage(p)
		}
	}
	return changes, ignored, nil
}

// shownChanges are the cell's changes for a page or a message: whole, or
// when the tape cannot give a side back, with that side saying so.
func (c *Cell) shownChanges() []agentsnap.Change {
	chs, _, err := c.changes()
	if err == nil {
		return chs
	}
	chs = append([]agentsnap.Change(nil), c.Changes...)
	unreadable, _ := json.Marshal("(unreadable: " + err.Error() + ")")
	for i := range chs {
		for _, v := range []*json.RawMessage{&chs[i].From, &chs[i].To} {
			if *v == nil {
				*v = unreadable
			}
		}
	}
	return chs
}

// plainCell is a Cell without its MarshalJSON.
type plainCell Cell

// whole is the cell as its JSON has it: every change side whole.
func (c *Cell) whole() (*plainCell, error) {
	if c.long == nil {
		return (*plainCell)(c), nil
	}
	changes, ignored, err := c.changes()
	if err != nil {
		return nil, err
	}
	cp := *c
	cp.Changes, cp.Ignored, cp.long = changes, ignored, nil
	return (*plainCell)(&cp), nil
}

// MarshalJSON writes the cell with every change side whole (and, as
// compare.json's encoder, without escaping <, > and &).
func (c *Cell) MarshalJSON() ([]byte, error) {
	w, err := c.whole()
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(w); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// Close drops the long change sides the Result holds on its tape (and
// the tape's temporary file); the Result's cells cannot be written after.
func (r *Result) Close() error {
	if r.tape == nil {
		return nil
	}
	return r.tape.Close()
}
