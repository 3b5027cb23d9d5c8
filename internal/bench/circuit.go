package bench

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/snarkd/snarkd/cs"
	"github.com/snarkd/snarkd/filecoin/post"
	"github.com/snarkd/snarkd/internal/cores"
	"github.com/snarkd/snarkd/testcircuit"
)

// benchCircuit is what `snarkd bench prove` proves: a blank circuit for the keys, a witness
// synthesis and the public inputs the proof is verified with.
type benchCircuit struct {
	name       string
	blank      cs.Circuit
	synthesize func(ctx context.Context, capacity cs.Shape) (*cs.ProvingAssignment, error)
	inputs     []fr.Element
}

// benchCircuitFor builds the circuit named by --circuit: "test" (the synthetic circuit of
// --constraints) or a PoSt proof type, whose partition is built from synthetic vanilla proofs
// of production shape (post.SyntheticSectorVanilla), decoded and verified as a request's would be.
func benchCircuitFor(ctx context.Context, name, constraints string, seed uint64) (*benchCircuit, error) {
	if name == "" || name == "test" {
		n, err := parseConstraints(constraints)
		if err != nil {
			return nil, err
		}
		if n < testcircuit.MinConstraints {
			return nil, fmt.Errorf("--constraints %d is below the minimum %d", n, testcircuit.MinConstraints)
		}
		c := testcircuit.New(n, seed)
		return &benchCircuit{name: fmt.Sprintf("test, %d constraints", n), blank: c, inputs: c.PublicInputs(),
			synthesize: func(ctx context.Context, capacity cs.Shape) (*cs.ProvingAssignment, error) {
				return cs.SynthesizeProving(ctx, c, capacity)
			}}, nil
	}
	var p *post.Proof
	for _, pp := range post.All() {
		if strings.EqualFold(pp.Name, name) {
			p = pp
			break
		}
	}
	if p == nil {
		return nil, fmt.Errorf("--circuit %q: want test or a PoSt proof type (StackedDrgWinning32GiBV1, StackedDrgWindow32GiBV1_1); PoRep C2: `snarkd bench c2`", name)
	}
	var rnd, prover [32]byte
	rng := rand.New(rand.NewPCG(seed, 1))
	for i := range rnd {
		rnd[i] = byte(rng.Uint32())
	}
	rnd[31] &= 0x3f
	src := rand.NewChaCha8(rnd)
	vanilla := make([][]byte, p.SectorCount)
	var err error
	for i := range vanilla {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if vanilla[i], err = post.SyntheticSectorVanilla(p, uint64(1000+i), rnd, i, src); err != nil {
			return nil, fmt.Errorf("synthetic vanilla proof %d: %w", i, err)
		}
	}
	var part *post.Partition
	if p.Kind == post.Winning {
		part, err = post.WinningPartition(p, rnd, prover, vanilla)
	} else {
		part, err = post.WindowPartition(p, rnd, prover, vanilla, 0)
	}
	if err != nil {
		return nil, fmt.Errorf("%s partition: %w", p.Name, err)
	}
	return &benchCircuit{name: fmt.Sprintf("%s, %d sectors (synthetic vanilla proofs)", p.Name, len(vanilla)),
		blank: p.Blank(), inputs: part.Inputs,
		synthesize: func(ctx context.Context, _ cs.Shape) (*cs.ProvingAssignment, error) {
			return post.SynthesizeParallel(ctx, part.Circuit, cores.N())
		}}, nil
}
