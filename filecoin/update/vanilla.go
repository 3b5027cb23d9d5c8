package update

import (
	"errors"
	"fmt"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/snarkd/snarkd/filecoin/c1"
	"github.com/snarkd/snarkd/filecoin/merkle"
	"github.com/snarkd/snarkd/filecoin/post/bincode"
	"github.com/snarkd/snarkd/filecoin/prooftypes"
)

// ErrInvalidVanilla is wrapped by every error of a partition proof that decodes but does not
// prove what it must.
var ErrInvalidVanilla = errors.New("invalid SnapDeals vanilla proof")

// ChallengeProof is one challenge's Merkle proofs in tree R old, tree D new and tree R new.
type ChallengeProof struct {
	ROld, DNew, RNew c1.MerkleProof
}

// PartitionProof is storage-proofs-update's PartitionProof (ApexLeafs is absent from the
// Poseidon variant's encoding).
type PartitionProof struct {
	CommC      c1.Domain
	ApexLeafs  []c1.Domain
	Challenges []ChallengeProof
}

func (p *Params) treeD() (prooftypes.TreeShape, int) {
	if p.Poseidon {
		levels, _ := p.TreeR().BaseLevels(p.SectorNodes)
		return p.TreeR(), levels
	}
	return prooftypes.TreeShape{Base: 2}, p.ChallengeBitLen
}

// DecodePartitionProof decodes and structurally validates one bincode partition proof (what
// GenerateUpdateVanillaProofs returns per partition): tree shapes, counts, canonical field
// elements, no trailing bytes. Verify checks what it proves.
func (p *Params) DecodePartitionProof(b []byte) (*PartitionProof, error) {
	r := bincode.NewReader(b)
	var pp PartitionProof
	var err error
	if pp.CommC, err = r.Domain("comm_c"); err != nil {
		return nil, err
	}
	if !p.Poseidon {
		n, err := r.Len("apex_leafs", 32)
		if err != nil {
			return nil, err
		}
		if n != p.ApexLeafCount {
			return nil, r.Errorf("apex_leafs", "%d apex leaves, want %d", n, p.ApexLeafCount)
		}
		pp.ApexLeafs = make([]c1.Domain, n)
		for i := range pp.ApexLeafs {
			if pp.ApexLeafs[i], err = r.Domain(fmt.Sprintf("apex_leafs[%d]", i)); err != nil {
				return nil, err
			}
		}
	}
	n, err := r.Len("challenge_proofs", 3*(4+64))
	if err != nil {
		return nil, err
	}
	if n != p.ChallengeCount {
		return nil, r.Errorf("challenge_proofs", "%d challenge proofs, want %d", n, p.ChallengeCount)
	}
	rLevels, _ := p.TreeR().BaseLevels(p.SectorNodes)
	dShape, dLevels := p.treeD()
	pp.Challenges = make([]ChallengeProof, n)
	for i := range pp.Challenges {
		f := fmt.Sprintf("challenge_proofs[%d]", i)
		c := &pp.Challenges[i]
		if c.ROld, err = r.MerkleProof(f+".proof_r_old", p.TreeR(), rLevels); err != nil {
			return nil, err
		}
		if c.DNew, err = r.MerkleProof(f+".proof_d_new", dShape, dLevels); err != nil {
			return nil, err
		}
		if c.RNew, err = r.MerkleProof(f+".proof_r_new", p.TreeR(), rLevels); err != nil {
			return nil, err
		}
	}
	if err := r.End("partition proof"); err != nil {
		return nil, err
	}
	return &pp, nil
}

// Encode writes the bincode form rust-fil-proofs serializes.
func (pp *PartitionProof) Encode(poseidon bool) ([]byte, error) {
	var w bincode.Writer
	w.Domain(pp.CommC)
	if !poseidon {
		w.U64(uint64(len(pp.ApexLeafs)))
		for _, l := range pp.ApexLeafs {
			w.Domain(l)
		}
	}
	w.U64(uint64(len(pp.Challenges)))
	for i := range pp.Challenges {
		for _, m := range []*c1.MerkleProof{&pp.Challenges[i].ROld, &pp.Challenges[i].DNew, &pp.Challenges[i].RNew} {
			if err := w.MerkleProof(m); err != nil {
				return nil, err
			}
		}
	}
	return w.B, nil
}

func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalidVanilla, fmt.Sprintf(format, args...))
}

// Verify checks a decoded partition proof against the public inputs as the circuit will: comm_r
// old/new from comm_c and the roots, each challenge's three Merkle proofs open the derived
// challenge, leaf_r_new = leaf_r_old + leaf_d_new·rho, and tree D's leaves lead through the apex
// leaves and the partition path to comm_d_new.
func (p *Params) Verify(pp *PartitionProof, in *PublicInputs) error {
	if _, err := p.Vector(in); err != nil {
		return err
	}
	if len(pp.Challenges) != p.ChallengeCount || (!p.Poseidon && len(pp.ApexLeafs) != p.ApexLeafCount) {
		return invalid("%d challenge proofs and %d apex leaves", len(pp.Challenges), len(pp.ApexLeafs))
	}
	commC := pp.CommC.MustElement()
	rootROld, rootRNew := pp.Challenges[0].ROld.Root, pp.Challenges[0].RNew.Root
	for _, x := range []struct {
		name string
		root c1.Domain
		comm fr.Element
	}{{"comm_r_old", rootROld, in.CommROld}, {"comm_r_new", rootRNew, in.CommRNew}} {
		r := x.root.MustElement()
		h, err := merkleHash2(commC, r)
		if err != nil {
			return err
		}
		if !h.Equal(&x.comm) {
			return invalid("Poseidon(comm_c, root) is not %s", x.name)
		}
	}
	challenges, err := p.Challenges(in.CommRNew, in.K)
	if err != nil {
		return err
	}
	phi := Phi(in.CommDNew, in.CommROld)
	commD := c1.DomainOf(&in.CommDNew)
	dShape, _ := p.treeD()
	dHash := merkle.Sha254
	if p.Poseidon {
		dHash = merkle.Poseidon
	}
	for i, c := range challenges {
		cp := &pp.Challenges[i]
		for _, m := range []struct {
			name  string
			proof *c1.MerkleProof
			shape prooftypes.TreeShape
			root  c1.Domain
			h     merkle.HashFunc
		}{{"tree R old", &cp.ROld, p.TreeR(), rootROld, merkle.Poseidon}, {"tree D new", &cp.DNew, dShape, commD, dHash}, {"tree R new", &cp.RNew, p.TreeR(), rootRNew, merkle.Poseidon}} {
			if got := bincode.PathIndex(m.proof, m.shape); got != c {
				return invalid("challenge %d: %s proof opens node %d, challenge is %d", i, m.name, got, c)
			}
			if m.proof.Root != m.root {
				return invalid("challenge %d: %s proof has another root", i, m.name)
			}
			if err := merkle.VerifyProof(m.proof, m.h); err != nil {
				return invalid("challenge %d: %s: %v", i, m.name, err)
			}
		}
		rho := Rho(phi, HighBits(c, p.ChallengeBitLen, in.H))
		var want fr.Element
		ld := cp.DNew.Leaf.MustElement()
		want.Mul(&ld, &rho)
		lo := cp.ROld.Leaf.MustElement()
		want.Add(&want, &lo)
		if got := cp.RNew.Leaf.MustElement(); !got.Equal(&want) {
			return invalid("challenge %d (node %d): new replica node is not old + data·rho", i, c)
		}
	}
	if !p.Poseidon {
		if err := p.verifyApex(pp, commD); err != nil {
			return err
		}
	}
	return nil
}

func merkleHash2(a, b fr.Element) (fr.Element, error) {
	d, err := merkle.Poseidon([]c1.Domain{c1.DomainOf(&a), c1.DomainOf(&b)})
	if err != nil {
		return fr.Element{}, err
	}
	return d.Element()
}

// verifyApex checks what apex_por and the per-challenge tree D PoR enforce: the apex leaves hash
// to a root that the (shared) partition path of challenge 0 takes to comm_d_new, and every
// challenge's tree D path reaches its apex leaf.
func (p *Params) verifyApex(pp *PartitionProof, commD c1.Domain) error {
	row := append([]c1.Domain(nil), pp.ApexLeafs...)
	for len(row) > 1 {
		next := make([]c1.Domain, len(row)/2)
		for i := range next {
			h, err := merkle.Sha254(row[2*i : 2*i+2])
			if err != nil {
				return err
			}
			next[i] = h
		}
		row = next
	}
	start := p.ChallengeBitLen - p.PartitionBitLen - p.ApexLeafBitLen
	top := pp.Challenges[0].DNew.Base[p.ChallengeBitLen-p.PartitionBitLen:]
	root, err := merkle.ComputeRoot(row[0], top, merkle.Sha254)
	if err != nil {
		return err
	}
	if root != commD {
		return invalid("apex leaves do not lead to comm_d_new")
	}
	for i := range pp.Challenges {
		path := pp.Challenges[i].DNew.Base
		for l := range top {
			if path[p.ChallengeBitLen-p.PartitionBitLen+l].Hashes[0] != top[l].Hashes[0] {
				return invalid("challenge %d: partition path differs from challenge 0's", i)
			}
		}
		node, err := merkle.ComputeRoot(pp.Challenges[i].DNew.Leaf, path[:start], merkle.Sha254)
		if err != nil {
			return err
		}
		idx := bincode.PathIndex(&pp.Challenges[i].DNew, prooftypes.TreeShape{Base: 2}) >> uint(start) & uint64(p.ApexLeafCount-1)
		if node != pp.ApexLeafs[idx] {
			return invalid("challenge %d: tree D path does not reach apex leaf %d", i, idx)
		}
	}
	return nil
}

func elems(ds []c1.Domain) []fr.Element {
	out := make([]fr.Element, len(ds))
	for i, d := range ds {
		out[i] = d.MustElement()
	}
	return out
}

func siblings(m *c1.MerkleProof) [][]fr.Element {
	levels := m.Levels()
	out := make([][]fr.Element, len(levels))
	for i, l := range levels {
		out[i] = elems(l.Hashes)
	}
	return out
}

// Partition decodes and verifies one partition's vanilla proof and returns the witness circuit
// and its public inputs (ONE excluded).
func (p *Params) Partition(b []byte, in *PublicInputs) (*Circuit, []fr.Element, error) {
	pp, err := p.DecodePartitionProof(b)
	if err != nil {
		return nil, nil, fmt.Errorf("partition %d vanilla proof: %w", in.K, err)
	}
	if err := p.Verify(pp, in); err != nil {
		return nil, nil, fmt.Errorf("partition %d: %w", in.K, err)
	}
	vec, err := p.Vector(in)
	if err != nil {
		return nil, nil, err
	}
	w := &Witness{CommC: pp.CommC.MustElement(), RootROld: pp.Challenges[0].ROld.Root.MustElement(),
		RootRNew: pp.Challenges[0].RNew.Root.MustElement(), ApexLeafs: elems(pp.ApexLeafs)}
	for i := range pp.Challenges {
		cp := &pp.Challenges[i]
		w.Challenges = append(w.Challenges, ChallengeWitness{
			LeafROld: cp.ROld.Leaf.MustElement(), LeafDNew: cp.DNew.Leaf.MustElement(), LeafRNew: cp.RNew.Leaf.MustElement(),
			PathROld: siblings(&cp.ROld), PathDNew: siblings(&cp.DNew), PathRNew: siblings(&cp.RNew)})
	}
	return &Circuit{Params: p, Inputs: *in, Witness: w}, vec, nil
}

// Partitions is generate_empty_sector_update_proof_with_vanilla up to the Groth16 proofs: one
// vanilla proof per partition, in partition order, each decoded and verified; in.K is ignored.
// The proof is the partitions' 192-byte proofs concatenated in the same order.
func (p *Params) Partitions(vanilla [][]byte, in PublicInputs) ([]*Circuit, [][]fr.Element, error) {
	if len(vanilla) != p.PartitionCount {
		return nil, nil, fmt.Errorf("%d vanilla proofs, a %d-byte sector update has %d partitions", len(vanilla), p.SectorSize(), p.PartitionCount)
	}
	circuits := make([]*Circuit, len(vanilla))
	inputs := make([][]fr.Element, len(vanilla))
	for k, b := range vanilla {
		in.K = k
		var err error
		if circuits[k], inputs[k], err = p.Partition(b, &in); err != nil {
			return nil, nil, err
		}
	}
	return circuits, inputs, nil
}
