package groth16

// SetSequentialProve switches the prover between overlapped and sequential steps (benchmarks).
func SetSequentialProve(v bool) { sequentialProve = v }
