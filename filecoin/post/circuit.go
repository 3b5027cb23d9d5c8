package post

import (
	"context"
	"fmt"
	"sync"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/snarkd/snarkd/cs"
	"github.com/snarkd/snarkd/filecoin/prooftypes"
	gmerkle "github.com/snarkd/snarkd/gadgets/merkle"
	"github.com/snarkd/snarkd/gadgets/num"
	"github.com/snarkd/snarkd/gadgets/por"
	"github.com/snarkd/snarkd/gadgets/poseidon"
)

// Config is the shape of a fallback PoSt circuit: sectors per partition, challenges per sector
// and the tree R of a sector of Nodes leaves.
type Config struct {
	Sectors    int
	Challenges int
	Tree       prooftypes.TreeShape
	Nodes      uint64
}

// Config returns the circuit configuration of proof type p.
func (p *Proof) Config() Config {
	return Config{Sectors: p.CircuitSectors(), Challenges: p.CircuitChallenges(), Tree: p.Tree, Nodes: p.Nodes()}
}

// PublicInputs is the number of public inputs, ONE included.
func (c Config) PublicInputs() int { return 1 + c.Sectors*(1+c.Challenges) }

// CircuitSector is the witness of one sector: comm_r (public), comm_c and comm_r_last, and per
// challenge the leaf and its path in tree R (base levels, then sub, then top).
type CircuitSector struct {
	CommR, CommC, CommRLast fr.Element
	Leafs                   []fr.Element
	Paths                   [][]gmerkle.PathElement
}

// Circuit is FallbackPoStCircuit. With Sectors nil it is the blank circuit (shape only).
type Circuit struct {
	Config  Config
	Sectors []CircuitSector
}

// Blank returns the blank circuit of cfg.
func Blank(cfg Config) *Circuit { return &Circuit{Config: cfg} }

func (c *Circuit) validate() error {
	if c.Config.Sectors < 1 || c.Config.Challenges < 1 {
		return fmt.Errorf("post circuit: %d sectors × %d challenges", c.Config.Sectors, c.Config.Challenges)
	}
	if _, err := c.Config.Tree.BaseLevels(c.Config.Nodes); err != nil {
		return fmt.Errorf("post circuit: %w", err)
	}
	if c.Sectors != nil && len(c.Sectors) != c.Config.Sectors {
		return fmt.Errorf("post circuit: %d sectors, the circuit has %d", len(c.Sectors), c.Config.Sectors)
	}
	return nil
}

// Synthesize implements cs.Circuit (synthesize_default: everything under "outer namespace").
func (c *Circuit) Synthesize(sys cs.ConstraintSystem) error {
	if err := c.validate(); err != nil {
		return err
	}
	if sys.WitnessMode() && c.Sectors == nil {
		return fmt.Errorf("post circuit: witness synthesis of a blank circuit: %w", cs.ErrAssignmentMissing)
	}
	sys.Push("outer namespace")
	defer sys.Pop()
	for i := 0; i < c.Config.Sectors; i++ {
		sys.PushIndexed("sector_", i)
		err := c.sector(sys, i)
		sys.Pop()
		if err != nil {
			return fmt.Errorf("sector %d: %w", i, err)
		}
	}
	return nil
}

func (c *Circuit) sector(sys cs.ConstraintSystem, i int) error {
	cfg := c.Config
	levels, _ := cfg.Tree.BaseLevels(cfg.Nodes)
	shape := gmerkle.Shape{Base: cfg.Tree.Base, Sub: cfg.Tree.Sub, Top: cfg.Tree.Top}
	var s CircuitSector
	if c.Sectors != nil {
		s = c.Sectors[i]
		if len(s.Leafs) != cfg.Challenges || len(s.Paths) != cfg.Challenges {
			return fmt.Errorf("%d leaves and %d paths for %d challenges", len(s.Leafs), len(s.Paths), cfg.Challenges)
		}
	}
	alloc := func(name string, v fr.Element) (num.AllocatedNum, error) {
		sys.Push(name)
		defer sys.Pop()
		return num.Alloc(sys, v)
	}
	commRLast, err := alloc("comm_r_last", s.CommRLast)
	if err != nil {
		return err
	}
	commC, err := alloc("comm_c", s.CommC)
	if err != nil {
		return err
	}
	commR, err := alloc("comm_r", s.CommR)
	if err != nil {
		return err
	}
	sys.Push("comm_r_input")
	err = commR.Inputize(sys)
	sys.Pop()
	if err != nil {
		return err
	}
	sys.Push("H_comm_c_comm_r_last")
	h, err := poseidon.HashCircuit(sys, []num.AllocatedNum{commC, commRLast}, poseidon.MustMerkle(2))
	sys.Pop()
	if err != nil {
		return err
	}
	sys.Enforce("enforce_comm_c_comm_r_last_hash_comm_r", commR.LC(), cs.LCOf(cs.One), h.LC())
	for j := 0; j < cfg.Challenges; j++ {
		pc := &por.Circuit{Hasher: por.PoseidonHasher{}, Shape: shape, BaseLevels: levels,
			Root: por.Value{Var: &commRLast}, Private: true}
		if c.Sectors != nil {
			pc.Leaf = por.Value{Val: s.Leafs[j]}
			pc.Path = s.Paths[j]
		}
		sys.PushIndexed("challenge_inclusion_", j)
		err := pc.Synthesize(sys)
		sys.Pop()
		if err != nil {
			return fmt.Errorf("challenge %d: %w", j, err)
		}
	}
	return nil
}

// SynthesizeParallel is cs.SynthesizeProving for a witness circuit with its sectors split into
// chunks synthesized concurrently (bellperson's synthesize_extendable): each chunk goes into its
// own assignment and the chunks are appended in order, so a, b, c, inputs, aux and densities
// are those of sequential synthesis. workers ≤ 0 means one chunk per sector.
func SynthesizeParallel(ctx context.Context, c *Circuit, workers int) (*cs.ProvingAssignment, error) {
	if err := c.validate(); err != nil {
		return nil, err
	}
	if c.Sectors == nil {
		return nil, fmt.Errorf("post circuit: parallel synthesis needs a witness: %w", cs.ErrAssignmentMissing)
	}
	n := c.Config.Sectors
	if workers <= 0 || workers > n {
		workers = n
	}
	per, err := sectorShape(ctx, c.Config)
	if err != nil {
		return nil, err
	}
	chunk := (n + workers - 1) / workers
	type part struct {
		pa  *cs.ProvingAssignment
		err error
	}
	parts := make([]part, (n+chunk-1)/chunk)
	one := fr.One()
	var wg sync.WaitGroup
	for k := range parts {
		wg.Add(1)
		go func(k int) {
			defer wg.Done()
			lo, hi := k*chunk, min((k+1)*chunk, n)
			sub := &Circuit{Config: c.Config, Sectors: c.Sectors}
			m := hi - lo
			pa := cs.NewProvingAssignment(cs.Shape{NumInputs: 1 + m*per.NumInputs, NumAux: m * per.NumAux, NumConstraints: m * per.NumConstraints})
			if _, err := pa.AllocInputValue("ONE", &one); err != nil {
				parts[k].err = err
				return
			}
			for i := lo; i < hi; i++ {
				if err := ctx.Err(); err != nil {
					parts[k].err = err
					return
				}
				if err := sub.sector(pa, i); err != nil {
					parts[k].err = fmt.Errorf("sector %d: %w", i, err)
					return
				}
			}
			parts[k].pa = pa
		}(k)
	}
	wg.Wait()
	for _, p := range parts {
		if p.err != nil {
			return nil, fmt.Errorf("synthesizing post circuit: %w", p.err)
		}
	}
	main := cs.NewProvingAssignment(cs.Shape{NumInputs: 1 + n*per.NumInputs, NumAux: n * per.NumAux, NumConstraints: n*per.NumConstraints + 1 + n*per.NumInputs})
	if _, err := main.AllocInputValue("ONE", &one); err != nil {
		return nil, err
	}
	for _, p := range parts {
		main.Extend(p.pa)
	}
	// bellperson's input_i · 0 = 0 rows, as cs.SynthesizeProving adds them.
	for i := 0; i < len(main.Input); i++ {
		main.Enforce("", cs.LCOf(cs.InputVariable(i)), nil, nil)
	}
	return main, nil
}

// sectorShapes caches the size of one sector's block per configuration.
var sectorShapes sync.Map // Config → cs.Shape

// sectorShape is what one sector adds to the system: its inputs, aux variables and constraints
// (without bellperson's input rows), counted once per configuration on the blank circuit.
func sectorShape(ctx context.Context, cfg Config) (cs.Shape, error) {
	one := cfg
	one.Sectors = 1
	if s, ok := sectorShapes.Load(one); ok {
		return s.(cs.Shape), nil
	}
	sys, err := cs.SynthesizeShape(ctx, Blank(one))
	if err != nil {
		return cs.Shape{}, err
	}
	s := sys.Shape()
	per := cs.Shape{NumInputs: s.NumInputs - 1, NumAux: s.NumAux, NumConstraints: s.NumConstraints - s.NumInputs}
	sectorShapes.Store(one, per)
	return per, nil
}

// Shape is the size of the circuit of cfg (ONE and bellperson's input rows included), the
// capacity to give cs.SynthesizeProving.
func (cfg Config) Shape(ctx context.Context) (cs.Shape, error) {
	per, err := sectorShape(ctx, cfg)
	if err != nil {
		return per, err
	}
	n := cfg.Sectors
	in := 1 + n*per.NumInputs
	return cs.Shape{NumInputs: in, NumAux: n * per.NumAux, NumConstraints: n*per.NumConstraints + in}, nil
}

// Blank returns the blank circuit of proof type p (for parameter generation and circuit info).
func (p *Proof) Blank() *Circuit { return Blank(p.Config()) }
