package sealer

import (
	"context"
	"fmt"
	"io"

	"github.com/filecoin-project/go-state-types/abi"

	"github.com/snarkd/snarkd/filecoin/c1"
	"github.com/snarkd/snarkd/filecoin/prooftypes"
)

// RandomC1 produces a C1 output for miner and sector with randomness from r: a real seal of
// random data for sectors up to MaxSectorSize, a synthetic all-zero sector (SyntheticC1) above.
// The result verifies (porep.Verify with the miner's prover id and the sector number) and is
// what a `make demo`, an itest or a benchmark feeds to SealCommitPhase2.
func RandomC1(ctx context.Context, p *prooftypes.SealProof, miner abi.ActorID, sector abi.SectorNumber, r io.Reader) (*c1.Output, error) {
	var ticket, seed [32]byte
	if _, err := io.ReadFull(r, ticket[:]); err != nil {
		return nil, fmt.Errorf("sealer: randomness: %w", err)
	}
	if _, err := io.ReadFull(r, seed[:]); err != nil {
		return nil, fmt.Errorf("sealer: randomness: %w", err)
	}
	ticket[31] &= 0x3f
	seed[0] |= 1 // never the all-zero seed
	proverID := prooftypes.ProverID(miner)
	if p.SectorSize > MaxSectorSize {
		return SyntheticC1(ctx, p, proverID, uint64(sector), ticket, seed, r)
	}
	data, err := RandomData(r, p.SectorSize)
	if err != nil {
		return nil, err
	}
	s, err := Seal(ctx, p, data, proverID, uint64(sector), ticket)
	if err != nil {
		return nil, err
	}
	return s.Commit1(ctx, seed)
}
