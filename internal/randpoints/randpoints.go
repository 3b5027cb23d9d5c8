// Package randpoints makes large vectors of distinct pseudo-random curve points quickly, for
// benchmarks and tests that need SRS-sized inputs (real SRS points are not needed for speed or
// for comparing two provers).
package randpoints

import (
	"math/big"
	"math/rand/v2"
	"sync"

	bls12381 "github.com/consensys/gnark-crypto/ecc/bls12-381"

	"github.com/snarkd/snarkd/internal/cores"
)

// G1 returns n distinct pseudo-random G1 points, the same for the same seed: parallel random
// walks over 16 random multiples of the generator, cheap enough for SRS-sized vectors.
func G1(n int, seed uint64) []bls12381.G1Affine {
	_, _, g, _ := bls12381.Generators()
	workers := cores.N()
	per := (n + workers - 1) / workers
	out := make([]bls12381.G1Affine, n)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		lo, hi := w*per, min(n, (w+1)*per)
		if lo >= hi {
			break
		}
		wg.Add(1)
		go func(part []bls12381.G1Affine, s uint64) {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(s, 3))
			var steps [16]bls12381.G1Affine
			for i := range steps {
				steps[i].ScalarMultiplication(&g, new(big.Int).SetUint64(rng.Uint64()|1))
			}
			var cur bls12381.G1Jac
			cur.FromAffine(&steps[0])
			cur.DoubleAssign()
			jac := make([]bls12381.G1Jac, len(part))
			for i := range jac {
				cur.AddMixed(&steps[rng.IntN(16)])
				jac[i] = cur
			}
			copy(part, bls12381.BatchJacobianToAffineG1(jac))
		}(out[lo:hi], seed+uint64(w)*7919)
	}
	wg.Wait()
	return out
}

// G2 is G1 on G2.
func G2(n int, seed uint64) []bls12381.G2Affine {
	_, _, _, g := bls12381.Generators()
	workers := cores.N()
	per := (n + workers - 1) / workers
	out := make([]bls12381.G2Affine, n)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		lo, hi := w*per, min(n, (w+1)*per)
		if lo >= hi {
			break
		}
		wg.Add(1)
		go func(part []bls12381.G2Affine, s uint64) {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(s, 5))
			var steps [16]bls12381.G2Affine
			for i := range steps {
				steps[i].ScalarMultiplication(&g, new(big.Int).SetUint64(rng.Uint64()|1))
			}
			var cur bls12381.G2Jac
			cur.FromAffine(&steps[0])
			cur.DoubleAssign()
			for i := range part {
				cur.AddMixed(&steps[rng.IntN(16)])
				part[i].FromJacobian(&cur)
			}
		}(out[lo:hi], seed+uint64(w)*7919)
	}
	wg.Wait()
	return out
}
