package report

import "container/heap"

// ranking is a group's accumulator and its index in Summary.Groups, which
// breaks Ranked's ties (a stable sort keeps that order).
type ranking struct {
	acc   *acc
	index int
}

// before says r ranks before o in Ranked's order.
func (r ranking) before(o ranking) bool {
	if rankLess(r.acc.g, o.acc.g) {
		return true
	}
	if rankLess(o.acc.g, r.acc.g) {
		return false
	}
	return r.index < o.index
}

// topGroups keeps the best groups offered so far, up to a count: a heap
// whose root is the worst of them, so an offer costs O(log count). A group
// it drops (or never keeps) has its values let go.
type topGroups struct {
	list []ranking
}

func (t *topGroups) Len() int           { return len(t.list) }
func (t *topGroups) Less(i, j int) bool { return t.list[j].before(t.list[i]) }
func (t *topGroups) Swap(i, j int)      { t.list[i], t.list[j] = t.list[j], t.list[i] }
func (t *topGroups) Push(x any)         { t.list = append(t.list, x.(ranking)) }
func (t *topGroups) Pop() any {
	x := t.list[len(t.list)-1]
	t.list = t.list[:len(t.list)-1]
	return x
}

// offer keeps r if it is among the best n offered so far.
func (t *topGroups) offer(r ranking, n int) {
	switch {
	case n <= 0:
		r.acc.release()
	case len(t.list) < n:
		heap.Push(t, r)
	case r.before(t.list[0]):
		t.list[0].acc.release()
		t.list[0] = r
		heap.Fix(t, 0)
	default:
		r.acc.release()
	}
}

// release lets go of the values behind the group's figures.
func (g *acc) release() { g.lat, g.ttft, g.tps = exact{}, exact{}, exact{} }
