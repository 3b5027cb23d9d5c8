package seal

import (
	"context"
	"fmt"

	"github.com/snarkd/snarkd/filecoin/porep/circuit"
	"github.com/snarkd/snarkd/filecoin/prooftypes"
	"github.com/snarkd/snarkd/groth16"
)

// GenerateParams runs the Groth16 setup for a seal proof type's blank partition circuit from seed.
//
// INSECURE: whoever knows the seed can forge proofs. For devnets and tests only; mainnet uses the
// published parameters of Filecoin's trusted setup.
func GenerateParams(ctx context.Context, p *prooftypes.SealProof, seed []byte) (*groth16.Parameters, error) {
	pk, err := groth16.SetupFromSeed(ctx, circuit.Blank(circuit.ConfigOf(p)), seed)
	if err != nil {
		return nil, fmt.Errorf("setup of %s: %w", p.Name, err)
	}
	return pk, nil
}

// WriteParams writes pk as the .params, .vk and .meta files rust-fil-proofs looks for in a
// parameter directory, under p's file names. Files are written to a temporary name first and
// renamed, so a reader never sees a partial file.
func WriteParams(dir string, p *prooftypes.SealProof, pk *groth16.Parameters) error {
	return groth16.WriteParamFiles(dir, p.CacheID(), p.SectorSize, pk)
}

// ParamsMismatchError names the parameter vector whose length does not fit the circuit.
type ParamsMismatchError struct {
	Proof     string
	Vector    string
	Got, Want int
}

func (e *ParamsMismatchError) Error() string {
	return fmt.Sprintf("parameters do not match the %s circuit: %s has %d points, the circuit needs %d", e.Proof, e.Vector, e.Got, e.Want)
}

// CheckParams compares the vector lengths of pk with the blank circuit of p (ic = inputs, h =
// domain − 1, l = aux, a = inputs + A-dense aux, b = B-dense inputs + aux), so that parameters of
// another circuit are refused before any synthesis. The circuit counts come from
// circuit.QuickCircuitInfo (cached per process).
func CheckParams(ctx context.Context, p *prooftypes.SealProof, pk *groth16.Parameters) error {
	info, err := circuit.QuickCircuitInfo(ctx, p)
	if err != nil {
		return err
	}
	for _, c := range []struct {
		name      string
		got, want int
	}{
		{"vk.ic", len(pk.VK.IC), info.PublicInputs},
		{"h", len(pk.H), info.Domain - 1},
		{"l", len(pk.L), info.AuxVariables},
		{"a", len(pk.A), info.PublicInputs + info.AAuxDensity},
		{"b_g1", len(pk.BG1), info.BInputDensity + info.BAuxDensity},
		{"b_g2", len(pk.BG2), info.BInputDensity + info.BAuxDensity},
	} {
		if c.got != c.want {
			return &ParamsMismatchError{Proof: p.Name, Vector: c.name, Got: c.got, Want: c.want}
		}
	}
	return nil
}
