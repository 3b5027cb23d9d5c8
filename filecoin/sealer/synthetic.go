package sealer

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/snarkd/snarkd/filecoin/c1"
	"github.com/snarkd/snarkd/filecoin/merkle"
	"github.com/snarkd/snarkd/filecoin/porep"
	"github.com/snarkd/snarkd/filecoin/prooftypes"
)

// ErrSyntheticUnsupported is returned for proof types whose challenges depend on comm_r
// (synthetic and non-interactive PoRep): a sparse sector cannot be built before its challenges
// are known. Their circuits are those of the interactive types, so benchmark with those.
var ErrSyntheticUnsupported = errors.New("synthetic C1 outputs need challenges that do not depend on comm_r")

// sparseSector is a sector of which only the challenged nodes and their parents are known:
// the data is all zero (a committed-capacity sector), parent columns not themselves challenged
// are random, every other leaf of trees C and R is zero.
type sparseSector struct {
	p       *prooftypes.SealProof
	columns map[uint64][]c1.Domain
	treeD   *merkle.Tree
	treeC   *merkle.Tree
	treeR   *merkle.Tree
}

func (s *sparseSector) column(node uint64) []c1.Domain { return s.columns[node] }

func (s *sparseSector) proofD(node uint64) (c1.MerkleProof, error) {
	return s.treeD.Proof(node, prooftypes.TreeShape{Base: 2})
}

func (s *sparseSector) proofC(node uint64) (c1.MerkleProof, error) {
	return s.treeC.Proof(node, s.p.Tree)
}

func (s *sparseSector) proofR(node uint64) (c1.MerkleProof, error) {
	return s.treeR.Proof(node, s.p.Tree)
}

// SyntheticC1 generates a C1 output of p's shape (any sector size, including 32 GiB and 64 GiB)
// that satisfies the PoRep circuit and passes porep.Verify, including the replica ID derivation
// from proverID and sectorNumber: the sector is all zeros, so comm_d is the zero-tree root, the
// challenges follow from the replica ID and seed, and only the challenged nodes' labels are
// computed, from random parent labels. r supplies the randomness.
func SyntheticC1(ctx context.Context, p *prooftypes.SealProof, proverID [32]byte, sectorNumber uint64, ticket, seed [32]byte, r io.Reader) (*c1.Output, error) {
	if p.Feature != prooftypes.Interactive {
		return nil, fmt.Errorf("sealer: %s: %w", p.Name, ErrSyntheticUnsupported)
	}
	if seed == ([32]byte{}) {
		return nil, errors.New("sealer: all-zero seed")
	}
	nodes := p.Nodes()
	g, err := porep.NewGraph(p)
	if err != nil {
		return nil, err
	}
	dAr, err := merkle.BinaryArities(nodes)
	if err != nil {
		return nil, err
	}
	s := &sparseSector{p: p, columns: map[uint64][]c1.Domain{}}
	if s.treeD, err = merkle.NewSparse(nil, c1.Domain{}, dAr, merkle.Sha254); err != nil {
		return nil, err
	}
	commD := s.treeD.Root()
	replicaID := porep.ReplicaID(proverID, sectorNumber, ticket, commD, p.PoRepID())

	all := make([][]uint64, p.Partitions)
	challenged := map[uint64]bool{}
	for k := range all {
		all[k] = porep.InteractiveChallenges(nodes, replicaID, seed, p.ChallengesPerPartition, k)
		for _, c := range all[k] {
			challenged[c] = true
		}
	}
	sorted := make([]uint64, 0, len(challenged))
	for c := range challenged {
		sorted = append(sorted, c)
	}
	slices.Sort(sorted)

	// Random columns for parents that are not challenged themselves.
	var base [prooftypes.BaseDegree]uint32
	var exp [prooftypes.ExpansionDegree]uint32
	buf := make([]byte, 32)
	randomColumn := func() ([]c1.Domain, error) {
		col := make([]c1.Domain, p.Layers)
		for l := range col {
			if _, err := io.ReadFull(r, buf); err != nil {
				return nil, fmt.Errorf("sealer: randomness: %w", err)
			}
			copy(col[l][:], buf)
			col[l][31] &= 0x3f
		}
		return col, nil
	}
	for _, c := range sorted {
		g.BaseParents(uint32(c), &base)
		g.ExpParents(uint32(c), &exp)
		for _, n := range append(base[:], exp[:]...) {
			node := uint64(n)
			if challenged[node] || s.columns[node] != nil {
				continue
			}
			if s.columns[node], err = randomColumn(); err != nil {
				return nil, err
			}
		}
		s.columns[c] = make([]c1.Domain, p.Layers)
	}
	// Labels of the challenged nodes, layer by layer and in node order within a layer: DRG
	// parents precede their child, expander parents come from the finished previous layer.
	parents := make([]c1.Domain, 0, prooftypes.Degree)
	for l := 1; l <= p.Layers; l++ {
		for _, c := range sorted {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			g.BaseParents(uint32(c), &base)
			parents = parents[:0]
			for _, n := range base {
				parents = append(parents, s.columns[uint64(n)][l-1])
			}
			if l > 1 {
				g.ExpParents(uint32(c), &exp)
				for _, n := range exp {
					parents = append(parents, s.columns[uint64(n)][l-2])
				}
			}
			s.columns[c][l-1] = porep.Label(replicaID, uint32(l), c, porep.RepeatParents(parents))
		}
	}

	rAr, err := merkle.Arities(p.Tree, nodes)
	if err != nil {
		return nil, err
	}
	cLeaves := make(map[uint64]c1.Domain, len(s.columns))
	for n, col := range s.columns {
		if cLeaves[n], err = merkle.Poseidon(col); err != nil {
			return nil, err
		}
	}
	if s.treeC, err = merkle.NewSparse(cLeaves, c1.Domain{}, rAr, merkle.Poseidon); err != nil {
		return nil, err
	}
	rLeaves := make(map[uint64]c1.Domain, len(sorted))
	for _, c := range sorted {
		// data is zero, so the replica node is the last label
		rLeaves[c] = s.columns[c][p.Layers-1]
	}
	if s.treeR, err = merkle.NewSparse(rLeaves, c1.Domain{}, rAr, merkle.Poseidon); err != nil {
		return nil, err
	}
	commR, err := merkle.Poseidon([]c1.Domain{s.treeC.Root(), s.treeR.Root()})
	if err != nil {
		return nil, err
	}
	parts := make([][]c1.ChallengeProof, p.Partitions)
	for k, ch := range all {
		parts[k] = make([]c1.ChallengeProof, len(ch))
		for i, c := range ch {
			if parts[k][i], err = challengeProof(p, g, s, c); err != nil {
				return nil, fmt.Errorf("sealer: partition %d challenge %d: %w", k, i, err)
			}
		}
	}
	return &c1.Output{
		RegisteredProof: p.Name,
		VanillaProofs:   map[string][][]c1.ChallengeProof{p.VanillaName: parts},
		CommR:           commR, CommD: commD, ReplicaID: replicaID, Seed: seed, Ticket: ticket,
	}, nil
}
