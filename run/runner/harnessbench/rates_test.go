package harnessbench

import (
	"fmt"
	"math"
	"testing"

	"bench/run/plan"
)

// BenchmarkDecodeRates streams 60 reasoning deltas 20 ms apart (about 50
// tokens/s), then 40 answer deltas 10 ms apart (about 100 tokens/s), with a
// usage that counts both and no reasoning split (as Ollama's /v1 does), and
// reports how far bench's reasoning_tokens_per_s and tokens_per_s are from
// the rates the server really streamed at (timed as it wrote them: a
// loaded machine oversleeps), median and worst cell, in percent. Counting
// the reasoning tokens over the answer's window, as bench once did, would
// report 2.5 times the answer's rate.
//
//	go test ./run/runner/harnessbench -run '^$' -bench DecodeRates -benchtime 1x
func BenchmarkDecodeRates(b *testing.B) {
	srv := startServer(b)
	cfg := sweepConfig(b, srv.URL, "reasoning=60,rgap=20ms,chunks=40,gap=10ms,prefill=20ms", 4, 8)
	cfg.Providers[0].Warmup = false
	var answerErr, reasoningErr []float64
	pl := plan.New(cfg)
	for i := 0; i < b.N; i++ {
		recs := sweep(b, cfg)
		server := srv.timings(b)
		for _, r := range recs {
			var tp string
			for _, c := range pl.Cells {
				if c.Prompt.ID == r.PromptID {
					tp = fmt.Sprintf("00-%032x-%016x-01", 1, cellIndex(pl, c))
				}
			}
			truth, ok := server[tp]
			if r.TokensPerS == nil || r.ReasoningTokensPerS == nil || !ok || truth.AnswerRate == 0 {
				b.Fatalf("cell %s: tokens/s %v, reasoning %v, server %+v", r.PromptID, r.TokensPerS, r.ReasoningTokensPerS, truth)
			}
			answerErr = append(answerErr, 100*math.Abs(*r.TokensPerS-truth.AnswerRate)/truth.AnswerRate)
			reasoningErr = append(reasoningErr, 100*math.Abs(*r.ReasoningTokensPerS-truth.ReasoningRate)/truth.ReasoningRate)
		}
	}
	b.ReportMetric(quantile(answerErr, 0.5), "answer-err-p50-%")
	b.ReportMetric(quantile(answerErr, 1), "answer-err-max-%")
	b.ReportMetric(quantile(reasoningErr, 0.5), "reasoning-err-p50-%")
	b.ReportMetric(quantile(reasoningErr, 1), "reasoning-err-max-%")
}
