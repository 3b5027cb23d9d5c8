package update

import (
	"context"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/filecoin-project/go-state-types/abi"

	"github.com/snarkd/snarkd/filecoin/c1"
	"github.com/snarkd/snarkd/filecoin/prooftypes"
	"github.com/snarkd/snarkd/filecoin/sealer"
)

// 8MiB SnapDeals from a Go-sealed sector key: four partitions verify, the first and last build
// circuits, and partition 3's witness satisfies its 10M-row circuit. SNARKD_HEAVY_TESTS=1.
func TestSnapDeals8MiBFromSealer(t *testing.T) {
	if os.Getenv("SNARKD_HEAVY_TESTS") == "" {
		t.Skip("set SNARKD_HEAVY_TESTS=1")
	}
	sp, err := prooftypes.Lookup(abi.RegisteredSealProof_StackedDrg8MiBV1_1)
	if err != nil {
		t.Fatal(err)
	}
	r := rand.NewChaCha8([32]byte{18})
	raw, err := sealer.RandomData(r, sp.SectorSize)
	if err != nil {
		t.Fatal(err)
	}
	s, err := sealer.Seal(context.Background(), sp, raw, prooftypes.ProverID(1000), 13, [32]byte{3})
	if err != nil {
		t.Fatal(err)
	}
	p, err := ForProof(abi.RegisteredUpdateProof_StackedDrg8MiBV1)
	if err != nil {
		t.Fatal(err)
	}
	if raw, err = sealer.RandomData(r, sp.SectorSize); err != nil {
		t.Fatal(err)
	}
	data := make([]c1.Domain, p.SectorNodes)
	for i := range data {
		copy(data[i][:], raw[32*i:])
	}
	e, err := Encode(context.Background(), p, p.HDefault(), s.TreeC.Root(), s.TreeR, data)
	if err != nil {
		t.Fatal(err)
	}
	for k := 0; k < p.PartitionCount; k++ {
		b, err := e.PartitionProof(k)
		if err != nil {
			t.Fatal(err)
		}
		c, inputs, err := p.Partition(b, e.Inputs(k))
		if err != nil {
			t.Fatalf("partition %d: %v", k, err)
		}
		if k == p.PartitionCount-1 {
			checkSatisfied(t, c, inputs)
		}
	}
}

// The production Poseidon-variant circuit (32GiB: 1,376 challenges, 22.3M constraints, ~3 GiB
// of assignment) from a synthetic update, satisfied: SNARKD_HEAVY_TESTS=1.
func TestSnapDealsPoseidon32GiBSynthetic(t *testing.T) {
	if os.Getenv("SNARKD_HEAVY_TESTS") == "" {
		t.Skip("set SNARKD_HEAVY_TESTS=1")
	}
	p, err := FromSectorSizePoseidon(prooftypes.SectorSize32GiB)
	if err != nil {
		t.Fatal(err)
	}
	e, err := Synthetic(p, p.HDefault(), 256, rand.NewChaCha8([32]byte{32}))
	if err != nil {
		t.Fatal(err)
	}
	b, err := e.PartitionProof(0)
	if err != nil {
		t.Fatal(err)
	}
	c, inputs, err := p.Partition(b, e.Inputs(0))
	if err != nil {
		t.Fatal(err)
	}
	pa, err := SynthesizeParallel(context.Background(), c, 0)
	if err != nil {
		t.Fatal(err)
	}
	if row := firstUnsatisfied(pa); row >= 0 {
		t.Fatalf("row %d of %d not satisfied", row, len(pa.A))
	}
	for i := range inputs {
		if !pa.Input[i+1].Equal(&inputs[i]) {
			t.Fatalf("input %d differs", i+1)
		}
	}
	if got := pa.Shape().NumConstraints - pa.Shape().NumInputs; got != 22305906 {
		t.Fatalf("%d constraints", got)
	}
}
