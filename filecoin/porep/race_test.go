//go:build race

package porep

const raceEnabled = true
