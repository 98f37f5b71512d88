package runner

import (
	"fmt"
	"io"
	"sync"

	"bench/results"
)

// Observer is fed every finished cell once results.jsonl holds it: the
// other outputs of a run (snapshots, execution traces, work traces, JUnit)
// are observers. An observer reads the record and must not change it; it
// cannot stall the run, since each runs on its own goroutine behind a
// queue, and its errors are warnings, never a failed run. An observer that
// also implements io.Closer is closed once the run has ended and its queue
// is drained.
type Observer interface {
	Observe(r *results.Record) error
}

// observerQueue is how many records may wait for a slow observer before the
// run waits for it: deep enough to absorb bursts, bounded so a stuck
// observer cannot hold every record of a large run in memory.
const observerQueue = 4096

// observers runs each observer on its own goroutine.
type observers struct {
	queues []chan *results.Record
	wg     sync.WaitGroup
	mu     sync.Mutex
	warned map[int]bool
	log    io.Writer
}

func startObservers(list []Observer, log io.Writer) *observers {
	o := &observers{warned: map[int]bool{}, log: log}
	for i, ob := range list {
		q := make(chan *results.Record, observerQueue)
		o.queues = append(o.queues, q)
		o.wg.Add(1)
		go func() {
			defer o.wg.Done()
			for r := range q {
				if err := ob.Observe(r); err != nil {
					o.warn(i, err)
				}
			}
		}()
	}
	return o
}

// warn reports an observer's first error; later ones of the same observer
// would only repeat it.
func (o *observers) warn(i int, err error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if !o.warned[i] {
		o.warned[i] = true
		fmt.Fprintf(o.log, "bench: warning: %v (the run goes on; results.jsonl is unaffected)\n", err)
	}
}

func (o *observers) observe(r *results.Record) {
	for _, q := range o.queues {
		q <- r
	}
}

// close drains the queues and closes the observers that are io.Closers.
func (o *observers) close(list []Observer) {
	for _, q := range o.queues {
		close(q)
	}
	o.wg.Wait()
	for i, ob := range list {
		if c, ok := ob.(io.Closer); ok {
			if err := c.Close(); err != nil {
				o.warn(i, err)
			}
		}
	}
}
