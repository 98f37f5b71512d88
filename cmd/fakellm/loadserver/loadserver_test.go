package loadserver

import (
	"testing"
	"time"
)

// Two slots of 100 ms and four requests at once: two start at once, two
// wait a whole service; a request arriving after a slot frees waits none.
func TestWaits(t *testing.T) {
	s := Service{TTFT: 40 * time.Millisecond, Gap: 20 * time.Millisecond, Slots: 2}
	if got := s.ServiceTime(0, 4); got != 100*time.Millisecond {
		t.Fatalf("service time %s", got)
	}
	ms := time.Millisecond
	got := s.Waits([]time.Duration{0, 0, 0, 0, 250 * ms}, 0, 4)
	want := []time.Duration{0, 0, 100 * ms, 100 * ms, 0}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("waits %v, want %v", got, want)
			break
		}
	}
}

// The exact queue gives a slot at its due time on the arrival clock,
// whatever time the request's goroutine gets to it.
func TestExactStart(t *testing.T) {
	srv := New(Service{Slots: 1, Exact: true}, nil)
	t0 := time.Unix(1000, 0)
	if got := srv.exactStart(t0, 100*time.Millisecond); !got.Equal(t0) {
		t.Errorf("first start %v", got)
	}
	if got := srv.exactStart(t0.Add(10*time.Millisecond), 100*time.Millisecond); !got.Equal(t0.Add(100 * time.Millisecond)) {
		t.Errorf("second start %v, want the first's end", got)
	}
}
