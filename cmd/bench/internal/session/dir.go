package session

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"bench/config"
	"bench/internal/exitcode"
	"bench/internal/record/results"
	"bench/internal/record/rundir"
	"bench/providers"
	"bench/run/inventory"
)

// openRunDir creates (or, with resume, reopens) the run directory and
// returns the tally of what is already recorded there (empty for a new
// run).
func openRunDir(cfg *config.Config, resume bool, spend func(*results.Record) float64, stderr io.Writer) (*rundir.Dir, *tally, int) {
	if !resume {
		dir, err := rundir.Create(cfg.Run.OutDir, cfg.Run.ID, !cfg.Run.IDChosen)
		if err != nil {
			fmt.Fprintf(stderr, "bench run: %v\n", err)
			if errors.Is(err, rundir.ErrExists) || errors.Is(err, rundir.ErrLocked) {
				return nil, nil, exitcode.Usage
			}
			return nil, nil, exitcode.IO
		}
		cfg.Run.ID = dir.ID
		t := newTally()
		t.spend = spend
		return dir, t, exitcode.OK
	}
	dir, dropped, err := rundir.Resume(cfg.RunDir())
	if err != nil {
		fmt.Fprintf(stderr, "bench run: %v\n", err)
		if errors.Is(err, rundir.ErrLocked) {
			return nil, nil, exitcode.Usage
		}
		return nil, nil, exitcode.IO
	}
	path := dir.File(rundir.ResultsFile)
	if dropped > 0 {
		fmt.Fprintf(stderr, "bench: dropped a half-written last line (%d bytes) from %s\n", dropped, path)
	}
	t, err := scan(path, spend)
	if err != nil {
		dir.Close()
		fmt.Fprintf(stderr, "bench run: %v\n", err)
		return nil, nil, exitcode.IO
	}
	if t.bad > 0 {
		fmt.Fprintf(stderr, "bench: warning: %d unusable lines in %s; their cells run again\n", t.bad, path)
	}
	if len(t.again) > 0 {
		fmt.Fprintf(stderr, "bench: %d recorded cells run again (cancelled, or their provider was unavailable); the new record replaces the old in the reports\n", len(t.again))
	}
	return dir, t, exitcode.OK
}

// prepareRunDir writes config.json and inventory.json. The inventory is
// taken before the sweep so probing servers and CLIs does not overlap the
// measurements. A resumed run keeps both as the run's start wrote them
// (its plan is config.json's) and reads its inventory back.
func prepareRunDir(ctx context.Context, dir *rundir.Dir, cfg *config.Config, provs map[string]providers.Provider, resume bool, stderr io.Writer) (*inventory.Inventory, error) {
	if !resume {
		if err := rundir.WriteJSON(dir.File(rundir.ConfigFile), cfg); err != nil {
			return nil, err
		}
	} else if inv, err := inventory.Read(dir.Path); err == nil {
		return inv, nil
	}
	return writeInventory(ctx, dir.Path, cfg, provs, stderr)
}

// inventoryGrace is how long past the probes' own bound (the longest is
// providers.ProbeTimeout) bench waits for the inventory. Each probe is
// bounded by its kind, but the host's facts come from a library that may
// run a command of its own; whatever hangs, the run goes on without
// inventory.json rather than waiting.
const inventoryGrace = 10 * time.Second

// writeInventory writes inventory.json, bounded: ctx ends at the first
// Ctrl-C, and past ProbeTimeout plus a grace the run stops waiting.
func writeInventory(ctx context.Context, dir string, cfg *config.Config, provs map[string]providers.Provider, stderr io.Writer) (*inventory.Inventory, error) {
	ctx, cancel := context.WithTimeout(ctx, providers.ProbeTimeout+inventoryGrace)
	defer cancel()
	type result struct {
		inv *inventory.Inventory
		err error
	}
	done := make(chan result, 1)
	go func() {
		inv, err := inventory.Write(ctx, dir, cfg, provs)
		done <- result{inv, err}
	}()
	select {
	case r := <-done:
		return r.inv, r.err
	case <-ctx.Done():
	}
	// The probes were told to stop; give them a moment to write.
	select {
	case r := <-done:
		return r.inv, r.err
	case <-time.After(time.Second):
		fmt.Fprintln(stderr, "bench: warning: the inventory's probes did not end in time; inventory.json is not written")
		return nil, nil
	}
}
