package groth16

import (
	"errors"
	"fmt"

	bls "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fp"
)

// Sizes of the Zcash encodings bellperson (through blst) uses.
const (
	G1UncompressedSize = 96
	G2UncompressedSize = 192
	G1CompressedSize   = 48
	G2CompressedSize   = 96
)

// Check selects how much validation point decoding performs.
type Check uint8

const (
	// CheckNone only checks the encoding (flags, coordinates below p); for trusted files.
	CheckNone Check = iota
	// CheckOnCurve also checks the curve equation (what blst's unchecked deserialize does, and
	// what Filecoin applies to its parameter files).
	CheckOnCurve
	// CheckSubgroup also checks membership of the prime-order subgroup (bellperson's checked read).
	CheckSubgroup
)

func (c Check) String() string {
	switch c {
	case CheckNone:
		return "none"
	case CheckOnCurve:
		return "on-curve"
	case CheckSubgroup:
		return "subgroup"
	}
	return fmt.Sprintf("Check(%d)", uint8(c))
}

// Errors of point decoding; decoders wrap them with the section and index.
var (
	ErrBadEncoding     = errors.New("invalid point encoding")
	ErrNotOnCurve      = errors.New("point is not on the curve")
	ErrNotInSubgroup   = errors.New("point is not in the prime-order subgroup")
	ErrPointAtInfinity = errors.New("unexpected point at infinity")
)

const (
	flagCompressed = 0x80
	flagInfinity   = 0x40
	flagSort       = 0x20
	flagMask       = 0xe0
)

func allZero(b []byte) bool {
	for _, x := range b {
		if x != 0 {
			return false
		}
	}
	return true
}

// decodeG1Uncompressed decodes 96 bytes (blst_p1_serialize layout) into p.
func decodeG1Uncompressed(p *bls.G1Affine, b []byte, check Check) error {
	_ = b[G1UncompressedSize-1]
	switch b[0] & flagMask {
	case 0:
	case flagInfinity:
		if b[0]&^flagMask != 0 || !allZero(b[1:G1UncompressedSize]) {
			return fmt.Errorf("%w: infinity with non-zero body", ErrBadEncoding)
		}
		p.X.SetZero()
		p.Y.SetZero()
		return nil
	default:
		return fmt.Errorf("%w: flags %#02x in an uncompressed G1 point", ErrBadEncoding, b[0]&flagMask)
	}
	if err := p.X.SetBytesCanonical(b[:fp.Bytes]); err != nil {
		return fmt.Errorf("%w: x: %v", ErrBadEncoding, err)
	}
	if err := p.Y.SetBytesCanonical(b[fp.Bytes:G1UncompressedSize]); err != nil {
		return fmt.Errorf("%w: y: %v", ErrBadEncoding, err)
	}
	return checkG1(p, check)
}

func checkG1(p *bls.G1Affine, check Check) error {
	if check >= CheckOnCurve && !p.IsOnCurve() {
		return ErrNotOnCurve
	}
	if check >= CheckSubgroup && !p.IsInSubGroup() {
		return ErrNotInSubgroup
	}
	return nil
}

func checkG2(p *bls.G2Affine, check Check) error {
	if check >= CheckOnCurve && !p.IsOnCurve() {
		return ErrNotOnCurve
	}
	if check >= CheckSubgroup && !p.IsInSubGroup() {
		return ErrNotInSubgroup
	}
	return nil
}

// decodeG2Uncompressed decodes 192 bytes (x.c1 ‖ x.c0 ‖ y.c1 ‖ y.c0, big-endian) into p.
func decodeG2Uncompressed(p *bls.G2Affine, b []byte, check Check) error {
	_ = b[G2UncompressedSize-1]
	switch b[0] & flagMask {
	case 0:
	case flagInfinity:
		if b[0]&^flagMask != 0 || !allZero(b[1:G2UncompressedSize]) {
			return fmt.Errorf("%w: infinity with non-zero body", ErrBadEncoding)
		}
		p.X.SetZero()
		p.Y.SetZero()
		return nil
	default:
		return fmt.Errorf("%w: flags %#02x in an uncompressed G2 point", ErrBadEncoding, b[0]&flagMask)
	}
	coords := []*fp.Element{&p.X.A1, &p.X.A0, &p.Y.A1, &p.Y.A0}
	for i, c := range coords {
		if err := c.SetBytesCanonical(b[i*fp.Bytes : (i+1)*fp.Bytes]); err != nil {
			return fmt.Errorf("%w: coordinate %d: %v", ErrBadEncoding, i, err)
		}
	}
	return checkG2(p, check)
}

// encodeG1Uncompressed writes p's 96-byte encoding to b.
func encodeG1Uncompressed(b []byte, p *bls.G1Affine) {
	raw := p.RawBytes() // same layout and infinity flag as blst_p1_affine_serialize
	copy(b, raw[:])
}

func encodeG2Uncompressed(b []byte, p *bls.G2Affine) {
	raw := p.RawBytes()
	copy(b, raw[:])
}

// decodeG1Compressed decodes 48 bytes (blst_p1_compress layout). Infinity is accepted here;
// callers that must reject it do so.
func decodeG1Compressed(p *bls.G1Affine, b []byte, check Check) error {
	if b[0]&flagCompressed == 0 {
		return fmt.Errorf("%w: compression flag not set", ErrBadEncoding)
	}
	if b[0]&flagInfinity != 0 {
		if b[0]&flagSort != 0 || b[0]&^flagMask != 0 || !allZero(b[1:G1CompressedSize]) {
			return fmt.Errorf("%w: infinity with non-zero body", ErrBadEncoding)
		}
		p.X.SetZero()
		p.Y.SetZero()
		return nil
	}
	var x [G1CompressedSize]byte
	copy(x[:], b[:G1CompressedSize])
	if _, err := p.SetBytes(x[:]); err != nil {
		// gnark's decoder includes the subgroup check; map its errors onto ours.
		return fmt.Errorf("%w: %v", ErrBadEncoding, err)
	}
	return checkG1(p, check)
}

func decodeG2Compressed(p *bls.G2Affine, b []byte, check Check) error {
	if b[0]&flagCompressed == 0 {
		return fmt.Errorf("%w: compression flag not set", ErrBadEncoding)
	}
	if b[0]&flagInfinity != 0 {
		if b[0]&flagSort != 0 || b[0]&^flagMask != 0 || !allZero(b[1:G2CompressedSize]) {
			return fmt.Errorf("%w: infinity with non-zero body", ErrBadEncoding)
		}
		p.X.SetZero()
		p.Y.SetZero()
		return nil
	}
	if _, err := p.SetBytes(b[:G2CompressedSize]); err != nil {
		return fmt.Errorf("%w: %v", ErrBadEncoding, err)
	}
	return checkG2(p, check)
}

// DecodeG1Compressed decodes a 48-byte compressed point (the blst/ZCash layout, what
// bellperson's GroupEncoding reads); infinity is accepted.
func DecodeG1Compressed(p *bls.G1Affine, b []byte, check Check) error {
	if len(b) < G1CompressedSize {
		return fmt.Errorf("%w: %d bytes, want %d", ErrBadEncoding, len(b), G1CompressedSize)
	}
	return decodeG1Compressed(p, b, check)
}

// DecodeG2Compressed decodes a 96-byte compressed point; infinity is accepted.
func DecodeG2Compressed(p *bls.G2Affine, b []byte, check Check) error {
	if len(b) < G2CompressedSize {
		return fmt.Errorf("%w: %d bytes, want %d", ErrBadEncoding, len(b), G2CompressedSize)
	}
	return decodeG2Compressed(p, b, check)
}
