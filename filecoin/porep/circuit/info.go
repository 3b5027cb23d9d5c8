package circuit

import (
	"context"
	"fmt"
	"math/bits"
	"sync"
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
	bs, err := blockShapeOf(ctx, ConfigOf(p))
	if err != nil {
		return nil, fmt.Errorf("blank synthesis of %s: %w", p.Name, err)
	}
	at := bs.at(p.ChallengesPerPartition)
	sh := cs.Shape{NumInputs: at[0], NumAux: at[1], NumConstraints: at[2]}
	return newInfo(p, sh, at[3], at[4], at[5], time.Since(start)), nil
}

// blockShape holds the blank counts (inputs, aux, rows incl. input rows, a-aux, b-input and
// b-aux densities) of the circuit with one challenge and of one more challenge block.
type blockShape struct {
	one, block [6]int
}

func (b *blockShape) at(n int) [6]int {
	var out [6]int
	for i := range out {
		out[i] = b.one[i] + (n-1)*b.block[i]
	}
	return out
}

var blockShapes sync.Map // Config with Challenges = 0 → *blockShape

// blockShapeOf synthesizes the blank circuit with one and with two challenges (once per
// configuration and process) and returns their counts and difference.
func blockShapeOf(ctx context.Context, cfg Config) (*blockShape, error) {
	cfg.Challenges = 0
	if v, ok := blockShapes.Load(cfg); ok {
		return v.(*blockShape), nil
	}
	var counts [2][6]int
	var errs [2]error
	var wg sync.WaitGroup
	for k := range counts {
		wg.Add(1)
		go func(k int) {
			defer wg.Done()
			c := cfg
			c.Challenges = k + 1
			s, err := cs.SynthesizeShape(ctx, Blank(c))
			if err != nil {
				errs[k] = err
				return
			}
			sh := s.Shape()
			counts[k] = [6]int{sh.NumInputs, sh.NumAux, sh.NumConstraints, s.AAuxDensity.Count(), s.BInputDensity.Count(), s.BAuxDensity.Count()}
		}(k)
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	bs := &blockShape{one: counts[0]}
	for i := range bs.block {
		bs.block[i] = counts[1][i] - counts[0][i]
	}
	blockShapes.Store(cfg, bs)
	return bs, nil
}

// BlankShape returns the shape of a configuration's circuit (inputs, aux, rows including input
// rows), from two small blank syntheses cached per process.
func BlankShape(ctx context.Context, cfg Config) (cs.Shape, error) {
	bs, err := blockShapeOf(ctx, cfg)
	if err != nil {
		return cs.Shape{}, err
	}
	at := bs.at(cfg.Challenges)
	return cs.Shape{NumInputs: at[0], NumAux: at[1], NumConstraints: at[2]}, nil
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
