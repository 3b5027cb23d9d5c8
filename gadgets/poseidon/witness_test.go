package poseidon

import (
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/snarkd/snarkd/cs"
	"github.com/snarkd/snarkd/gadgets/internal/xorshift"
	"github.com/snarkd/snarkd/gadgets/num"
)

// A witness-only synthesis runs the permutation natively: for every parameter set it must
// allocate the template's locals with the template's values, count its rows and return its
// hash, on any preimage (repeated slots included).
func TestNativeWitnessMatchesTemplate(t *testing.T) {
	cases := []struct {
		arity    int
		strength Strength
		ht       HashType
	}{
		{1, Standard, HashType{Kind: MerkleTree}},
		{2, Standard, HashType{Kind: MerkleTree}},
		{2, Standard, SnapDealsType},
		{4, Standard, HashType{Kind: MerkleTree}},
		{8, Standard, HashType{Kind: MerkleTree}},
		{8, Strengthened, HashType{Kind: MerkleTree}},
		{8, Standard, HashType{Kind: ConstantLength, Param: 8}},
		{11, Standard, HashType{Kind: MerkleTree}},
		{16, Standard, HashType{Kind: MerkleTree}},
	}
	rng := xorshift.New(xorshift.TestSeed)
	for _, tc := range cases {
		c, err := New(tc.arity, tc.strength, tc.ht)
		if err != nil {
			t.Fatal(err)
		}
		tm, err := templateFor(c)
		if err != nil {
			t.Fatal(err)
		}
		if tm.nativeErr != nil {
			t.Fatalf("arity %d %v: native witness disabled: %v", tc.arity, tc.ht, tm.nativeErr)
		}
		for round := 0; round < 4; round++ {
			vals := make([]fr.Element, tc.arity)
			for i := range vals {
				switch {
				case round == 1:
					// zero preimage
				case round == 2 && i > 0:
					vals[i] = vals[0] // one value in every slot
				default:
					vals[i] = rng.Fr()
				}
			}
			run := func(witnessOnly bool) (*cs.ProvingAssignment, fr.Element) {
				pa := cs.NewProvingAssignment(cs.Shape{})
				if witnessOnly {
					pa = cs.NewWitnessAssignment(cs.Shape{})
				}
				one := fr.One()
				if _, err := pa.AllocInputValue("ONE", &one); err != nil {
					t.Fatal(err)
				}
				in := make([]num.AllocatedNum, tc.arity)
				for i := range in {
					if in[i], err = num.Alloc(pa, vals[i]); err != nil {
						t.Fatal(err)
					}
				}
				h, err := HashCircuit(pa, in, c)
				if err != nil {
					t.Fatal(err)
				}
				return pa, h.Value
			}
			full, fh := run(false)
			wit, wh := run(true)
			if wit.Shape() != full.Shape() {
				t.Fatalf("arity %d %v round %d: witness shape %+v, proving shape %+v", tc.arity, tc.ht, round, wit.Shape(), full.Shape())
			}
			for i := range full.Aux {
				if !wit.Aux[i].Equal(&full.Aux[i]) {
					t.Fatalf("arity %d %v round %d: aux %d differs", tc.arity, tc.ht, round, i)
				}
			}
			want := c.MustHash(vals)
			if !wh.Equal(&fh) || !wh.Equal(&want) {
				t.Fatalf("arity %d %v round %d: hash differs", tc.arity, tc.ht, round)
			}
		}
	}
}

// nativeMatches refuses a native run that differs from the template (here, constants other
// than the template's), so that the template is used instead.
func TestNativeMatchesRefusesDifference(t *testing.T) {
	c := MustMerkle(8)
	tm, err := templateFor(c)
	if err != nil {
		t.Fatal(err)
	}
	if err := tm.nativeMatches(c); err != nil {
		t.Fatal(err)
	}
	for _, k := range []int{0, 2 * c.Width, len(c.CompressedRoundConstants) - 1} {
		other := *c
		other.CompressedRoundConstants = append([]fr.Element(nil), c.CompressedRoundConstants...)
		other.CompressedRoundConstants[k].SetUint64(7)
		if err := tm.nativeMatches(&other); err == nil {
			t.Fatalf("round constant %d changed: native run accepted", k)
		}
	}
	other := *c
	other.PartialRounds--
	if err := tm.nativeMatches(&other); err == nil {
		t.Fatal("one partial round fewer: native run accepted")
	}
}
