//go:build race

package update

const raceEnabled = true
