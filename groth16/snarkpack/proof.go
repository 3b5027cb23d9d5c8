package snarkpack

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"

	bls "github.com/consensys/gnark-crypto/ecc/bls12-381"

	"github.com/snarkd/snarkd/groth16"
)

// Commitment is a pair commitment's output (T, U).
type Commitment [2]bls.GT

// GIPAProof holds what the GIPA recursion of TIPP and MIPP sends: per round the left and right
// commitments to A·B and to C, the cross products, then the final folded values and keys.
type GIPAProof struct {
	NProofs uint32
	CommsAB [][2]Commitment
	CommsC  [][2]Commitment
	ZAB     [][2]bls.GT
	ZC      [][2]bls.G1Affine
	FinalA  bls.G1Affine
	FinalB  bls.G2Affine
	FinalC  bls.G1Affine
	// FinalVKey and FinalWKey are the folded commitment keys (v1, v2) and (w1, w2).
	FinalVKey [2]bls.G2Affine
	FinalWKey [2]bls.G1Affine
}

// AggregateProof is bellperson's AggregateProof: commitments to A, B and C, the aggregated
// pairing product ip_ab = Π e(A_i, B_i^{r^i}), agg_c = Σ r^i·C_i, and the TIPP/MIPP proof with
// the KZG openings of the final keys.
type AggregateProof struct {
	ComAB Commitment
	ComC  Commitment
	IPAB  bls.GT
	AggC  bls.G1Affine
	GIPA  GIPAProof
	// VKeyOpening and WKeyOpening open the final v (in G2) and w (in G1) keys.
	VKeyOpening [2]bls.G2Affine
	WKeyOpening [2]bls.G1Affine
}

// ErrMalformed marks aggregate bytes that do not decode.
var ErrMalformed = errors.New("malformed SnarkPack aggregate")

const (
	g1Size = groth16.G1CompressedSize
	g2Size = groth16.G2CompressedSize
	// fixedSize is everything but the per-round vectors.
	fixedSize = 5*GTCompressedSize + g1Size + 4 + 2*g1Size + g2Size + 2*g2Size + 2*g1Size + 2*g2Size + 2*g1Size
	roundSize = 10*GTCompressedSize + 2*g1Size
)

// log2 of a power of two.
func log2(n int) int { return bits.Len(uint(n)) - 1 }

// Size is the encoded length of an aggregate of n proofs (n a power of two).
func Size(n int) int { return fixedSize + log2(n)*roundSize }

// NumProofs is how many proofs (padding included) the aggregate holds.
func (p *AggregateProof) NumProofs() int { return int(p.GIPA.NProofs) }

// check is AggregateProof::parsing_check.
func (p *AggregateProof) check() error {
	n := p.GIPA.NProofs
	if n < 2 || n > MaxSRSVector {
		return fmt.Errorf("%w: %d proofs", ErrMalformed, n)
	}
	if n&(n-1) != 0 {
		return fmt.Errorf("%w: %d proofs is not a power of two", ErrMalformed, n)
	}
	l := log2(int(n))
	if len(p.GIPA.CommsAB) != l || len(p.GIPA.CommsC) != l || len(p.GIPA.ZAB) != l || len(p.GIPA.ZC) != l {
		return fmt.Errorf("%w: round vectors of %d/%d/%d/%d entries, want %d", ErrMalformed,
			len(p.GIPA.CommsAB), len(p.GIPA.CommsC), len(p.GIPA.ZAB), len(p.GIPA.ZC), l)
	}
	return nil
}

type writer struct {
	b   []byte
	err error
}

func (w *writer) gt(xs ...*bls.GT) {
	for _, x := range xs {
		var c [GTCompressedSize]byte
		if err := compressGT(c[:], x); err != nil && w.err == nil {
			w.err = err
		}
		w.b = append(w.b, c[:]...)
	}
}

func (w *writer) g1(ps ...*bls.G1Affine) {
	for _, p := range ps {
		b := p.Bytes()
		w.b = append(w.b, b[:]...)
	}
}

func (w *writer) g2(ps ...*bls.G2Affine) {
	for _, p := range ps {
		b := p.Bytes()
		w.b = append(w.b, b[:]...)
	}
}

// MarshalBinary writes bellperson's AggregateProof::write.
func (p *AggregateProof) MarshalBinary() ([]byte, error) {
	if err := p.check(); err != nil {
		return nil, err
	}
	w := &writer{b: make([]byte, 0, Size(int(p.GIPA.NProofs)))}
	w.gt(&p.ComAB[0], &p.ComAB[1], &p.ComC[0], &p.ComC[1], &p.IPAB)
	w.g1(&p.AggC)
	g := &p.GIPA
	w.b = binary.LittleEndian.AppendUint32(w.b, g.NProofs)
	for i := range g.CommsAB {
		w.gt(&g.CommsAB[i][0][0], &g.CommsAB[i][0][1], &g.CommsAB[i][1][0], &g.CommsAB[i][1][1])
	}
	for i := range g.CommsC {
		w.gt(&g.CommsC[i][0][0], &g.CommsC[i][0][1], &g.CommsC[i][1][0], &g.CommsC[i][1][1])
	}
	for i := range g.ZAB {
		w.gt(&g.ZAB[i][0], &g.ZAB[i][1])
	}
	for i := range g.ZC {
		w.g1(&g.ZC[i][0], &g.ZC[i][1])
	}
	w.g1(&g.FinalA)
	w.g2(&g.FinalB)
	w.g1(&g.FinalC)
	w.g2(&g.FinalVKey[0], &g.FinalVKey[1])
	w.g1(&g.FinalWKey[0], &g.FinalWKey[1])
	w.g2(&p.VKeyOpening[0], &p.VKeyOpening[1])
	w.g1(&p.WKeyOpening[0], &p.WKeyOpening[1])
	if w.err != nil {
		return nil, w.err
	}
	return w.b, nil
}

type reader struct {
	b   []byte
	off int
	err error
}

func (r *reader) take(n int, what string) []byte {
	if r.err != nil {
		return nil
	}
	if len(r.b)-r.off < n {
		r.err = fmt.Errorf("%w: %d bytes end inside %s at offset %d", ErrMalformed, len(r.b), what, r.off)
		return nil
	}
	s := r.b[r.off : r.off+n]
	r.off += n
	return s
}

func (r *reader) gt(what string, xs ...*bls.GT) {
	for _, x := range xs {
		at := r.off
		s := r.take(GTCompressedSize, what)
		if s == nil {
			return
		}
		if err := decompressGT(x, s); err != nil {
			r.err = fmt.Errorf("%w: %s at offset %d: %w", ErrMalformed, what, at, err)
			return
		}
	}
}

func (r *reader) g1(what string, ps ...*bls.G1Affine) {
	for _, p := range ps {
		at := r.off
		s := r.take(g1Size, what)
		if s == nil {
			return
		}
		if err := groth16.DecodeG1Compressed(p, s, groth16.CheckSubgroup); err != nil {
			r.err = fmt.Errorf("%w: %s at offset %d: %w", ErrMalformed, what, at, err)
			return
		}
	}
}

func (r *reader) g2(what string, ps ...*bls.G2Affine) {
	for _, p := range ps {
		at := r.off
		s := r.take(g2Size, what)
		if s == nil {
			return
		}
		if err := groth16.DecodeG2Compressed(p, s, groth16.CheckSubgroup); err != nil {
			r.err = fmt.Errorf("%w: %s at offset %d: %w", ErrMalformed, what, at, err)
			return
		}
	}
}

// ParseAggregateProof decodes bellperson's AggregateProof::read, with its checks (field
// elements canonical, points in their subgroups, GT elements of order r, a power-of-two
// count of at least 2) and no trailing bytes.
func ParseAggregateProof(b []byte) (*AggregateProof, error) {
	if len(b) < fixedSize {
		return nil, fmt.Errorf("%w: %d bytes, the smallest aggregate is %d", ErrMalformed, len(b), Size(2))
	}
	// The count sits after five GT elements and agg_c: read it first to size everything.
	nOff := 5*GTCompressedSize + g1Size
	n := binary.LittleEndian.Uint32(b[nOff:])
	if n < 2 || n > MaxSRSVector || n&(n-1) != 0 {
		return nil, fmt.Errorf("%w: proof count %d (want a power of two from 2 to %d)", ErrMalformed, n, MaxSRSVector)
	}
	if want := Size(int(n)); len(b) != want {
		return nil, fmt.Errorf("%w: %d bytes, an aggregate of %d proofs is %d", ErrMalformed, len(b), n, want)
	}
	p := new(AggregateProof)
	r := &reader{b: b}
	r.gt("com_ab", &p.ComAB[0], &p.ComAB[1])
	r.gt("com_c", &p.ComC[0], &p.ComC[1])
	r.gt("ip_ab", &p.IPAB)
	r.g1("agg_c", &p.AggC)
	r.take(4, "nproofs")
	g := &p.GIPA
	g.NProofs = n
	l := log2(int(n))
	g.CommsAB = make([][2]Commitment, l)
	g.CommsC = make([][2]Commitment, l)
	g.ZAB = make([][2]bls.GT, l)
	g.ZC = make([][2]bls.G1Affine, l)
	for i := range l {
		r.gt("comms_ab", &g.CommsAB[i][0][0], &g.CommsAB[i][0][1], &g.CommsAB[i][1][0], &g.CommsAB[i][1][1])
	}
	for i := range l {
		r.gt("comms_c", &g.CommsC[i][0][0], &g.CommsC[i][0][1], &g.CommsC[i][1][0], &g.CommsC[i][1][1])
	}
	for i := range l {
		r.gt("z_ab", &g.ZAB[i][0], &g.ZAB[i][1])
	}
	for i := range l {
		r.g1("z_c", &g.ZC[i][0], &g.ZC[i][1])
	}
	r.g1("final_a", &g.FinalA)
	r.g2("final_b", &g.FinalB)
	r.g1("final_c", &g.FinalC)
	r.g2("final_vkey", &g.FinalVKey[0], &g.FinalVKey[1])
	r.g1("final_wkey", &g.FinalWKey[0], &g.FinalWKey[1])
	r.g2("vkey_opening", &p.VKeyOpening[0], &p.VKeyOpening[1])
	r.g1("wkey_opening", &p.WKeyOpening[0], &p.WKeyOpening[1])
	if r.err != nil {
		return nil, r.err
	}
	return p, nil
}
