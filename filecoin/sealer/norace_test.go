//go:build !race

package sealer

const raceEnabled = false
