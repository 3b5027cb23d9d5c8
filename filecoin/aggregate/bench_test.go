package aggregate

import (
	"context"
	"encoding/binary"
	"fmt"
	"testing"

	"github.com/filecoin-project/go-state-types/abi"
	"github.com/filecoin-project/go-state-types/proof"

	"github.com/snarkd/snarkd/filecoin/c1"
	"github.com/snarkd/snarkd/filecoin/commcid"
	"github.com/snarkd/snarkd/groth16"
	"github.com/snarkd/snarkd/groth16/snarkpack"
	"github.com/snarkd/snarkd/internal/randpoints"
)

// BenchmarkAggregate times Set.Aggregate (AggregateSealProofs' work after decoding) of 8 to
// 8192 proofs: 2KiB sectors of one partition each, so the count is the sectors', with random
// points for the proofs and the SRS (the timing of real ones; the aggregates do not verify).
// A 32 GiB ProveCommitAggregate of 819 sectors aggregates 8190 proofs, 8192 padded.
//
//	go test -run XXX -bench Aggregate -benchtime 1x ./filecoin/aggregate
func BenchmarkAggregate(b *testing.B) {
	const most = 8192
	srs := &snarkpack.SRS{GAlpha: randpoints.G1(2*most, 1), GBeta: randpoints.G1(2*most, 2),
		HAlpha: randpoints.G2(2*most, 3), HBeta: randpoints.G2(2*most, 4)}
	pa, pb, pc := randpoints.G1(most, 5), randpoints.G2(most, 6), randpoints.G1(most, 7)
	proofs := make([]*groth16.Proof, most)
	for i := range proofs {
		proofs[i] = &groth16.Proof{A: pa[i], B: pb[i], C: pc[i]}
	}
	for _, n := range []int{8, 64, 512, 4096, 8192} {
		b.Run(fmt.Sprintf("proofs=%d", n), func(b *testing.B) {
			s, err := Decode(abi.RegisteredSealProof_StackedDrg2KiBV1_1, abi.RegisteredAggregationProof_SnarkPackV2, 1000, benchInfos(b, n))
			if err != nil {
				b.Fatal(err)
			}
			pk, _, err := srs.Specialize(s.Padded())
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				if _, err := s.Aggregate(context.Background(), pk, proofs[:n]); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// benchInfos are n sector infos with distinct commitments (field elements below 2^64).
func benchInfos(b *testing.B, n int) []proof.AggregateSealVerifyInfo {
	b.Helper()
	out := make([]proof.AggregateSealVerifyInfo, n)
	for i := range out {
		var r, d c1.Domain
		binary.LittleEndian.PutUint64(r[:], uint64(2*i+1))
		binary.LittleEndian.PutUint64(d[:], uint64(2*i+2))
		commR, err := commcid.SealedCID(r)
		if err != nil {
			b.Fatal(err)
		}
		commD, err := commcid.UnsealedCID(d)
		if err != nil {
			b.Fatal(err)
		}
		out[i] = proof.AggregateSealVerifyInfo{Number: abi.SectorNumber(i), Randomness: make([]byte, 32), InteractiveRandomness: make([]byte, 32),
			SealedCID: commR, UnsealedCID: commD}
	}
	return out
}

// BenchmarkPrepare times the steps of an aggregate-seals job around the aggregation, for 819
// 32 GiB sectors (8190 proofs): decoding the 819 C2 proofs (points checked on their curves and
// in their subgroups) and recomputing the 8190 partitions' public inputs that the aggregate's
// verification needs.
func BenchmarkPrepare(b *testing.B) {
	const sectors = 819
	infos := benchInfos(b, sectors)
	s, err := Decode(abi.RegisteredSealProof_StackedDrg32GiBV1_1, abi.RegisteredAggregationProof_SnarkPackV2, 1000, infos)
	if err != nil {
		b.Fatal(err)
	}
	pa, pb, pc := randpoints.G1(s.Proofs(), 5), randpoints.G2(s.Proofs(), 6), randpoints.G1(s.Proofs(), 7)
	c2 := make([][]byte, sectors)
	for i := range c2 {
		ps := make([]*groth16.Proof, s.Proof.Partitions)
		for k := range ps {
			j := i*s.Proof.Partitions + k
			ps[k] = &groth16.Proof{A: pa[j], B: pb[j], C: pc[j]}
		}
		c2[i] = groth16.MarshalProofs(ps)
	}
	b.Run("parse-proofs", func(b *testing.B) {
		for range b.N {
			if _, err := s.ParseProofs(context.Background(), c2); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("public-inputs", func(b *testing.B) {
		for range b.N {
			if _, err := s.PublicInputs(context.Background()); err != nil {
				b.Fatal(err)
			}
		}
	})
}
