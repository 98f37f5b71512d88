//go:build race

package compare

// raceBuild: the race detector slows the Monte Carlo tests tenfold; under
// it they draw fewer trials (scripts/test.sh's -race pass), and the
// documented figures come from the plain run of their command.
const raceBuild = true
