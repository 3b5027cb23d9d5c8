//go:build race

package post

const raceEnabled = true
