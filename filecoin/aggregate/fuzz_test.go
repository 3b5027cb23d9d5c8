package aggregate

import (
	"bytes"
	"context"
	"errors"
	"testing"

	"github.com/filecoin-project/go-state-types/abi"
	"github.com/filecoin-project/go-state-types/proof"
	"github.com/ipfs/go-cid"

	"github.com/snarkd/snarkd/groth16"
)

// fuzzProofs are the small proof types the fuzz targets pick from (their public inputs are
// cheap enough to compute on every input).
var fuzzProofs = []abi.RegisteredSealProof{
	abi.RegisteredSealProof_StackedDrg2KiBV1, abi.RegisteredSealProof_StackedDrg2KiBV1_1,
	abi.RegisteredSealProof_StackedDrg2KiBV1_1_Feat_SyntheticPoRep, abi.RegisteredSealProof_StackedDrg2KiBV1_2_Feat_NiPoRep,
	abi.RegisteredSealProof_StackedDrg8MiBV1_1,
}

// FuzzDecode feeds arbitrary aggregate infos (CID bytes, randomness, the type enums), C2
// proof bytes and aggregate bytes through Decode, ParseProofs and ParseAggregate: nothing may
// panic, every refusal is an *InputError, a decoded info yields the public inputs of every
// partition, and accepted proofs encode back to the bytes they came from.
func FuzzDecode(f *testing.F) {
	p := lookup(f, abi.RegisteredSealProof_StackedDrg2KiBV1_1)
	good := sealed(f, p, 1).info
	s := decode(f, p, 0, []proof.AggregateSealVerifyInfo{good})
	c2 := newSimKey(f, p.PublicInputs()).c2Proofs(f, s)[0]
	f.Add(uint8(1), int64(0), uint64(1), good.SealedCID.Bytes(), good.UnsealedCID.Bytes(), []byte(good.Randomness), []byte(good.InteractiveRandomness), c2, []byte(nil))
	f.Add(uint8(3), int64(1), uint64(7), good.SealedCID.Bytes(), good.UnsealedCID.Bytes(), []byte(good.Randomness), []byte(nil), bytes.Repeat(c2, 13), c2)
	f.Add(uint8(0), int64(2), uint64(0), good.UnsealedCID.Bytes(), good.SealedCID.Bytes(), []byte{1}, []byte{2}, c2[:100], []byte{0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, pt uint8, agg int64, number uint64, commR, commD, ticket, seed, c2, aggregate []byte) {
		info := proof.AggregateSealVerifyInfo{Number: abi.SectorNumber(number), Randomness: ticket, InteractiveRandomness: seed,
			SealedCID: castCID(commR), UnsealedCID: castCID(commD)}
		s, err := Decode(fuzzProofs[int(pt)%len(fuzzProofs)], abi.RegisteredAggregationProof(agg), testMiner, []proof.AggregateSealVerifyInfo{info})
		if err != nil {
			var ie *InputError
			if !errors.As(err, &ie) {
				t.Fatalf("refusal %v is a %T, not an *InputError", err, err)
			}
			return
		}
		ctx := context.Background()
		inputs, err := s.PublicInputs(ctx)
		if err != nil || len(inputs) != s.Proofs() {
			t.Fatalf("decoded info without public inputs: %d, %v", len(inputs), err)
		}
		_ = s.Include()
		if proofs, err := s.ParseProofs(ctx, [][]byte{c2}); err == nil {
			if !bytes.Equal(groth16.MarshalProofs(proofs), c2) {
				t.Fatal("accepted proofs do not encode back to their bytes")
			}
		} else if !errors.As(err, new(*InputError)) {
			t.Fatalf("proof refusal %v is a %T", err, err)
		}
		if a, err := s.ParseAggregate(aggregate); err == nil && a.NumProofs() != s.Padded() {
			t.Fatalf("accepted an aggregate of %d proofs for %d", a.NumProofs(), s.Padded())
		}
	})
}

func castCID(b []byte) cid.Cid {
	c, err := cid.Cast(b)
	if err != nil {
		return cid.Undef
	}
	return c
}
