package circuit

import (
	"context"
	"fmt"
	"math/bits"
	"time"

	"github.com/snarkd/snarkd/cs"
	"github.com/snarkd/snarkd/filecoin/prooftypes"
)

// Info describes a partition circuit from blank synthesis: what `snarkd circuit info` reports.
type Info struct {
	Proof          string        `json:"proof"`
	SectorSize     uint64        `json:"sector_size"`
	Partitions     int           `json:"partitions"`
	Constraints    int           `json:"constraints"`     // circuit constraints, input rows excluded
	R1CSRows       int           `json:"r1cs_rows"`       // constraints + one x·0 = 0 row per input
	PublicInputs   int           `json:"public_inputs"`   // ONE included
	AuxVariables   int           `json:"aux_variables"`   // private variables
	AAuxDensity    int           `json:"a_aux_density"`   // aux variables used in some A
	BInputDensity  int           `json:"b_input_density"` // inputs used in some B
	BAuxDensity    int           `json:"b_aux_density"`   // aux variables used in some B
	Domain         int           `json:"domain"`          // FFT domain size (power of two ≥ rows)
	DomainLog2     int           `json:"domain_log2"`
	ParamsFile     string        `json:"params_file"`
	VKFile         string        `json:"vk_file"`
	SynthesisTime  time.Duration `json:"synthesis_ns"`
	SynthesisShape cs.Shape      `json:"-"`
}

// CircuitInfo synthesizes the blank partition circuit of a seal proof type and reports its
// counts, densities and FFT domain. Memory stays at a few bits per variable.
func CircuitInfo(ctx context.Context, p *prooftypes.SealProof) (*Info, error) {
	start := time.Now()
	s, err := cs.SynthesizeShape(ctx, Blank(ConfigOf(p)))
	if err != nil {
		return nil, fmt.Errorf("blank synthesis of %s: %w", p.Name, err)
	}
	return newInfo(p, s.Shape(), s.AAuxDensity.Count(), s.BInputDensity.Count(), s.BAuxDensity.Count(), time.Since(start)), nil
}

// QuickCircuitInfo computes CircuitInfo's numbers from blank syntheses of the same circuit with
// one and two challenges: every challenge block has the same shape and densities and only reads
// the prefix, so each count is affine in the number of challenges. A 32 GiB partition takes two
// 7M-constraint syntheses instead of one of 130M.
func QuickCircuitInfo(ctx context.Context, p *prooftypes.SealProof) (*Info, error) {
	start := time.Now()
	cfg := ConfigOf(p)
	var counts [2][6]int
	for k := range counts {
		cfg.Challenges = k + 1
		s, err := cs.SynthesizeShape(ctx, Blank(cfg))
		if err != nil {
			return nil, fmt.Errorf("blank synthesis of %s: %w", p.Name, err)
		}
		sh := s.Shape()
		counts[k] = [6]int{sh.NumInputs, sh.NumAux, sh.NumConstraints, s.AAuxDensity.Count(), s.BInputDensity.Count(), s.BAuxDensity.Count()}
	}
	n := p.ChallengesPerPartition
	var at [6]int
	for i := range at {
		at[i] = counts[0][i] + (n-1)*(counts[1][i]-counts[0][i])
	}
	sh := cs.Shape{NumInputs: at[0], NumAux: at[1], NumConstraints: at[2]}
	return newInfo(p, sh, at[3], at[4], at[5], time.Since(start)), nil
}

func newInfo(p *prooftypes.SealProof, sh cs.Shape, aAux, bIn, bAux int, took time.Duration) *Info {
	m := sh.DomainSize()
	return &Info{
		Proof:          p.Name,
		SectorSize:     p.SectorSize,
		Partitions:     p.Partitions,
		Constraints:    sh.NumConstraints - sh.NumInputs,
		R1CSRows:       sh.NumConstraints,
		PublicInputs:   sh.NumInputs,
		AuxVariables:   sh.NumAux,
		AAuxDensity:    aAux,
		BInputDensity:  bIn,
		BAuxDensity:    bAux,
		Domain:         m,
		DomainLog2:     bits.Len(uint(m)) - 1,
		ParamsFile:     p.ParamsFile(),
		VKFile:         p.VKFile(),
		SynthesisTime:  took,
		SynthesisShape: sh,
	}
}
