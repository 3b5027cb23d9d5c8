//go:build race

package por

// raceEnabled lets the heaviest cases step aside under the race detector.
const raceEnabled = true
