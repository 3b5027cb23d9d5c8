package poseidon

import (
	"fmt"
	"math"
)

// Strength selects neptune's round-number policy.
type Strength int

const (
	// Standard is the 128-bit security setting Filecoin uses.
	Standard Strength = iota
	// Strengthened adds 25% (rounded up) to the partial rounds.
	Strengthened
)

// String names the strength as neptune prints it.
func (s Strength) String() string {
	switch s {
	case Standard:
		return "standard"
	case Strengthened:
		return "strengthened"
	}
	return fmt.Sprintf("Strength(%d)", int(s))
}

// RoundNumbers returns (full, partial) rounds for an arity, as neptune computes them.
func RoundNumbers(arity int, s Strength) (int, int) {
	rf, rp := calcRoundNumbers(arity + 1)
	if s == Strengthened {
		rp = int(math.Ceil(float64(rp) * 1.25))
	}
	return rf, rp
}

// calcRoundNumbers searches for the cheapest secure (R_F, R_P) for width t with
// the security margin, in float32 arithmetic like the reference.
func calcRoundNumbers(t int) (int, int) {
	rf, rp := 0, 0
	minSboxes := math.MaxInt
	for rfTest := 2; rfTest <= 1000; rfTest += 2 {
		for rpTest := 4; rpTest < 200; rpTest++ {
			if !roundsSecure(t, rfTest, rpTest) {
				continue
			}
			f, p := rfTest+2, int(float32ceil(float32(1.075)*float32(rpTest)))
			n := t*f + p
			if n < minSboxes || (n == minSboxes && f < rf) {
				rf, rp, minSboxes = f, p, n
			}
		}
	}
	return rf, rp
}

func float32ceil(x float32) float32 { return float32(math.Ceil(float64(x))) }

func roundsSecure(ti, rfi, rpi int) bool {
	rp, t := float32(rpi), float32(ti)
	const n, m = float32(256), float32(128)
	rfStat := float32(10)
	if m <= (n-3)*(t+1) {
		rfStat = 6
	}
	rfInterp := float32(0.43)*m + float32(math.Log2(float64(t))) - rp
	rfGrob1 := float32(0.21)*n - rp
	rfGrob2 := (float32(0.14)*n - 1 - rp) / (t - 1)
	max := 0
	for _, v := range []float32{rfStat, rfInterp, rfGrob1, rfGrob2} {
		if c := int(float32ceil(v)); c > max {
			max = c
		}
	}
	return rfi >= max
}
