package groth16

import (
	"math/big"
	"math/bits"
)

func bitsTrailing(w uint64) int { return bits.TrailingZeros64(w) }

func bigOf(v int64) *big.Int { return big.NewInt(v) }
