package post

import (
	"context"
	"math/rand/v2"
	"os"
	"testing"
	"time"

	"github.com/filecoin-project/go-state-types/abi"

	"github.com/snarkd/snarkd/cs"
	"github.com/snarkd/snarkd/filecoin/prooftypes"
	"github.com/snarkd/snarkd/filecoin/sealer"
)

// 8MiB WindowPoSt (a partition short of sectors) and WinningPoSt from a Go-sealed sector.
// The WindowPoSt partition is also proven and verified. Sealing 8MiB takes minutes of CPU:
// SNARKD_HEAVY_TESTS=1.
func TestPoSt8MiBFromSealer(t *testing.T) {
	if os.Getenv("SNARKD_HEAVY_TESTS") == "" {
		t.Skip("set SNARKD_HEAVY_TESTS=1")
	}
	sp, err := prooftypes.Lookup(abi.RegisteredSealProof_StackedDrg8MiBV1_1)
	if err != nil {
		t.Fatal(err)
	}
	r := rand.NewChaCha8([32]byte{8})
	data, err := sealer.RandomData(r, sp.SectorSize)
	if err != nil {
		t.Fatal(err)
	}
	s, err := sealer.Seal(context.Background(), sp, data, prooftypes.ProverID(1000), 12, [32]byte{2})
	if err != nil {
		t.Fatal(err)
	}
	rnd := testRandomness(40)
	prover := prooftypes.ProverID(1000)
	window, _ := Lookup(abi.RegisteredPoStProof_StackedDrgWindow8MiBV1_1)
	part, err := WindowPartition(window, rnd, prover, [][]byte{vanillaFor(t, window, s, rnd, 0)}, 0)
	if err != nil {
		t.Fatal(err)
	}
	checkPartition(t, part)
	proveVerify(t, context.Background(), window, part)
	winning, _ := Lookup(abi.RegisteredPoStProof_StackedDrgWinning8MiBV1)
	part, err = WinningPartition(winning, rnd, prover, [][]byte{vanillaFor(t, winning, s, rnd, 0)})
	if err != nil {
		t.Fatal(err)
	}
	checkPartition(t, part)
}

// A full WindowPoSt 32GiB partition (2,349 sectors, 126 M rows): the compiled path's witness
// and a, b, c equal full synthesis's. SNARKD_HEAVY_TESTS=1 (≈ 40 GiB of memory, minutes of CPU).
func TestWindowPoSt32GiBCompiledMatches(t *testing.T) {
	if os.Getenv("SNARKD_HEAVY_TESTS") == "" {
		t.Skip("set SNARKD_HEAVY_TESTS=1")
	}
	ctx := context.Background()
	part := window32GiB(t)
	comp, err := Compile(ctx, part.Circuit.Config)
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	pa, err := WitnessOnly(ctx, part.Circuit, comp, 0)
	if err != nil {
		t.Fatal(err)
	}
	t1 := time.Now()
	if err := comp.Complete(ctx, pa, 0); err != nil {
		t.Fatal(err)
	}
	t2 := time.Now()
	want, err := SynthesizeParallel(ctx, part.Circuit, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d rows: witness %s, products %s (fresh vectors); full synthesis %s", comp.NumConstraints(),
		t1.Sub(t0).Round(time.Millisecond), t2.Sub(t1).Round(time.Millisecond), time.Since(t2).Round(time.Millisecond))
	if err := pa.Diff(want); err != nil {
		t.Fatal(err)
	}
	if row := cs.FirstUnsatisfied(pa); row >= 0 {
		t.Fatalf("row %d not satisfied", row)
	}
}
