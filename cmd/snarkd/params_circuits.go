package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/snarkd/snarkd/cs"
	"github.com/snarkd/snarkd/filecoin/porep/circuit"
	"github.com/snarkd/snarkd/filecoin/post"
	"github.com/snarkd/snarkd/filecoin/prooftypes"
	"github.com/snarkd/snarkd/filecoin/seal"
	"github.com/snarkd/snarkd/filecoin/update"
	"github.com/snarkd/snarkd/groth16"
	"github.com/snarkd/snarkd/prover"
)

// filCircuit is one Filecoin circuit with a parameter file: a PoRep partition circuit, a
// fallback PoSt circuit or a SnapDeals (EmptySectorUpdate) partition circuit.
type filCircuit struct {
	Name       string // the --proof name
	Label      string // params check's proof column
	Base       string // parameter file name without extension
	SectorSize uint64
	Seal       *prooftypes.SealProof // PoRep only
	Blank      func() cs.Circuit     // PoSt and SnapDeals
	PoSt       *post.Proof           // PoSt only
	Update     *update.Params        // SnapDeals only
	Family     string
}

// compile records the circuit's compiled form (what the prover keeps per circuit shape).
func (f filCircuit) compile(ctx context.Context) (*cs.Compiled, error) {
	switch {
	case f.Seal != nil:
		return circuit.Compile(ctx, circuit.ConfigOf(f.Seal))
	case f.PoSt != nil:
		return post.Compile(ctx, f.PoSt.Config())
	case f.Update != nil:
		return update.Compile(ctx, f.Update)
	}
	return nil, fmt.Errorf("%s: no compiled form", f.Name)
}

func sealCircuit(p *prooftypes.SealProof) filCircuit {
	return filCircuit{Name: p.Name, Label: prooftypes.SectorSizeLabel(p.SectorSize), Base: p.CacheID(), SectorSize: p.SectorSize, Seal: p, Family: "PoRep"}
}

func postCircuit(p *post.Proof) filCircuit {
	return filCircuit{Name: p.Name, Label: p.Name, Base: p.ParamFile(), SectorSize: p.SectorSize,
		Blank: func() cs.Circuit { return p.Blank() }, PoSt: p, Family: "PoSt"}
}

func updateName(ps *update.Params) string {
	if ps.Poseidon {
		return "UpdatePoseidonStackedDrg" + prooftypes.SectorSizeLabel(ps.SectorSize()) + "V1"
	}
	return "UpdateStackedDrg" + prooftypes.SectorSizeLabel(ps.SectorSize()) + "V1"
}

func updateCircuit(ps *update.Params) filCircuit {
	n := updateName(ps)
	return filCircuit{Name: n, Label: n, Base: ps.ParamFile(), SectorSize: ps.SectorSize(),
		Blank: func() cs.Circuit { return update.Blank(ps) }, Update: ps, Family: "SnapDeals"}
}

// filCircuits returns one entry per parameter file: PoRep (distinctCircuits), then PoSt and
// SnapDeals in sector size order.
func filCircuits() []filCircuit {
	var out []filCircuit
	for _, p := range distinctCircuits() {
		out = append(out, sealCircuit(p))
	}
	seen := map[string]bool{}
	for _, p := range post.All() {
		if !seen[p.ParamFile()] {
			seen[p.ParamFile()] = true
			out = append(out, postCircuit(p))
		}
	}
	for _, ps := range update.All() {
		out = append(out, updateCircuit(ps))
	}
	return out
}

// parseCircuit accepts what parseSealProof does, a PoSt proof type name
// (StackedDrgWinning2KiBV1, StackedDrgWindow32GiBV1_1) or a SnapDeals name
// (UpdateStackedDrg2KiBV1, UpdatePoseidonStackedDrg32GiBV1).
func parseCircuit(s string) (filCircuit, error) {
	if p, err := parseSealProof(s); err == nil {
		return sealCircuit(p), nil
	}
	for _, p := range post.All() {
		if strings.EqualFold(p.Name, s) {
			return postCircuit(p), nil
		}
	}
	for _, ps := range update.All() {
		if strings.EqualFold(updateName(ps), s) {
			return updateCircuit(ps), nil
		}
	}
	return filCircuit{}, fmt.Errorf("unknown proof type %q: want a seal proof type (StackedDrg2KiBV1_1, its number, or a sector size such as 32GiB), "+
		"a PoSt proof type (StackedDrgWinning2KiBV1, StackedDrgWindow32GiBV1_1) or a SnapDeals circuit (UpdateStackedDrg2KiBV1, UpdatePoseidonStackedDrg32GiBV1)", s)
}

// setup runs the Groth16 setup of the circuit from seed.
func (f filCircuit) setup(ctx context.Context, seed []byte) (*groth16.Parameters, error) {
	if f.Seal != nil {
		return seal.GenerateParams(ctx, f.Seal, seed)
	}
	pk, err := groth16.SetupFromSeed(ctx, f.Blank(), seed)
	if err != nil {
		return nil, fmt.Errorf("setup of %s: %w", f.Name, err)
	}
	return pk, nil
}

// check refuses generated parameters that do not fit the circuit (PoRep: vector lengths; the
// other families' setups come straight from their blank circuit).
func (f filCircuit) check(ctx context.Context, pk *groth16.Parameters) error {
	if f.Seal != nil {
		if err := seal.CheckParams(ctx, f.Seal, pk); err != nil {
			return fmt.Errorf("generated parameters do not fit the circuit: %w", err)
		}
	}
	return nil
}

// write writes the .params, .vk and .meta files into dir.
func (f filCircuit) write(dir string, pk *groth16.Parameters) error {
	if f.Seal != nil {
		return seal.WriteParams(dir, f.Seal, pk)
	}
	return prover.WriteFilecoinParams(dir, f.Base, f.SectorSize, pk)
}
