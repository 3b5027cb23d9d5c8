// Package bincode reads and writes the bincode 1.x encoding (fixed-width little-endian integers,
// u64 lengths, u32 enum tags) of the rust-fil-proofs structures that filecoin-ffi passes around
// as vanilla proofs: 32-byte domains and storage-proofs-core MerkleProofs.
//
// The reader is strict: every length is checked against the bytes that remain before anything
// is allocated, and errors name the field and byte offset at fault.
package bincode

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/snarkd/snarkd/filecoin/c1"
	"github.com/snarkd/snarkd/filecoin/prooftypes"
)

// ErrTruncated is wrapped by a DecodeError when the input ends inside a value.
var ErrTruncated = errors.New("unexpected end of input")

// DecodeError says which field of a bincode value is malformed and where.
type DecodeError struct {
	Field  string
	Offset int
	Err    error
}

// Error implements error.
func (e *DecodeError) Error() string {
	return fmt.Sprintf("%s (byte %d): %v", e.Field, e.Offset, e.Err)
}

// Unwrap returns the cause.
func (e *DecodeError) Unwrap() error { return e.Err }

// Reader decodes bincode values from a byte slice.
type Reader struct {
	b   []byte
	off int
}

// NewReader returns a reader over b.
func NewReader(b []byte) *Reader { return &Reader{b: b} }

// Offset is the number of bytes consumed.
func (r *Reader) Offset() int { return r.off }

// Remaining is the number of bytes left.
func (r *Reader) Remaining() int { return len(r.b) - r.off }

// Errorf builds a DecodeError at the current offset.
func (r *Reader) Errorf(field, format string, args ...any) error {
	return &DecodeError{Field: field, Offset: r.off, Err: fmt.Errorf(format, args...)}
}

// End fails unless every byte was consumed.
func (r *Reader) End(what string) error {
	if r.Remaining() != 0 {
		return &DecodeError{Field: what, Offset: r.off, Err: fmt.Errorf("%d trailing bytes", r.Remaining())}
	}
	return nil
}

func (r *Reader) take(field string, n int) ([]byte, error) {
	if n < 0 || r.Remaining() < n {
		return nil, &DecodeError{Field: field, Offset: r.off, Err: ErrTruncated}
	}
	b := r.b[r.off : r.off+n]
	r.off += n
	return b, nil
}

// U64 reads a little-endian u64 (also usize).
func (r *Reader) U64(field string) (uint64, error) {
	b, err := r.take(field, 8)
	if err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint64(b), nil
}

// U32 reads a little-endian u32 (enum variant tags).
func (r *Reader) U32(field string) (uint32, error) {
	b, err := r.take(field, 4)
	if err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint32(b), nil
}

// Len reads a sequence length and checks that n elements of at least minSize bytes each fit in
// what remains, so a forged length cannot make the caller allocate.
func (r *Reader) Len(field string, minSize int) (int, error) {
	start := r.off
	n, err := r.U64(field + " length")
	if err != nil {
		return 0, err
	}
	if minSize < 1 {
		minSize = 1
	}
	if n > uint64(r.Remaining()/minSize) {
		return 0, &DecodeError{Field: field, Offset: start, Err: fmt.Errorf("length %d exceeds the %d bytes left", n, r.Remaining())}
	}
	return int(n), nil
}

// Domain reads 32 raw bytes (a Poseidon or SHA-256 domain) and checks that they are a canonical
// little-endian field element, as converting the domain to Fr requires.
func (r *Reader) Domain(field string) (c1.Domain, error) {
	var d c1.Domain
	start := r.off
	b, err := r.take(field, 32)
	if err != nil {
		return d, err
	}
	copy(d[:], b)
	if _, err := d.Element(); err != nil {
		return d, &DecodeError{Field: field, Offset: start, Err: err}
	}
	return d, nil
}

// Proof variant tags of storage-proofs-core's ProofData enum.
const (
	tagSingle uint32 = 0
	tagSub    uint32 = 1
	tagTop    uint32 = 2
)

// path reads an InclusionPath whose levels must all have the given arity and count.
func (r *Reader) path(field string, arity, levels int) ([]c1.PathElement, error) {
	n, err := r.Len(field, 16)
	if err != nil {
		return nil, err
	}
	if n != levels {
		return nil, r.Errorf(field, "%d levels, the tree needs %d", n, levels)
	}
	out := make([]c1.PathElement, n)
	for i := range out {
		f := fmt.Sprintf("%s[%d]", field, i)
		h, err := r.Len(f+".hashes", 32)
		if err != nil {
			return nil, err
		}
		if h != arity-1 {
			return nil, r.Errorf(f+".hashes", "%d siblings, arity %d needs %d", h, arity, arity-1)
		}
		out[i].Hashes = make([]c1.Domain, h)
		for j := range out[i].Hashes {
			if out[i].Hashes[j], err = r.Domain(fmt.Sprintf("%s.hashes[%d]", f, j)); err != nil {
				return nil, err
			}
		}
		idx, err := r.U64(f + ".index")
		if err != nil {
			return nil, err
		}
		if idx >= uint64(arity) {
			return nil, r.Errorf(f+".index", "%d out of range for arity %d", idx, arity)
		}
		out[i].Index = idx
	}
	return out, nil
}

// MerkleProof reads a MerkleProof of a tree with the given shape and base levels (a binary tree
// is TreeShape{Base: 2}); the variant must be the one the shape implies (Single without sub-trees,
// Sub with sub-trees, Top with a top layer).
func (r *Reader) MerkleProof(field string, shape prooftypes.TreeShape, baseLevels int) (c1.MerkleProof, error) {
	var p c1.MerkleProof
	tag, err := r.U32(field + ".data")
	if err != nil {
		return p, err
	}
	want := tagSingle
	switch {
	case shape.Top > 0:
		want = tagTop
	case shape.Sub > 0:
		want = tagSub
	}
	if tag != want {
		return p, r.Errorf(field+".data", "variant %d, tree %d-%d-%d needs %d", tag, shape.Base, shape.Sub, shape.Top, want)
	}
	switch tag {
	case tagSingle:
		p.Kind = c1.Single
		if p.Root, err = r.Domain(field + ".root"); err != nil {
			return p, err
		}
		if p.Leaf, err = r.Domain(field + ".leaf"); err != nil {
			return p, err
		}
		if p.Base, err = r.path(field+".path", shape.Base, baseLevels); err != nil {
			return p, err
		}
		return p, nil
	case tagSub:
		p.Kind = c1.Sub
	default:
		p.Kind = c1.Top
	}
	if p.Base, err = r.path(field+".base_proof", shape.Base, baseLevels); err != nil {
		return p, err
	}
	if p.SubPath, err = r.path(field+".sub_proof", shape.Sub, 1); err != nil {
		return p, err
	}
	if tag == tagTop {
		if p.TopPath, err = r.path(field+".top_proof", shape.Top, 1); err != nil {
			return p, err
		}
	}
	if p.Root, err = r.Domain(field + ".root"); err != nil {
		return p, err
	}
	if p.Leaf, err = r.Domain(field + ".leaf"); err != nil {
		return p, err
	}
	return p, nil
}

// Writer builds a bincode encoding.
type Writer struct{ B []byte }

// U64 appends a little-endian u64.
func (w *Writer) U64(v uint64) { w.B = binary.LittleEndian.AppendUint64(w.B, v) }

// U32 appends a little-endian u32.
func (w *Writer) U32(v uint32) { w.B = binary.LittleEndian.AppendUint32(w.B, v) }

// Domain appends 32 raw bytes.
func (w *Writer) Domain(d c1.Domain) { w.B = append(w.B, d[:]...) }

func (w *Writer) path(p []c1.PathElement) {
	w.U64(uint64(len(p)))
	for _, pe := range p {
		w.U64(uint64(len(pe.Hashes)))
		for _, h := range pe.Hashes {
			w.Domain(h)
		}
		w.U64(pe.Index)
	}
}

// MerkleProof appends p in the layout Reader.MerkleProof reads.
func (w *Writer) MerkleProof(p *c1.MerkleProof) error {
	switch p.Kind {
	case c1.Single:
		w.U32(tagSingle)
		w.Domain(p.Root)
		w.Domain(p.Leaf)
		w.path(p.Base)
	case c1.Sub, c1.Top:
		if p.Kind == c1.Sub {
			w.U32(tagSub)
		} else {
			w.U32(tagTop)
		}
		w.path(p.Base)
		w.path(p.SubPath)
		if p.Kind == c1.Top {
			w.path(p.TopPath)
		}
		w.Domain(p.Root)
		w.Domain(p.Leaf)
	default:
		return fmt.Errorf("bincode: merkle proof without a variant (kind %d)", int(p.Kind))
	}
	return nil
}

// PathIndex is the leaf index a proof's path encodes (base levels, then sub, then top; each level
// scales by its own arity).
func PathIndex(p *c1.MerkleProof, shape prooftypes.TreeShape) uint64 {
	var index, scale uint64 = 0, 1
	add := func(path []c1.PathElement, arity int) {
		for _, pe := range path {
			index += pe.Index * scale
			scale *= uint64(arity)
		}
	}
	add(p.Base, shape.Base)
	add(p.SubPath, shape.Sub)
	add(p.TopPath, shape.Top)
	return index
}
