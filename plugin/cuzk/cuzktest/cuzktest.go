// Package cuzktest builds inputs and clients for tests of the cuzk.v1 service: Curio-shaped
// requests with real 2KiB/8MiB C1 outputs and PoSt vanilla proofs from Go-sealed sectors, and
// a gRPC client with Curio's transport settings.
package cuzktest

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"

	"github.com/filecoin-project/go-state-types/abi"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/snarkd/snarkd/filecoin/c1"
	"github.com/snarkd/snarkd/filecoin/post"
	"github.com/snarkd/snarkd/filecoin/prooftypes"
	"github.com/snarkd/snarkd/filecoin/sealer"
	pb "github.com/snarkd/snarkd/plugin/cuzk/proto/cuzk/v1"
)

// MaxMessage is the message limit Curio's client uses both ways.
const MaxMessage = 256 << 20

// Dial connects as Curio does: insecure credentials and 256 MiB messages. target is
// unix:///path.sock or host:port.
func Dial(target string, opts ...grpc.DialOption) (pb.ProvingEngineClient, *grpc.ClientConn, error) {
	base := []grpc.DialOption{
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(MaxMessage), grpc.MaxCallSendMsgSize(MaxMessage)),
	}
	conn, err := grpc.NewClient(target, append(base, opts...)...)
	if err != nil {
		return nil, nil, fmt.Errorf("dialing %s: %w", target, err)
	}
	return pb.NewProvingEngineClient(conn), conn, nil
}

// Commit2In returns the Commit2In envelope Curio sends for a PoRep of seal proof spt: a
// synthetic C1 output that satisfies the PoRep circuit for miner and sector.
func Commit2In(ctx context.Context, spt abi.RegisteredSealProof, miner abi.ActorID, sector uint64, seed uint64) ([]byte, error) {
	p, err := prooftypes.Lookup(spt)
	if err != nil {
		return nil, err
	}
	r := rand.NewChaCha8(seed32(seed))
	var ticket, interactive [32]byte
	_, _ = r.Read(ticket[:])
	_, _ = r.Read(interactive[:])
	interactive[0] |= 1 // SyntheticC1 refuses an all-zero seed
	out, err := sealer.SyntheticC1(ctx, p, prooftypes.ProverID(miner), sector, ticket, interactive, r)
	if err != nil {
		return nil, fmt.Errorf("synthetic C1 for %s: %w", p.Name, err)
	}
	phase1, err := out.Encode()
	if err != nil {
		return nil, err
	}
	return json.Marshal(c1.Commit2In{SectorNum: int64(sector), Phase1Out: phase1, SectorSize: p.SectorSize})
}

// PoSt is a WindowPoSt or WinningPoSt input for Go-sealed 2KiB sectors.
type PoSt struct {
	Proof      abi.RegisteredPoStProof
	Randomness [32]byte
	Vanilla    [][]byte
}

// PoStInput seals sectors 2KiB sectors for miner and returns the vanilla proofs a storage
// node would serve for PoSt proof type pt and the given randomness seed.
func PoStInput(ctx context.Context, pt abi.RegisteredPoStProof, miner abi.ActorID, sectors int, seed uint64) (*PoSt, error) {
	pp, err := post.Lookup(pt)
	if err != nil {
		return nil, err
	}
	sp, err := prooftypes.Lookup(abi.RegisteredSealProof_StackedDrg2KiBV1_1)
	if err != nil {
		return nil, err
	}
	if pp.SectorSize != sp.SectorSize {
		return nil, fmt.Errorf("PoSt proof %s is not for 2KiB sectors", pp.Name)
	}
	r := rand.NewChaCha8(seed32(seed))
	in := &PoSt{Proof: pt}
	_, _ = r.Read(in.Randomness[:])
	in.Randomness[31] &= 0x3f // a field element, as chain randomness is after reduction
	for i := 0; i < sectors; i++ {
		data, err := sealer.RandomData(r, sp.SectorSize)
		if err != nil {
			return nil, err
		}
		var ticket [32]byte
		_, _ = r.Read(ticket[:])
		num := uint64(i + 1)
		s, err := sealer.Seal(ctx, sp, data, prooftypes.ProverID(miner), num, ticket)
		if err != nil {
			return nil, fmt.Errorf("sealing sector %d: %w", num, err)
		}
		b, err := post.GenerateSectorVanilla(pp, num, s.TreeC.Root(), s.TreeR, pp.SectorChallenges(in.Randomness, num, i))
		if err != nil {
			return nil, err
		}
		in.Vanilla = append(in.Vanilla, b)
	}
	return in, nil
}

func seed32(seed uint64) [32]byte {
	var s [32]byte
	for i := 0; i < 8; i++ {
		s[i] = byte(seed >> (8 * i))
	}
	s[31] = 0xc5
	return s
}
