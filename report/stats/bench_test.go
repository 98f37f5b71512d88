package stats

import (
	"fmt"
	"math"
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
	for _, n := range []int{10, 30, 45, 64, 100, 200, 1000, 10000, 100000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			r := rand.New(rand.NewPCG(6, 6))
			x, y := randSample(r, n, 0, 0), randSample(r, n, 1, 0)
			HodgesLehmann(x, y, 0.95)
			b.ResetTimer()
			cpu0 := processCPU()
			for i := 0; i < b.N; i++ {
				HodgesLehmann(x, y, 0.95)
			}
			b.ReportMetric(float64(processCPU()-cpu0)/float64(b.N)/1e3, "cpu-µs/op")
		})
	}
}

// BenchmarkBuildUDist is the one-off cost of an exact table.
func BenchmarkBuildUDist(b *testing.B) {
	for i := 0; i < b.N; i++ {
		buildUDists(49)
	}
}

// BenchmarkCompare100k compares two runs of 100,000 samples each, split
// into groups as a compare would split them (per prompt, per group), and
// judges them in families of 16: the whole statistical cost of comparing
// two 100,000-line runs for one metric.
func BenchmarkCompare100k(b *testing.B) {
	const total = 100000
	for _, tc := range []struct {
		name string
		size func(r *rand.Rand) int // samples a side in one group
		tick float64
	}{
		{"10000x10", func(*rand.Rand) int { return 10 }, 0},
		{"4000x25-ties", func(*rand.Rand) int { return 25 }, 1},
		{"2000x4..49", func(r *rand.Rand) int { return 4 + r.IntN(46) }, 0},
		{"1000x100", func(*rand.Rand) int { return 100 }, 0},
		{"100x1000", func(*rand.Rand) int { return 1000 }, 0},
		{"1x100000", func(*rand.Rand) int { return total }, 0},
	} {
		b.Run(tc.name, func(b *testing.B) {
			r := rand.New(rand.NewPCG(10, 10))
			var bases, curs [][]float64
			for n := 0; n < total; {
				k := min(tc.size(r), total-n)
				m := latencyModel{median: 20 * math.Pow(250, r.Float64()), sigma: 0.2, tick: tc.tick}
				bases = append(bases, m.draw(r, k, 1))
				curs = append(curs, m.draw(r, k, 1.05))
				n += k
			}
			opt := DefaultOptions()
			b.ReportAllocs()
			b.ResetTimer()
			cpu0 := processCPU()
			for i := 0; i < b.N; i++ {
				cs := make([]Comparison, len(bases))
				for g := range bases {
					c, err := CompareSamples(bases[g], curs[g])
					if err != nil {
						b.Fatal(err)
					}
					cs[g] = c
				}
				for f := 0; f < len(cs); f += 16 {
					if _, err := Judge(cs[f:min(f+16, len(cs))], opt); err != nil {
						b.Fatal(err)
					}
				}
			}
			b.ReportMetric(float64(processCPU()-cpu0)/float64(b.N)/1e6, "cpu-ms/op")
			b.ReportMetric(float64(len(bases)), "groups")
		})
	}
}
