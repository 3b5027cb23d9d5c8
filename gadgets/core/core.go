// Package core holds storage-proofs-core's small gadgets: UInt64, byte→bit
// allocation, bit renumbering, and the equality/sum/difference constraints
// with add/sub/encode/decode built on them.
package core

import (
	"fmt"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/snarkd/snarkd/cs"
	"github.com/snarkd/snarkd/gadgets/boolean"
	"github.com/snarkd/snarkd/gadgets/multipack"
	"github.com/snarkd/snarkd/gadgets/num"
)

// UInt64 is a 64-bit word as Booleans, least significant first.
type UInt64 struct {
	Bits  [64]boolean.Boolean
	Value uint64
}

// ConstantU64 returns the constant word v.
func ConstantU64(v uint64) UInt64 {
	u := UInt64{Value: v}
	for i := range u.Bits {
		u.Bits[i] = boolean.Constant(v>>uint(i)&1 == 1)
	}
	return u
}

// AllocU64 allocates 64 bits in namespaces "allocated bit i".
func AllocU64(sys cs.ConstraintSystem, v uint64) (UInt64, error) {
	u := UInt64{Value: v}
	for i := range u.Bits {
		sys.PushIndexed("allocated bit ", i)
		b, err := boolean.Alloc(sys, v>>uint(i)&1 == 1)
		sys.Pop()
		if err != nil {
			return UInt64{}, err
		}
		u.Bits[i] = boolean.Is(b)
	}
	return u, nil
}

// U64FromBitsBE builds a word from 64 bits, most significant first.
func U64FromBitsBE(b []boolean.Boolean) (UInt64, error) {
	if len(b) != 64 {
		return UInt64{}, fmt.Errorf("core: UInt64 from %d bits", len(b))
	}
	var u UInt64
	for i := range u.Bits {
		u.Bits[i] = b[63-i]
		if u.Bits[i].Value() {
			u.Value |= 1 << uint(i)
		}
	}
	return u, nil
}

// U64FromBits builds a word from 64 bits, least significant first.
func U64FromBits(b []boolean.Boolean) (UInt64, error) {
	if len(b) != 64 {
		return UInt64{}, fmt.Errorf("core: UInt64 from %d bits", len(b))
	}
	var u UInt64
	copy(u.Bits[:], b)
	for i := range u.Bits {
		if u.Bits[i].Value() {
			u.Value |= 1 << uint(i)
		}
	}
	return u, nil
}

// BitsBE returns the bits most significant first.
func (u UInt64) BitsBE() []boolean.Boolean {
	r := make([]boolean.Boolean, 64)
	for i := range r {
		r[i] = u.Bits[63-i]
	}
	return r
}

// BitsLE returns the bits least significant first.
func (u UInt64) BitsLE() []boolean.Boolean { return append([]boolean.Boolean(nil), u.Bits[:]...) }

// PackIntoInput packs the 64 bits into one public input ("input 0").
func (u UInt64) PackIntoInput(sys cs.ConstraintSystem) error {
	return multipack.PackIntoInputs(sys, u.Bits[:])
}

// BytesIntoBooleanVec allocates size bits ("bit i"), each byte least
// significant bit first. In blank mode value may be nil.
func BytesIntoBooleanVec(sys cs.ConstraintSystem, value []byte, size int) ([]boolean.Boolean, error) {
	return bytesInto(sys, value, size, false)
}

// BytesIntoBooleanVecBE is BytesIntoBooleanVec with each byte most
// significant bit first.
func BytesIntoBooleanVecBE(sys cs.ConstraintSystem, value []byte, size int) ([]boolean.Boolean, error) {
	return bytesInto(sys, value, size, true)
}

func bytesInto(sys cs.ConstraintSystem, value []byte, size int, be bool) ([]boolean.Boolean, error) {
	if sys.WitnessMode() && 8*len(value) != size {
		return nil, fmt.Errorf("core: %d bytes for %d bits", len(value), size)
	}
	out := make([]boolean.Boolean, size)
	for i := range out {
		var v bool
		if sys.WitnessMode() {
			k := uint(i % 8)
			if be {
				k = 7 - k
			}
			v = value[i/8]>>k&1 == 1
		}
		sys.PushIndexed("bit ", i)
		b, err := boolean.Alloc(sys, v)
		sys.Pop()
		if err != nil {
			return nil, err
		}
		out[i] = boolean.Is(b)
	}
	return out, nil
}

// ReverseBitNumbering pads to whole bytes with constant zeros and reverses
// the bit order inside each byte.
func ReverseBitNumbering(bits []boolean.Boolean) []boolean.Boolean {
	padded := append([]boolean.Boolean(nil), bits...)
	for len(padded)%8 != 0 {
		padded = append(padded, boolean.Constant(false))
	}
	out := make([]boolean.Boolean, 0, len(padded))
	for i := 0; i < len(padded); i += 8 {
		for k := 7; k >= 0; k-- {
			out = append(out, padded[i+k])
		}
	}
	return out
}

// Equal enforces a·1 = b under name.
func Equal(sys cs.ConstraintSystem, name string, a, b num.AllocatedNum) {
	sys.Enforce(name, a.LC(), cs.LCOf(cs.One), b.LC())
}

// Sum enforces (a + b)·1 = sum under name.
func Sum(sys cs.ConstraintSystem, name string, a, b, sum num.AllocatedNum) {
	sys.Enforce(name, cs.LCOf(a.Var).Add(b.Var), cs.LCOf(cs.One), sum.LC())
}

// Difference enforces (difference + b)·1 = a under name.
func Difference(sys cs.ConstraintSystem, name string, a, b, difference num.AllocatedNum) {
	sys.Enforce(name, cs.LCOf(difference.Var).Add(b.Var), cs.LCOf(cs.One), a.LC())
}

// Add allocates "add_num" = a + b with "sum constraint".
func Add(sys cs.ConstraintSystem, a, b num.AllocatedNum) (num.AllocatedNum, error) {
	var v fr.Element
	v.Add(&a.Value, &b.Value)
	sys.Push("add_num")
	r, err := num.Alloc(sys, v)
	sys.Pop()
	if err != nil {
		return num.AllocatedNum{}, err
	}
	Sum(sys, "sum constraint", a, b, r)
	return r, nil
}

// Sub allocates "sub_num" = a − b with "subtraction constraint".
func Sub(sys cs.ConstraintSystem, a, b num.AllocatedNum) (num.AllocatedNum, error) {
	var v fr.Element
	v.Sub(&a.Value, &b.Value)
	sys.Push("sub_num")
	r, err := num.Alloc(sys, v)
	sys.Pop()
	if err != nil {
		return num.AllocatedNum{}, err
	}
	Difference(sys, "subtraction constraint", a, b, r)
	return r, nil
}

// Encode is key + value in namespace "encode_add".
func Encode(sys cs.ConstraintSystem, key, value num.AllocatedNum) (num.AllocatedNum, error) {
	sys.Push("encode_add")
	defer sys.Pop()
	return Add(sys, key, value)
}

// Decode is value − key in namespace "decode_sub".
func Decode(sys cs.ConstraintSystem, key, value num.AllocatedNum) (num.AllocatedNum, error) {
	sys.Push("decode_sub")
	defer sys.Pop()
	return Sub(sys, value, key)
}

// Xor xors input with a 256-bit key repeated over it, bit i in namespace
// "xor bit: i" (storage-proofs-core gadgets::xor).
func Xor(sys cs.ConstraintSystem, key, input []boolean.Boolean) ([]boolean.Boolean, error) {
	if len(key) != 256 {
		return nil, fmt.Errorf("core: xor key of %d bits, want 256", len(key))
	}
	out := make([]boolean.Boolean, len(input))
	for i := range input {
		sys.Push(fmt.Sprintf("xor bit: %d", i))
		b, err := boolean.BoolXor(sys, input[i], key[i%256])
		sys.Pop()
		if err != nil {
			return nil, err
		}
		out[i] = b
	}
	return out, nil
}
