//go:build race

package rules_test

// raceEnabled: the race detector makes sync.Pool drop objects, so allocation counts
// do not hold.
const raceEnabled = true
