//go:build !race

package compare

const raceBuild = false
