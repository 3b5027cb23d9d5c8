package post

import (
	"context"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/filecoin-project/go-state-types/abi"

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
