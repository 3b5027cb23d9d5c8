package groth16_test

import "math/big"

type bigInt = big.Int
