//go:build race

package sealer

const raceEnabled = true
