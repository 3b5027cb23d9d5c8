// Package aggregatetest makes seal-aggregation inputs for tests: Go-sealed small sectors of one
// miner, their aggregate infos as Lotus builds them, and C2 proofs made with a simulated
// verifying key (groth16sim) instead of a Groth16 setup of the PoRep circuit, which takes
// minutes. WriteKeys puts that key and a devnet SnarkPack SRS where snarkd reads them.
package aggregatetest

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"

	"github.com/filecoin-project/go-state-types/abi"
	"github.com/filecoin-project/go-state-types/proof"

	"github.com/snarkd/snarkd/filecoin/aggregate"
	"github.com/snarkd/snarkd/filecoin/commcid"
	"github.com/snarkd/snarkd/filecoin/prooftypes"
	"github.com/snarkd/snarkd/filecoin/sealer"
	"github.com/snarkd/snarkd/groth16"
	"github.com/snarkd/snarkd/groth16/snarkpack"
	"github.com/snarkd/snarkd/internal/groth16sim"
)

// Fixture is n sealed sectors (numbers First, First+1, …) of Miner, with valid C2 proofs.
type Fixture struct {
	Proof  *prooftypes.SealProof
	Miner  abi.ActorID
	Key    *groth16sim.Key
	Infos  []proof.AggregateSealVerifyInfo
	Proofs [][]byte
}

// New seals n sectors of proof type spt (small sector sizes: sealer.RandomC1 seals them for
// real) from seed and proves their C2 with a fresh simulated key.
func New(spt abi.RegisteredSealProof, miner abi.ActorID, first abi.SectorNumber, n int, seed byte) (*Fixture, error) {
	ctx := context.Background()
	p, err := prooftypes.Lookup(spt)
	if err != nil {
		return nil, err
	}
	f := &Fixture{Proof: p, Miner: miner}
	if f.Key, err = groth16sim.NewKey(p.PublicInputs()); err != nil {
		return nil, err
	}
	for i := range n {
		num := first + abi.SectorNumber(i)
		o, err := sealer.RandomC1(ctx, p, miner, num, rand.NewChaCha8([32]byte{seed, byte(i), byte(i >> 8)}))
		if err != nil {
			return nil, fmt.Errorf("sealing sector %d: %w", num, err)
		}
		commR, err := commcid.SealedCID(o.CommR)
		if err != nil {
			return nil, err
		}
		commD, err := commcid.UnsealedCID(o.CommD)
		if err != nil {
			return nil, err
		}
		f.Infos = append(f.Infos, proof.AggregateSealVerifyInfo{Number: num, Randomness: o.Ticket[:], InteractiveRandomness: o.Seed[:],
			SealedCID: commR, UnsealedCID: commD})
	}
	s, err := aggregate.Decode(p.Proof, abi.RegisteredAggregationProof_SnarkPackV2, miner, f.Infos)
	if err != nil {
		return nil, err
	}
	inputs, err := s.PublicInputs(ctx)
	if err != nil {
		return nil, err
	}
	for i := range n {
		ps := make([]*groth16.Proof, p.Partitions)
		for k := range ps {
			if ps[k], err = f.Key.Prove(inputs[i*p.Partitions+k]); err != nil {
				return nil, err
			}
		}
		f.Proofs = append(f.Proofs, groth16.MarshalProofs(ps))
	}
	return f, nil
}

// Info is the aggregate info of every sector for aggregation type v, as Lotus passes it to
// AggregateSealProofs (Proof empty).
func (f *Fixture) Info(v abi.RegisteredAggregationProof) proof.AggregateSealVerifyProofAndInfos {
	return proof.AggregateSealVerifyProofAndInfos{Miner: f.Miner, SealProof: f.Proof.Proof, AggregateProof: v,
		Infos: append([]proof.AggregateSealVerifyInfo(nil), f.Infos...)}
}

// WriteKeys writes the simulated key as the proof type's .vk file in dir (a Filecoin
// parameter directory) and, when maxProofs > 0, a devnet SnarkPack SRS for up to maxProofs
// proofs under its published name.
func (f *Fixture) WriteKeys(dir string, maxProofs int) error {
	var vk bytes.Buffer
	if _, err := f.Key.VK.WriteTo(&vk); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, f.Proof.VKFile()), vk.Bytes(), 0o644); err != nil {
		return err
	}
	if maxProofs == 0 {
		return nil
	}
	return WriteDevnetSRS(dir, maxProofs)
}

// WriteDevnetSRS writes an INSECURE devnet SnarkPack SRS for up to maxProofs proofs into dir
// under snarkpack.SRSFile.
func WriteDevnetSRS(dir string, maxProofs int) error {
	srs, err := snarkpack.DevnetSRS(context.Background(), maxProofs, 1)
	if err != nil {
		return err
	}
	var b bytes.Buffer
	if _, err := srs.WriteTo(&b); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, snarkpack.SRSFile), b.Bytes(), 0o644)
}
