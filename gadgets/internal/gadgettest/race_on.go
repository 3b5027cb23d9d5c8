//go:build race

package gadgettest

// RaceEnabled reports a -race build, where the heaviest cases step aside.
const RaceEnabled = true
