package groth16

import "math/big"

func bigOf(v int64) *big.Int { return big.NewInt(v) }
