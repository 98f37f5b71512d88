package runner

import (
	"context"
	"testing"

	"bench/config"
	"bench/internal/record/pricing"
	"bench/internal/record/results"
	"bench/providers"
	"bench/run/output"
	"bench/run/plan"
)

// A sweep under a budget starts no cell its spent and in-flight cost
// would take past it: with 4 cells at once, each answer costing a known
// amount (its tokens at the block's price) and projected at a little more
// (its prompt's bytes / 4 in, its cap out), it spends within one cell's
// cost of the budget and never past it, records every cell it did not
// start as skipped_unavailable / budget_exhausted, and ends EndBudget; a
// resumed sweep of those cells with the spent carried over and a larger
// budget finishes them.
func TestBudgetStopsTheSweep(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	n := func(v int) *int { return &v }
	p := &scripted{}
	p.stream = func(ctx context.Context, req providers.Request, emit providers.EmitFunc) (*providers.Response, error) {
		emit(providers.Event{Kind: providers.EventRequestStart})
		emit(providers.Event{Kind: providers.EventText, Text: "OK"})
		return &providers.Response{Text: "OK", Usage: providers.Usage{InputTokens: n(2), OutputTokens: n(req.MaxTokens)}}, nil
	}
	cfg := testConfig([]config.Provider{{Name: "a", Type: "ollama", Concurrency: 4, Models: []string{"m"}, ThinkingLevels: []*string{nil}}}, 5, 8, 4)
	for i := range cfg.PromptSet {
		cfg.PromptSet[i].MaxTokens = 100 // the cap the projection counts, and what the answer uses
	}
	cfg.Pricing = pricing.Table{{Model: "m", Price: pricing.Price{Input: f(1000), Output: f(10)}}}
	pl := plan.New(cfg)
	pj := plan.NewProjector(cfg)
	cell := 2*1000/1e6 + 100*10/1e6 // 0.003 each
	if proj, _ := pj.Cell(pl.Cells[0]); proj < cell || proj > cell+0.01 {
		t.Fatalf("projected %v for a cell costing %v", proj, cell)
	}
	const max = 0.1
	sink := &memSink{}
	out, err := Run(context.Background(), Options{Config: cfg, Plan: pl, Clock: newFakeClock(), Providers: map[string]providers.Provider{"a": p},
		Outputs: []output.Output{sink}, Budget: &Budget{MaxUSD: max, Projector: pj}})
	if err != nil {
		t.Fatal(err)
	}
	spent, ran, notRun := 0.0, 0, 0
	for _, r := range sink.recs {
		switch {
		case r.AvailabilityStatus == results.StatusOK:
			ran++
			spent += *r.CostUSD
		case r.FailureType != nil && *r.FailureType == FailBudgetExhausted && r.AvailabilityStatus == results.StatusSkippedUnavailable:
			notRun++
			if r.ErrorMessage == nil || r.CostUSD != nil || r.CostMissing != pricing.NotRun {
				t.Errorf("not-run record %+v", r)
			}
		default:
			t.Errorf("record %s %v", r.AvailabilityStatus, r.FailureType)
		}
	}
	t.Logf("%d ran ($%.4f of $%.2f), %d not run, end %s", ran, spent, max, notRun, out.EndReason)
	if out.EndReason != EndBudget || ran+notRun != 40 || notRun == 0 || out.Recorded != 40 {
		t.Fatalf("end %s: %d ran, %d not run, %d recorded", out.EndReason, ran, notRun, out.Recorded)
	}
	if spent > max || max-spent >= cell+1e-12 {
		t.Errorf("spent $%.4f of $%.2f: want within one cell's cost ($%.4f) under it", spent, max, cell)
	}

	// --resume: the cells left, the spent carried, a budget for all.
	done := map[results.Key]bool{}
	for _, r := range sink.recs {
		if r.AvailabilityStatus == results.StatusOK {
			done[r.Key()] = true
		}
	}
	rest := pl.Without(done)
	sink2 := &memSink{}
	out, err = Run(context.Background(), Options{Config: cfg, Plan: rest, Clock: newFakeClock(), Providers: map[string]providers.Provider{"a": p},
		Outputs: []output.Output{sink2}, Budget: &Budget{MaxUSD: 40*cell + 0.05, Spent: spent, Projector: pj}})
	if err != nil || out.EndReason != EndFinished || len(sink2.recs) != notRun {
		t.Fatalf("resumed: err %v, end %s, %d records for %d cells", err, out.EndReason, len(sink2.recs), notRun)
	}
	for _, r := range sink2.recs {
		if r.AvailabilityStatus != results.StatusOK {
			t.Errorf("resumed cell %s", r.AvailabilityStatus)
		}
	}
}

// A cell that reached its model without a known cost counts its
// projection (never nothing), and a judge's known cost counts too; a cell
// that never reached it counts nothing.
func TestSpent(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	timeout, refused := "timeout", "connection_refused"
	for _, c := range []struct {
		rec  results.Record
		want float64
	}{
		{results.Record{AvailabilityStatus: "ok", CostUSD: f(0.5)}, 0.5},
		{results.Record{AvailabilityStatus: "ok"}, 2},
		{results.Record{AvailabilityStatus: "error", FailureType: &timeout}, 2},
		{results.Record{AvailabilityStatus: "skipped_unavailable", FailureType: &refused}, 0},
		{results.Record{AvailabilityStatus: "rate_limited"}, 0},
		{results.Record{AvailabilityStatus: "ok", CostUSD: f(0.5), Judge: &results.Judge{CostUSD: f(0.25)}}, 0.75},
	} {
		if got := Spent(&c.rec, 2); got != c.want {
			t.Errorf("%s %v: spent %v, want %v", c.rec.AvailabilityStatus, c.rec.FailureType, got, c.want)
		}
	}
}
