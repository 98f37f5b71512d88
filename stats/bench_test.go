package stats

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

func BenchmarkMannWhitney(b *testing.B) {
	for _, n := range []int{10, 30, 49, 100, 1000, 100000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			r := rand.New(rand.NewPCG(5, 5))
			x, y := randSample(r, n, 0, 0), randSample(r, n, 1, 0)
			MannWhitney(x, y) // build the exact table outside the loop
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				MannWhitney(x, y)
			}
		})
	}
}

func BenchmarkHodgesLehmann(b *testing.B) {
	for _, n := range []int{10, 30, 64, 100, 1000, 10000, 100000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			r := rand.New(rand.NewPCG(6, 6))
			x, y := randSample(r, n, 0, 0), randSample(r, n, 1, 0)
			HodgesLehmann(x, y, 0.95)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				HodgesLehmann(x, y, 0.95)
			}
		})
	}
}

// BenchmarkBuildUDist is the one-off cost of an exact table.
func BenchmarkBuildUDist(b *testing.B) {
	for i := 0; i < b.N; i++ {
		buildUDists(49)
	}
}
