// Package circuit is the SDR PoRep partition circuit (rust-fil-proofs' StackedCircuit) on snarkd's
// constraint system and gadgets, with the same variables, constraints, order and namespaces, in
// witness mode from a C1 output's vanilla proofs and in blank mode from the public parameters.
package circuit

import (
	"fmt"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/snarkd/snarkd/cs"
	"github.com/snarkd/snarkd/filecoin/prooftypes"
	"github.com/snarkd/snarkd/gadgets/boolean"
	"github.com/snarkd/snarkd/gadgets/core"
	"github.com/snarkd/snarkd/gadgets/merkle"
	"github.com/snarkd/snarkd/gadgets/multipack"
	"github.com/snarkd/snarkd/gadgets/num"
	"github.com/snarkd/snarkd/gadgets/por"
	"github.com/snarkd/snarkd/gadgets/poseidon"
	"github.com/snarkd/snarkd/gadgets/sha256"
	"github.com/snarkd/snarkd/gadgets/u32"
)

// Config is the shape of a partition circuit; blank synthesis needs nothing else.
type Config struct {
	Nodes      uint64               // sector nodes (tree D and tree R/C leaves)
	Layers     int                  // SDR layers (column height)
	Challenges int                  // challenges per partition
	Tree       prooftypes.TreeShape // tree R and tree C shape
}

// ConfigOf returns the circuit shape of a seal proof type.
func ConfigOf(p *prooftypes.SealProof) Config {
	return Config{Nodes: p.Nodes(), Layers: p.Layers, Challenges: p.ChallengesPerPartition, Tree: p.Tree}
}

// PublicInputs is the number of public inputs, ONE included.
func (c Config) PublicInputs() int { return 4 + 18*c.Challenges }

func (c Config) validate() (dLevels, rLevels int, err error) {
	if c.Layers < 1 || c.Challenges < 1 {
		return 0, 0, fmt.Errorf("circuit: %d layers, %d challenges", c.Layers, c.Challenges)
	}
	if c.Layers != 2 && c.Layers != 11 {
		return 0, 0, fmt.Errorf("circuit: column hash of %d layers is not defined (2 or 11)", c.Layers)
	}
	if dLevels, err = (prooftypes.TreeShape{Base: 2}).BaseLevels(c.Nodes); err != nil {
		return 0, 0, fmt.Errorf("circuit: tree D: %w", err)
	}
	if rLevels, err = c.Tree.BaseLevels(c.Nodes); err != nil {
		return 0, 0, fmt.Errorf("circuit: tree R: %w", err)
	}
	return dLevels, rLevels, nil
}

// Column is one column opening: its labels (rows[layer-1]) and its tree-C path.
type Column struct {
	Rows []fr.Element
	Path []merkle.PathElement
}

// Challenge is the witness of one challenged node.
type Challenge struct {
	Challenge     uint64
	DataLeaf      fr.Element
	CommDPath     []merkle.PathElement
	CommRLastPath []merkle.PathElement
	CommCPath     []merkle.PathElement // tree-C path of the challenged node's column
	DRGParents    []Column
	ExpParents    []Column
}

// Witness is everything a partition proves; nil in blank mode.
type Witness struct {
	ReplicaID, CommD, CommR, CommRLast, CommC fr.Element
	Challenges                                []Challenge
}

// Circuit is one partition of the SDR PoRep.
type Circuit struct {
	Config  Config
	Witness *Witness
}

// Blank returns the blank circuit of a configuration (for shapes, densities and key generation).
func Blank(cfg Config) *Circuit { return &Circuit{Config: cfg} }

func shape(t prooftypes.TreeShape) merkle.Shape {
	return merkle.Shape{Base: t.Base, Sub: t.Sub, Top: t.Top}
}

// Synthesize implements cs.Circuit.
func (c *Circuit) Synthesize(sys cs.ConstraintSystem) error {
	s, err := c.prefix(sys)
	if err != nil {
		return err
	}
	for i := 0; i < c.Config.Challenges; i++ {
		if err := c.block(s, sys, i); err != nil {
			return err
		}
	}
	return nil
}

// block synthesizes challenge i, which only reads the variables of the prefix.
func (c *Circuit) block(s *synth, sys cs.ConstraintSystem, i int) error {
	var ch *Challenge
	if c.Witness != nil {
		ch = &c.Witness.Challenges[i]
	}
	b := *s
	b.sys = sys
	sys.PushIndexed("challenge_", i)
	err := b.challenge(ch)
	sys.Pop()
	if err != nil {
		return fmt.Errorf("challenge %d: %w", i, err)
	}
	return nil
}

// prefix synthesizes everything before the per-challenge blocks: replica_id (input and bits),
// comm_d, comm_r (inputs), comm_r_last, comm_c and comm_r = Poseidon(comm_c, comm_r_last).
func (c *Circuit) prefix(sys cs.ConstraintSystem) (*synth, error) {
	dLevels, rLevels, err := c.Config.validate()
	if err != nil {
		return nil, err
	}
	w := c.Witness
	if sys.WitnessMode() && w == nil {
		return nil, fmt.Errorf("circuit: witness-mode synthesis without a witness: %w", cs.ErrAssignmentMissing)
	}
	if w == nil {
		w = &Witness{}
	} else if len(w.Challenges) != c.Config.Challenges {
		return nil, fmt.Errorf("circuit: %d challenge witnesses for %d challenges", len(w.Challenges), c.Config.Challenges)
	}
	alloc := func(name string, v fr.Element) (num.AllocatedNum, error) {
		sys.Push(name)
		defer sys.Pop()
		return num.Alloc(sys, v)
	}
	inputize := func(name string, a num.AllocatedNum) error {
		sys.Push(name)
		defer sys.Pop()
		return a.Inputize(sys)
	}

	replicaID, err := alloc("replica_id", w.ReplicaID)
	if err != nil {
		return nil, err
	}
	if err := inputize("replica_id_input", replicaID); err != nil {
		return nil, err
	}
	sys.Push("replica_id_bits")
	ridBits, err := replicaID.ToBitsLE(sys)
	sys.Pop()
	if err != nil {
		return nil, err
	}
	ridBits = core.ReverseBitNumbering(ridBits)

	commD, err := alloc("comm_d", w.CommD)
	if err != nil {
		return nil, err
	}
	if err := inputize("comm_d_input", commD); err != nil {
		return nil, err
	}
	commR, err := alloc("comm_r", w.CommR)
	if err != nil {
		return nil, err
	}
	if err := inputize("comm_r_input", commR); err != nil {
		return nil, err
	}
	commRLast, err := alloc("comm_r_last", w.CommRLast)
	if err != nil {
		return nil, err
	}
	commC, err := alloc("comm_c", w.CommC)
	if err != nil {
		return nil, err
	}
	p2, err := poseidon.New(2, poseidon.Standard, poseidon.HashType{Kind: poseidon.MerkleTree})
	if err != nil {
		return nil, err
	}
	sys.Push("H_comm_c_comm_r_last")
	h, err := poseidon.HashCircuit(sys, []num.AllocatedNum{commC, commRLast}, p2)
	sys.Pop()
	if err != nil {
		return nil, err
	}
	core.Equal(sys, "enforce comm_r = H(comm_c || comm_r_last)", commR, h)

	s := &synth{sys: sys, cfg: c.Config, dLevels: dLevels, rLevels: rLevels, ridBits: ridBits,
		commD: commD, commC: commC, commRLast: commRLast}
	if s.colConsts, err = poseidon.New(c.Config.Layers, poseidon.Standard, poseidon.HashType{Kind: poseidon.MerkleTree}); err != nil {
		return nil, err
	}
	return s, nil
}

type synth struct {
	sys                     cs.ConstraintSystem
	cfg                     Config
	dLevels, rLevels        int
	ridBits                 []boolean.Boolean
	commD, commC, commRLast num.AllocatedNum
	colConsts               *poseidon.Constants
}

func (s *synth) inclusion(name string, h por.Hasher, sh merkle.Shape, levels int, path []merkle.PathElement, root, leaf num.AllocatedNum) error {
	s.sys.Push(name)
	defer s.sys.Pop()
	pc := &por.Circuit{Hasher: h, Shape: sh, BaseLevels: levels, Leaf: por.Value{Var: &leaf}, Path: path, Root: por.Value{Var: &root}, Private: true}
	return pc.Synthesize(s.sys)
}

// column allocates a parent column ("<prefix>_num/column/column_num_row_i"), hashes it and
// proves its inclusion in tree C.
func (s *synth) column(prefix string, col *Column) ([]num.AllocatedNum, error) {
	sys := s.sys
	rows := make([]num.AllocatedNum, s.cfg.Layers)
	sys.Push(prefix + "_num")
	sys.Push("column")
	for i := range rows {
		var v fr.Element
		if col != nil {
			v = col.Rows[i]
		}
		sys.PushIndexed("column_num_row_", i)
		a, err := num.Alloc(sys, v)
		sys.Pop()
		if err != nil {
			sys.Pop()
			sys.Pop()
			return nil, err
		}
		rows[i] = a
	}
	sys.Pop()
	sys.Pop()
	sys.Push(prefix + "_constraint")
	h, err := poseidon.HashCircuit(sys, rows, s.colConsts)
	sys.Pop()
	if err != nil {
		return nil, err
	}
	var path []merkle.PathElement
	if col != nil {
		path = col.Path
	}
	if err := s.inclusion(prefix+"_inclusion", por.PoseidonHasher{}, shape(s.cfg.Tree), s.rLevels, path, s.commC, h); err != nil {
		return nil, err
	}
	return rows, nil
}

func (s *synth) challenge(ch *Challenge) error {
	sys := s.sys
	if ch == nil {
		ch = &Challenge{}
	} else if len(ch.DRGParents) != prooftypes.BaseDegree || len(ch.ExpParents) != prooftypes.ExpansionDegree {
		return fmt.Errorf("%d DRG and %d expander parent columns", len(ch.DRGParents), len(ch.ExpParents))
	}
	witness := sys.WitnessMode()
	sys.Push("data_leaf")
	dataLeaf, err := num.Alloc(sys, ch.DataLeaf)
	sys.Pop()
	if err != nil {
		return err
	}
	if err := s.inclusion("comm_d_inclusion", por.Sha256Hasher{}, merkle.Shape{Base: 2}, s.dLevels, ch.CommDPath, s.commD, dataLeaf); err != nil {
		return err
	}
	colOf := func(cols []Column, i int) *Column {
		if !witness || cols == nil {
			return nil
		}
		return &cols[i]
	}
	drg := make([][]num.AllocatedNum, prooftypes.BaseDegree)
	for i := range drg {
		if drg[i], err = s.column(fmt.Sprintf("drg_parent_%d", i), colOf(ch.DRGParents, i)); err != nil {
			return err
		}
	}
	exp := make([][]num.AllocatedNum, prooftypes.ExpansionDegree)
	for i := range exp {
		if exp[i], err = s.column(fmt.Sprintf("exp_parent_%d", i), colOf(ch.ExpParents, i)); err != nil {
			return err
		}
	}

	sys.Push("challenge")
	challenge, err := core.AllocU64(sys, ch.Challenge)
	sys.Pop()
	if err != nil {
		return err
	}
	sys.Push("challenge input")
	err = challenge.PackIntoInput(sys)
	sys.Pop()
	if err != nil {
		return err
	}

	labels := make([]num.AllocatedNum, s.cfg.Layers)
	for layer := 1; layer <= s.cfg.Layers; layer++ {
		sys.PushIndexed("labeling_", layer)
		label, err := s.label(layer, drg, exp, challenge)
		sys.Pop()
		if err != nil {
			return fmt.Errorf("labeling layer %d: %w", layer, err)
		}
		labels[layer-1] = label
	}

	sys.Push("encode_node")
	encoded, err := core.Encode(sys, labels[s.cfg.Layers-1], dataLeaf)
	sys.Pop()
	if err != nil {
		return err
	}
	if err := s.inclusion("comm_r_last_data_inclusion", por.PoseidonHasher{}, shape(s.cfg.Tree), s.rLevels, ch.CommRLastPath, s.commRLast, encoded); err != nil {
		return err
	}
	sys.Push("c_x_column_hash")
	colHash, err := poseidon.HashCircuit(sys, labels, s.colConsts)
	sys.Pop()
	if err != nil {
		return err
	}
	return s.inclusion("c_x_inclusion", por.PoseidonHasher{}, shape(s.cfg.Tree), s.rLevels, ch.CommCPath, s.commC, colHash)
}

// label recomputes one layer's label of the challenged node from its parents' column values.
func (s *synth) label(layer int, drg, exp [][]num.AllocatedNum, challenge core.UInt64) (num.AllocatedNum, error) {
	sys := s.sys
	parents := make([][]boolean.Boolean, 0, prooftypes.Degree)
	bitsOf := func(kind string, a num.AllocatedNum) error {
		sys.Push(fmt.Sprintf("%s_parent_%d_bits", kind, len(parents)))
		b, err := a.ToBitsLE(sys)
		sys.Pop()
		if err != nil {
			return err
		}
		parents = append(parents, core.ReverseBitNumbering(b))
		return nil
	}
	for _, col := range drg {
		if err := bitsOf("drg", col[layer-1]); err != nil {
			return num.AllocatedNum{}, err
		}
	}
	if layer > 1 {
		for _, col := range exp {
			if err := bitsOf("exp", col[layer-2]); err != nil {
				return num.AllocatedNum{}, err
			}
		}
	}
	expanded := make([][]boolean.Boolean, 0, prooftypes.TotalParents)
	for i := 0; i < prooftypes.TotalParents; i++ {
		expanded = append(expanded, parents[i%len(parents)])
	}

	sys.Push("create_label")
	defer sys.Pop()
	return CreateLabel(sys, s.ridBits, expanded, uint32(layer), challenge)
}

// CreateLabel is create_label_circuit: SHA-256 over replica_id (padded to 256 bits) ‖
// u32be(layer) ‖ u64be(node) (padded to 512 bits) ‖ the 37 parents (each padded to 256 bits),
// then the first 254 bits of the digest (bit-renumbered) packed into one element. Bits are in
// SHA-256 (big-endian within bytes) order.
func CreateLabel(sys cs.ConstraintSystem, replicaID []boolean.Boolean, parents [][]boolean.Boolean, layer uint32, node core.UInt64) (num.AllocatedNum, error) {
	if len(replicaID) < 32 || len(replicaID) > 256 {
		return num.AllocatedNum{}, fmt.Errorf("circuit: replica id of %d bits", len(replicaID))
	}
	if len(parents) != prooftypes.TotalParents {
		return num.AllocatedNum{}, fmt.Errorf("circuit: %d parents, want %d", len(parents), prooftypes.TotalParents)
	}
	pre := make([]boolean.Boolean, 0, (2+prooftypes.TotalParents)*256)
	pre = append(pre, replicaID...)
	for len(pre) < 256 {
		pre = append(pre, boolean.Constant(false))
	}
	pre = append(pre, u32.Constant(layer).BitsBE()...)
	pre = append(pre, node.BitsBE()...)
	for len(pre) < 512 {
		pre = append(pre, boolean.Constant(false))
	}
	for _, p := range parents {
		pre = append(pre, p...)
		for len(pre)%256 != 0 {
			pre = append(pre, boolean.Constant(false))
		}
	}
	sys.Push("hash")
	digest, err := sha256.Hash(sys, pre)
	sys.Pop()
	if err != nil {
		return num.AllocatedNum{}, err
	}
	bits := core.ReverseBitNumbering(digest)[:multipack.Capacity]
	sys.Push("result_num")
	defer sys.Pop()
	return multipack.PackBits(sys, bits)
}
