package runner

import "context"

// UntilDrained returns a context that ends when ctx does or when drain is
// closed (the first Ctrl-C), for work outside the cells that must not
// outlive a stop: the inventory's probes, listing, pulling and warming up.
// stop releases it.
func UntilDrained(ctx context.Context, drain <-chan struct{}) (context.Context, context.CancelFunc) {
	dctx, cancel := context.WithCancel(ctx)
	if drain == nil {
		return dctx, cancel
	}
	go func() {
		select {
		case <-drain:
			cancel()
		case <-dctx.Done():
		}
	}()
	return dctx, cancel
}
