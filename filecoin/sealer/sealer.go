// Package sealer is a Go sealer for small Filecoin sectors (2 KiB, 8 MiB) that produces real
// SealCommitPhase1 outputs: SDR labeling with 6 DRG + 8 expander parents, trees D (sha254), C
// and R (Poseidon), comm_d, comm_r and the vanilla proofs of the derived challenges. It also
// generates synthetic but satisfying C1 outputs of production shape (32 GiB, 64 GiB) for
// benchmarks, from sparse trees over an all-zero (committed-capacity) sector.
//
// Fixtures only: everything is held in memory and nothing is written to disk.
package sealer

import (
	"context"
	"errors"
	"fmt"
	"io"

	logging "github.com/ipfs/go-log/v2"

	"github.com/snarkd/snarkd/filecoin/c1"
	"github.com/snarkd/snarkd/filecoin/merkle"
	"github.com/snarkd/snarkd/filecoin/porep"
	"github.com/snarkd/snarkd/filecoin/prooftypes"
)

var log = logging.Logger("snarkd/filecoin")

// MaxSectorSize is the largest sector Seal accepts (labels of every layer stay in memory).
const MaxSectorSize = prooftypes.SectorSize8MiB

// Sector is a sealed sector with everything C1 needs.
type Sector struct {
	Proof        *prooftypes.SealProof
	Graph        *porep.Graph
	ProverID     [32]byte
	SectorNumber uint64
	Ticket       [32]byte
	ReplicaID    [32]byte
	Data         []c1.Domain   // the unsealed nodes
	Labels       [][]c1.Domain // Labels[layer-1][node]
	TreeD        *merkle.Tree
	TreeC        *merkle.Tree
	TreeR        *merkle.Tree
	CommD, CommR c1.Domain
}

// RandomData draws sector data from r with every node a valid field element (the top two bits
// of each node's last byte cleared, as Fr32 padding guarantees).
func RandomData(r io.Reader, size uint64) ([]byte, error) {
	b := make([]byte, size)
	if _, err := io.ReadFull(r, b); err != nil {
		return nil, fmt.Errorf("random sector data: %w", err)
	}
	for i := 31; i < len(b); i += 32 {
		b[i] &= 0x3f
	}
	return b, nil
}

// Seal runs the precommit phases on data (the whole sector, Fr32-valid nodes): replica ID,
// labels, trees D, C and R, comm_d and comm_r.
func Seal(ctx context.Context, p *prooftypes.SealProof, data []byte, proverID [32]byte, sectorNumber uint64, ticket [32]byte) (*Sector, error) {
	if p.SectorSize > MaxSectorSize {
		return nil, fmt.Errorf("sealer: %s sectors are too large for the in-memory sealer (max %d bytes)", p.Name, MaxSectorSize)
	}
	if uint64(len(data)) != p.SectorSize {
		return nil, fmt.Errorf("sealer: %d bytes of data for a %d-byte sector", len(data), p.SectorSize)
	}
	nodes := p.Nodes()
	s := &Sector{Proof: p, ProverID: proverID, SectorNumber: sectorNumber, Ticket: ticket, Data: make([]c1.Domain, nodes)}
	for i := range s.Data {
		copy(s.Data[i][:], data[32*i:32*i+32])
		if s.Data[i][31]&0xc0 != 0 {
			return nil, fmt.Errorf("sealer: node %d is not Fr32 padded (top bits of byte 31 set)", i)
		}
	}
	var err error
	if s.Graph, err = porep.NewGraph(p); err != nil {
		return nil, err
	}
	dAr, err := merkle.BinaryArities(nodes)
	if err != nil {
		return nil, err
	}
	if s.TreeD, err = merkle.NewDense(s.Data, dAr, merkle.Sha254); err != nil {
		return nil, fmt.Errorf("sealer: tree D: %w", err)
	}
	s.CommD = s.TreeD.Root()
	s.ReplicaID = porep.ReplicaID(proverID, sectorNumber, ticket, s.CommD, p.PoRepID())
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	log.Debugw("labeling", "proof", p.Name, "nodes", nodes, "layers", p.Layers)
	s.Labels = porep.Labels(s.Graph, s.ReplicaID, p.Layers)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	rAr, err := merkle.Arities(p.Tree, nodes)
	if err != nil {
		return nil, err
	}
	columns := make([]c1.Domain, nodes)
	col := make([]c1.Domain, p.Layers)
	for i := range columns {
		for l := range col {
			col[l] = s.Labels[l][i]
		}
		if columns[i], err = merkle.Poseidon(col); err != nil {
			return nil, err
		}
	}
	if s.TreeC, err = merkle.NewDense(columns, rAr, merkle.Poseidon); err != nil {
		return nil, fmt.Errorf("sealer: tree C: %w", err)
	}
	replica := make([]c1.Domain, nodes)
	last := s.Labels[p.Layers-1]
	for i := range replica {
		if replica[i], err = porep.Encode(s.Data[i], last[i]); err != nil {
			return nil, err
		}
	}
	if s.TreeR, err = merkle.NewDense(replica, rAr, merkle.Poseidon); err != nil {
		return nil, fmt.Errorf("sealer: tree R: %w", err)
	}
	if s.CommR, err = merkle.Poseidon([]c1.Domain{s.TreeC.Root(), s.TreeR.Root()}); err != nil {
		return nil, err
	}
	return s, nil
}

// Commit1 produces the C1 output for the interactive seed (the challenges of every partition,
// each with its vanilla proof), as seal_commit_phase1 does.
func (s *Sector) Commit1(ctx context.Context, seed [32]byte) (*c1.Output, error) {
	if seed == ([32]byte{}) {
		return nil, errors.New("sealer: all-zero seed")
	}
	p := s.Proof
	pp, err := porep.NewPublicParams(p, s.ReplicaID, s.CommD, s.CommR, seed)
	if err != nil {
		return nil, err
	}
	out := &c1.Output{
		RegisteredProof: p.Name,
		CommR:           s.CommR, CommD: s.CommD, ReplicaID: s.ReplicaID, Seed: seed, Ticket: s.Ticket,
	}
	parts := make([][]c1.ChallengeProof, p.Partitions)
	src := &denseSource{s: s}
	for k := range parts {
		ch, err := pp.Challenges(k)
		if err != nil {
			return nil, err
		}
		parts[k] = make([]c1.ChallengeProof, len(ch))
		for i, c := range ch {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			if parts[k][i], err = challengeProof(p, s.Graph, src, c); err != nil {
				return nil, fmt.Errorf("sealer: partition %d challenge %d (node %d): %w", k, i, c, err)
			}
		}
	}
	out.VanillaProofs = map[string][][]c1.ChallengeProof{p.VanillaName: parts}
	return out, nil
}

// source abstracts where columns, data and tree proofs come from (a dense sealed sector or the
// sparse synthetic one).
type source interface {
	column(node uint64) []c1.Domain
	proofD(node uint64) (c1.MerkleProof, error)
	proofC(node uint64) (c1.MerkleProof, error)
	proofR(node uint64) (c1.MerkleProof, error)
}

type denseSource struct{ s *Sector }

func (d *denseSource) column(node uint64) []c1.Domain {
	col := make([]c1.Domain, len(d.s.Labels))
	for l := range col {
		col[l] = d.s.Labels[l][node]
	}
	return col
}

func (d *denseSource) proofD(node uint64) (c1.MerkleProof, error) {
	return d.s.TreeD.Proof(node, prooftypes.TreeShape{Base: 2})
}

func (d *denseSource) proofC(node uint64) (c1.MerkleProof, error) {
	return d.s.TreeC.Proof(node, d.s.Proof.Tree)
}

func (d *denseSource) proofR(node uint64) (c1.MerkleProof, error) {
	return d.s.TreeR.Proof(node, d.s.Proof.Tree)
}

func columnProof(src source, node uint64) (c1.ColumnProof, error) {
	incl, err := src.proofC(node)
	if err != nil {
		return c1.ColumnProof{}, err
	}
	return c1.ColumnProof{
		Column:         c1.Column{Index: uint32(node), Rows: src.column(node), H: []byte("null")},
		InclusionProof: incl,
	}, nil
}

// challengeProof assembles stacked::Proof for one challenged node.
func challengeProof(p *prooftypes.SealProof, g *porep.Graph, src source, c uint64) (c1.ChallengeProof, error) {
	var cp c1.ChallengeProof
	var err error
	if cp.CommDProofs, err = src.proofD(c); err != nil {
		return cp, err
	}
	if cp.CommRLastProof, err = src.proofR(c); err != nil {
		return cp, err
	}
	rcp := &cp.ReplicaColumnProofs
	if rcp.CX, err = columnProof(src, c); err != nil {
		return cp, err
	}
	var base [prooftypes.BaseDegree]uint32
	var exp [prooftypes.ExpansionDegree]uint32
	g.BaseParents(uint32(c), &base)
	g.ExpParents(uint32(c), &exp)
	for _, n := range base {
		col, err := columnProof(src, uint64(n))
		if err != nil {
			return cp, err
		}
		rcp.DRGParents = append(rcp.DRGParents, col)
	}
	for _, n := range exp {
		col, err := columnProof(src, uint64(n))
		if err != nil {
			return cp, err
		}
		rcp.ExpParents = append(rcp.ExpParents, col)
	}
	parents := make([]c1.Domain, 0, prooftypes.Degree)
	for l := 1; l <= p.Layers; l++ {
		parents = parents[:0]
		for j := range rcp.DRGParents {
			parents = append(parents, rcp.DRGParents[j].Column.Rows[l-1])
		}
		if l > 1 {
			for j := range rcp.ExpParents {
				parents = append(parents, rcp.ExpParents[j].Column.Rows[l-2])
			}
		}
		cp.LabelingProofs = append(cp.LabelingProofs, c1.LabelingProof{Parents: porep.RepeatParents(parents), LayerIndex: uint32(l), Node: c})
	}
	last := cp.LabelingProofs[p.Layers-1]
	cp.EncodingProof = c1.EncodingProof{Parents: append([]c1.Domain(nil), last.Parents...), LayerIndex: last.LayerIndex, Node: c}
	return cp, nil
}
