// Package u32 holds bellpepper's UInt32 gadget (32 Booleans, least
// significant first) and MultiEq, which batches the equality constraints of
// additions into as few field-sized constraints as fit, exactly as
// bellpepper does (this changes constraint counts, so it must match).
package u32

import (
	"fmt"
	"math/bits"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/snarkd/snarkd/cs"
	"github.com/snarkd/snarkd/gadgets/boolean"
	"github.com/snarkd/snarkd/gadgets/internal/lcbuild"
)

// Capacity is Fr::CAPACITY, the number of bits a field element holds safely.
const Capacity = 254

// MultiEq accumulates equalities lhs = rhs of small bit widths and enforces
// them together as "multieq i": Σ 2^k·lhs_k · 1 = Σ 2^k·rhs_k.
type MultiEq struct {
	sys      cs.ConstraintSystem
	ops      int
	bitsUsed int
	lhs, rhs *lcbuild.Builder
	// witnessOnly batches keep only the bookkeeping that places the constraints.
	witnessOnly bool
}

// pow2[k] = 2^k and negPow2[k] = −2^k for every exponent a batch can reach.
var pow2, negPow2 = func() (p, n [Capacity + 64]fr.Element) {
	p[0].SetOne()
	for k := 1; k < len(p); k++ {
		p[k].Double(&p[k-1])
	}
	for k := range p {
		n[k].Neg(&p[k])
	}
	return
}()

// shiftedTerm is ±2^exp·v before the batch offset is known.
type shiftedTerm struct {
	v   cs.Variable
	exp uint16
	neg bool
}

// reserve makes room for numBits (emitting the pending batch first if they
// would not fit) and returns the exponent offset of the new equality.
func (m *MultiEq) reserve(numBits int) int {
	if Capacity <= m.bitsUsed+numBits {
		m.accumulate()
	}
	if Capacity <= m.bitsUsed+numBits {
		panic(fmt.Sprintf("u32: multieq of %d bits exceeds capacity", numBits))
	}
	shift := m.bitsUsed
	m.bitsUsed += numBits
	return shift
}

func (m *MultiEq) addShifted(b *lcbuild.Builder, ts []shiftedTerm, shift int) {
	for _, t := range ts {
		c := &pow2[int(t.exp)+shift]
		if t.neg {
			c = &negPow2[int(t.exp)+shift]
		}
		b.AddTerm(cs.Term{Coeff: *c, Var: t.v})
	}
}

// NewMultiEq starts a batch on sys; call Flush when the gadget using it ends.
func NewMultiEq(sys cs.ConstraintSystem) *MultiEq {
	if cs.WitnessOnly(sys) {
		return &MultiEq{sys: sys, witnessOnly: true}
	}
	return &MultiEq{sys: sys, lhs: lcbuild.New(256), rhs: lcbuild.New(64)}
}

func (m *MultiEq) accumulate() {
	if m.witnessOnly {
		m.sys.Enforce("multieq", nil, nil, nil)
		m.bitsUsed = 0
		m.ops++
		return
	}
	m.sys.Enforce(fmt.Sprintf("multieq %d", m.ops), m.lhs.LC(), cs.LCOf(cs.One), m.rhs.LC())
	m.lhs, m.rhs = lcbuild.New(256), lcbuild.New(64)
	m.bitsUsed = 0
	m.ops++
}

// EnforceEqual records lhs = rhs for values of numBits bits, first emitting
// the pending batch (in the current namespace) if they would not fit.
func (m *MultiEq) EnforceEqual(numBits int, lhs, rhs cs.LinearCombination) {
	shift := m.reserve(numBits)
	if m.witnessOnly {
		return
	}
	coeff := pow2[shift]
	for _, lcs := range [2]struct {
		b  *lcbuild.Builder
		lc cs.LinearCombination
	}{{m.lhs, lhs}, {m.rhs, rhs}} {
		for _, t := range lcs.lc {
			t.Coeff.Mul(&t.Coeff, &coeff)
			lcs.b.AddTerm(t)
		}
	}
}

// Flush emits the pending batch, as bellpepper's MultiEq does when dropped.
func (m *MultiEq) Flush() {
	if m.bitsUsed > 0 {
		m.accumulate()
	}
}

// UInt32 is a 32-bit word as Booleans, least significant first. Value is
// meaningful for constants and in witness mode.
type UInt32 struct {
	Bits  [32]boolean.Boolean
	Value uint32
}

// Constant returns the constant word v.
func Constant(v uint32) UInt32 {
	u := UInt32{Value: v}
	for i := range u.Bits {
		u.Bits[i] = boolean.Constant(v>>uint(i)&1 == 1)
	}
	return u
}

// Alloc allocates 32 bits in namespaces "allocated bit i".
func Alloc(sys cs.ConstraintSystem, v uint32) (UInt32, error) {
	u := UInt32{Value: v}
	for i := range u.Bits {
		sys.PushIndexed("allocated bit ", i)
		b, err := boolean.Alloc(sys, v>>uint(i)&1 == 1)
		sys.Pop()
		if err != nil {
			return UInt32{}, err
		}
		u.Bits[i] = boolean.Is(b)
	}
	return u, nil
}

func valueOf(bitsLE []boolean.Boolean) uint32 {
	var v uint32
	for i, b := range bitsLE {
		if b.Value() {
			v |= 1 << uint(i)
		}
	}
	return v
}

// FromBitsBE builds a word from 32 bits, most significant first.
func FromBitsBE(b []boolean.Boolean) UInt32 {
	if len(b) != 32 {
		panic(fmt.Sprintf("u32: FromBitsBE of %d bits", len(b)))
	}
	var u UInt32
	for i := range u.Bits {
		u.Bits[i] = b[31-i]
	}
	u.Value = valueOf(u.Bits[:])
	return u
}

// FromBits builds a word from 32 bits, least significant first.
func FromBits(b []boolean.Boolean) UInt32 {
	if len(b) != 32 {
		panic(fmt.Sprintf("u32: FromBits of %d bits", len(b)))
	}
	var u UInt32
	copy(u.Bits[:], b)
	u.Value = valueOf(u.Bits[:])
	return u
}

// BitsBE returns the bits most significant first.
func (u UInt32) BitsBE() []boolean.Boolean {
	r := make([]boolean.Boolean, 32)
	for i := range r {
		r[i] = u.Bits[31-i]
	}
	return r
}

// Rotr rotates right by n (no constraints).
func (u UInt32) Rotr(n int) UInt32 {
	n %= 32
	var r UInt32
	for i := range r.Bits {
		r.Bits[i] = u.Bits[(i+n)%32]
	}
	r.Value = bits.RotateLeft32(u.Value, -n)
	return r
}

// Shr shifts right by n, filling with constant zeros (no constraints).
func (u UInt32) Shr(n int) UInt32 {
	n %= 32
	var r UInt32
	for i := range r.Bits {
		if i+n < 32 {
			r.Bits[i] = u.Bits[i+n]
		} else {
			r.Bits[i] = boolean.Constant(false)
		}
	}
	r.Value = u.Value >> uint(n)
	return r
}

// Xor xors bitwise in namespaces "xor of bit i".
func (u UInt32) Xor(sys cs.ConstraintSystem, o UInt32) (UInt32, error) {
	r := UInt32{Value: u.Value ^ o.Value}
	for i := range r.Bits {
		sys.PushIndexed("xor of bit ", i)
		b, err := boolean.BoolXor(sys, u.Bits[i], o.Bits[i])
		sys.Pop()
		if err != nil {
			return UInt32{}, err
		}
		r.Bits[i] = b
	}
	return r, nil
}

type triFn func(cs.ConstraintSystem, boolean.Boolean, boolean.Boolean, boolean.Boolean) (boolean.Boolean, error)

func triop(sys cs.ConstraintSystem, prefix string, a, b, c UInt32, v uint32, f triFn) (UInt32, error) {
	r := UInt32{Value: v}
	for i := range r.Bits {
		sys.PushIndexed(prefix, i)
		x, err := f(sys, a.Bits[i], b.Bits[i], c.Bits[i])
		sys.Pop()
		if err != nil {
			return UInt32{}, err
		}
		r.Bits[i] = x
	}
	return r, nil
}

// Sha256Maj is the bitwise majority, per bit in namespace "maj i".
func Sha256Maj(sys cs.ConstraintSystem, a, b, c UInt32) (UInt32, error) {
	return triop(sys, "maj ", a, b, c, (a.Value&b.Value)^(a.Value&c.Value)^(b.Value&c.Value), boolean.Sha256Maj)
}

// Sha256Ch is the bitwise choice, per bit in namespace "ch i".
func Sha256Ch(sys cs.ConstraintSystem, a, b, c UInt32) (UInt32, error) {
	return triop(sys, "ch ", a, b, c, (a.Value&b.Value)^(^a.Value&c.Value), boolean.Sha256Ch)
}

// AddMany adds 2..10 words modulo 2^32. All-constant operands fold to a
// constant; otherwise the full sum's bits are allocated ("result bit i") and
// its equality with the operands is batched into m.
func AddMany(sys cs.ConstraintSystem, m *MultiEq, ops []UInt32) (UInt32, error) {
	if len(ops) < 2 || len(ops) > 10 {
		return UInt32{}, fmt.Errorf("u32: addmany of %d operands (want 2..10)", len(ops))
	}
	maxValue := uint64(len(ops)) * uint64(^uint32(0))
	var sum uint64
	allConst := true
	for _, op := range ops {
		sum += uint64(op.Value)
		for _, b := range op.Bits {
			allConst = allConst && b.IsConstant()
		}
	}
	if allConst {
		return Constant(uint32(sum)), nil
	}
	// The full sum's bits, "result bit i"; a witness-only batch needs only their places.
	var bits [36]boolean.AllocatedBit // 10 operands of 32 bits sum to at most 36 bits
	n := 0
	for ; maxValue != 0; n++ {
		sys.PushIndexed("result bit ", n)
		b, err := boolean.Alloc(sys, sum>>uint(n)&1 == 1)
		sys.Pop()
		if err != nil {
			return UInt32{}, err
		}
		bits[n] = b
		maxValue >>= 1
	}
	r := UInt32{Value: uint32(sum)}
	for i := range r.Bits {
		r.Bits[i] = boolean.Is(bits[i])
	}
	shift := m.reserve(n)
	if m.witnessOnly {
		return r, nil
	}
	// Operand terms, 2^j·bit with constants folded into ONE and Not(x)
	// contributing 2^j·ONE − 2^j·x, exactly as Boolean.lc builds them.
	lhs := make([]shiftedTerm, 0, 40*len(ops))
	for _, op := range ops {
		for j, b := range op.Bits {
			switch b.Kind {
			case boolean.KindConstant:
				if b.Const {
					lhs = append(lhs, shiftedTerm{v: cs.One, exp: uint16(j)})
				}
			case boolean.KindIs:
				lhs = append(lhs, shiftedTerm{v: b.Bit.Var, exp: uint16(j)})
			default:
				lhs = append(lhs, shiftedTerm{v: cs.One, exp: uint16(j)}, shiftedTerm{v: b.Bit.Var, exp: uint16(j), neg: true})
			}
		}
	}
	rhs := make([]shiftedTerm, n)
	for i := range rhs {
		rhs[i] = shiftedTerm{v: bits[i].Var, exp: uint16(i)}
	}
	m.addShifted(m.lhs, lhs, shift)
	m.addShifted(m.rhs, rhs, shift)
	return r, nil
}
