package pricing

import (
	"fmt"
	"math"
)

// The one overflow-safe sum of every cost and token count bench adds up:
// a cell's turns, a judge's samples, a group's cells in summary.json, a
// load stage's tokens. A value no sum should take (a negative count, a
// negative or non-finite cost) is left out and said, and a sum past what
// its type holds is no total, said too: never an infinity or a NaN in a
// report (which encoding/json cannot write), a record that cannot be
// encoded, or a count that wraps negative.

// Problems of a cost or a count, as a record's cost_missing, a judge's and
// a group's say them.
const (
	BadCost        = "the provider reported a cost that is negative or not a finite number"
	CostOverflow   = "the costs sum past the largest number a total holds"
	BadTokens      = "the provider reported a negative token count"
	TokensOverflow = "the token counts sum past the largest count a total holds (2^63-1)"
)

// ValidCost says whether a reported cost can be counted: finite, and 0
// or more.
func ValidCost(v float64) bool { return v >= 0 && !math.IsInf(v, 1) }

// USD sums costs in USD. The zero value is an empty sum. It is 16 bytes:
// a report holds one per group and figure.
type USD struct {
	sum       float64
	bad       uint32
	any, over bool
}

// Add adds v if it is a cost (ValidCost) and says whether it did.
func (s *USD) Add(v float64) bool {
	if !ValidCost(v) {
		s.bad = min(s.bad+1, math.MaxUint32-1)
		return false
	}
	s.any = true
	s.sum += v
	if math.IsInf(s.sum, 1) {
		s.over = true
	}
	return true
}

// AddPtr adds *v when v is not nil.
func (s *USD) AddPtr(v *float64) {
	if v != nil {
		s.Add(*v)
	}
}

// Total is the sum, or nil when there is none: nothing was added, or the
// sum overflowed (Problem says so).
func (s *USD) Total() *float64 {
	if !s.any || s.over {
		return nil
	}
	v := s.sum
	return &v
}

// Whole is the sum when every value added was a cost and it holds them
// all: a record's figure (a cell over its turns, a judge over its
// samples), which is whole or unknown, never part of what it says; nil
// otherwise (Problem says why).
func (s *USD) Whole() *float64 {
	if s.bad > 0 {
		return nil
	}
	return s.Total()
}

// Problem says what is wrong with the sum, "" when nothing is: it
// overflowed, or values were left out.
func (s *USD) Problem() string { return problem(s.over, s.bad, CostOverflow, BadCost) }

// problem is a sum's Problem: its overflow, else the values it left out.
func problem(over bool, bad uint32, overflow, badValue string) string {
	switch {
	case over:
		return overflow
	case bad == 1:
		return badValue + ": left out"
	case bad > 1:
		return fmt.Sprintf("%s: %d of them left out", badValue, bad)
	}
	return ""
}

// Count sums token counts in an int64. The zero value is an empty sum
// (16 bytes, as USD).
type Count struct {
	sum       int64
	bad       uint32
	any, over bool
}

// Add adds v if it is a count (0 or more) and the sum can hold it, and
// says whether it did.
func (c *Count) Add(v int64) bool {
	switch {
	case v < 0:
		c.bad = min(c.bad+1, math.MaxUint32-1)
		return false
	case c.sum > math.MaxInt64-v:
		c.over = true
		return false
	}
	c.any = true
	c.sum += v
	return true
}

// AddPtr adds *v when v is not nil.
func (c *Count) AddPtr(v *int) {
	if v != nil {
		c.Add(int64(*v))
	}
}

// Total is the sum, or nil when there is none: nothing was added, or the
// sum overflowed (Problem says so).
func (c *Count) Total() *int64 {
	if !c.any || c.over {
		return nil
	}
	v := c.sum
	return &v
}

// Sum is the sum of the counts added (0 for none), and false when it
// overflowed: a rate's numerator, which no count leaves at 0.
func (c *Count) Sum() (int64, bool) { return c.sum, !c.over }

// WholeInt is the sum as a record's count: nil, as USD.Whole, unless
// every value added was a count and the sum holds them all (and fits an
// int).
func (c *Count) WholeInt() *int {
	t := c.Total()
	if c.bad > 0 || t == nil || *t > math.MaxInt {
		return nil
	}
	v := int(*t)
	return &v
}

// Problem says what is wrong with the sum, "" when nothing is.
func (c *Count) Problem() string { return problem(c.over, c.bad, TokensOverflow, BadTokens) }
