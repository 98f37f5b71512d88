package runner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"bench/providers"
)

// ColdLoadThreshold is the server-reported load time (Ollama's
// load_duration) above which a cell is a cold start. A model the server
// holds is ready in a few milliseconds (Ollama reports 1-7 ms); loading
// even a tiny model takes hundreds, so 50 ms tells the two apart with room
// for a busy scheduler.
const ColdLoadThreshold = 50 * time.Millisecond

// ResidencyInterval is how often a lane's server is asked which models it
// holds, when its protocol reports no load time per request. Loading a
// model takes longer than this, so a model swapped out while a cell waits
// is seen at least once.
const ResidencyInterval = 100 * time.Millisecond

// residencyKeep bounds the readings kept beyond the cell timeout.
const residencyKeep = 10 * time.Second

// residency polls one server for the models it holds, so cells of a
// protocol that reports no load time (OpenAI chat completions on Ollama)
// can still be flagged cold: a cell is cold when its model was missing
// from the server at the last reading before its request or at any reading
// until its first output.
type residency struct {
	prov  providers.Resident
	clock Clock
	keep  time.Duration
	// server names the lane in the one warning given when polling stops.
	server string
	log    io.Writer

	mu    sync.Mutex
	reads []reading
	fails int
	off   bool // polling stopped: the server does not answer the question
}

// reading is what the server held at one moment.
type reading struct {
	at     time.Time
	models []string
}

// maxResidencyFails stops polling a server that keeps failing to answer
// (refused, timed out): its cells are flagged from load times only. A
// server that answers with something other than Ollama's shape is not
// asked again at all.
const maxResidencyFails = 5

// poll reads the server once and keeps the reading; it returns what the
// server held (ok false: nothing was read).
func (w *residency) poll() (models []string, ok bool) {
	w.mu.Lock()
	off := w.off
	w.mu.Unlock()
	if off {
		return nil, false
	}
	at := w.clock.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	var err error
	models, err = w.prov.LoadedModels(ctx)
	cancel()
	w.mu.Lock()
	defer w.mu.Unlock()
	switch {
	case errors.Is(err, providers.ErrNotResident):
		w.turnOff(err.Error())
	case err != nil:
		switch w.fails++; {
		case w.fails < maxResidencyFails:
		case providers.Unreachable(err):
			// The server is down: the run's end says what to start, once
			// per provider; a warning with the dial error adds nothing.
			w.off = true
		default:
			w.turnOff(fmt.Sprintf("%d answers in a row failed, the last: %v", w.fails, err))
		}
	default:
		w.fails = 0
		w.add(reading{at: at, models: models})
		return models, true
	}
	return nil, false
}

// turnOff stops polling with one warning. What was read before stays: a
// reading proves what the server held at its moment.
func (w *residency) turnOff(why string) {
	w.off = true
	if w.log != nil {
		fmt.Fprintf(w.log, "bench: warning: %s: which models the server holds is not asked any more (%s); "+
			"its cells are flagged cold only from load times the server reports\n", w.server, why)
	}
}

// add keeps a reading in time order and forgets those older than any cell
// can need.
func (w *residency) add(rd reading) {
	i := len(w.reads)
	for i > 0 && w.reads[i-1].at.After(rd.at) {
		i--
	}
	w.reads = append(w.reads, reading{})
	copy(w.reads[i+1:], w.reads[i:])
	w.reads[i] = rd
	cut := 0
	for cut < len(w.reads)-1 && rd.at.Sub(w.reads[cut].at) > w.keep {
		cut++
	}
	w.reads = w.reads[cut:]
}

// cold says whether model was missing from the server at the last reading
// at or before from (the request) or at any reading up to to (its first
// output, or its end).
func (w *residency) cold(model string, from, to time.Time) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	i := 0
	for j, rd := range w.reads {
		if rd.at.After(from) {
			break
		}
		i = j
	}
	for _, rd := range w.reads[i:] {
		if rd.at.After(to) {
			break
		}
		held := false
		for _, m := range rd.models {
			if w.prov.SameModel(m, model) {
				held = true
				break
			}
		}
		if !held {
			return true
		}
	}
	return false
}
