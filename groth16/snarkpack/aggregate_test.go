package snarkpack

import (
	"context"
	"errors"
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/snarkd/snarkd/cs"
	"github.com/snarkd/snarkd/groth16"
	"github.com/snarkd/snarkd/testcircuit"
)

type fixture struct {
	pk     *groth16.Parameters
	proofs []*groth16.Proof
	inputs [][]fr.Element
	srs    *SRS
}

// newFixture proves n instances of one small circuit (distinct witnesses) and makes a devnet SRS.
func newFixture(t testing.TB, n int) *fixture {
	t.Helper()
	ctx := context.Background()
	pk, err := groth16.SetupFromSeed(ctx, testcircuit.New(64, 5), []byte("snarkpack"))
	if err != nil {
		t.Fatal(err)
	}
	circuits := make([]cs.Circuit, n)
	f := &fixture{pk: pk}
	for i := range n {
		c := testcircuit.NewWithWitness(64, 5, uint64(100+i))
		circuits[i] = c
		f.inputs = append(f.inputs, c.PublicInputs())
	}
	f.proofs, err = groth16.ProveBatch(ctx, pk, circuits, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range f.proofs {
		if err := groth16.Verify(&pk.VK, p, f.inputs[i]); err != nil {
			t.Fatalf("proof %d: %v", i, err)
		}
	}
	f.srs, err = DevnetSRS(ctx, max(n, 8), 1)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func TestAggregateVerify(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, 8)
	include := []byte("sector commitments")
	for _, v := range []Version{V1, V2} {
		for _, n := range []int{2, 4, 8} {
			pk, vk, err := f.srs.Specialize(n)
			if err != nil {
				t.Fatal(err)
			}
			agg, err := Aggregate(ctx, pk, include, f.proofs[:n], v)
			if err != nil {
				t.Fatalf("%s n=%d: %v", v, n, err)
			}
			b, err := agg.MarshalBinary()
			if err != nil {
				t.Fatal(err)
			}
			if len(b) != Size(n) {
				t.Fatalf("%d bytes, want %d", len(b), Size(n))
			}
			back, err := ParseAggregateProof(b)
			if err != nil {
				t.Fatal(err)
			}
			if err := Verify(ctx, vk, &f.pk.VK, f.inputs[:n], back, include, v); err != nil {
				t.Fatalf("%s n=%d: %v", v, n, err)
			}
			// Other transcript, other version, other inputs: refused.
			if err := Verify(ctx, vk, &f.pk.VK, f.inputs[:n], back, []byte("other"), v); !errors.Is(err, ErrInvalid) {
				t.Errorf("%s n=%d other include: %v", v, n, err)
			}
			other := V1
			if v == V1 {
				other = V2
			}
			if err := Verify(ctx, vk, &f.pk.VK, f.inputs[:n], back, include, other); !errors.Is(err, ErrInvalid) {
				t.Errorf("%s n=%d verified as %s: %v", v, n, other, err)
			}
			bad := make([][]fr.Element, n)
			copy(bad, f.inputs[:n])
			bad[n-1] = append([]fr.Element(nil), bad[n-1]...)
			bad[n-1][0].SetUint64(12345)
			if err := Verify(ctx, vk, &f.pk.VK, bad, back, include, v); !errors.Is(err, ErrInvalid) {
				t.Errorf("%s n=%d changed input: %v", v, n, err)
			}
		}
	}
}
