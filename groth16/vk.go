package groth16

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"os"

	bls "github.com/consensys/gnark-crypto/ecc/bls12-381"
)

// VerifyingKey is bellperson's VerifyingKey. IC[0] belongs to the ONE input, so len(IC) is the
// number of public inputs plus one.
type VerifyingKey struct {
	Alpha1 bls.G1Affine
	Beta1  bls.G1Affine
	Beta2  bls.G2Affine
	Gamma2 bls.G2Affine
	Delta1 bls.G1Affine
	Delta2 bls.G2Affine
	IC     []bls.G1Affine
}

// VerifyingKeyHeaderSize is the number of bytes before the ic points (ic_len included).
const VerifyingKeyHeaderSize = 3*G1UncompressedSize + 3*G2UncompressedSize + 4

// VerifyingKeySize returns the size of a .vk with icLen points.
func VerifyingKeySize(icLen int) int64 {
	return VerifyingKeyHeaderSize + int64(icLen)*G1UncompressedSize
}

// NumInputs returns the number of public inputs the key verifies (ONE excluded).
func (vk *VerifyingKey) NumInputs() int { return len(vk.IC) - 1 }

// WriteTo writes the .vk encoding (bellperson VerifyingKey::write).
func (vk *VerifyingKey) WriteTo(w io.Writer) (int64, error) {
	bw := bufio.NewWriterSize(w, 1<<16)
	n, err := vk.writeTo(bw)
	if err != nil {
		return n, err
	}
	return n, bw.Flush()
}

func (vk *VerifyingKey) writeTo(w io.Writer) (int64, error) {
	var g1 [G1UncompressedSize]byte
	var g2 [G2UncompressedSize]byte
	var n int64
	put1 := func(p *bls.G1Affine) error {
		encodeG1Uncompressed(g1[:], p)
		k, err := w.Write(g1[:])
		n += int64(k)
		return err
	}
	put2 := func(p *bls.G2Affine) error {
		encodeG2Uncompressed(g2[:], p)
		k, err := w.Write(g2[:])
		n += int64(k)
		return err
	}
	for _, f := range []func() error{
		func() error { return put1(&vk.Alpha1) },
		func() error { return put1(&vk.Beta1) },
		func() error { return put2(&vk.Beta2) },
		func() error { return put2(&vk.Gamma2) },
		func() error { return put1(&vk.Delta1) },
		func() error { return put2(&vk.Delta2) },
	} {
		if err := f(); err != nil {
			return n, fmt.Errorf("writing verifying key: %w", err)
		}
	}
	if len(vk.IC) > int(^uint32(0)) {
		return n, fmt.Errorf("writing verifying key: %d ic points do not fit a u32", len(vk.IC))
	}
	var l [4]byte
	binary.BigEndian.PutUint32(l[:], uint32(len(vk.IC)))
	k, err := w.Write(l[:])
	n += int64(k)
	if err != nil {
		return n, fmt.Errorf("writing verifying key: %w", err)
	}
	for i := range vk.IC {
		if err := put1(&vk.IC[i]); err != nil {
			return n, fmt.Errorf("writing verifying key ic: %w", err)
		}
	}
	return n, nil
}

// Bytes returns the .vk encoding.
func (vk *VerifyingKey) Bytes() []byte {
	var b bytes.Buffer
	b.Grow(int(VerifyingKeySize(len(vk.IC))))
	if _, err := vk.writeTo(&b); err != nil {
		panic(err) // bytes.Buffer does not fail
	}
	return b.Bytes()
}

// ReadVerifyingKey reads a .vk from r, consuming exactly its bytes. bellperson checks every
// point (CheckSubgroup) and rejects identity ic points; so does this with CheckSubgroup.
func ReadVerifyingKey(r io.Reader, check Check) (*VerifyingKey, error) {
	vk := new(VerifyingKey)
	var head [VerifyingKeyHeaderSize]byte
	if _, err := io.ReadFull(r, head[:]); err != nil {
		return nil, fmt.Errorf("reading verifying key header (%d bytes): %w", len(head), noEOF(err))
	}
	off := 0
	g1 := func(name string, p *bls.G1Affine) error {
		err := decodeG1Uncompressed(p, head[off:off+G1UncompressedSize], check)
		off += G1UncompressedSize
		if err != nil {
			return fmt.Errorf("verifying key %s: %w", name, err)
		}
		return nil
	}
	g2 := func(name string, p *bls.G2Affine) error {
		err := decodeG2Uncompressed(p, head[off:off+G2UncompressedSize], check)
		off += G2UncompressedSize
		if err != nil {
			return fmt.Errorf("verifying key %s: %w", name, err)
		}
		return nil
	}
	if err := g1("alpha_g1", &vk.Alpha1); err != nil {
		return nil, err
	}
	if err := g1("beta_g1", &vk.Beta1); err != nil {
		return nil, err
	}
	if err := g2("beta_g2", &vk.Beta2); err != nil {
		return nil, err
	}
	if err := g2("gamma_g2", &vk.Gamma2); err != nil {
		return nil, err
	}
	if err := g1("delta_g1", &vk.Delta1); err != nil {
		return nil, err
	}
	if err := g2("delta_g2", &vk.Delta2); err != nil {
		return nil, err
	}
	icLen := binary.BigEndian.Uint32(head[off:])
	if icLen == 0 {
		return nil, fmt.Errorf("verifying key: ic_len is 0 (the ONE input needs ic[0])")
	}
	ic, err := readG1Section(r, "ic", int64(icLen), -1, check)
	if err != nil {
		return nil, err
	}
	vk.IC = ic
	return vk, nil
}

// ParseVerifyingKey decodes a complete .vk; trailing bytes are an error.
func ParseVerifyingKey(b []byte, check Check) (*VerifyingKey, error) {
	r := bytes.NewReader(b)
	vk, err := ReadVerifyingKey(r, check)
	if err != nil {
		return nil, err
	}
	if r.Len() != 0 {
		return nil, fmt.Errorf("verifying key: %d trailing bytes after %d ic points", r.Len(), len(vk.IC))
	}
	return vk, nil
}

func noEOF(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

// OpenVerifyingKey reads a .vk file; the file must hold exactly one key.
func OpenVerifyingKey(path string, check Check) (*VerifyingKey, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading verifying key: %w", err)
	}
	vk, err := ParseVerifyingKey(b, check)
	if err != nil {
		return nil, fmt.Errorf("verifying key %s: %w", path, err)
	}
	return vk, nil
}
