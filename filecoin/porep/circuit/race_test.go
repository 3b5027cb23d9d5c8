//go:build race

package circuit

const raceEnabled = true
