package groth16

import (
	"fmt"
	"math/rand/v2"
	"testing"

	bls "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/snarkd/snarkd/cs"
)

// TestSparseMSMMatchesMultiExp checks the 0/1 split against gnark's MultiExp for witness
// mixes from all-zero to dense, with and without a density selection.
func TestSparseMSMMatchesMultiExp(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, n := range []int{1, 63, 64, 65, 5000} {
		for _, mix := range []struct {
			name              string
			zero, one, random int
		}{{"zeros", 1, 0, 0}, {"ones", 0, 1, 0}, {"bits", 3, 4, 1}, {"dense", 1, 1, 6}} {
			t.Run(fmt.Sprintf("n=%d/%s", n, mix.name), func(t *testing.T) {
				vals := make([]fr.Element, n)
				total := mix.zero + mix.one + mix.random
				for i := range vals {
					switch k := rng.IntN(total); {
					case k < mix.zero:
					case k < mix.zero+mix.one:
						vals[i].SetOne()
					default:
						vals[i].MustSetRandom()
					}
				}
				dens := cs.NewDensity(n)
				for i := 0; i < n; i++ {
					dens.AddBit()
					if rng.IntN(3) > 0 {
						dens.Inc(i)
					}
				}
				for _, src := range []scalarSource{{vals: vals}, {vals: vals, dens: dens}} {
					k := src.len()
					p1 := multiplesG1(k, 5)
					p2 := multiplesG2(k, 9)
					scal := src.gather()
					var want1, got1 bls.G1Jac
					var want2, got2 bls.G2Jac
					want1.MultiExp(p1, scal, msmConfig())
					want2.MultiExp(p2, scal, msmConfig())
					if err := msmG1(&got1, p1, src); err != nil {
						t.Fatal(err)
					}
					if err := msmG2(&got2, p2, src); err != nil {
						t.Fatal(err)
					}
					if !got1.Equal(&want1) || !got2.Equal(&want2) {
						t.Fatalf("sparse MSM differs (density %v)", src.dens != nil)
					}
				}
			})
		}
	}
}
