package update

import (
	"fmt"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/snarkd/snarkd/cs"
	"github.com/snarkd/snarkd/gadgets/boolean"
	gmerkle "github.com/snarkd/snarkd/gadgets/merkle"
	"github.com/snarkd/snarkd/gadgets/multipack"
	"github.com/snarkd/snarkd/gadgets/num"
	"github.com/snarkd/snarkd/gadgets/por"
	"github.com/snarkd/snarkd/gadgets/poseidon"
)

// ChallengeWitness is one challenge's openings: leaves and sibling lists (one list per tree
// level, leaf to root) in tree R old, tree D new and tree R new.
type ChallengeWitness struct {
	LeafROld, LeafDNew, LeafRNew fr.Element
	PathROld, PathDNew, PathRNew [][]fr.Element
}

// Witness is the private input of a partition circuit.
type Witness struct {
	CommC, RootROld, RootRNew fr.Element
	ApexLeafs                 []fr.Element // empty in the Poseidon variant
	Challenges                []ChallengeWitness
}

// Circuit is EmptySectorUpdateCircuit (or its Poseidon variant when Params.Poseidon). With
// Witness nil it is the blank circuit.
type Circuit struct {
	Params  *Params
	Inputs  PublicInputs
	Witness *Witness
}

// Blank returns the blank circuit of p.
func Blank(p *Params) *Circuit { return &Circuit{Params: p} }

func allocNum(sys cs.ConstraintSystem, name string, v fr.Element) (num.AllocatedNum, error) {
	sys.Push(name)
	defer sys.Pop()
	return num.Alloc(sys, v)
}

func allocInput(sys cs.ConstraintSystem, name string, v fr.Element) (num.AllocatedNum, error) {
	a, err := allocNum(sys, name, v)
	if err != nil {
		return a, err
	}
	sys.Push(name + "_input")
	defer sys.Pop()
	return a, a.Inputize(sys)
}

func poseidonNS(sys cs.ConstraintSystem, name string, c *poseidon.Constants, xs ...num.AllocatedNum) (num.AllocatedNum, error) {
	sys.Push(name)
	defer sys.Pop()
	return poseidon.HashCircuit(sys, xs, c)
}

// sha256Hash2 is Sha256Hasher's hash2_circuit: both elements to 255 little-endian bits ("a_bits",
// "b_bits"), each byte's bits reversed, SHA-256, then the first 254 digest bits packed.
func sha256Hash2(sys cs.ConstraintSystem, name string, a, b num.AllocatedNum) (num.AllocatedNum, error) {
	sys.Push(name)
	defer sys.Pop()
	pre := make([]boolean.Boolean, 0, 512)
	for i, x := range []num.AllocatedNum{a, b} {
		sys.Push([]string{"a_bits", "b_bits"}[i])
		bits, err := x.ToBitsLE(sys)
		sys.Pop()
		if err != nil {
			return num.AllocatedNum{}, err
		}
		for len(bits)%8 != 0 {
			bits = append(bits, boolean.Constant(false))
		}
		for j := 0; j < len(bits); j += 8 {
			for k := 7; k >= 0; k-- {
				pre = append(pre, bits[j+k])
			}
		}
	}
	return por.HashBitsCircuit(sys, pre)
}

// bitsLE returns the low n bits of v.
func bitsLE(v *fr.Element, n int) []bool {
	b := v.Bits()
	out := make([]bool, n)
	for i := range out {
		out[i] = b[i/64]>>(uint(i)%64)&1 == 1
	}
	return out
}

// decomposeInput allocates the named public input, its n low bits ("<bitName>_i") and the
// binary decomposition constraint (the value must have no higher bits).
func decomposeInput(sys cs.ConstraintSystem, name, bitName string, v fr.Element, n int) ([]boolean.AllocatedBit, error) {
	a, err := allocNum(sys, name, v)
	if err != nil {
		return nil, err
	}
	sys.Push(name + " (public input)")
	err = a.Inputize(sys)
	sys.Pop()
	if err != nil {
		return nil, err
	}
	vals := bitsLE(&v, n)
	bits := make([]boolean.AllocatedBit, n)
	lc := cs.NewLC(n)
	pow := fr.One()
	for i := range bits {
		sys.PushIndexed(bitName+"_", i)
		bits[i], err = boolean.Alloc(sys, vals[i])
		sys.Pop()
		if err != nil {
			return nil, err
		}
		lc = lc.AddTerm(&pow, bits[i].Var)
		pow.Double(&pow)
	}
	sys.Enforce(name+" binary decomp", lc, cs.LCOf(cs.One), a.LC())
	return bits, nil
}

func boolsOf(bits []boolean.AllocatedBit) []boolean.Boolean {
	out := make([]boolean.Boolean, len(bits))
	for i, b := range bits {
		out[i] = boolean.Is(b)
	}
	return out
}

// genChallengeBits is gen_challenge_bits: digests Poseidon_{2^40}(comm_r_new, k·digests + j),
// each decomposed into 255 bits and cut into challenges of bitsPer bits.
func genChallengeBits(sys cs.ConstraintSystem, commRNew, partition num.AllocatedNum, challenges, bitsPer int) ([][]boolean.AllocatedBit, error) {
	sys.Push("gen_challenge_bits")
	defer sys.Pop()
	per := frCapacity / bitsPer
	digests := (challenges + per - 1) / per
	out := make([][]boolean.AllocatedBit, 0, challenges)
	dpp := fr.NewElement(uint64(digests))
	for j := 0; j < digests; j++ {
		var idx fr.Element
		jf := fr.NewElement(uint64(j))
		idx.Mul(&partition.Value, &dpp).Add(&idx, &jf)
		sys.PushIndexed("digest_index_", j)
		di, err := num.Alloc(sys, idx)
		sys.Pop()
		if err != nil {
			return nil, err
		}
		a := cs.NewLC(2).AddTerm(&dpp, partition.Var).AddTerm(&jf, cs.One)
		sys.Enforce(fmt.Sprintf("digest_index_%d == k * digests_per_partition + %d", j, j), a, cs.LCOf(cs.One), di.LC())
		d, err := poseidonNS(sys, fmt.Sprintf("digest_%d", j), genRandomness, commRNew, di)
		if err != nil {
			return nil, err
		}
		sys.Push(fmt.Sprintf("digest_%d_bits", j))
		bits, err := boolean.FieldIntoAllocatedBitsLE(sys, &d.Value)
		if err == nil {
			lc := cs.NewLC(len(bits))
			pow := fr.One()
			for _, b := range bits {
				lc = lc.AddTerm(&pow, b.Var)
				pow.Double(&pow)
			}
			sys.Enforce("binary decomp", lc, cs.LCOf(cs.One), d.LC())
		}
		sys.Pop()
		if err != nil {
			return nil, err
		}
		take := per
		if j == digests-1 {
			take = challenges - len(out)
		}
		for i := 0; i < take; i++ {
			out = append(out, bits[i*bitsPer:(i+1)*bitsPer])
		}
	}
	return out, nil
}

// challengeHighBits is get_challenge_high_bits: the top h bits of the challenge for the h that
// h_select picks.
func challengeHighBits(sys cs.ConstraintSystem, name string, cBits, hSelect []boolean.AllocatedBit, hs [6]int) (num.AllocatedNum, error) {
	sys.Push(name)
	defer sys.Pop()
	cb := boolsOf(cBits)
	ors := make([]num.AllocatedNum, len(hs))
	var sum fr.Element
	for k, h := range hs {
		sys.Push(fmt.Sprintf("c_high (h=%d, k=%d)", h, k))
		high, err := multipack.PackBits(sys, cb[len(cb)-h:])
		sys.Pop()
		if err != nil {
			return num.AllocatedNum{}, err
		}
		var v fr.Element
		if hSelect[k].Value {
			v = high.Value
		}
		if ors[k], err = allocNum(sys, fmt.Sprintf("c_high_or_zero (h=%d, k=%d)", h, k), v); err != nil {
			return num.AllocatedNum{}, err
		}
		sys.Enforce(fmt.Sprintf("c_high_or_zero == c_high * h_select_bit (h=%d, k=%d)", h, k), high.LC(), cs.LCOf(hSelect[k].Var), ors[k].LC())
		sum.Add(&sum, &v)
	}
	sel, err := allocNum(sys, "c_high_selected", sum)
	if err != nil {
		return sel, err
	}
	lc := cs.NewLC(len(ors))
	for _, o := range ors {
		lc = lc.Add(o.Var)
	}
	sys.Enforce("c_high_selected == dot(c_highs, h_select_bits)", lc, cs.LCOf(cs.One), sel.LC())
	return sel, nil
}

// labelRNew is label_r_new: leaf_r_new = leaf_r_old + leaf_d_new · rho.
func labelRNew(sys cs.ConstraintSystem, name string, old, d, rho num.AllocatedNum) (num.AllocatedNum, error) {
	sys.Push(name)
	defer sys.Pop()
	sys.Push("label_d_new * rho")
	dr, err := d.Mul(sys, rho)
	sys.Pop()
	if err != nil {
		return dr, err
	}
	var v fr.Element
	v.Add(&old.Value, &dr.Value)
	n, err := allocNum(sys, "label_r_new", v)
	if err != nil {
		return n, err
	}
	sys.Enforce("label_r_new == label_r_old + label_d_new * rho", old.LC().Add(dr.Var), cs.LCOf(cs.One), n.LC())
	return n, nil
}

// allocPath allocates the siblings of each level under "<what> sibling (c_index=…, tree_row=…,
// sibling_index=…)".
func allocPath(sys cs.ConstraintSystem, what string, c int, path [][]fr.Element) ([][]num.AllocatedNum, error) {
	out := make([][]num.AllocatedNum, len(path))
	for row, sibs := range path {
		out[row] = make([]num.AllocatedNum, len(sibs))
		for i, s := range sibs {
			a, err := allocNum(sys, fmt.Sprintf("%s sibling (c_index=%d, tree_row=%d, sibling_index=%d)", what, c, row, i), s)
			if err != nil {
				return nil, err
			}
			out[row][i] = a
		}
	}
	return out, nil
}

// blankPath is a path of zeros with the given arities per level.
func blankPath(arities []int) [][]fr.Element {
	out := make([][]fr.Element, len(arities))
	for i, a := range arities {
		out[i] = make([]fr.Element, a-1)
	}
	return out
}

// treeRArities lists the arity of every tree-R level, leaf to root.
func (p *Params) treeRArities() []int {
	t := p.TreeR()
	levels, err := t.BaseLevels(p.SectorNodes)
	if err != nil {
		panic(err)
	}
	var out []int
	for i := 0; i < levels; i++ {
		out = append(out, t.Base)
	}
	if t.Sub > 0 {
		out = append(out, t.Sub)
	}
	if t.Top > 0 {
		out = append(out, t.Top)
	}
	return out
}

func (p *Params) binaryArities() []int {
	out := make([]int, p.ChallengeBitLen)
	for i := range out {
		out[i] = 2
	}
	return out
}

// blankWitness is PrivateInputs::empty.
func (p *Params) blankWitness() *Witness {
	w := &Witness{ApexLeafs: make([]fr.Element, 0, p.ApexLeafCount)}
	if !p.Poseidon {
		w.ApexLeafs = w.ApexLeafs[:p.ApexLeafCount]
	}
	r := blankPath(p.treeRArities())
	d := blankPath(p.binaryArities())
	if p.Poseidon {
		d = r
	}
	w.Challenges = make([]ChallengeWitness, p.ChallengeCount)
	for i := range w.Challenges {
		w.Challenges[i] = ChallengeWitness{PathROld: r, PathDNew: d, PathRNew: r}
	}
	return w
}

func (c *Circuit) check(w *Witness) error {
	p := c.Params
	if len(w.Challenges) != p.ChallengeCount {
		return fmt.Errorf("update circuit: %d challenge proofs, want %d", len(w.Challenges), p.ChallengeCount)
	}
	if !p.Poseidon && len(w.ApexLeafs) != p.ApexLeafCount {
		return fmt.Errorf("update circuit: %d apex leaves, want %d", len(w.ApexLeafs), p.ApexLeafCount)
	}
	ra, da := p.treeRArities(), p.binaryArities()
	if p.Poseidon {
		da = ra
	}
	shapeOK := func(path [][]fr.Element, ar []int) bool {
		if len(path) != len(ar) {
			return false
		}
		for i := range path {
			if len(path[i]) != ar[i]-1 {
				return false
			}
		}
		return true
	}
	for i := range w.Challenges {
		ch := &w.Challenges[i]
		if !shapeOK(ch.PathROld, ra) || !shapeOK(ch.PathRNew, ra) || !shapeOK(ch.PathDNew, da) {
			return fmt.Errorf("update circuit: challenge %d: paths do not fit the trees", i)
		}
	}
	if !p.Poseidon && p.PartitionBitLen > 0 {
		top := w.Challenges[0].PathDNew[p.ChallengeBitLen-p.PartitionBitLen:]
		for i := range w.Challenges[1:] {
			other := w.Challenges[i+1].PathDNew[p.ChallengeBitLen-p.PartitionBitLen:]
			for l := range top {
				if !top[l][0].Equal(&other[l][0]) {
					return fmt.Errorf("update circuit: challenge %d: partition path differs from challenge 0's", i+1)
				}
			}
		}
	}
	return nil
}

// Synthesize implements cs.Circuit.
func (c *Circuit) Synthesize(sys cs.ConstraintSystem) error {
	s, err := c.prefix(sys)
	if err != nil {
		return err
	}
	for ci := range s.gen {
		if err := c.block(sys, s, ci); err != nil {
			return err
		}
	}
	return nil
}

// state is what the per-challenge blocks read from the prefix.
type state struct {
	w                               *Witness
	partBits, hBits                 []boolean.AllocatedBit
	gen                             [][]boolean.AllocatedBit
	phi, rootROld, rootRNew, commDN num.AllocatedNum
	apex                            []num.AllocatedNum
}

// prefix synthesizes everything before the challenge blocks: public inputs, phi, comm_r
// checks, the apex PoR and the challenge bits.
func (c *Circuit) prefix(sys cs.ConstraintSystem) (*state, error) {
	p := c.Params
	w := c.Witness
	if w == nil {
		if sys.WitnessMode() {
			return nil, fmt.Errorf("update circuit: witness synthesis of a blank circuit: %w", cs.ErrAssignmentMissing)
		}
		w = p.blankWitness()
	}
	if err := c.check(w); err != nil {
		return nil, err
	}
	var sel fr.Element
	if sys.WitnessMode() {
		v, err := p.Vector(&c.Inputs)
		if err != nil {
			return nil, fmt.Errorf("update circuit: %w", err)
		}
		sel = v[0]
	}
	name, bitName := "k_and_h_select", "k_and_h_select_bit"
	if p.Poseidon {
		name, bitName = "h_select", "h_select_bit"
	}
	selBits, err := decomposeInput(sys, name, bitName, sel, p.PartitionBitLen+len(p.Hs()))
	if err != nil {
		return nil, err
	}
	partBits, hBits := selBits[:p.PartitionBitLen], selBits[p.PartitionBitLen:]
	var partition num.AllocatedNum
	if !p.Poseidon {
		sys.Push("pack partition bits")
		partition, err = multipack.PackBits(sys, boolsOf(partBits))
		sys.Pop()
		if err != nil {
			return nil, err
		}
	}
	commROld, err := allocInput(sys, "comm_r_old", c.Inputs.CommROld)
	if err != nil {
		return nil, err
	}
	commDNew, err := allocInput(sys, "comm_d_new", c.Inputs.CommDNew)
	if err != nil {
		return nil, err
	}
	commRNew, err := allocInput(sys, "comm_r_new", c.Inputs.CommRNew)
	if err != nil {
		return nil, err
	}
	phi, err := poseidonNS(sys, "phi", genRandomness, commDNew, commROld)
	if err != nil {
		return nil, err
	}
	commC, err := allocNum(sys, "comm_c", w.CommC)
	if err != nil {
		return nil, err
	}
	rootROld, err := allocNum(sys, "root_r_old", w.RootROld)
	if err != nil {
		return nil, err
	}
	rootRNew, err := allocNum(sys, "root_r_new", w.RootRNew)
	if err != nil {
		return nil, err
	}
	var apex []num.AllocatedNum
	var partPath [][]num.AllocatedNum
	if !p.Poseidon {
		for i, l := range w.ApexLeafs {
			a, err := allocNum(sys, fmt.Sprintf("apex_leaf_%d", i), l)
			if err != nil {
				return nil, err
			}
			apex = append(apex, a)
		}
		for i, sib := range w.Challenges[0].PathDNew[p.ChallengeBitLen-p.PartitionBitLen:] {
			a, err := allocNum(sys, fmt.Sprintf("partition_path_sibling_%d", i), sib[0])
			if err != nil {
				return nil, err
			}
			partPath = append(partPath, []num.AllocatedNum{a})
		}
	}
	merkle2 := poseidon.MustMerkle(2)
	for _, x := range []struct {
		name       string
		root, comm num.AllocatedNum
	}{{"comm_r_old", rootROld, commROld}, {"comm_r_new", rootRNew, commRNew}} {
		calc, err := poseidonNS(sys, x.name+"_calc", merkle2, commC, x.root)
		if err != nil {
			return nil, err
		}
		sys.Enforce(fmt.Sprintf("enforce %s_calc == %s", x.name, x.name), calc.LC(), cs.LCOf(cs.One), x.comm.LC())
	}
	if p.Poseidon {
		sys.Push("gen_challenge_bits partition zero")
		partition, err = num.Alloc(sys, fr.Element{})
		sys.Pop()
		if err != nil {
			return nil, err
		}
	} else if err := apexPoR(sys, apex, partBits, partPath, commDNew); err != nil {
		return nil, err
	}
	gen, err := genChallengeBits(sys, commRNew, partition, p.ChallengeCount, p.ChallengeBitLen-p.PartitionBitLen)
	if err != nil {
		return nil, err
	}
	return &state{w: w, partBits: partBits, hBits: hBits, gen: gen, phi: phi, rootROld: rootROld, rootRNew: rootRNew, commDN: commDNew, apex: apex}, nil
}

// block synthesizes challenge ci. Blocks read only the prefix's variables and all have the same
// shape.
func (c *Circuit) block(sys cs.ConstraintSystem, s *state, ci int) error {
	p := c.Params
	hs := p.Hs()
	w, partBits, hBits, phi, rootROld, rootRNew, commDNew, apex := s.w, s.partBits, s.hBits, s.phi, s.rootROld, s.rootRNew, s.commDN, s.apex
	bits := s.gen[ci]
	rShape := gmerkle.Shape{Base: p.TreeR().Base, Sub: p.TreeR().Sub, Top: p.TreeR().Top}
	cBits := append(append([]boolean.AllocatedBit(nil), bits...), partBits...)
	high, err := challengeHighBits(sys, fmt.Sprintf("get_challenge_high_bits (c_index=%d)", ci), cBits, hBits, hs)
	if err != nil {
		return err
	}
	rho, err := poseidonNS(sys, fmt.Sprintf("rho (c_index=%d)", ci), genRandomness, phi, high)
	if err != nil {
		return err
	}
	cw := &w.Challenges[ci]
	leafROld, err := allocNum(sys, fmt.Sprintf("leaf_r_old (c_index=%d)", ci), cw.LeafROld)
	if err != nil {
		return err
	}
	leafDNew, err := allocNum(sys, fmt.Sprintf("leaf_d_new (c_index=%d)", ci), cw.LeafDNew)
	if err != nil {
		return err
	}
	leafRNew, err := labelRNew(sys, fmt.Sprintf("leaf_r_new (c_index=%d)", ci), leafROld, leafDNew, rho)
	if err != nil {
		return err
	}
	if sys.WitnessMode() && !leafRNew.Value.Equal(&cw.LeafRNew) {
		return fmt.Errorf("update circuit: challenge %d: leaf_r_new is not leaf_r_old + leaf_d_new·rho", ci)
	}
	for _, t := range []struct {
		what string
		path [][]fr.Element
		leaf num.AllocatedNum
		root num.AllocatedNum
	}{{"path_r_old", cw.PathROld, leafROld, rootROld}, {"path_r_new", cw.PathRNew, leafRNew, rootRNew}} {
		vals, err := allocPath(sys, t.what, ci, t.path)
		if err != nil {
			return err
		}
		sys.Push(fmt.Sprintf("por tree_r_%s (c_index=%d)", t.what[len(t.what)-3:], ci))
		err = por.NoChallengeInput(sys, por.PoseidonHasher{}, rShape, cBits, t.leaf, vals, t.root)
		sys.Pop()
		if err != nil {
			return fmt.Errorf("challenge %d: %s: %w", ci, t.what, err)
		}
	}
	if p.Poseidon {
		vals, err := allocPath(sys, "path_d_new", ci, cw.PathDNew)
		if err != nil {
			return err
		}
		sys.Push(fmt.Sprintf("por tree_d_new (c_index=%d)", ci))
		err = por.NoChallengeInput(sys, por.PoseidonHasher{}, rShape, cBits, leafDNew, vals, commDNew)
		sys.Pop()
		if err != nil {
			return err
		}
		return nil
	}
	start := p.ChallengeBitLen - p.PartitionBitLen - p.ApexLeafBitLen
	sys.Push(fmt.Sprintf("select_apex_leaf (c_index=%d)", ci))
	apexLeaf, err := por.Select(sys, apex, boolsOf(cBits[start:start+p.ApexLeafBitLen]))
	sys.Pop()
	if err != nil {
		return err
	}
	toApex := make([][]num.AllocatedNum, start)
	for row := 0; row < start; row++ {
		a, err := allocNum(sys, fmt.Sprintf("path_to_apex_leaf sibling (c_index=%d, tree_row=%d)", ci, row), cw.PathDNew[row][0])
		if err != nil {
			return err
		}
		toApex[row] = []num.AllocatedNum{a}
	}
	sys.Push(fmt.Sprintf("por to_apex_leaf (c_index=%d)", ci))
	err = por.NoChallengeInput(sys, por.Sha256Hasher{}, gmerkle.Shape{Base: 2}, cBits[:start], leafDNew, toApex, apexLeaf)
	sys.Pop()
	if err != nil {
		return err
	}
	return nil
}

// apexPoR is apex_por: hash the partition's apex leaves up to the apex root (binary SHA-256)
// and prove the root's inclusion in tree D under comm_d_new along the partition path.
func apexPoR(sys cs.ConstraintSystem, leaves []num.AllocatedNum, partBits []boolean.AllocatedBit, partPath [][]num.AllocatedNum, commD num.AllocatedNum) error {
	sys.Push("apex_gadget")
	defer sys.Pop()
	row := leaves
	for r := 0; len(row) > 1; r++ {
		next := make([]num.AllocatedNum, len(row)/2)
		for i := range next {
			h, err := sha256Hash2(sys, fmt.Sprintf("apex_tree generation hash (tree_row=%d, siblings=%d)", r, i), row[2*i], row[2*i+1])
			if err != nil {
				return err
			}
			next[i] = h
		}
		row = next
	}
	sys.Push("partition-tree por")
	defer sys.Pop()
	return por.NoChallengeInput(sys, por.Sha256Hasher{}, gmerkle.Shape{Base: 2}, partBits, row[0], partPath, commD)
}
