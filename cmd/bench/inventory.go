package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"bench/config"
	"bench/inventory"
	"bench/providers"
)

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
