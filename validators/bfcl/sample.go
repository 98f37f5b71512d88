package bfcl

import (
	"embed"
	"io/fs"
	"math/rand/v2"
	"slices"
)

// The sample: PerCategory cases of each category, the lines Pick draws.
const (
	// Seed seeds the draw (the issue that asked for the suite).
	Seed = 22
	// PerCategory is how many cases each category keeps.
	PerCategory = 40
)

// Pick is the draw: the 0-based lines of a category file of n cases that
// the sample keeps. A PCG seeded with (Seed, the category's index in
// Categories) permutes 0..n-1 and the first PerCategory lines of the
// permutation are kept, in file order. math/rand/v2's PCG and Perm are
// specified exactly, so the draw is the same on every platform and Go
// version; the test checks the embedded files are this draw.
func Pick(category, n int) []int {
	r := rand.New(rand.NewPCG(Seed, uint64(category)))
	keep := r.Perm(n)[:min(PerCategory, n)]
	slices.Sort(keep)
	return keep
}

//go:embed data
var data embed.FS

// DataName is how the embedded sample is named in errors and records.
const DataName = "builtin:bfcl/data"

// Builtin loads the embedded sample.
func Builtin() ([]Case, error) {
	sub, err := fs.Sub(data, "data")
	if err != nil {
		return nil, err
	}
	return Load(sub, DataName)
}
